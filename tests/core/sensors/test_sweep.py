"""The compiled sweep of a spinning LiDAR gives what the NumPy version gives."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arsim_core.backend import sweep
from arsim_core.backend.hits import Hits
from arsim_core.backend.lidar import Lidar3D, RangeModel
from arsim_core.labels import CAR, NONE, ROAD

pytestmark = pytest.mark.skipif(not sweep.ENABLED, reason='numba is not available')


def _lidar(rng: np.random.Generator) -> Lidar3D:
    spec = {'name': 'os1', 'mount': [0.1, -0.05, 0.3, 0.02, -0.03, 0.4], 'rate_hz': 10.0,
            'columns': 256, 'channels': 16, 'azimuth_start': math.pi,
            'azimuth_increment': -2.0 * math.pi / 256,
            'elevations': list(np.linspace(-0.3, 0.3, 16)), 'range_min': 0.5,
            'range_max': 60.0, 'noise_std': 0.02}
    return Lidar3D.from_wire('ego', spec, seed=int(rng.integers(1 << 31)))


def _poses(rng: np.random.Generator, columns: int) -> np.ndarray:
    poses = np.cumsum(rng.normal(0.0, 0.01, (columns, 6)), axis=0)
    poses[:, :3] += rng.uniform(-50.0, 50.0, 3)
    poses[:, 5] += rng.uniform(-math.pi, math.pi)
    return poses


def test_column_rays_match_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    lidar = _lidar(rng)
    poses = _poses(rng, lidar.local_directions.shape[1])
    origins, directions = lidar._rays(poses)
    monkeypatch.setattr(sweep, 'ENABLED', False)
    expected_origins, expected_directions = lidar._rays(poses)
    assert origins.dtype == directions.dtype == np.float32
    assert directions.shape == expected_directions.shape == (16, 256, 3)
    np.testing.assert_allclose(origins, expected_origins, rtol=0, atol=1e-5)
    np.testing.assert_allclose(directions, expected_directions, rtol=0, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(directions, axis=-1), 1.0, atol=1e-6)


@pytest.mark.parametrize('noise_std', [0.0, 0.03])
def test_measure_matches_numpy(monkeypatch: pytest.MonkeyPatch, noise_std: float) -> None:
    rng = np.random.default_rng(5)
    shape = (16, 300)
    distance = rng.uniform(0.0, 80.0, shape).astype(np.float32)
    distance[rng.random(shape) < 0.2] = np.inf  # misses
    label = rng.choice(np.array([ROAD, CAR, 2, 9], np.uint8), shape)
    label[np.isinf(distance)] = NONE
    cosine = np.where(np.isinf(distance), 0.0, rng.random(shape)).astype(np.float32)
    hits = Hits(distance, label, cosine)

    def returns() -> tuple[np.ndarray, ...]:
        model = RangeModel(0.5, 60.0, noise_std, 0.1, np.random.default_rng(11))
        measured = model.measure(hits)
        return measured.ranges, measured.intensity, measured.reflectivity

    compiled = returns()
    monkeypatch.setattr(sweep, 'ENABLED', False)
    expected = returns()
    for got, want in zip(compiled, expected, strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    ranges = compiled[0]
    assert np.isnan(ranges).any() and np.isposinf(ranges).any() and np.isneginf(ranges).any()
