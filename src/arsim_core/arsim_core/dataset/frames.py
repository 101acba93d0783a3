"""Labelled sensor data out of a recorded bag: each camera's colour image with its semantic (and,
where recorded, depth) image of the same instant, the inputs of its 2D ground truth; and each
3D LiDAR's points with their labels (clouds recorded with ``labels: true``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from rosbags.highlevel import AnyReader, AnyReaderError

from arsim_core.errors import ArsimError

SEMANTIC_SUFFIX = '/semantic/image_raw'
OUTPUTS = {'rgb': '/image_raw', 'semantic': SEMANTIC_SUFFIX, 'depth': '/depth/image_raw'}
CHANNELS = {'rgb8': (np.uint8, 3), 'mono8': (np.uint8, 1), '32FC1': (np.float32, 1)}


class DatasetError(ArsimError):
    """A bag cannot give the frames or labels asked for."""


@dataclass(frozen=True)
class CameraFrame:
    """One camera's images of one instant."""

    camera: str  # its topic, e.g. /camera
    stamp_ns: int
    rgb: NDArray[np.uint8]  # height x width x 3
    semantic: NDArray[np.uint8]  # height x width, arsim_core.sensors.labels
    depth: NDArray[np.float32] | None  # height x width [m], if recorded


@dataclass(frozen=True)
class LabelledCloud:
    """The returns of one LiDAR revolution, points without a return left out."""

    lidar: str  # its topic
    stamp_ns: int
    xyz: NDArray[np.float32]  # n x 3, sensor frame [m]
    intensity: NDArray[np.float32]  # n
    labels: NDArray[np.uint8]  # n, arsim_core.sensors.labels


def cameras(topics: set[str]) -> list[str]:
    """The cameras a bag holds colour and semantic images of."""
    return sorted(topic[:-len(SEMANTIC_SUFFIX)] for topic in topics
                  if topic.endswith(SEMANTIC_SUFFIX)
                  and topic[:-len(SEMANTIC_SUFFIX)] + OUTPUTS['rgb'] in topics)


def image_array(msg: Any) -> NDArray[Any]:
    """A sensor_msgs/Image as an array (rgb8, mono8 and 32FC1, as arsim publishes them)."""
    if msg.encoding not in CHANNELS:
        problem = (f'image encoding {msg.encoding!r} not supported; expected one of '
                   f'{sorted(CHANNELS)}')
        raise DatasetError(problem)
    dtype, channels = CHANNELS[msg.encoding]
    rows = np.frombuffer(msg.data, np.uint8).reshape(msg.height, msg.step)
    pixels = rows[:, :msg.width * channels * np.dtype(dtype).itemsize].copy().view(dtype)
    return pixels.reshape(msg.height, msg.width, channels) if channels > 1 \
        else pixels.reshape(msg.height, msg.width)


def _open(bag: Path) -> AnyReader:
    try:
        reader = AnyReader([Path(bag)])
        reader.open()
    except (AnyReaderError, OSError) as exc:
        msg = f'{bag}: cannot read the bag: {exc}'
        raise DatasetError(msg) from exc
    return reader


def _stamp(msg: Any) -> int:
    return int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec)


def camera_frames(bag: Path, only: str | None = None) -> Iterator[CameraFrame]:
    """Every instant at which a camera of ``bag`` (or only the camera ``only``) has both a
    colour and a semantic image (and a depth image, where the bag holds that topic)."""
    reader = _open(bag)
    try:
        topics = {c.topic for c in reader.connections}
        found = cameras(topics)
        chosen = [c for c in found if only in (None, c)]
        if not chosen:
            msg = (f'{bag}: no camera {only or ""} with colour and semantic images '
                   f'(<camera>/image_raw and <camera>{SEMANTIC_SUFFIX}); cameras: {found}; '
                   f'record a camera whose outputs include rgb and semantic')
            raise DatasetError(msg)
        wanted = {camera + suffix: (camera, output) for camera in chosen
                  for output, suffix in OUTPUTS.items() if camera + suffix in topics}
        needs = {camera: {o for c, o in wanted.values() if c == camera} for camera in chosen}
        pending: dict[tuple[str, int], dict[str, NDArray[Any]]] = {}
        connections = [c for c in reader.connections if c.topic in wanted]
        for connection, _time, raw in reader.messages(connections=connections):
            image: Any = reader.deserialize(raw, connection.msgtype)
            camera, output = wanted[connection.topic]
            stamp = _stamp(image)
            images = pending.setdefault((camera, stamp), {})
            images[output] = image_array(image)
            if images.keys() >= needs[camera]:
                del pending[camera, stamp]
                yield CameraFrame(camera, stamp, images['rgb'], images['semantic'],
                                  images.get('depth'))
    finally:
        reader.close()


def _field(points: NDArray[np.uint8], offset: int, dtype: str) -> NDArray[Any]:
    """One field of every point of a cloud's (points x point_step) bytes."""
    size = np.dtype(dtype).itemsize
    return points[:, offset:offset + size].copy().view(dtype).reshape(-1)


def labelled_clouds(bag: Path, only: str | None = None) -> Iterator[LabelledCloud]:
    """Every cloud of ``bag`` that carries a ``label`` field (or of the LiDAR ``only``)."""
    reader = _open(bag)
    try:
        clouds = [c for c in reader.connections if c.msgtype == 'sensor_msgs/msg/PointCloud2'
                  and only in (None, c.topic)]
        yielded = False
        for connection, _time, raw in reader.messages(connections=clouds):
            cloud: Any = reader.deserialize(raw, connection.msgtype)
            fields = {f.name: f.offset for f in cloud.fields}
            if not {'x', 'y', 'z', 'label'} <= fields.keys():
                continue
            points = np.frombuffer(cloud.data, np.uint8).reshape(-1, cloud.point_step)
            xyz = np.stack([_field(points, fields[axis], '<f4') for axis in 'xyz'], axis=1)
            returned = np.all(np.isfinite(xyz), axis=1)
            intensity = _field(points, fields['intensity'], '<f4') if 'intensity' in fields \
                else np.zeros(len(xyz), np.float32)
            point_labels = _field(points, fields['label'], 'u1')
            yielded = True
            yield LabelledCloud(connection.topic, _stamp(cloud), xyz[returned],
                                intensity[returned], point_labels[returned])
        if not yielded:
            msg = (f'{bag}: no labelled cloud {only or ""} (a PointCloud2 with a label field); '
                   f'record a lidar3d with labels: true')
            raise DatasetError(msg)
    finally:
        reader.close()
