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
