"""Actuator dead time and lag through the Gymnasium face: the same rules as on the ROS topics
(tests/e2e/test_drive_latency.py), because both come from the car's ``Vehicle``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arsim_gym.env import RaceEnv

TIMESTEP_S = 0.01
MakeEnv = Callable[..., RaceEnv]
MakeProfile = Callable[[str, Callable[[dict[str, Any]], None]], Path]


def with_actuators(make_profile: MakeProfile, actuators: dict[str, Any]) -> str:
    """config/cars/f1tenth.yaml with ``actuators`` as its ``Actuators`` section."""
    return str(make_profile('car.yaml', lambda data: data.update(Actuators=actuators)))


def first_response_steps(env: RaceEnv, key: str, steps: int = 60) -> int:
    """The number of steps of a [0.2 rad, 2 m/s] command until observation ``key`` moves."""
    env.reset(seed=0)
    for step in range(1, steps + 1):
        obs, *_ = env.step(np.array([0.2, 2.0], np.float32))
        if np.any(np.abs(obs[key]) > 1e-6):
            return step
    raise AssertionError(f'{key} never moved')


@pytest.mark.parametrize(('steering_s', 'drive_s'), [(0.05, 0.1), (0.1, 0.0), (0.035, 0.2)])
def test_each_channel_responds_its_dead_time_after_an_ideal_car(
        make_env: MakeEnv, make_profile: MakeProfile, steering_s: float,
        drive_s: float) -> None:
    ideal = make_env(timestep=TIMESTEP_S)
    delayed = make_env(timestep=TIMESTEP_S, profile=with_actuators(
        make_profile, {'steering': {'dead_time': steering_s}, 'drive': {'dead_time': drive_s}}))
    for key, dead_time in (('steering', steering_s), ('velocity', drive_s)):
        latency = (first_response_steps(delayed, key) - first_response_steps(ideal, key)) \
            * TIMESTEP_S
        assert abs(latency - dead_time) <= TIMESTEP_S + 1e-9, (key, latency, dead_time)


def test_a_lagged_car_is_slower_to_its_speed_and_the_same_on_every_run(
        make_env: MakeEnv, make_profile: MakeProfile) -> None:
    ideal = make_env(timestep=TIMESTEP_S)
    lagged = make_env(timestep=TIMESTEP_S,
                      profile=with_actuators(make_profile, {'drive': {'lag': 0.25}}))
    speeds = []
    for env in (ideal, lagged, lagged):
        env.reset(seed=0)
        for _ in range(30):
            obs, *_ = env.step(np.array([0.0, 3.0], np.float32))
        speeds.append(float(obs['velocity'][0]))
    assert speeds[1] < speeds[0] - 0.5
    assert speeds[1] == speeds[2]


def scans(env: RaceEnv, steps: int) -> list[np.ndarray]:
    """The scans ``env`` observes from a reset through ``steps`` steps of a turn at 3 m/s."""
    obs, _ = env.reset(seed=3)
    seen = [obs['scan'].copy()]
    for _ in range(steps):
        obs, *_ = env.step(np.array([0.3, 3.0], np.float32))
        seen.append(obs['scan'].copy())
    return seen


def late_scan(make_profile: MakeProfile, **timing: float) -> str:
    """config/cars/f1tenth.yaml with ``timing`` (latency, latency_jitter) on its scan."""
    return str(make_profile('late.yaml', lambda data: data['Sensors']['scan'].update(timing)))


def test_a_late_scan_shows_what_an_ideal_one_showed_its_latency_before(
        make_env: MakeEnv, make_profile: MakeProfile) -> None:
    """The car drives the same (latency delays what it sees, not what it does), so the late
    observation at step k is the ideal one of step k - 3; the first steps hold the scan of the
    reset, taken while the car stood there."""
    ideal = scans(make_env(timestep=TIMESTEP_S), 40)
    late = scans(make_env(timestep=TIMESTEP_S,
                          profile=late_scan(make_profile, latency=3 * TIMESTEP_S)), 40)
    assert not np.array_equal(ideal[40], ideal[37])  # the view changes step by step
    for k in range(3):
        np.testing.assert_array_equal(late[k], ideal[0])
    for k in range(3, 41):
        np.testing.assert_array_equal(late[k], ideal[k - 3])


def test_jitter_delays_each_scan_within_its_bounds_in_order_and_repeatably(
        make_env: MakeEnv, make_profile: MakeProfile) -> None:
    ideal = scans(make_env(timestep=TIMESTEP_S), 60)
    profile = late_scan(make_profile, latency=2 * TIMESTEP_S, latency_jitter=3 * TIMESTEP_S)
    late = scans(make_env(timestep=TIMESTEP_S, profile=profile), 60)
    captured = [next(j for j in range(len(ideal)) if np.array_equal(scan, ideal[j]))
                for scan in late]
    lags = [k - j for k, j in enumerate(captured)][10:]  # past the held scan of the reset
    assert min(lags) >= 2 and max(lags) <= 2 + 3 + 1  # latency, jitter, one frame's rounding
    assert len(set(lags)) > 1  # it does jitter
    assert captured == sorted(captured)  # a sample never overtakes its predecessor
    again = scans(make_env(timestep=TIMESTEP_S, profile=profile), 60)
    assert all(np.array_equal(a, b) for a, b in zip(again, late, strict=True))


def test_a_randomised_scan_latency_delays_the_scan_as_the_profile_key_would(
        make_env: MakeEnv, make_profile: MakeProfile) -> None:
    """``scan_latency`` in the randomisation file and ``latency`` in the profile are one rule:
    the same scans, step for step."""
    drawn = scans(make_env(timestep=TIMESTEP_S,
                           randomization={'scan_latency': [0.03, 0.03]}), 20)
    declared = scans(make_env(timestep=TIMESTEP_S,
                              profile=late_scan(make_profile, latency=0.03)), 20)
    ideal = scans(make_env(timestep=TIMESTEP_S), 20)
    assert all(np.array_equal(a, b) for a, b in zip(drawn, declared, strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(drawn, ideal, strict=True))
