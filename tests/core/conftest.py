"""Fixtures of the core tests: scenarios built from config/sim.yaml, the default track and
a random one, and a car profile with scan noise."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from arsim_core.config.scenario import Scenario, load_scenario
from arsim_core.engine import TrackWorld
from arsim_core.track import TrackOptions, load_track, track_from_centerline
from arsim_core.track.generator import random_track

RANDOM_SEED = 3  # the random track of the track-switch tests

MakeScenario = Callable[..., Scenario]


@pytest.fixture
def make_scenario(repo_root: Path) -> MakeScenario:
    """``make_scenario(cars=('ego',), profile='f1tenth', **sections)``: config/sim.yaml with
    the cars replaced and each keyword a section of overrides (``simulation={...}``). A car is
    a name, or a mapping of its keys (name, profile, pose)."""

    def make(cars: Sequence[str | dict[str, Any]] = ('ego',), profile: str = 'f1tenth',
             **sections: Any) -> Scenario:
        entries = [{'name': car, 'profile': profile} if isinstance(car, str)
                   else {'profile': profile, **car} for car in cars]
        return load_scenario(repo_root / 'config' / 'sim.yaml', repo_root,
                             {'cars': entries, **sections})

    return make


@pytest.fixture(scope='session')
def ring(repo_root: Path) -> TrackWorld:
    return TrackWorld.from_track(load_track('arsim_ring', repo_root / 'maps'))


@pytest.fixture(scope='session')
def random_world() -> TrackWorld:
    """A random track as ``arsim-track random --seed 3`` makes it."""
    made = random_track(seed=RANDOM_SEED)
    name = f'random_{RANDOM_SEED}'
    return TrackWorld.from_track(track_from_centerline(
        name, made.centerline, made.width_right, made.width_left, TrackOptions(name=name)))


@pytest.fixture
def noisy_profile(tmp_path: Path, repo_root: Path) -> str:
    """config/cars/f1tenth.yaml with Gaussian range noise on its scan; returns the file."""
    profile = yaml.safe_load((repo_root / 'config' / 'cars' / 'f1tenth.yaml').read_text())
    profile['Sensors']['scan']['noise_std'] = 0.01
    path = tmp_path / 'f1tenth_noisy.yaml'
    path.write_text(yaml.safe_dump(profile, sort_keys=False))
    return str(path)

