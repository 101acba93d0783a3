"""LiDAR to camera over ROS, as a user checks extrinsics: the shipped calibration scenario runs
(config/calibration/checkerboard.yaml, calibration_car's 3D LiDAR with its effects on); another
process takes the PointCloud2 returns labelled as the board, moves them by the transforms on
/tf_static into the camera's optical frame, projects them through the published CameraInfo
(K and plumb_bob D, cv2.projectPoints) and finds at least 95 % of them on the board's pixels of
a class-id image the camera took while the board held the same pose."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
import yaml
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image, PointCloud2
from simharness import Probe, installed_resources
from tf2_msgs.msg import TFMessage

from arsim_core import labels
from arsim_core.sensors import cloud

STARTUP_S = 120.0
FRAME_NS = 25_000_000  # the scenario's 40 frames/s
FRAMES_PER_POSE = 16  # 0.4 s per pose
REVOLUTION_NS = 50_000_000  # the 20 Hz LiDAR
PAIRS = 3  # poses checked
MIN_ON_BOARD = 0.95
LATCHED = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


def stamp_ns(stamp) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def matrix_of(transform) -> np.ndarray:
    """A geometry_msgs Transform as a 4 x 4 matrix."""
    q = transform.rotation
    x, y, z, w = q.x, q.y, q.z, q.w
    m = np.eye(4)
    m[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                 [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                 [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    t = transform.translation
    m[:3, 3] = [t.x, t.y, t.z]
    return m


def to_root(frame: str, parents: dict[str, tuple[str, np.ndarray]]) -> np.ndarray:
    """root <- ``frame`` through the static tree."""
    matrix = np.eye(4)
    while frame in parents:
        frame, step = parents[frame]
        matrix = step @ matrix
    return matrix


def pose_of(time_ns: int) -> int:
    return round(time_ns / FRAME_NS) // FRAMES_PER_POSE


@pytest.fixture
def board_sim(simulation):
    data = yaml.safe_load((installed_resources() / 'config' / 'calibration' /
                           'checkerboard.yaml').read_text())
    data['calibration_target']['frames_per_pose'] = FRAMES_PER_POSE
    data.pop('description', None)
    return simulation(settings=data, pace=None)


def test_board_returns_land_on_board_pixels_over_ros(board_sim) -> None:
    probe = Probe(board_sim.domain_id)
    clouds: list[PointCloud2] = []
    images: list[Image] = []
    infos: list[CameraInfo] = []
    static: list[TFMessage] = []
    try:
        node = probe.node
        node.create_subscription(PointCloud2, '/calib_lidar', clouds.append, 10)
        node.create_subscription(Image, '/calib_cam/semantic/image_raw', images.append, 10)
        node.create_subscription(CameraInfo, '/calib_cam/camera_info', infos.append, 10)
        node.create_subscription(TFMessage, '/tf_static', static.append, LATCHED)

        def matched() -> list[tuple[PointCloud2, Image]]:
            """Clouds whose revolution lay inside one pose, each with an image of it."""
            out = []
            for c in clouds:
                start = stamp_ns(c.header.stamp)
                pose = pose_of(start)
                if pose_of(start + REVOLUTION_NS + FRAME_NS) != pose:
                    continue
                image = next((i for i in images if pose_of(stamp_ns(i.header.stamp)) == pose),
                             None)
                if image is not None and all(pose_of(stamp_ns(o.header.stamp)) != pose
                                             for o, _ in out):
                    out.append((c, image))
            return out

        assert probe.spin_until(lambda: len(matched()) >= PAIRS and infos and static,
                                STARTUP_S), (
            f'{len(clouds)} clouds, {len(images)} images, {len(infos)} infos\n{board_sim.log}')
        pairs = matched()[:PAIRS]
    finally:
        probe.close()
    info = infos[-1]
    assert info.distortion_model == 'plumb_bob' and any(info.d)
    parents = {t.child_frame_id: (t.header.frame_id, matrix_of(t.transform))
               for m in static for t in m.transforms}
    totals = []
    for msg, image in pairs:
        camera_from_lidar = np.linalg.inv(to_root(image.header.frame_id, parents)) \
            @ to_root(msg.header.frame_id, parents)
        points = np.frombuffer(bytes(msg.data), dtype=cloud.POINT_DTYPE)
        board = (points['label'] == labels.CALIBRATION_TARGET) & np.isfinite(points['x'])
        assert board.sum() >= 200
        xyz = np.stack([points['x'][board], points['y'][board], points['z'][board]], axis=-1)
        in_camera = xyz.astype(np.float64) @ camera_from_lidar[:3, :3].T \
            + camera_from_lidar[:3, 3]
        assert np.all(in_camera[:, 2] > 0.0)
        pixels, _ = cv2.projectPoints(in_camera.reshape(-1, 1, 3), np.zeros(3), np.zeros(3),
                                      np.array(info.k).reshape(3, 3), np.array(info.d))
        column, row = np.rint(pixels.reshape(-1, 2)).astype(int).T
        ids = np.frombuffer(bytes(image.data), np.uint8).reshape(image.height, image.width)
        inside = (column >= 0) & (column < image.width) & (row >= 0) & (row < image.height)
        hits = np.zeros(len(column), bool)
        hits[inside] = ids[row[inside], column[inside]] == labels.CALIBRATION_TARGET
        totals.append(hits)
    fraction = np.concatenate(totals).mean()
    assert fraction >= MIN_ON_BOARD, fraction
