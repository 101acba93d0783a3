"""End to end: a car with every kind of sensor, observed over DDS from another process."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from nav_msgs.msg import Odometry
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import (
    CameraInfo,
    Image,
    Imu,
    JointState,
    LaserScan,
    NavSatFix,
    PointCloud2,
)
from simharness import Probe, installed_resources
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from arsim_core import beams, labels
from arsim_core.pinhole import OPTICAL_RPY, Intrinsics
from arsim_core.sensors import cloud
from arsim_core.sensors.geodesy import enu_to_geodetic

STARTUP_S = 90.0
# Deep enough to keep the latched message of every publisher (description and sensor nodes).
LATCHED = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
ORIGIN = [48.2626, 11.6681, 480.0]
SENSORS = {
    'scan': {'type': 'lidar2d', 'position': [0.27, 0.0, 0.11], 'rate_hz': 40.0, 'beams': 1080,
             'fov_rad': 4.7, 'range_max': 30.0},
    'lidar': {'type': 'lidar3d', 'position': [0.0, 0.0, 0.3], 'rate_hz': 20.0, 'channels': 16,
              'columns': 256, 'vertical_fov_rad': 0.5, 'range_min': 0.3, 'range_max': 60.0,
              'labels': True},
    'cam': {'type': 'camera', 'position': [0.2, 0.0, 0.2], 'rate_hz': 20.0, 'width': 160,
            'height': 120, 'fov_rad': 1.5, 'outputs': ['rgb', 'depth', 'semantic']},
    'imu': {'type': 'imu', 'position': [0.1, 0.0, 0.05], 'rate_hz': 40.0},
    'gnss': {'type': 'gnss', 'position': [0.0, 0.0, 0.4], 'rate_hz': 10.0, 'origin': ORIGIN},
    'wheel_odom': {'type': 'wheel_odometry', 'rate_hz': 40.0},
    'truth': {'type': 'ground_truth', 'rate_hz': 40.0},
    'encoders': {'type': 'wheel_encoders', 'rate_hz': 40.0, 'ticks_per_revolution': 4096,
                 'track_width': 0.24},
}


def stamp_ns(stamp) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec


@pytest.fixture
def sensor_sim(simulation, tmp_path: Path):
    profile = yaml.safe_load((installed_resources() / 'config' / 'cars' / 'f1tenth.yaml')
                             .read_text())
    profile['Sensors'] = SENSORS
    path = tmp_path / 'sensor_car.yaml'
    path.write_text(yaml.safe_dump(profile, sort_keys=False))
    return simulation(settings={'simulation': {'wait_for_drivers': False},
                                'cars': [{'name': 'ego', 'profile': str(path)}]})


TOPICS = {'/scan': LaserScan, '/lidar': PointCloud2, '/cam/image_raw': Image,
          '/cam/camera_info': CameraInfo, '/cam/depth/image_raw': Image,
          '/cam/depth/camera_info': CameraInfo, '/cam/semantic/image_raw': Image,
          '/imu': Imu, '/gnss': NavSatFix, '/wheel_odom': Odometry, '/truth': Odometry,
          '/encoders': JointState, '/ego_racecar/odom': Odometry}


def test_every_sensor_publishes_its_message(sensor_sim) -> None:
    probe = Probe(sensor_sim.domain_id)
    try:
        got: dict[str, list] = {topic: [] for topic in [*TOPICS, '/tf_static', '/cam/legend']}
        for topic, kind in TOPICS.items():
            probe.node.create_subscription(kind, topic, got[topic].append, 10)
        probe.node.create_subscription(TFMessage, '/tf_static', got['/tf_static'].append,
                                       LATCHED)
        probe.node.create_subscription(String, '/cam/legend', got['/cam/legend'].append,
                                       LATCHED)
        assert probe.spin_until(lambda: all(len(v) >= 3 for v in got.values()
                                            if v is not got['/tf_static']
                                            and v is not got['/cam/legend'])
                                and got['/cam/legend'] and any(
                                    t.child_frame_id == 'ego_racecar/lidar'
                                    for m in got['/tf_static'] for t in m.transforms),
                                STARTUP_S), \
            {t: len(v) for t, v in got.items()}
        check_cloud(got['/lidar'][-1])
        check_camera(got)
        check_imu_gnss_odometry(got)
        check_static_frames(got['/tf_static'])
    finally:
        probe.close()


def check_cloud(msg: PointCloud2) -> None:
    assert (msg.height, msg.width) == (16, 256)
    assert msg.header.frame_id == 'ego_racecar/lidar'
    assert [(f.name, f.offset, f.datatype, f.count) for f in msg.fields] == [
        ('x', 0, 7, 1), ('y', 4, 7, 1), ('z', 8, 7, 1), ('intensity', 16, 7, 1),
        ('t', 20, 6, 1), ('reflectivity', 24, 4, 1), ('ring', 26, 4, 1), ('ambient', 28, 4, 1),
        ('range', 32, 6, 1), ('label', 36, 2, 1)]
    assert (msg.point_step, msg.row_step) == (48, 48 * 256)
    assert not msg.is_bigendian and not msg.is_dense
    points = np.frombuffer(bytes(msg.data), dtype=cloud.POINT_DTYPE).reshape(16, 256)
    assert np.all(points['ring'] == np.arange(16)[:, None])
    offsets = beams.column_offsets_ns(50_000_000, 256)
    assert np.all(points['t'] == offsets[None, :])
    xyz = np.stack([points['x'], points['y'], points['z']], axis=-1)
    hit = np.all(np.isfinite(xyz), axis=-1)
    assert hit.sum() > 100
    np.testing.assert_allclose(np.linalg.norm(xyz[hit], axis=-1) * 1000.0, points['range'][hit],
                               atol=1.0)
    assert np.all(points['range'][~hit] == 0)
    assert np.all(points['label'][~hit] == labels.NONE)
    assert set(np.unique(points['label'][hit])) <= {labels.ROAD, labels.BARRIER, labels.GROUND,
                                                    *labels.SCENERY}
    assert labels.BARRIER in points['label'][hit]  # the walls around the car
    assert labels.SCENERY_STRUCTURE in points['label'][hit]  # and the hall around the track
    assert stamp_ns(msg.header.stamp) % 50_000_000 == 0  # a revolution starts on a frame


def check_camera(got: dict[str, list]) -> None:
    rgb, depth, semantic = (got[t][-1] for t in ('/cam/image_raw', '/cam/depth/image_raw',
                                                 '/cam/semantic/image_raw'))
    for image, encoding, size in ((rgb, 'rgb8', 3), (depth, '32FC1', 4),
                                  (semantic, 'mono8', 1)):
        assert image.header.frame_id == 'ego_racecar/cam_optical'
        assert (image.width, image.height, image.encoding) == (160, 120, encoding)
        assert image.step == 160 * size and len(image.data) == 160 * 120 * size
    # Each image has a CameraInfo of its stamp. The two come on two topics, so the probe may
    # have seen the first image before its subscription to the infos matched, and the newest
    # before its info.
    info_of = {stamp_ns(info.header.stamp): info for info in got['/cam/camera_info']}
    images = got['/cam/image_raw']
    paired = [image for image in images if stamp_ns(image.header.stamp) in info_of]
    assert paired and len(paired) >= len(images) - 2, \
        ([stamp_ns(i.header.stamp) for i in images], sorted(info_of))
    info = info_of[stamp_ns(paired[-1].header.stamp)]
    assert info.header.frame_id == 'ego_racecar/cam_optical'
    assert list(info.k) == pytest.approx(Intrinsics.from_fov(160, 120, 1.5).k)
    ids = np.frombuffer(bytes(semantic.data), np.uint8)
    legend = json.loads(got['/cam/legend'][-1].data)
    assert legend[str(labels.ROAD)] == 'road' and set(map(str, np.unique(ids))) <= set(legend)
    metres = np.frombuffer(bytes(depth.data), np.float32)
    assert np.all((metres > 0) | np.isposinf(metres))


def check_imu_gnss_odometry(got: dict[str, list]) -> None:
    imu = got['/imu'][-1]
    assert imu.header.frame_id == 'ego_racecar/imu'
    a = imu.linear_acceleration
    assert (a.x, a.y, a.z) == pytest.approx((0.0, 0.0, 9.81), abs=1e-6)  # at rest: +g on z
    truth = got['/truth'][-1]
    assert (truth.header.frame_id, truth.child_frame_id) == ('map', 'ego_racecar/base_link')
    pose = truth.pose.pose
    yaw = 2.0 * math.atan2(pose.orientation.z, pose.orientation.w)
    gnss = got['/gnss'][-1]
    expected = enu_to_geodetic(pose.position.x, pose.position.y, 0.4, tuple(ORIGIN))
    assert (gnss.latitude, gnss.longitude, gnss.altitude) == pytest.approx(expected, abs=1e-8)
    assert gnss.header.frame_id == 'ego_racecar/gnss'
    wheel = got['/wheel_odom'][-1]
    assert (wheel.header.frame_id, wheel.child_frame_id) == ('ego_racecar/wheel_odom',
                                                             'ego_racecar/base_link')
    assert abs(wheel.pose.pose.position.x) < 1e-9  # at rest it has not moved
    assert wheel.pose.covariance[0] == pytest.approx(0.2)
    encoders = got['/encoders'][-1]
    assert encoders.header.frame_id == 'ego_racecar/base_link'
    assert list(encoders.name) == ['rear_left_wheel', 'rear_right_wheel']
    assert list(encoders.position) == list(encoders.velocity) == [0.0, 0.0]  # at rest
    odom = got['/ego_racecar/odom'][-1].pose.pose
    assert (odom.position.x, odom.position.y) == pytest.approx((pose.position.x,
                                                                pose.position.y))
    assert math.isfinite(yaw)


def check_static_frames(messages: list[TFMessage]) -> None:
    static = {(t.header.frame_id, t.child_frame_id): t for m in messages for t in m.transforms}
    for sensor in ('laser', 'lidar', 'cam', 'imu', 'gnss'):
        assert ('ego_racecar/base_link', f'ego_racecar/{sensor}') in static
    optical = static[('ego_racecar/cam', 'ego_racecar/cam_optical')].transform.rotation
    roll, _, yaw = OPTICAL_RPY
    # rpy (-pi/2, 0, -pi/2) = quaternion (0.5, -0.5, 0.5, -0.5) up to sign
    q = np.array([optical.x, optical.y, optical.z, optical.w])
    assert np.allclose(np.abs(q), 0.5) and roll == yaw
    assert ('ego_racecar/base_link', 'ego_racecar/wheel_odom') not in static
