"""Labelled sensor data out of a recorded bag: each camera's colour image with its semantic (and,
where recorded, depth) image of the same instant, the inputs of its 2D ground truth; and each
3D LiDAR's points with their labels (clouds recorded with ``labels: true``)."""

from __future__ import annotations

import contextlib
import sqlite3
import struct
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw
import numpy as np
from numpy.typing import NDArray
from rosbags.highlevel import AnyReader, AnyReaderError
from rosbags.rosbag2 import ReaderError

from arsim_core.errors import ArsimError
from arsim_core.recording.bag import RecordingError
from arsim_core.recording.metadata import load_metadata

SEMANTIC_SUFFIX = '/semantic/image_raw'
OUTPUTS = {'rgb': '/image_raw', 'semantic': SEMANTIC_SUFFIX, 'depth': '/depth/image_raw'}
CHANNELS = {'rgb8': (np.uint8, 3), 'mono8': (np.uint8, 1), '32FC1': (np.float32, 1)}
ENCODINGS = {'rgb': 'rgb8', 'semantic': 'mono8', 'depth': '32FC1'}
MAX_SIDE = 16384  # pixels
# what a message whose bytes or fields are corrupt raises while it is decoded
CORRUPT = (ValueError, TypeError, IndexError, KeyError, AttributeError, struct.error,
           OverflowError, AssertionError)


class DatasetError(ArsimError):
    """A bag cannot give the frames or labels asked for."""


@dataclass(frozen=True)
class CameraFrame:
    """One camera's images of one instant."""

    camera: str  # its topic, e.g. /camera
    stamp_ns: int
    rgb: NDArray[np.uint8]  # height x width x 3
    semantic: NDArray[np.uint8]  # height x width, arsim_core.labels
    depth: NDArray[np.float32] | None  # height x width [m], if recorded


@dataclass(frozen=True)
class LabelledCloud:
    """The returns of one LiDAR revolution, points without a return left out."""

    lidar: str  # its topic
    stamp_ns: int
    xyz: NDArray[np.float32]  # n x 3, sensor frame [m]
    intensity: NDArray[np.float32]  # n
    labels: NDArray[np.uint8]  # n, arsim_core.labels


def cameras(topics: set[str]) -> list[str]:
    """The cameras a bag holds colour and semantic images of."""
    return sorted(topic[:-len(SEMANTIC_SUFFIX)] for topic in topics
                  if topic.endswith(SEMANTIC_SUFFIX)
                  and topic[:-len(SEMANTIC_SUFFIX)] + OUTPUTS['rgb'] in topics)


def image_array(msg: Any) -> NDArray[Any]:
    """A sensor_msgs/Image as an array (rgb8, mono8 and 32FC1, as arsim publishes them); a
    DatasetError when its fields do not describe its data."""
    if msg.encoding not in CHANNELS:
        problem = (f'image encoding {msg.encoding!r:.40} not supported; expected one of '
                   f'{sorted(CHANNELS)}')
        raise DatasetError(problem)
    dtype, channels = CHANNELS[msg.encoding]
    row = msg.width * channels * np.dtype(dtype).itemsize
    if not (0 < msg.height <= MAX_SIDE and 0 < msg.width <= MAX_SIDE
            and row <= msg.step <= 4 * row and len(msg.data) == msg.height * msg.step):
        problem = (f'image fields do not fit its data: {msg.width}x{msg.height} '
                   f'{msg.encoding}, step {msg.step}, {len(msg.data)} bytes; expected sides '
                   f'of 1 to {MAX_SIDE} pixels, a step of at least {row} and height x step '
                   f'bytes')
        raise DatasetError(problem)
    rows = np.frombuffer(msg.data, np.uint8).reshape(msg.height, msg.step)
    pixels = rows[:, :row].copy().view(dtype)
    return pixels.reshape(msg.height, msg.width, channels) if channels > 1 \
        else pixels.reshape(msg.height, msg.width)


# What rosbags raises for a damaged bag: it reads metadata.yaml as UTF-8 (a ValueError if it is
# not) with a recursive parser, the storage files' headers with asserts and lookups of what they
# hold, a damaged MCAP index gives it record lengths to allocate of up to 2^64 bytes, and it
# reads SQLite files through apsw.
_UNREADABLE = (AnyReaderError, ReaderError, OSError, RecursionError, MemoryError, sqlite3.Error,
               apsw.Error, *CORRUPT)


def _unreadable(bag: Path, exc: BaseException) -> DatasetError:
    problem = ' '.join(str(exc).split())[:300] or type(exc).__name__
    return DatasetError(f'{bag}: cannot read the bag: {problem}')


