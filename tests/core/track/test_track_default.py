"""The default track is what every simulator launch uses, so its facts are pinned here."""

from __future__ import annotations

import numpy as np
import pytest

from arsim_core.track import (
    DEFAULT_TRACK,
    LABEL_BARRIER,
    LABEL_GROUND,
    LABEL_ROAD,
    available_tracks,
    load_track,
    polylines,
    rasterize,
    track_mesh,
)
from arsim_core.track.generator import spline_track, track_problems
from arsim_core.track.textfiles import read_numeric_csv


@pytest.fixture(scope='module')
def ring(maps_dir):
    return load_track(DEFAULT_TRACK, maps_dir)


def test_default_track_is_listed(maps_dir):
    assert DEFAULT_TRACK in available_tracks(maps_dir)


def test_default_track_found_without_maps_dir():
    assert load_track(DEFAULT_TRACK).name == DEFAULT_TRACK


def test_default_track_facts(ring):
    assert 60.0 <= ring.length <= 90.0
    width = ring.width_left + ring.width_right
    assert width.min() >= 2.0 and width.max() <= 2.4
    radius = 1.0 / np.abs(ring.curvature).max()
    assert radius >= 2.0
    assert not polylines.self_intersections(ring.centerline)
    assert not track_problems_of(ring)


def track_problems_of(track):
    from arsim_core.track.generator import SplineTrack

    return track_problems(
        SplineTrack(track.centerline, track.width_right, track.width_left), 2.0, 2.0
    )


def test_default_track_has_hairpin_chicane_and_straight(ring):
    kappa = ring.curvature
    s = ring.s
    # Hairpin: about 180 degrees of turning within 12 m of track.
    ds = np.diff(np.append(s, ring.length))
    turn = np.convolve(np.tile(kappa * ds, 2), np.ones(120), 'valid')[: len(s)]
    assert np.abs(turn).max() > np.deg2rad(160)
    # Chicane: a right turn directly followed by a left turn (or the other way round).
    sign = np.sign(np.where(np.abs(kappa) > 1 / 6.0, kappa, 0.0))
    nz = sign[sign != 0]
    changes = np.count_nonzero(nz != np.roll(nz, 1))
    assert changes >= 4
    # Long straight: 15 m of track that stays within 10 cm of a straight line.
    step = ring.length / len(s)
    window = round(15.0 / step)
    pts = np.vstack([ring.centerline, ring.centerline])
    best = np.inf
    for i in range(len(s)):
        seg = pts[i : i + window + 1]
        chord = seg[-1] - seg[0]
        normal = np.array([-chord[1], chord[0]]) / np.hypot(*chord)
        best = min(best, float(np.abs((seg - seg[0]) @ normal).max()))
    assert best < 0.1


def test_default_track_start_pose_on_centerline_heading_forward(ring):
    x, y, yaw = ring.start_pose
    d = np.hypot(ring.centerline[:, 0] - x, ring.centerline[:, 1] - y)
    i = int(np.argmin(d))
    assert d[i] < 1e-9
    nxt = ring.centerline[(i + 1) % len(d)] - ring.centerline[i]
    assert np.dot(nxt, [np.cos(yaw), np.sin(yaw)]) > 0


def test_default_track_regenerates_from_control_points(maps_dir, ring):
    cp = read_numeric_csv(maps_dir / DEFAULT_TRACK / 'control_points.csv', 4, 'cp').values
    made = spline_track(cp[:, :2], cp[:, 2], cp[:, 3], spacing=0.1)
    assert made.centerline.shape == ring.centerline.shape
    np.testing.assert_allclose(made.centerline, ring.centerline, atol=1e-5)


def test_default_track_mesh_layout(ring):
    mesh = track_mesh(ring)
    assert mesh.vertices.dtype == np.float32 and mesh.vertices.shape[1] == 3
    assert mesh.triangles.dtype == np.uint32 and mesh.triangles.shape[1] == 3
    assert mesh.labels.dtype == np.uint8 and mesh.labels.shape == (mesh.triangles.shape[0],)
    assert set(np.unique(mesh.labels)) == {LABEL_ROAD, LABEL_BARRIER, LABEL_GROUND}
    barrier = mesh.vertices[mesh.triangles[mesh.labels == LABEL_BARRIER].ravel()]
    assert barrier[:, 2].min() == pytest.approx(0.0)
    assert barrier[:, 2].max() == pytest.approx(ring.barrier_height)


def test_default_track_raster(ring):
    grid = rasterize(ring, resolution=0.05)
    assert grid.data.dtype == np.int8
    assert set(np.unique(grid.data)) <= {0, 100}
    cells = grid.world_to_cell(ring.left_boundary).astype(int)
    assert np.mean(grid.data[cells[:, 1], cells[:, 0]] == 100) > 0.95
    # The centerline is free road everywhere.
    cells = grid.world_to_cell(ring.centerline).astype(int)
    assert np.all(grid.data[cells[:, 1], cells[:, 0]] == 0)
