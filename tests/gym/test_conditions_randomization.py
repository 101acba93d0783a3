"""Light and weather in the domain randomisation: drawn per reset from the environment's seed,
within the ranges, applied to the backend that renders the episode."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from arsim_core.engine.randomization import Randomization
from arsim_core.errors import ConfigError
from arsim_gym.env import RaceEnv

CONDITIONS = {'time': ['2026-06-21T06:00:00', '2026-06-21T22:00:00'],
              'latitude_deg': 48.26, 'longitude_deg': 11.67, 'cloud_cover': [0.0, 1.0],
              'fog': {'visibility_m': [60, 2000]}, 'rain': {'rate_mm_h': [0, 10]}}


def conditions_of(env: RaceEnv) -> tuple[Any, Any]:
    backend = env.engine.renderer.backend  # type: ignore[attr-defined]
    return backend.world.weather, backend.world.appearance


def test_each_reset_draws_light_and_weather(make_env: Callable[..., RaceEnv]) -> None:
    env = make_env(randomization={'conditions': CONDITIONS})
    drawn = []
    for seed in range(4):
        env.reset(seed=seed)
        weather, appearance = conditions_of(env)
        assert 0.0 <= weather.cloud_cover <= 1.0 and 60 <= weather.fog_visibility_m <= 2000
        assert 0.0 <= weather.rain_rate_mm_h <= 10
        backend = env.engine.renderer.backend  # type: ignore[attr-defined]
        scanner = next(s for s in backend.sensors.values() if s.kind == 'lidar2d')
        assert scanner.model.extinction_per_m > 3.912 / 2000  # the fog reached the LiDAR
        drawn.append((weather, appearance))
    assert len({w for w, _ in drawn}) == 4 and len({a.sun_elevation_rad for _, a in drawn}) == 4
    env.reset(seed=2)
    assert conditions_of(env) == drawn[2]


def test_bad_weather_in_a_randomisation_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r'conditions\.rain\.rate_mm_h: expected a number'):
        Randomization.load({'conditions': {'rain': {'rate_mm_h': [5, 500]}}})