def _open(bag: Path) -> AnyReader:
    """The bag's reader, once its metadata names only storage files inside it (rosbags would
    follow a link out of the bag, and read what it leads to)."""
    try:
        load_metadata(bag)
    except RecordingError as exc:
        raise DatasetError(str(exc)) from exc
    try:
        reader = AnyReader([Path(bag)])
        reader.open()
    except _UNREADABLE as exc:
        raise _unreadable(bag, exc) from exc
    return reader


def _messages(bag: Path, reader: AnyReader, connections: list[Any]
              ) -> Iterator[tuple[Any, int, bytes]]:
    """``reader.messages`` of ``connections``, a storage file that breaks while it is read
    being one DatasetError naming the bag."""
    messages = reader.messages(connections=connections)
    while True:
        try:
            message = next(messages)
        except StopIteration:
            return
        except _UNREADABLE as exc:
            raise _unreadable(bag, exc) from exc
        yield message


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
        index = Counter[str]()
        for connection, time, raw in _messages(bag, reader, connections):
            topic = connection.topic
            index[topic] += 1
            with corrupt_message(bag, topic, index[topic], time):
                image: Any = reader.deserialize(raw, connection.msgtype)
                camera, output = wanted[topic]
                stamp = _stamp(image)
                images = pending.setdefault((camera, stamp), {})
                if image.encoding != ENCODINGS[output]:
                    problem = (f'its encoding is {image.encoding!r:.40}; expected '
                               f'{ENCODINGS[output]!r} for a {output} image')
                    raise DatasetError(problem)
                images[output] = image_array(image)
                shapes = {array.shape[:2] for array in images.values()}
                if len(shapes) > 1:
                    problem = (f'its image is {images[output].shape[1]}x'
                               f'{images[output].shape[0]}, the other images of its camera at '
                               f'that instant are not')
                    raise DatasetError(problem)
            if images.keys() >= needs[camera]:
                del pending[camera, stamp]
                yield CameraFrame(camera, stamp, images['rgb'], images['semantic'],
                                  images.get('depth'))
    finally:
        reader.close()


def _points(cloud: Any) -> NDArray[np.uint8]:
    """A cloud's bytes as points x point_step."""
    step = cloud.point_step
    if not 0 < step <= 4096 or len(cloud.data) % step:
        problem = f'its {len(cloud.data)} bytes are not whole points of point_step {step}'
        raise DatasetError(problem)
    return np.frombuffer(cloud.data, np.uint8).reshape(-1, step)


def _field(points: NDArray[np.uint8], offset: int, dtype: str) -> NDArray[Any]:
    """One field of every point of a cloud's (points x point_step) bytes."""
    size = np.dtype(dtype).itemsize
    if not 0 <= offset <= points.shape[1] - size:
        problem = f'a field at offset {offset} does not fit in point_step {points.shape[1]}'
        raise DatasetError(problem)
    return points[:, offset:offset + size].copy().view(dtype).reshape(-1)


@contextlib.contextmanager
def corrupt_message(bag: Path, topic: str, index: int, time_ns: int) -> Iterator[None]:
    """A message of ``bag`` that cannot be decoded (or whose fields do not fit its data) as
    one DatasetError naming its topic and place, the ``index``-th of the topic."""
    try:
        yield
    except (DatasetError, AnyReaderError, *CORRUPT) as exc:
        problem = ' '.join(str(exc).split())[:300] or type(exc).__name__
        msg = (f'{bag}: {topic}: message {index} (recorded at t={time_ns / 1e9:.3f} s) is '
               f'corrupt: {problem}')
        raise DatasetError(msg) from exc


def labelled_clouds(bag: Path, only: str | None = None) -> Iterator[LabelledCloud]:
    """Every cloud of ``bag`` that carries a ``label`` field (or of the LiDAR ``only``)."""
    reader = _open(bag)
    try:
        clouds = [c for c in reader.connections if c.msgtype == 'sensor_msgs/msg/PointCloud2'
                  and only in (None, c.topic)]
        yielded = False
        index = Counter[str]()
        for connection, time, raw in _messages(bag, reader, clouds):
            index[connection.topic] += 1
            with corrupt_message(bag, connection.topic, index[connection.topic], time):
                cloud: Any = reader.deserialize(raw, connection.msgtype)
                fields = {f.name: f.offset for f in cloud.fields}
                if not {'x', 'y', 'z', 'label'} <= fields.keys():
                    continue
                points = _points(cloud)
                xyz = np.stack([_field(points, fields[axis], '<f4') for axis in 'xyz'], axis=1)
                returned = np.all(np.isfinite(xyz), axis=1)
                intensity = _field(points, fields['intensity'], '<f4') \
                    if 'intensity' in fields else np.zeros(len(xyz), np.float32)
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
