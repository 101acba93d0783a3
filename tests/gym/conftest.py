"""Fixtures of the Gymnasium environment tests: environments closed after the test, poses on
a track, the real tracks and car profiles with an extra camera or LiDAR noise.

Environments made without a ``profile`` or ``scenario`` get config/cars/f1tenth.yaml with its
LiDAR exact (no noise, no LiDAR effects): these tests compare scans across seeds, steps and
cars standing still, where noise would differ by design. ``noisy_profile`` keeps the effects,
as users get them."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from arsim_core.track import Track
from arsim_gym.env import RaceEnv
from arsim_gym.vector import RaceVectorEnv

RING = 'arsim_ring'
SPIELBERG = Path('f1tenth_racetracks') / 'Spielberg' / 'Spielberg_map.yaml'
MONZA = Path('tum_racetrack_database') / 'Monza.csv'
Pose = tuple[float, float, float]


EXACT_LIDAR = {'noise_std': 0.0, 'dropout': 0.0, 'noise_per_m': 0.0, 'detection_range': 0.0,
               'beam_divergence': 0.0}


@pytest.fixture(scope='session')
def exact_lidar_profile(repo_root: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """config/cars/f1tenth.yaml with its LiDAR's noise and effects off."""
    return str(_profile(repo_root, tmp_path_factory.mktemp('exact_lidar'), 'f1tenth_exact.yaml',
                        lambda data: data['Sensors']['scan'].update(EXACT_LIDAR)))


def _exact_by_default(keywords: dict[str, Any], profile: str) -> None:
    if 'profile' not in keywords and 'scenario' not in keywords:
        keywords['profile'] = profile


@pytest.fixture
def make_env(exact_lidar_profile: str) -> Iterator[Callable[..., RaceEnv]]:
    """``make_env(**keywords)``: a RaceEnv on arsim_ring with one car unless told otherwise,
    its LiDAR exact unless a profile or scenario is given, closed after the test."""
    made: list[RaceEnv] = []

    def make(**keywords: Any) -> RaceEnv:
        keywords.setdefault('track', RING)
        keywords.setdefault('num_cars', 1)
        _exact_by_default(keywords, exact_lidar_profile)
        env = RaceEnv(**keywords)
        made.append(env)
        return env

    yield make
    for env in made:
        env.close()


@pytest.fixture
def make_vector(exact_lidar_profile: str) -> Iterator[Callable[..., RaceVectorEnv]]:
    """``make_vector(num_envs, **keywords)``: a RaceVectorEnv on arsim_ring with one car per
    environment unless told otherwise, its LiDAR exact as ``make_env``'s, closed after the
    test."""
    made: list[RaceVectorEnv] = []

    def make(num_envs: int, **keywords: Any) -> RaceVectorEnv:
        keywords.setdefault('track', RING)
        keywords.setdefault('num_cars', 1)
        _exact_by_default(keywords, exact_lidar_profile)
        env = RaceVectorEnv(num_envs, **keywords)
        made.append(env)
        return env

    yield make
    for env in made:
        env.close()


def _pose_ahead(track: Track, distance: float) -> Pose:
    """The centerline point ``distance`` metres after the one nearest the start pose, heading
    along the track."""
    points = np.asarray(track.centerline, np.float64)
    s = np.asarray(track.s, np.float64)
    length = track.length
    x0, y0, _ = track.start_pose
    first = int(np.argmin(np.hypot(points[:, 0] - x0, points[:, 1] - y0)))
    target = (s[first] + distance) % length
    gap = np.abs((s - target + length / 2.0) % length - length / 2.0)
    i = int(np.argmin(gap))
    return float(points[i, 0]), float(points[i, 1]), float(track.heading[i])


@pytest.fixture(scope='session')
def pose_ahead() -> Callable[[Track, float], Pose]:
    """``pose_ahead(track, d)``: a pose on the centerline d metres past the start line."""
    return _pose_ahead


def _shared_track(shared_tracks: Path, relative: Path) -> Path:
    """A file of the shared track data, or a skip naming it."""
    path = shared_tracks / relative
    if not path.is_file():
        pytest.skip(f'{path} not found')
    return path


@pytest.fixture(scope='session')
def spielberg(shared_tracks: Path) -> Path:
    return _shared_track(shared_tracks, SPIELBERG)


@pytest.fixture(scope='session')
def monza(shared_tracks: Path) -> Path:
    return _shared_track(shared_tracks, MONZA)


def _profile(repo_root: Path, folder: Path, name: str,
             change: Callable[[dict[str, Any]], None]) -> Path:
    data = yaml.safe_load((repo_root / 'config' / 'cars' / 'f1tenth.yaml').read_text())
    change(data)
    path = folder / name
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture
def make_profile(repo_root: Path, tmp_path: Path
                 ) -> Callable[[str, Callable[[dict[str, Any]], None]], Path]:
    """``make_profile(name, change)``: config/cars/f1tenth.yaml, its LiDAR exact as
    ``make_env``'s, as ``change`` edits it, written as ``name`` in the test's folder."""

    def make(name: str, change: Callable[[dict[str, Any]], None]) -> Path:
        def exact_then_change(data: dict[str, Any]) -> None:
            data['Sensors']['scan'].update(EXACT_LIDAR)
            change(data)

        return _profile(repo_root, tmp_path, name, exact_then_change)

    return make


@pytest.fixture
def camera_profile(repo_root: Path, tmp_path: Path) -> Path:
    """config/cars/f1tenth.yaml with a small forward RGB camera named ``cam``."""

    def add_camera(data: dict[str, Any]) -> None:
        data['Sensors']['cam'] = {
            'type': 'camera', 'position': [0.2, 0.0, 0.15], 'rotation': [0.0, 0.0, 0.0],
            'rate_hz': 40.0, 'width': 64, 'height': 48, 'fov_rad': math.radians(90.0),
            'outputs': ['rgb']}

    return _profile(repo_root, tmp_path, 'f1tenth_camera.yaml', add_camera)


@pytest.fixture
def noisy_profile(repo_root: Path, tmp_path: Path) -> Path:
    """config/cars/f1tenth.yaml whose LiDAR has 2 cm of range noise."""

    def add_noise(data: dict[str, Any]) -> None:
        data['Sensors']['scan']['noise_std'] = 0.02

    return _profile(repo_root, tmp_path, 'f1tenth_noisy.yaml', add_noise)
