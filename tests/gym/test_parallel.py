"""The PettingZoo face: every car an agent on the same core, PettingZoo's own API test, per
agent spaces, rewards and records, and the same race as the single env with
``control="all"``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

from arsim_gym.env import RaceEnv
from arsim_gym.parallel import RaceParallelEnv, parallel_env

MakeEnv = Callable[..., RaceEnv]
MakeParallel = Callable[..., RaceParallelEnv]


@pytest.fixture
def make_parallel(exact_lidar_profile: str) -> Iterator[MakeParallel]:
    """PettingZoo environments on arsim_ring, their LiDAR exact as ``make_env``'s unless a
    profile or scenario is given."""
    made: list[RaceParallelEnv] = []

    def make(**keywords: Any) -> RaceParallelEnv:
        keywords.setdefault('track', 'arsim_ring')
        if 'profile' not in keywords and 'scenario' not in keywords:
            keywords['profile'] = exact_lidar_profile
        env = RaceParallelEnv(**keywords)
        made.append(env)
        return env

    yield make
    for env in made:
        env.close()


@pytest.mark.parametrize('keywords', [{'num_cars': 3}, {'num_cars': 2, 'action': 'accel',
                                                        'max_time': 0.2}],
                         ids=['3-cars', 'accel-truncated'])
def test_pettingzoo_parallel_api_test_passes(make_parallel: MakeParallel,
                                            keywords: dict[str, Any]) -> None:
    env = make_parallel(**keywords)
    with pytest.warns(UserWarning, match=r"unknown key\(s\) \['options'\]"):
        parallel_api_test(env, num_cycles=300)


def test_agents_are_the_cars_with_their_own_spaces(make_parallel: MakeParallel) -> None:
    env = make_parallel(num_cars=3)
    assert env.possible_agents == ['ego', 'opp1', 'opp2']
    single = RaceEnv(track='arsim_ring', num_cars=1)
    try:
        for agent in env.possible_agents:
            assert env.observation_space(agent) == single.observation_space
            assert env.action_space(agent) == single.action_space
    finally:
        single.close()
    with pytest.raises(TypeError, match='control'):
        parallel_env(track='arsim_ring', control='ego')


def test_same_race_as_the_single_env_controlling_all_cars(make_parallel: MakeParallel,
                                                          make_env: MakeEnv) -> None:
    env = make_parallel(num_cars=2)
    single = make_env(num_cars=2, control='all')
    obs, infos = env.reset(seed=3)
    expected, info = single.reset(seed=3)
    start = {agent: infos[agent]['race'].progress for agent in env.possible_agents}
    rng = np.random.default_rng(1)
    for _ in range(150):
        action = np.stack([rng.uniform(-0.2, 0.2, 2), rng.uniform(0.5, 2.5, 2)],
                          axis=1).astype(np.float32)
        obs, rewards, terminations, truncations, infos = env.step(
            {'ego': action[0], 'opp1': action[1]})
        expected, reward, terminated, truncated, info = single.step(action)
        for i, agent in enumerate(env.possible_agents):
            for key in expected:
                np.testing.assert_array_equal(obs[agent][key], expected[key][i], err_msg=key)
            assert infos[agent]['race'] == info['race'][agent]
            assert terminations[agent] == terminated and truncations[agent] == truncated
        assert rewards['ego'] == reward  # the single env rewards its first car
    assert rewards['opp1'] != rewards['ego']  # each car its own reward
    assert all(infos[agent]['race'].progress > start[agent] + 1.0
               for agent in env.possible_agents)


def test_a_collision_ends_the_race_for_every_agent(make_parallel: MakeParallel) -> None:
    env = make_parallel(num_cars=2)
    env.reset(seed=0)
    for _ in range(1000):
        _, rewards, terminations, _, infos = env.step({'ego': [0.0, 8.0], 'opp1': [0.0, 0.0]})
        if any(terminations.values()):
            break
    assert terminations == {'ego': True, 'opp1': True}
    assert env.agents == []
    assert infos['ego']['collision'] and not infos['opp1']['collision']
    assert [e.kind for e in infos['ego']['events']] == ['collision']
    assert rewards['ego'] < -0.5 and rewards['opp1'] == 0.0
    with pytest.raises(RuntimeError, match='reset'):
        env.step({'ego': [0.0, 0.0]})


def test_an_agent_without_an_action_keeps_its_last_command(make_parallel: MakeParallel
                                                           ) -> None:
    env = make_parallel(num_cars=2)
    env.reset(seed=0)
    env.step({'ego': [0.0, 2.0], 'opp1': [0.0, 1.0]})
    for _ in range(60):
        obs, *_ = env.step({'opp1': [0.0, 1.0]})
    assert obs['ego']['velocity'][0] > 1.5
    with pytest.raises(KeyError, match='nobody'):
        env.step({'nobody': [0.0, 0.0]})
