"""``scan=False``: observations without the 2D scan, for policies that learn from the car's
state, and no LiDAR rendered for the cars observed (a car without one is then accepted); the
same states as with the scan; follow-the-gap opponents still scan, as they drive by it."""

from __future__ import annotations

import numpy as np
import pytest

from arsim_core.errors import ConfigError
from arsim_gym.env import RaceEnv

STATE_KEYS = {'pose', 'velocity', 'steering', 'lap_fraction', 'progress', 'laps', 'lap_time'}


def drive(env, steps: int = 30) -> dict[str, np.ndarray]:
    env.reset(seed=3)
    rows = int(np.prod(env.action_space.shape)) // 2
    action = np.tile(np.array([0.05, 1.5], np.float32), (rows, 1)).reshape(
        env.action_space.shape)
    for _ in range(steps):
        observation, *_ = env.step(action)
    return observation


def test_the_state_without_the_scan(make_env) -> None:
    with_scan, without = make_env(), make_env(scan=False)
    assert set(without.observation_space.spaces) == STATE_KEYS
    assert set(with_scan.observation_space.spaces) == STATE_KEYS | {'scan'}
    seen, unseen = drive(with_scan), drive(without)
    assert set(unseen) == STATE_KEYS and without.observation_space.contains(unseen)
    for key in STATE_KEYS:  # the scan changes nothing the car does
        np.testing.assert_array_equal(unseen[key], seen[key], err_msg=key)
    assert unseen['progress'][0] > 0.1  # it drove
    assert without.unwrapped.core.sims[0].setup.scan == {}  # nothing scanned


def test_a_car_without_a_lidar_races_without_the_scan(make_env, make_profile) -> None:
    profile = str(make_profile('no_lidar.yaml', lambda data: data.pop('Sensors')))
    observation = drive(make_env(profile=profile, scan=False))
    assert set(observation) == STATE_KEYS
    with pytest.raises(ConfigError, match='needs a lidar2d sensor for the scan observation'):
        make_env(profile=profile)


def test_vectors_and_every_car_without_the_scan(make_vector, make_env) -> None:
    envs = make_vector(4, scan=False)
    observations, _ = envs.reset(seed=1)
    assert set(observations) == STATE_KEYS and observations['pose'].shape == (4, 3)
    observations, *_ = envs.step(np.tile(np.array([0.0, 1.0], np.float32), (4, 1)))
    assert envs.observation_space.contains(observations)
    every = make_env(num_cars=3, control='all', scan=False)
    assert set(drive(every)) == STATE_KEYS


def test_follow_the_gap_opponents_still_scan(make_env) -> None:
    env = make_env(num_cars=3, opponents='follow_the_gap', scan=False)
    drive(env, steps=60)
    sim = env.unwrapped.core.sims[0]
    assert set(sim.setup.scan) == {'opp1', 'opp2'}
    assert sim.engine.states['opp1'].vx > 0.3  # driven by their scans


def test_scan_takes_true_or_false() -> None:
    with pytest.raises(ValueError, match="scan: expected True or False, got 'no'"):
        RaceEnv(track='arsim_ring', scan='no')
