"""Real circuits from the shared data: geometry facts, map frame alignment and round trips."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
import yaml
from track_helpers import F1TENTH_TRACKS, TUM_TRACKS

from arsim_core.config.profile import load_profile
from arsim_core.config.sensors import Lidar2DSpec
from arsim_core.track import (
    OccupancyGridData,
    load_track,
    polylines,
    rasterize,
    track_mesh,
)
from arsim_core.track.centerline import extract_centerline
from arsim_core.track.mapimage import read_ros_map


def _csv_polyline(path):
    """The CSV read independently of the library, to compare against."""
    data = np.loadtxt(path, delimiter=',', comments='#')
    return data


def _closed_length(points):
    return float(np.hypot(*np.diff(np.vstack([points, points[:1]]), axis=0).T).sum())


@pytest.mark.parametrize('name', TUM_TRACKS)
def test_tum_track_geometry(shared_tracks, name):
    path = shared_tracks / 'tum_racetrack_database' / f'{name}.csv'
    data = _csv_polyline(path)
    track = load_track(path)
    assert track.name == name
    # Closed loop, first point not repeated, same points as the file.
    np.testing.assert_allclose(track.centerline, data[:, :2])
    gap = np.hypot(*(track.centerline[-1] - track.centerline[0]))
    assert 0 < gap < 2 * np.median(np.hypot(*np.diff(data[:, :2], axis=0).T))
    expected = _closed_length(data[:, :2])
    assert abs(track.length - expected) / expected < 0.01
    assert track.length > 4000.0  # full scale
    np.testing.assert_allclose(track.width_right, data[:, 2])
    np.testing.assert_allclose(track.width_left, data[:, 3])
    # Walls: closed left and right edges at the CSV widths.
    assert len(track.walls) == 2
    for wall in track.walls:
        assert polylines.is_closed_wall(wall)
    left = track.walls[0][:-1]
    dist = np.hypot(*(left - track.centerline).T)
    np.testing.assert_allclose(dist, data[:, 3], rtol=1e-9)
    # The left edge is on the driver's left.
    normal = polylines.left_normals(track.centerline)
    assert np.all(np.einsum('ij,ij->i', left - track.centerline, normal) > 0)
    x, y, yaw = track.start_pose
    assert (x, y) == tuple(data[0, :2])
    d = track.centerline[1] - track.centerline[0]
    assert np.dot(d, [np.cos(yaw), np.sin(yaw)]) > 0.99 * np.hypot(*d)


@pytest.mark.parametrize('name', TUM_TRACKS)
def test_tum_track_raster_and_mesh(shared_tracks, name):
    track = load_track(shared_tracks / 'tum_racetrack_database' / f'{name}.csv')
    grid = rasterize(track, resolution=0.2)
    assert grid.data.dtype == np.int8 and grid.resolution == 0.2
    # Walls land on occupied cells, the centerline on free ones.
    for wall in track.walls:
        cells = np.floor(grid.world_to_cell(wall)).astype(int)
        assert np.all(grid.data[cells[:, 1], cells[:, 0]] == 100)
    cells = np.floor(grid.world_to_cell(track.centerline)).astype(int)
    assert np.all(grid.data[cells[:, 1], cells[:, 0]] == 0)
    assert track.barrier_height == 1.0  # full-scale default, above the bumper LiDAR
    mesh = track_mesh(track, height=1.0)
    assert mesh.vertices[:, 2].max() == pytest.approx(1.0)


@pytest.mark.parametrize('name', F1TENTH_TRACKS)
def test_f1tenth_track_loads_all_parts(shared_tracks, name):
    folder = shared_tracks / 'f1tenth_racetracks' / name
    track = load_track(folder)
    assert track.name == name
    center = _csv_polyline(folder / f'{name}_centerline.csv')
    np.testing.assert_allclose(track.centerline, center[:, :2])
    expected = _closed_length(center[:, :2])
    assert abs(track.length - expected) / expected < 0.01
    assert 300.0 < track.length < 500.0  # 1:10 scale
    np.testing.assert_allclose(track.width_left + track.width_right, 2.2)
    race = np.loadtxt(folder / f'{name}_raceline.csv', delimiter=';', comments='#')
    np.testing.assert_allclose(track.raceline, race[:, 1:3])
    np.testing.assert_allclose(track.raceline_speed, race[:, 5])
    assert track.walls_are_outlines and track.occupancy is not None
    # Same track through the map yaml directly.
    again = load_track(folder / f'{name}_map.yaml')
    np.testing.assert_allclose(again.centerline, track.centerline)


@pytest.mark.parametrize('name', F1TENTH_TRACKS)
def test_f1tenth_map_frame_matches_image_pixels(shared_tracks, name):
    folder = shared_tracks / 'f1tenth_racetracks' / name
    meta = yaml.safe_load((folder / f'{name}_map.yaml').read_text())
    img = cv2.imread(str(folder / meta['image']), cv2.IMREAD_GRAYSCALE)
    res = meta['resolution']
    ox, oy, _ = meta['origin']
    grid, _, _ = read_ros_map(folder / f'{name}_map.yaml')
    assert grid.data.shape == img.shape
    assert grid.origin == (ox, oy, 0.0) and grid.resolution == res
    # Row 0 of the grid is the image's bottom row.
    np.testing.assert_array_equal(grid.data == 100, (img[::-1] < 255 * (1 - 0.45)))
    # The published centerline runs on white pixels, computed by the map_server formula.
    center = _csv_polyline(folder / f'{name}_centerline.csv')[:, :2]
    cols = np.floor((center[:, 0] - ox) / res).astype(int)
    rows = img.shape[0] - 1 - np.floor((center[:, 1] - oy) / res).astype(int)
    assert np.all(img[rows, cols] > 250)
    # Library frame: each wall vertex is the centre of an occupied image pixel.
    track = load_track(folder)
    for wall in track.walls:
        cols = np.floor((wall[:, 0] - ox) / res).astype(int)
        rows = img.shape[0] - 1 - np.floor((wall[:, 1] - oy) / res).astype(int)
        assert np.all(img[rows, cols] < 255 * (1 - 0.45))
    # And the track is about 2 m wide around the centerline in the map.
    dist = np.min(
        [polylines.point_to_polyline_distance(center, w[:-1]) for w in track.walls], axis=0
    )
    assert 0.8 < np.median(dist) < 1.3


@pytest.mark.parametrize('name', F1TENTH_TRACKS)
def test_f1tenth_walls_rasterise_back_to_the_map(shared_tracks, name):
    folder = shared_tracks / 'f1tenth_racetracks' / name
    track = load_track(folder)
    original = track.occupancy
    grid = rasterize(
        track,
        resolution=original.resolution,
        origin=original.origin,
        shape=original.data.shape,
    )
    a, b = grid.occupied, original.occupied
    iou = np.count_nonzero(a & b) / np.count_nonzero(a | b)
    assert iou >= 0.9, iou


@pytest.mark.parametrize('name', F1TENTH_TRACKS)
def test_f1tenth_walls_rasterise_at_another_resolution(shared_tracks, name):
    track = load_track(shared_tracks / 'f1tenth_racetracks' / name)
    grid = rasterize(track, resolution=0.05)
    # Every occupied cell of the original map lies within one coarse cell of a wall here.
    src = track.occupancy
    rows, cols = np.nonzero(src.occupied)
    world = src.cell_to_world(cols + 0.5, rows + 0.5)
    cells = np.floor(grid.world_to_cell(world)).astype(int)
    occ = cv2.dilate(grid.occupied.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
    assert np.mean(occ[cells[:, 1], cells[:, 0]]) > 0.99


@pytest.mark.parametrize('name', F1TENTH_TRACKS)
def test_centerline_extracted_from_map_matches_published(shared_tracks, name):
    folder = shared_tracks / 'f1tenth_racetracks' / name
    grid, _, _ = read_ros_map(folder / f'{name}_map.yaml')
    center, wr, wl = extract_centerline(grid)
    published = _csv_polyline(folder / f'{name}_centerline.csv')[:, :2]
    cells = polylines.point_to_polyline_distance(center, published) / grid.resolution
    back = polylines.point_to_polyline_distance(published, center) / grid.resolution
    assert cells.mean() <= 2.0 and back.mean() <= 2.0
    assert abs(polylines.closed_length(center) - _closed_length(published)) < 0.01 * len(center)
    assert 1.7 < np.median(wr + wl) < 2.4
    assert polylines.signed_area(center) > 0  # counter-clockwise by default
    assert np.hypot(*center[0]) < 0.5  # starts near the map origin


def test_occupancy_grid_with_yaw_maps_cells_to_world():
    grid = OccupancyGridData(np.zeros((10, 20), np.int8), 0.5, (1.0, 2.0, np.pi / 2))
    np.testing.assert_allclose(grid.cell_to_world(np.array([2.0]), np.array([0.0])), [[1, 3]])
    np.testing.assert_allclose(grid.world_to_cell(np.array([[1.0, 3.0]])), [[2, 0]], atol=1e-12)


@pytest.mark.parametrize(('profile', 'track'), [
    ('full_scale', 'tum_racetrack_database/Spielberg.csv'),
    ('f1tenth', 'f1tenth_racetracks/Spielberg')])
def test_the_2d_lidar_plane_runs_well_below_the_barrier_tops(repo_root, shared_tracks, profile,
                                                              track):
    """A scan plane at the barriers' top edge grazes it (beams pass over or hit by rounding),
    and a roof LiDAR needs the barriers below it (docs/scenes.md): each profile's 2D LiDAR
    sits a fifth of the barrier's height or more below its default top."""
    car = load_profile(repo_root / 'config' / 'cars' / f'{profile}.yaml')
    scan = next(s for s in car.sensors if isinstance(s, Lidar2DSpec))
    height = load_track(shared_tracks / track).barrier_height
    assert scan.mount.z <= 0.8 * height
