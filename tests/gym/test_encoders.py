"""Wheel encoders observed in the Gymnasium environment: the engine's computed sensor, as the
ROS topic carries it (tests/e2e/test_sensors.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arsim_core.errors import ConfigError
from arsim_gym.env import RaceEnv

MakeEnv = Callable[..., RaceEnv]


def test_observed_encoders_count_up_as_the_car_drives(make_env: MakeEnv,
                                                     make_profile: Callable[..., Path]) -> None:
    def add_encoders(data: dict[str, Any]) -> None:
        data['Sensors']['encoders'] = {'type': 'wheel_encoders', 'rate_hz': 40.0,
                                       'ticks_per_revolution': 2048, 'track_width': 0.24}

    env = make_env(profile=str(make_profile('car.yaml', add_encoders)), observe=('encoders',))
    assert env.observation_space['encoders'].shape == (6,)
    obs, _ = env.reset(seed=0)
    assert obs['encoders'][:2].tolist() == [0.0, 0.0]
    counts = []
    for _ in range(50):
        obs, *_ = env.step(np.array([0.0, 2.0], np.float32))
        counts.append(obs['encoders'][0])
    assert counts[-1] > counts[len(counts) // 2] > 0.0
    assert np.all(np.diff(counts) >= 0.0) and float(counts[-1]).is_integer()


def test_observing_encoders_the_profile_lacks_names_the_profile(make_env: MakeEnv,
                                                                repo_root: Path) -> None:
    profile = repo_root / 'config' / 'cars' / 'f1tenth.yaml'
    with pytest.raises(ConfigError, match=r'f1tenth\.yaml.*wheel_encoders'):
        make_env(observe=('encoders',), profile=str(profile))
