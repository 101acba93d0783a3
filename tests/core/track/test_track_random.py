"""Random tracks: every seed gives a valid track, and the same seed the same track."""

from __future__ import annotations

import time

import numpy as np
import pytest
import shapely

from arsim_core.errors import TrackError
from arsim_core.track import load_track
from arsim_core.track.cli import main as cli_main
from arsim_core.track.generator import RandomTrackParams, random_track

SEEDS = 1000


def _radius(points: np.ndarray) -> np.ndarray:
    """Radius of the circle through each point and its two neighbours."""
    a, b, c = np.roll(points, 1, axis=0), points, np.roll(points, -1, axis=0)
    la = np.hypot(*(b - a).T)
    lb = np.hypot(*(c - b).T)
    lc = np.hypot(*(a - c).T)
    area2 = np.abs((b - a)[:, 0] * (c - a)[:, 1] - (b - a)[:, 1] * (c - a)[:, 0])
    with np.errstate(divide='ignore'):
        return la * lb * lc / (2.0 * area2)


def _edges(center, wr, wl):
    d = np.roll(center, -1, axis=0) - np.roll(center, 1, axis=0)
    d /= np.hypot(*d.T)[:, None]
    n = np.stack([-d[:, 1], d[:, 0]], axis=1)
    return center + n * wl[:, None], center - n * wr[:, None]


def check_seeds(seeds: range, params: RandomTrackParams) -> list[str]:
    """Problems found in the tracks of ``seeds`` (empty when all are valid)."""
    problems = []
    for seed in seeds:
        p = RandomTrackParams(**{**params.__dict__, 'seed': seed})
        track = random_track(p)
        c = track.centerline
        if c.shape[0] < 3 or np.allclose(c[0], c[-1]):
            problems.append(f'seed {seed}: not a closed point list')
        if not shapely.LinearRing(c).is_simple:
            problems.append(f'seed {seed}: centerline crosses itself')
        left, right = _edges(c, track.width_right, track.width_left)
        lring, rring = shapely.LinearRing(left), shapely.LinearRing(right)
        if not (lring.is_simple and rring.is_simple) or lring.intersects(rring):
            problems.append(f'seed {seed}: track edges cross')
        if _radius(c).min() < p.min_radius * (1 - 1e-6):
            problems.append(f'seed {seed}: radius {_radius(c).min():.3f} < {p.min_radius}')
        width = track.width_left + track.width_right
        if width.min() < p.min_width * (1 - 1e-6):
            problems.append(f'seed {seed}: width {width.min():.3f} < {p.min_width}')
        if width.max() > p.min_width + p.width_variation + 1e-6:
            problems.append(f'seed {seed}: width {width.max():.3f} above the limit')
        half = 0.5 * np.asarray(p.area)
        if np.any(np.abs(np.vstack([left, right])) > half + 1e-6):
            problems.append(f'seed {seed}: leaves the area')
        step = np.hypot(*np.diff(np.vstack([c, c[:1]]), axis=0).T)
        if abs(step.mean() - p.spacing) > 0.05 * p.spacing:
            problems.append(f'seed {seed}: spacing {step.mean():.3f} m')
    return problems


def test_thousand_seeds_all_valid():
    start = time.perf_counter()
    problems = check_seeds(range(SEEDS), RandomTrackParams())
    elapsed = time.perf_counter() - start
    assert not problems, problems[:10]
    assert elapsed < 60.0, f'{SEEDS} seeds took {elapsed:.1f} s'


def test_full_scale_parameters_are_met():
    params = RandomTrackParams(
        waypoints=16,
        area=(900.0, 600.0),
        min_radius=15.0,
        min_width=10.0,
        width_variation=4.0,
        spacing=5.0,
    )
    assert not check_seeds(range(40), params)


def test_same_seed_same_track_other_seed_other_track():
    a = random_track(seed=42)
    b = random_track(seed=42)
    c = random_track(seed=43)
    np.testing.assert_array_equal(a.centerline, b.centerline)
    np.testing.assert_array_equal(a.width_left, b.width_left)
    assert a.centerline.shape != c.centerline.shape or not np.allclose(a.centerline, c.centerline)


def test_tracks_are_not_all_ovals():
    # Some corners must be tight: a generator that only gave ovals would pass the limits.
    tight = [1.0 / np.abs(_radius_inv(random_track(seed=s).centerline)).max() for s in range(30)]
    assert np.median(tight) < 4.0


def _radius_inv(points):
    return 1.0 / _radius(points)


def test_infeasible_parameters_are_refused():
    with pytest.raises(TrackError, match='cannot hold a track'):
        random_track(area=(8.0, 6.0), min_radius=3.0)
    with pytest.raises(TrackError, match='at least 4 waypoints'):
        random_track(waypoints=3)


def test_cli_random_writes_a_loadable_track(tmp_path):
    assert cli_main(['random', str(tmp_path / 'r5'), '--seed', '5']) == 0
    track = load_track(tmp_path / 'r5')
    assert track.name == 'r5'
    np.testing.assert_allclose(track.centerline, random_track(seed=5).centerline, atol=1e-6)
    assert cli_main(['random', str(tmp_path / 'r5.csv'), '--seed', '5']) == 0
    assert load_track(tmp_path / 'r5.csv').centerline.shape == track.centerline.shape
