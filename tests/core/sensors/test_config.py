"""Sensor declarations: every type parses to what the backend and the republisher need, and an
impossible sensor stops start-up with one error naming the file, the sensor and the key."""

from __future__ import annotations

import math

import pytest

from arsim_core.config.profile import load_profile
from arsim_core.config.sensors import (
    CameraSpec,
    GnssSpec,
    GroundTruthSpec,
    ImuSpec,
    Lidar2DSpec,
    Lidar3DSpec,
    ObjectsSpec,
    WheelEncodersSpec,
    WheelOdometrySpec,
    rendered,
)
from arsim_core.errors import ConfigError

LIDAR3D = {'type': 'lidar3d', 'position': [0.1, 0, 0.3], 'rate_hz': 20.0, 'channels': 32,
           'columns': 1024, 'vertical_fov_rad': 0.58, 'range_min': 0.3, 'range_max': 120.0,
           'noise_std': 0.015, 'dropout': 0.01}
CAMERA = {'type': 'camera', 'position': [0.2, 0, 0.2], 'rate_hz': 20.0, 'width': 640,
          'height': 480, 'fov_rad': 1.5, 'outputs': ['rgb', 'depth', 'semantic']}
ALL = {
    'scan': {'type': 'lidar2d', 'position': [0.27, 0, 0.11], 'rate_hz': 40.0, 'beams': 1080,
             'fov_rad': 4.7, 'range_max': 30.0},
    'lidar': LIDAR3D,
    'camera': CAMERA,
    'imu': {'type': 'imu', 'position': [0, 0, 0.05], 'rate_hz': 40.0, 'accel_noise_std': 0.05,
            'gyro_bias': [0.0, 0.0, 0.01]},
    'gnss': {'type': 'gnss', 'position': [0, 0, 0.2], 'rate_hz': 10.0,
             'origin': [48.26, 11.67, 480.0], 'horizontal_noise_std': 0.5},
    'wheel_odom': {'type': 'wheel_odometry', 'rate_hz': 40.0, 'speed_noise_std': 0.02},
    'truth': {'type': 'ground_truth', 'rate_hz': 40.0},
    'objects': {'type': 'objects', 'rate_hz': 10.0, 'range_m': 30.0},
    'encoders': {'type': 'wheel_encoders', 'rate_hz': 40.0, 'ticks_per_revolution': 1024,
                 'gear_ratio': 2.5, 'track_width': 0.24},
}


def test_every_sensor_type_parses(write_profile) -> None:
    profile = load_profile(write_profile(ALL))
    kinds = {s.name: type(s) for s in profile.sensors}
    assert kinds == {'scan': Lidar2DSpec, 'lidar': Lidar3DSpec, 'camera': CameraSpec,
                     'imu': ImuSpec, 'gnss': GnssSpec, 'wheel_odom': WheelOdometrySpec,
                     'truth': GroundTruthSpec, 'objects': ObjectsSpec,
                     'encoders': WheelEncodersSpec}
    assert profile.sensor('objects').range_m == 30.0
    assert [s.name for s in rendered(profile.sensors)] == ['scan', 'lidar', 'camera']
    lidar = profile.sensor('lidar')
    assert len(lidar.elevations_rad) == 32
    assert lidar.elevations_rad[0] == pytest.approx(0.29)  # ring 0 is the top one
    assert lidar.elevations_rad[-1] == pytest.approx(-0.29)
    assert lidar.azimuth_increment == pytest.approx(-2 * math.pi / 1024)  # clockwise
    wire = lidar.to_wire()
    assert wire['type'] == 'lidar3d' and wire['columns'] == 1024 and wire['labels'] is False
    labelled = load_profile(write_profile({'lidar': {**LIDAR3D, 'labels': True}}))
    assert labelled.sensor('lidar').to_wire()['labels'] is True
    assert profile.sensor('camera').to_wire()['outputs'] == ['rgb', 'depth', 'semantic']
    assert profile.sensor('wheel_odom').mount is None
    assert profile.sensor('imu').gyro_bias == (0.0, 0.0, 0.01)
    encoders = profile.sensor('encoders')
    assert encoders.ticks_per_wheel_revolution == 2560.0 and encoders.mount is None
    assert encoders.joint_names == ('rear_left_wheel', 'rear_right_wheel')


