"""The one core behind the single, vector and multi-agent environments: environment *i* of a
vector env is, bit for bit, a single env seeded *s + i* (across autoresets, with rewards of
the user's own too), a stateful reward keeps its state per environment, and the options are
one checked record."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest

from arsim_core.engine import CarRaceStatus
from arsim_gym.env import RaceEnv
from arsim_gym.options import RaceOptions
from arsim_gym.rewards import BatchReward, RaceRows
from arsim_gym.vector import RaceVectorEnv

MakeEnv = Callable[..., RaceEnv]
MakeVector = Callable[..., RaceVectorEnv]
JITTER = {'start': {'along': [0.0, 1.0], 'lateral': [-0.2, 0.2], 'yaw': [-0.1, 0.1]}}
DYNAMICS = {'friction': [0.8, 1.1], 'mass_scale': [0.9, 1.1], 'max_speed': [5.0, 20.0],
            **JITTER}


class Gained:
    """The per-car reward docs/gym.md shows: progress gained since the last step."""

    def reset(self, status: CarRaceStatus) -> None:
        self.last = status.progress

    def __call__(self, status: CarRaceStatus, collided: bool) -> float:
        gained, self.last = status.progress - self.last, status.progress
        return gained - 10.0 * collided


class Speedy(BatchReward):
    """A batched reward with state per row: progress gained, plus a bonus per lap."""

    def reset(self, race: RaceRows, mask: np.ndarray) -> None:
        if not hasattr(self, 'last') or len(self.last) != len(race):
            self.last = race.progress.copy()
        self.last[mask] = race.progress[mask]

    def __call__(self, race: RaceRows) -> np.ndarray:
        gained, self.last = race.progress - self.last, race.progress.copy()
        return 2.0 * gained + race.laps - 5.0 * race.collided


CASES: dict[str, dict[str, Any]] = {
    'plain': {},
    'randomized': {'randomization': DYNAMICS},
    'per-car-reward': {'reward': Gained(), 'randomization': JITTER},
    'batched-reward': {'reward': Speedy, 'max_time': 1.7},
    'accel-actions': {'action': 'accel', 'max_time': 1.2},
    'separate-2-cars': {'num_cars': 2, 'opponents': 'none', 'reward': Gained(),
                        'max_time': 2.5},
}


def _actions(n: int, steps: int) -> np.ndarray:
    """Random steering and speed; env 0 goes flat out, so it crashes and starts again."""
    rng = np.random.default_rng(5)
    actions = np.stack([rng.uniform(-0.3, 0.3, (steps, n)), rng.uniform(0.0, 3.0, (steps, n))],
                       axis=-1).astype(np.float32)
    actions[:, 0] = (0.0, 8.0)
    return actions


def _single_rollout(env: RaceEnv, seed: int, actions: np.ndarray) -> list[tuple[Any, ...]]:
    """What a single env gives for ``actions``, restarted (unseeded) the step after an
    episode ends, as the vector env's next-step autoreset does."""
    obs, _ = env.reset(seed=seed)
    record: list[tuple[Any, ...]] = [(obs, 0.0, False, False)]
    done = False
    for action in actions:
        if done:
            obs, _ = env.reset()
            record.append((obs, 0.0, False, False))
            done = False
            continue
        obs, reward, terminated, truncated, _ = env.step(action)
        record.append((obs, reward, terminated, truncated))
        done = terminated or truncated
    return record


@pytest.mark.parametrize('case', list(CASES))
def test_env_i_of_a_vector_env_is_a_single_env_bit_for_bit(make_vector: MakeVector,
                                                          make_env: MakeEnv,
                                                          case: str) -> None:
    keywords = CASES[case]
    n, seed, steps = 3, 40, 450
    vector = make_vector(n, **keywords)
    assert vector.core.packed == (case != 'separate-2-cars')
    actions = _actions(n, steps)
    obs, _ = vector.reset(seed=seed)
    batch = [(obs, np.zeros(n), np.zeros(n, bool), np.zeros(n, bool))]
    for action in actions:
        batch.append(vector.step(action)[:4])
    assert any(t[0] or u[0] for _, _, t, u in batch)  # env 0's autoreset is compared
    for i in range(n):
        single = _single_rollout(make_env(**keywords), seed + i, actions[:, i])
        for k, (v, s) in enumerate(zip(batch, single, strict=True)):
            where = f'env {i}, step {k}'
            for key in s[0]:
                np.testing.assert_array_equal(v[0][key][i], s[0][key], err_msg=f'{where} {key}')
            assert v[1][i] == s[1], where  # rewards: exactly the same float
            assert bool(v[2][i]) == s[2] and bool(v[3][i]) == s[3], where
    assert batch[-1][1].dtype == np.float64


