"""The Ray vector environment against the in-process one: the same spaces, the same episodes
from the same seeds (observations, rewards, flags and ``info`` with its masks, across
terminations, truncations and next-step autoresets), the same warnings for actions it ignores,
and its actors gone after ``close``. A small local Ray (two CPUs, no dashboard) is started
here, as a user on one machine starts theirs.

The car profile is the users' own, LiDAR noise and effects on: each race's sensors draw as
their race's only car, whichever actor holds it.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
import time
import warnings
from collections.abc import Iterator
from typing import Any

import gymnasium
import numpy as np
import pytest
from raylock import one_ray_cluster

from arsim_gym import RAY_RACE_ID
from arsim_gym.vector import RaceVectorEnv

ray = pytest.importorskip('ray')

from arsim_gym.ray_vector import RayRaceVectorEnv  # noqa: E402

NUM_ENVS = 5  # over two actors: shares of 3 and 2, so the second one's rows are offset
#: per-environment draws (start jitter, friction, top speed) show each env's seed is its own
KEYWORDS: dict[str, Any] = {
    'track': 'arsim_ring', 'num_cars': 1, 'max_time': 1.0,
    'randomization': {'friction': [0.8, 1.1], 'max_speed': [5.0, 20.0],
                      'start': {'along': [0.0, 1.0], 'lateral': [-0.2, 0.2],
                                'yaw': [-0.1, 0.1]}}}


@pytest.fixture(scope='module')
def local_ray() -> Iterator[None]:
    saved = dict(os.environ)  # ray.init leaves RAY_AUTH_MODE=token and more in this process
    os.environ.setdefault('RAY_USAGE_STATS_ENABLED', '0')
    with one_ray_cluster():
        ray.init(address='local', num_cpus=2, include_dashboard=False,
                 logging_level=logging.WARNING, log_to_driver=False)
        try:
            yield
        finally:
            ray.shutdown()
            os.environ.clear()
            os.environ.update(saved)


@pytest.fixture(scope='module')
def pair(local_ray: None) -> Iterator[tuple[RayRaceVectorEnv, RaceVectorEnv]]:
    """The Ray env (two actors) and the in-process one, of the same keywords. The in-process
    one is built first: its start leaves the compiled kernels cached for the actors."""
    here = RaceVectorEnv(NUM_ENVS, **KEYWORDS)
    there = RayRaceVectorEnv(NUM_ENVS, num_actors=2, **KEYWORDS)
    yield there, here
    there.close()
    here.close()


def _record(item: Any) -> Any:
    """A race record or a tuple of events without the car's name: a packed engine names its
    cars by their index in it (ego, opp1, ...), which differs with the share an actor holds."""
    if item is None:
        return None
    if isinstance(item, tuple) and not hasattr(item, '_replace'):
        return tuple(dataclasses.replace(event, car='', detail=event.detail.replace(event.car, ''))
                     for event in item)
    return item._replace(name='')


def assert_same_info(got: dict[str, Any], expected: dict[str, Any], where: str) -> None:
    assert list(got) == list(expected), where
    for key, value in expected.items():
        assert got[key].dtype == value.dtype and got[key].shape == value.shape, (where, key)
        if value.dtype == object:
            assert [_record(v) for v in got[key]] == [_record(v) for v in value], (where, key)
        else:
            np.testing.assert_array_equal(got[key], value, err_msg=f'{where}: {key}')


def assert_same_step(got: tuple, expected: tuple, where: str) -> None:
    """``step``'s (or ``reset``'s) results equal, array by array, to the bit."""
    assert len(got) == len(expected), where
    obs, expected_obs = got[0], expected[0]
    assert list(obs) == list(expected_obs), where
    for key in expected_obs:
        assert obs[key].dtype == expected_obs[key].dtype, (where, key)
        np.testing.assert_array_equal(obs[key], expected_obs[key], err_msg=f'{where}: {key}')
    names = ('rewards', 'terminated', 'truncated')[:len(got) - 2]  # none after a reset
    for got_array, array, name in zip(got[1:-1], expected[1:-1], names, strict=True):
        assert got_array.dtype == array.dtype, (where, name)
        np.testing.assert_array_equal(got_array, array, err_msg=f'{where}: {name}')
    assert_same_info(got[-1], expected[-1], where)


def test_spaces_and_autoreset_mode_are_the_in_process_ones(
        pair: tuple[RayRaceVectorEnv, RaceVectorEnv]) -> None:
    there, here = pair
    assert there.shares == [(0, 3), (3, 5)]
    assert there.single_observation_space == here.single_observation_space
    assert there.single_action_space == here.single_action_space
    assert there.observation_space == here.observation_space
    assert there.action_space == here.action_space
    assert there.metadata == here.metadata
    assert there.num_envs == here.num_envs == NUM_ENVS


def test_a_random_rollout_is_the_in_process_one_bit_for_bit(
        pair: tuple[RayRaceVectorEnv, RaceVectorEnv]) -> None:
    there, here = pair
    assert_same_step(there.reset(seed=11), here.reset(seed=11), 'reset')
    rng = np.random.default_rng(3)
    ends = {'terminated': 0, 'truncated': 0}
    autoresets = 0
    previous = np.zeros(NUM_ENVS, dtype=bool)
    for step in range(300):
        actions = np.stack([rng.uniform(-0.4, 0.4, NUM_ENVS), rng.uniform(3.0, 10.0, NUM_ENVS)],
                           axis=-1).astype(np.float32)
        got, expected = there.step(actions), here.step(actions)
        assert_same_step(got, expected, f'step {step}')
        ends['terminated'] += int(expected[2].sum())
        ends['truncated'] += int(expected[3].sum())
        autoresets += int(previous.sum())
        previous = expected[2] | expected[3]
    assert ends['terminated'] > 0 and ends['truncated'] > 0, ends  # both kinds of end
    assert autoresets > 0
    # each env its own seed: the start draws differ from env to env
    seeds = [4, 5, 6, 7, 8]
    got, expected = there.reset(seed=seeds), here.reset(seed=seeds)
    assert_same_step(got, expected, 'listed seeds')
    assert len({tuple(pose) for pose in got[0]['pose'].tolist()}) == NUM_ENVS


def test_reset_poses_reach_the_env_they_name(
        pair: tuple[RayRaceVectorEnv, RaceVectorEnv]) -> None:
    there, here = pair
    poses = [[7.0, 0.0, 0.0], [8.0, 0.2, 0.1], [9.0, -0.1, 0.0], [10.0, 0.1, 0.05],
             [11.0, 0.0, -0.05]]
    got = there.reset(seed=0, options={'poses': poses})
    assert_same_step(got, here.reset(seed=0, options={'poses': poses}), 'poses')
    np.testing.assert_allclose(got[0]['pose'], poses, atol=1e-6)
    with pytest.raises(ValueError, match='poses'):
        there.reset(seed=0, options={'poses': poses[:2]})
    with pytest.raises(ValueError, match='seed'):
        there.reset(seed=[1, 2])


def test_nan_and_out_of_range_actions_are_ignored_with_the_same_warnings(
        pair: tuple[RayRaceVectorEnv, RaceVectorEnv]) -> None:
    there, here = pair
    there.reset(seed=2)
    here.reset(seed=2)
    actions = np.tile(np.array([0.1, 2.0], np.float32), (NUM_ENVS, 1))
    assert_same_step(there.step(actions), here.step(actions), 'before')
    actions[1] = [np.nan, 2.0]  # in the first actor's share
    actions[4] = [0.1, 1e3]  # in the second's
    caught = {}
    for name, env in (('ray', there), ('in-process', here)):
        with warnings.catch_warnings(record=True) as found:
            warnings.simplefilter('always')
            caught[name] = env.step(actions), [(str(w.message), w.category, w.filename)
                                                for w in found]
    assert_same_step(caught['ray'][0], caught['in-process'][0], 'ignored actions')
    assert caught['ray'][1] == caught['in-process'][1]
    messages = [message for message, *_ in caught['ray'][1]]
    assert len(messages) == 2, messages
    assert 'non-finite' in messages[0] and 'outside the action space' in messages[1]
    assert caught['ray'][1][0][2] == __file__  # raised at the caller of step


def test_close_ends_the_actors(local_ray: None) -> None:
    # reserving no CPU: the pair's actors may hold both of this Ray's; made as a user moving
    # their training onto Ray makes it, by the registered id
    env = gymnasium.make_vec(RAY_RACE_ID, num_envs=2, num_actors=1, actor_cpus=0,
                             track='arsim_ring', num_cars=1)
    assert isinstance(env, RayRaceVectorEnv) and env.num_envs == 2
    actors = list(env.actors)
    env.reset(seed=0)
    env.close()
    assert env.closed and env.actors == []
    deadline = time.monotonic() + 60.0  # ray.kill is asynchronous: the actor ends soon after
    with pytest.raises(ray.exceptions.RayActorError):
        while time.monotonic() < deadline:
            ray.get(actors[0].spaces.remote(), timeout=60)
            time.sleep(0.1)
    env.close()  # a second close does nothing


def test_bad_actor_counts_name_the_keyword(local_ray: None) -> None:
    for count in (0, 6, 1.5):
        with pytest.raises(ValueError, match='num_actors'):
            RayRaceVectorEnv(NUM_ENVS, num_actors=count, track='arsim_ring')
    for cpus in (-1, 'one', float('nan')):
        with pytest.raises(ValueError, match='actor_cpus'):
            RayRaceVectorEnv(NUM_ENVS, actor_cpus=cpus, track='arsim_ring')


def test_without_ray_the_error_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, 'ray', None)  # import ray: ImportError
    with pytest.raises(ImportError, match=r"pip install 'ray>=2\.9'"):
        RayRaceVectorEnv(2, track='arsim_ring')
