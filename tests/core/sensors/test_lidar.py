"""LiDARs of the embedded backend over a real socket: ranges against analytic distances,
REP-117 values, motion distortion, noise, dropout, intensity and other cars."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scenes import HALF, initial_settings, room_distance, update, yaw_rotation

from arsim_core import beams, labels
from arsim_core.protocol import framing

PERIOD = 50_000_000  # one frame = one revolution at 20 Hz
MOUNT = [0.2, 0.0, 0.5]
ELEVATIONS = list(np.radians(np.linspace(15.0, -15.0, 16)))
LIDAR3D = {'name': 'os', 'type': 'lidar3d', 'rate_hz': 20.0, 'mount': [*MOUNT, 0, 0, 0],
           'channels': 16, 'columns': 256, 'azimuth_start': math.pi,
           'azimuth_increment': -2 * math.pi / 256, 'elevations': ELEVATIONS,
           'range_min': 0.3, 'range_max': 50.0, 'noise_std': 0.0, 'dropout': 0.0}


def expected_ranges(pose: list[float], columns_origin: np.ndarray | None = None) -> np.ndarray:
    """Analytic ranges (channels, columns) of LIDAR3D on a car at ``pose`` (or, per column,
    at the positions ``columns_origin``)."""
    directions = beams.spinning_directions(math.pi, -2 * math.pi / 256, 256, ELEVATIONS)
    rotation = yaw_rotation(pose[5])
    world = directions @ rotation.T
    if columns_origin is None:
        origin = np.array(pose[:3]) + rotation @ MOUNT
        return room_distance(origin, world.reshape(-1, 3)).reshape(16, 256)
    out = np.empty((16, 256))
    for column, origin in enumerate(columns_origin):
        out[:, column] = room_distance(origin, world[:, column])
    return out


def test_3d_ranges_match_analytic_distances(module_backend) -> None:
    ready = initial_settings(module_backend, [LIDAR3D])
    assert ready.header['sensors'] == [{'car': 'ego', 'sensor': 'os', 'type': 'lidar3d'}]
    pose = [0.7, -1.3, 0.0, 0.0, 0.0, 0.4]
    reply = update(module_backend, 1, PERIOD, {'ego': pose}, ['os'])
    meta = framing.frame_meta(reply)
    assert meta['ego/os']['encoding'] == 'ranges'
    assert meta['ego/os']['stamp_ns'] == 0  # the revolution that ended at this frame
    ranges = reply.arrays['ego/os']
    assert ranges.shape == (16, 256) and ranges.dtype == np.float32
    expected = expected_ranges(pose)
    hit = np.isfinite(expected)
    assert hit.sum() > 1000 and (~hit).sum() > 100  # rays over the walls leave the room
    np.testing.assert_allclose(ranges[hit], expected[hit], atol=1e-3)
    assert np.all(np.isposinf(ranges[~hit]))  # REP-117: no return within range_max


def test_too_close_and_too_far_follow_rep117(module_backend) -> None:
    initial_settings(module_backend, [{**LIDAR3D, 'range_min': 3.0, 'range_max': 6.0}])
    pose = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    ranges = update(module_backend, 1, PERIOD, {'ego': pose}, ['os']).arrays['ego/os']
    expected = expected_ranges(pose)
    assert np.all(np.isneginf(ranges[expected < 3.0]))
    assert np.all(np.isposinf(ranges[~(expected <= 6.0)]))
    inside = (expected >= 3.0) & (expected <= 6.0)
    np.testing.assert_allclose(ranges[inside], expected[inside], atol=1e-3)


def test_a_moving_car_distorts_its_cloud_column_by_column(module_backend) -> None:
    initial_settings(module_backend, [LIDAR3D])
    start, end = [-1.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    update(module_backend, 1, PERIOD, {'ego': start}, [])
    reply = update(module_backend, 2, 2 * PERIOD, {'ego': end}, ['os'])
    assert framing.frame_meta(reply)['ego/os']['stamp_ns'] == PERIOD
    ranges = reply.arrays['ego/os']
    # column j is measured at PERIOD + j/256 PERIOD, while the car drives from start to end
    fraction = np.arange(256) / 256
    origins = np.array(start[:3])[None, :] + fraction[:, None] * np.subtract(end, start)[:3]
    expected = expected_ranges(end, origins + MOUNT)
    hit = np.isfinite(expected)
    np.testing.assert_allclose(ranges[hit], expected[hit], atol=1e-3)
    undistorted = expected_ranges(end)
    both = hit & np.isfinite(undistorted)
    assert np.abs(ranges[both] - undistorted[both]).max() > 0.5


def test_noise_and_dropout_have_the_configured_statistics(module_backend) -> None:
    initial_settings(module_backend, [{**LIDAR3D, 'noise_std': 0.02, 'dropout': 0.1}])
    pose = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    ranges = update(module_backend, 1, PERIOD, {'ego': pose}, ['os']).arrays['ego/os']
    expected = expected_ranges(pose)
    dropped = np.isnan(ranges)
    assert 0.07 < dropped.mean() < 0.13
    kept = np.isfinite(expected) & ~dropped & np.isfinite(ranges)
    error = ranges[kept] - expected[kept]
    assert abs(error.mean()) < 0.003 and 0.017 < error.std() < 0.023


def test_intensity_and_reflectivity_follow_the_surface(module_backend) -> None:
    initial_settings(module_backend, [LIDAR3D], split_label=labels.CONE_BLUE)
    pose = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    reply = update(module_backend, 1, PERIOD, {'ego': pose}, ['os'])
    ranges = reply.arrays['ego/os']
    intensity = reply.arrays['ego/os/intensity']
    reflectivity = reply.arrays['ego/os/reflectivity']
    assert reflectivity.dtype == np.uint16 and intensity.dtype == np.float32
    directions = beams.spinning_directions(math.pi, -2 * math.pi / 256, 256, ELEVATIONS)
    horizontal = 7  # the ring closest to level
    azimuth = np.degrees(np.arctan2(directions[horizontal, :, 1], directions[horizontal, :, 0]))
    cone = (azimuth > 5) & (azimuth < 40)  # +x wall, y > 0: retro-reflective
    wall = (azimuth < -5) & (azimuth > -40)  # +x wall, y < 0: barrier
    assert np.all(reflectivity[horizontal, cone] == 150)
    assert np.all(reflectivity[horizontal, wall] == 60)
    assert np.all(np.isfinite(ranges[horizontal, cone | wall]))
    assert intensity[horizontal, cone].mean() > 2 * intensity[horizontal, wall].mean()
    assert np.all(intensity[~np.isfinite(ranges)] == 0.0)


@pytest.mark.parametrize('visible', [True, False])
def test_other_cars_are_seen_but_not_the_own_one(module_backend, visible: bool) -> None:
    footprints = {'ego': [0.6, 0.4, 1.0], 'rival': [0.6, 0.4, 1.0]}
    initial_settings(module_backend, [LIDAR3D], footprints, cars_visible=visible, others=('rival',))
    ego = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    rival = [2.0, 0.0, 0.0, 0.0, 0.0, 0.0]  # its rear face at x = 1.7
    ranges = update(module_backend, 1, PERIOD, {'ego': ego, 'rival': rival},
                    ['os']).arrays['ego/os']
    directions = beams.spinning_directions(math.pi, -2 * math.pi / 256, 256, ELEVATIONS)
    ahead = 128  # azimuth 0
    assert abs(directions[7, ahead, 1]) < 1e-9
    level = 7
    expected = (1.7 - MOUNT[0]) / directions[level, ahead, 0]
    if visible:
        assert ranges[level, ahead] == pytest.approx(expected, abs=1e-3)
    else:
        assert ranges[level, ahead] == pytest.approx(HALF - MOUNT[0], rel=0.05)
    # the own box (ego spans x in [-0.3, 0.3]) never shows: nothing closer than the walls
    behind = 0
    assert ranges[level, behind] > 4.0


def test_2d_scans_carry_intensities(module_backend) -> None:
    scan = {'name': 'scan', 'type': 'lidar2d', 'rate_hz': 20.0, 'mount': [0, 0, 0.5, 0, 0, 0],
            'beams': 360, 'angle_min': -math.pi, 'angle_increment': 2 * math.pi / 360,
            'range_min': 0.1, 'range_max': 30.0, 'noise_std': 0.0}
    initial_settings(module_backend, [scan])
    reply = update(module_backend, 1, PERIOD, {'ego': [0.0] * 6}, ['scan'])
    meta = framing.frame_meta(reply)
    assert meta['ego/scan/intensity']['encoding'] == 'intensity'
    assert meta['ego/scan']['stamp_ns'] == PERIOD
    assert np.all(reply.arrays['ego/scan/intensity'] > 0)


def test_computed_sensors_are_ignored_by_the_backend(module_backend) -> None:
    imu = {'name': 'imu', 'type': 'imu', 'rate_hz': 20.0, 'mount': [0, 0, 0, 0, 0, 0]}
    ready = initial_settings(module_backend, [LIDAR3D, imu])
    assert [s['sensor'] for s in ready.header['sensors']] == ['os']
    reply = update(module_backend, 1, PERIOD, {'ego': [0.0] * 6}, ['imu', 'os'])
    assert set(reply.arrays) == {'ego/os', 'ego/os/intensity', 'ego/os/reflectivity'}


def test_columns_see_other_cars_where_they_were_in_the_frame_of_their_time(module_backend) -> None:
    footprints = {'ego': [0.6, 0.4, 1.0], 'rival': [0.6, 0.4, 1.0]}
    initial_settings(module_backend, [LIDAR3D], footprints, frame_period_ns=PERIOD // 2,
                     others=('rival',))
    ego = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    left, right = [0.0, 2.0, 0.0, 0.0, 0.0, 0.0], [0.0, -2.0, 0.0, 0.0, 0.0, 0.0]
    update(module_backend, 1, PERIOD // 2, {'ego': ego, 'rival': left}, [])
    ranges = update(module_backend, 2, PERIOD, {'ego': ego, 'rival': right},
                    ['os']).arrays['ego/os']
    directions = beams.spinning_directions(math.pi, -2 * math.pi / 256, 256, ELEVATIONS)
    level, left, right = 7, 64, 192  # azimuth +90 deg at 12.5 ms, -90 deg at 37.5 ms
    # left is measured during the first frame (rival on the left, its side face at y = 1.8),
    # right during the second (rival on the right); each sees nothing but walls otherwise
    assert ranges[level, left] == pytest.approx(1.8 / directions[level, left, 1], abs=1e-3)
    assert ranges[level, right] == pytest.approx(-1.8 / directions[level, right, 1], abs=1e-3)
    assert ranges[level, 0] > 4.0 and ranges[level, 128] > 4.0  # behind and ahead: walls


def test_labels_name_what_each_return_hit_when_asked_for(module_backend) -> None:
    initial_settings(module_backend, [{**LIDAR3D, 'labels': True, 'dropout': 0.2}])
    reply = update(module_backend, 1, PERIOD, {'ego': [0.3, 0.2, 0.0, 0.0, 0.0, 0.0]}, ['os'])
    assert framing.frame_meta(reply)['ego/os/labels']['encoding'] == 'labels'
    ranges, point_labels = reply.arrays['ego/os'], reply.arrays['ego/os/labels']
    reflectivity = reply.arrays['ego/os/reflectivity']
    assert point_labels.shape == ranges.shape and point_labels.dtype == np.uint8
    returned = np.isfinite(ranges)
    assert returned.sum() > 1000 and (~returned).sum() > 500  # misses and dropped returns
    assert np.all(point_labels[~returned] == labels.NONE)
    # Each return's label is the surface its reflectivity came from.
    expected = np.rint(100 * np.vectorize(labels.REFLECTIVITY.__getitem__)(
        point_labels[returned]))
    np.testing.assert_array_equal(reflectivity[returned], expected)


def test_no_labels_are_sent_unless_asked_for(module_backend) -> None:
    initial_settings(module_backend, [LIDAR3D])
    reply = update(module_backend, 1, PERIOD, {'ego': [0.0] * 6}, ['os'])
    assert 'ego/os/labels' not in reply.arrays