def test_a_stateful_reward_object_gets_its_own_state_in_every_env(make_env: MakeEnv) -> None:
    """The one reward object given to ``make_vec`` rewarded env 0 only: envs 1 to 3 shared its
    state and got 0 at every step."""
    envs = gymnasium.make_vec('arsim_gym:arsim/Race-v0', num_envs=4,
                              vectorization_mode='vector_entry_point', track='arsim_ring',
                              reward=Gained())
    try:
        envs.reset(seed=0)
        single = make_env(reward=Gained())
        single.reset(seed=0)
        actions = np.tile(np.array([0.0, 2.0], np.float32), (4, 1))
        totals = np.zeros(4)
        for _ in range(40):
            _, rewards, *_ = envs.step(actions)
            _, expected, *_ = single.step(actions[0])
            assert rewards.tolist() == [expected] * 4
            totals += rewards
        assert np.all(totals > 0.3)  # 0.4 s, speeding up to 2 m/s
    finally:
        envs.close()


def test_the_reward_object_given_is_copied_not_shared(make_env: MakeEnv) -> None:
    reward = Gained()
    first, second = make_env(reward=reward), make_env(reward=reward)
    assert first.reward is not second.reward
    first.reset(seed=0)
    second.reset(seed=0)
    for _ in range(20):
        assert first.step([0.0, 2.0])[1] == second.step([0.0, 2.0])[1]


def test_options_are_one_frozen_record() -> None:
    options = RaceOptions.from_keywords(track='arsim_ring', observe=['scan'], sectors=[0.5])
    assert options.observe == ('scan',) and options.sectors == (0.5,)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.control = 'all'  # type: ignore[misc]
    with pytest.raises(TypeError, match=r"unknown keyword\(s\) \['bogus'\]"):
        RaceOptions.from_keywords(bogus=1)
    for key, value in (('control', 'some'), ('action', 'fly'), ('opponents', 'x'),
                       ('threads', 0), ('timestep', 'fast'), ('observe', 'scan'),
                       ('render_mode', 'human')):
        with pytest.raises(ValueError, match=key):
            RaceOptions.from_keywords(**{key: value})
    with pytest.raises(ValueError, match='reward'):
        RaceOptions.from_keywords(reward='fastest')


def test_vector_info_has_race_and_events_per_env(make_vector: MakeVector) -> None:
    vector = make_vector(3)
    _, info = vector.reset(seed=0)
    assert info['_race'].all()
    assert [status.name for status in info['race']] == list(vector.core.sims[0].names)
    action = np.zeros((3, 2), np.float32)
    action[1, 1] = 8.0  # env 1 drives into the wall
    for _ in range(1000):
        _, _, terminated, _, info = vector.step(action)
        if terminated.any():
            break
        assert not info['_race'].any() and not info['_events'].any()
    assert terminated.tolist() == [False, True, False]
    assert info['_race'].tolist() == [False, True, False]  # the final record of env 1
    final = info['race'][1]
    assert isinstance(final, CarRaceStatus) and final.position == 1 and final.collisions == 1
    assert info['_events'].tolist() == [False, True, False]
    assert [e.kind for e in info['events'][1]] == ['collision']
    assert info['collision'].tolist() == [False, True, False]