@pytest.mark.parametrize(('sensor', 'key', 'value', 'expected'), [
    ('scan', 'beams', 0, 'expected an integer >= 1'),
    ('scan', 'fov_rad', 7.0, 'expected a number in (0, 6.28'),
    ('lidar', 'channels', 0, 'expected an integer >= 1'),
    ('lidar', 'columns', 0, 'expected an integer >= 1'),
    ('lidar', 'horizontal_fov_rad', 6.5, ', 6.28'),
    ('lidar', 'dropout', 1.0, 'probability in [0, 1)'),
    ('lidar', 'labels', 'yes', 'expected true or false'),
    ('objects', 'range_m', 0, 'expected a number > 0'),
    ('lidar', 'range_max', 0.2, 'expected range_max > range_min'),
    ('camera', 'far_clip', 0.01, 'expected far_clip > near_clip'),
    ('camera', 'width', 0, 'expected an integer >= 1'),
    ('camera', 'width', 20000, 'at most 16384 pixels'),
    ('camera', 'outputs', ['rgb', 'thermal'], 'non-empty list of distinct outputs'),
    ('gnss', 'origin', [91.0, 0.0, 0.0], 'latitude in (-90, 90)'),
    ('encoders', 'ticks_per_revolution', 0, 'expected an integer >= 1'),
    ('encoders', 'ticks_per_revolution', 1 << 30, 'at most 16777216 ticks'),
    ('encoders', 'gear_ratio', 1e308, 'expected a number in (0, 1000'),
    ('encoders', 'track_width', -0.2, 'expected a number in (0, 100'),
    ('encoders', 'joint_names', ['wheel', 'wheel'], 'two different joint names'),
    ('scan', 'latency', -0.01, 'expected a number in [0, 10'),
    ('camera', 'latency_jitter', 11.0, 'expected a number in [0, 10'),
    ('truth', 'latency', 0.1, 'unknown key'),
])
def test_impossible_settings_name_file_sensor_and_key(refused_sensor, sensor, key, value,
                                                      expected) -> None:
    sensors = {name: dict(spec) for name, spec in ALL.items()}
    sensors[sensor][key] = value
    refused_sensor(sensors, sensor, key, expected)


def test_latency_is_read_for_every_sensor_but_the_ground_truth(write_profile) -> None:
    sensors = {name: {**spec, 'latency': 0.05} for name, spec in ALL.items()
               if spec['type'] != 'ground_truth'}
    sensors['imu']['latency_jitter'] = 0.01
    profile = load_profile(write_profile(sensors))
    assert all(spec.latency == 0.05 and spec.late for spec in profile.sensors)
    assert profile.sensor('imu').latency_jitter == 0.01
    assert profile.sensor('scan').latency_jitter == 0.0


def test_an_image_too_large_for_memory_is_refused(write_profile) -> None:
    camera = {**CAMERA, 'width': 16000, 'height': 16000}
    path = write_profile({'camera': camera})
    with pytest.raises(ConfigError, match=r'Sensors\.camera\.width: a 16000 x 16000 image .* '
                                          r'MiB per frame, more than the 1024 MiB'):
        load_profile(path)


def test_unknown_keys_and_types_are_refused(write_profile) -> None:
    with pytest.raises(ConfigError, match=r'Sensors\.lidar\.fov: unknown key'):
        load_profile(write_profile({'lidar': {**LIDAR3D, 'fov': 1.0}}))
    with pytest.raises(ConfigError, match=r"Sensors\.radar\.type: expected one of"):
        load_profile(write_profile({'radar': {'type': 'radar', 'rate_hz': 10.0}}))
    with pytest.raises(ConfigError, match=r"Sensors\.odom\.position: unknown key|"
                                          r"Sensors\.odom: unknown key\(s\) \['position'\]"):
        load_profile(write_profile({'odom': {'type': 'wheel_odometry', 'rate_hz': 40.0,
                                             'position': [0, 0, 0]}}))