NO_ROS = '''\
import importlib.abc, sys

class NoRos(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('ament_index_python', 'rclpy', 'arsim_launch'):
            raise ImportError(f'{name} is not installed here')
        return None

sys.meta_path.insert(0, NoRos())
import gymnasium
env = gymnasium.make('arsim_gym:arsim/Race-v0', track='arsim_ring')
obs, _ = env.reset(seed=0)
obs, *_ = env.step([0.0, 1.0])
print('STEPPED', obs['scan'].shape)
'''


def test_the_gym_runs_from_a_checkout_without_ros(repo_root: Path, tmp_path: Path) -> None:
    """No ament_index, no rclpy, no arsim_launch: config/ and maps/ come from the checkout."""
    src = repo_root / 'src'
    env = {k: v for k, v in os.environ.items() if k not in ('ARSIM_RESOURCES',)}
    env['PYTHONPATH'] = os.pathsep.join([str(src / 'arsim_core'), str(src / 'arsim_gym'),
                                         *filter(None, [os.environ.get('PYTHONPATH')])])
    script = tmp_path / 'no_ros.py'
    script.write_text(NO_ROS)
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    assert 'STEPPED (1080,)' in done.stdout


def test_an_invalid_action_row_is_ignored_alike_in_vector_and_single(
        make_vector: MakeVector, make_env: MakeEnv) -> None:
    vector, single = make_vector(2), make_env()
    vector.reset(seed=0)
    single.reset(seed=1)
    good = np.array([[0.1, 2.0], [0.1, 2.0]], np.float32)
    for _ in range(10):
        vector.step(good)
        single.step(good[1])
    for bad, words in (((np.nan, 1.0), 'non-finite'), ((0.1, 100.0), 'outside')):
        with pytest.warns(UserWarning, match=words):
            obs, *_ = vector.step(np.array([good[0], bad], np.float32))
        with pytest.warns(UserWarning, match=words):
            expected, *_ = single.step(np.array(bad, np.float32))
        for key in expected:  # env 1 kept its last command, as the single env did
            np.testing.assert_array_equal(obs[key][1], expected[key], err_msg=key)


@pytest.mark.parametrize('observe', [('imu', 'odometry'), ('imu', 'odometry', 'gnss')])
def test_computed_sensors_are_observed_in_their_layouts(observe: tuple[str, ...]) -> None:
    from gymnasium.utils.env_checker import check_env

    from arsim_core.sensors.computed import LAYOUTS

    env = gymnasium.make('arsim_gym:arsim/Race-v0', track='arsim_ring', observe=observe)
    try:
        kinds = {'imu': 'imu', 'gnss': 'gnss', 'odometry': 'wheel_odometry'}
        for key in observe:
            assert env.observation_space[key].shape == (len(LAYOUTS[kinds[key]]),)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', UserWarning)  # advice on unbounded Boxes
            check_env(env.unwrapped, skip_render_check=True)
        obs, _ = env.reset(seed=0)
        np.testing.assert_allclose(obs['imu'][9], 9.81, atol=0.05)  # +g on z at rest
        for _ in range(100):
            obs, *_ = env.step([0.0, 2.0])
        assert obs['odometry'][3] > 1.0  # vx of the wheel odometry: driving forwards
        assert obs['imu'][7] != 0.0 or obs['imu'][8] != 0.0 or obs['imu'][6] != 0.0
        assert env.observation_space.contains(obs)
    finally:
        env.close()


def test_a_single_env_steps_the_race_its_reset_rebuilt(make_env: MakeEnv) -> None:
    """A reset that draws another car count builds a new engine; the steps after it must
    drive that one, not the engine it replaced."""
    env = make_env(randomization={'opponents': [0, 2]}, opponents='none')
    env.reset(seed=0)
    counts = set()
    for _ in range(8):
        before = env.engine
        obs, _ = env.reset()
        counts.add(len(env.names))
        start = obs['pose'].copy()
        for _ in range(20):
            obs, *_ = env.step(np.array([0.0, 2.0], np.float32))
        assert env.engine.time_ns == 20 * round(0.01 * 1e9), 'the new engine did not step'
        assert not np.array_equal(obs['pose'], start), 'the ego did not move'
        if env.engine is not before:
            break
    assert env.engine is not before, f'no reset rebuilt the race (car counts {counts})'
