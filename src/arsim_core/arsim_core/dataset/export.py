"""Labelled data in the formats models train on, from a recorded bag: images as YOLO
(``images/``, ``labels/``, ``data.yaml``) or COCO (``images/``, ``annotations.json``), and
labelled LiDAR clouds as SemanticKITTI (``velodyne/*.bin``, ``labels/*.label``) or NumPy
(``clouds/*.npy``).

Image labels are the 2D ground truth of each frame's own semantic image
(``arsim_core.sensors.ground_truth``), so they match the pixels exactly. Class names follow
FSOCO, the Formula Student cone dataset, plus ``car``, in a fixed order so that datasets
exported at different times (or mixed with FSOCO) agree on the class ids. Cloud labels are the
semantic ids of ``arsim_core.labels``, named in ``labels.yaml``.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Final

import cv2
import numpy as np
import yaml

from arsim_core import labels
from arsim_core.dataset.frames import (
    CameraFrame,
    DatasetError,
    LabelledCloud,
    camera_frames,
    labelled_clouds,
)
from arsim_core.sensors.ground_truth import Box2D, boxes

CLASS_NAMES: Final = ('blue_cone', 'yellow_cone', 'orange_cone', 'large_orange_cone', 'car')
IMAGE_FORMATS: Final = ('yolo', 'coco')
CLOUD_FORMATS: Final = ('kitti', 'npy')
FORMATS: Final = IMAGE_FORMATS + CLOUD_FORMATS


def export(bag: Path, out: Path, fmt: str, sensor: str | None = None,
           progress: Callable[[int], None] | None = None) -> int:
    """Write the labelled frames (images or clouds, by format) of ``bag``, or of its sensor
    topic ``sensor`` only, into the new folder ``out``; the number of frames written.
    ``progress(n)`` is called after each frame.

    The dataset is written in ``.<out's name>.partial`` beside ``out`` and renamed to ``out``
    once complete, so a folder of that name is always a whole dataset; an export that fails
    removes what it wrote, one that is killed leaves the partial folder, which the next
    export into ``out`` starts afresh."""
    if fmt not in FORMATS:
        msg = f'format {fmt!r} unknown; expected one of {list(FORMATS)}'
        raise DatasetError(msg)
    out = Path(out)
    if out.exists() or out.is_symlink():
        msg = f'{out} exists already; an export needs a new folder'
        raise DatasetError(msg)
    staging = out.parent / f'.{out.name}.partial'
    with writing(out, staging.name):
        _remove(staging)  # left by an export that was killed
        out.parent.mkdir(parents=True, exist_ok=True)
        staging.mkdir()
    try:
        folder = Folder(staging, out)
        count = (_clouds if fmt in CLOUD_FORMATS else _images)(bag, folder, fmt, sensor,
                                                               progress)
        if not count:  # a damaged index can hide every message: no dataset is not a dataset
            msg = f'{bag}: no frame to export (the bag holds no complete {fmt} frame)'
            raise DatasetError(msg)
        with writing(out, ''):
            staging.rename(out)
    except BaseException:
        _remove(staging)
        raise
    return count


def _clouds(bag: Path, folder: Folder, fmt: str, sensor: str | None,
            progress: Callable[[int], None] | None) -> int:
    write_cloud = _kitti_cloud if fmt == 'kitti' else _npy_cloud
    names = FrameNames(bag)
    for cloud in labelled_clouds(bag, sensor):
        name = names.new(cloud.lidar, cloud.stamp_ns)
        if name is None:
            continue
        write_cloud(folder, name, cloud)
        if progress is not None:
            progress(len(names))
    folder.write_text('labels.yaml', yaml.safe_dump(
        {'labels': dict(sorted(labels.NAMES.items()))}, sort_keys=False))
    return len(names)


def _images(bag: Path, folder: Folder, fmt: str, sensor: str | None,
            progress: Callable[[int], None] | None) -> int:
    folder.mkdir('images')
    writer = YoloWriter(folder) if fmt == 'yolo' else CocoWriter(folder)
    names = FrameNames(bag)
    for frame in camera_frames(bag, sensor):
        name = names.new(frame.camera, frame.stamp_ns)
        if name is None:
            continue
        folder.write_image(f'images/{name}.png', cv2.cvtColor(frame.rgb, cv2.COLOR_RGB2BGR))
        found, instances = boxes(frame.semantic, frame.depth)
        writer.add(name, frame, found, instances)
        if progress is not None:
            progress(len(names))
    writer.close()
    return len(names)


class FrameNames:
    """The file name of each frame: its sensor's topic as the stem (``/car/camera`` as
    ``car_camera``) and its stamp. One file per name, so the dataset holds each instant once and
    its count is what it holds; two sensors whose topics give one stem (``/a/b`` and ``/a_b``)
    are refused, since their frames of one instant would overwrite each other."""

    def __init__(self, bag: Path) -> None:
        self._bag = bag
        self._sensors: dict[str, str] = {}  # stem -> the sensor it stands for
        self._names: set[str] = set()

    def new(self, sensor: str, stamp_ns: int) -> str | None:
        """The name of ``sensor``'s frame at ``stamp_ns``; None if it was written already (its
        messages of that instant recorded twice, in a damaged or merged bag)."""
        stem = sensor.strip('/').replace('/', '_')
        owner = self._sensors.setdefault(stem, sensor)
        if owner != sensor:
            msg = (f'{self._bag}: the sensors {owner} and {sensor} would share the file names '
                   f'{stem}_*; export them one at a time (--sensor)')
            raise DatasetError(msg)
        name = f'{stem}_{stamp_ns:019d}'
        if name in self._names:
            return None
        self._names.add(name)
        return name

    def __len__(self) -> int:
        return len(self._names)


class Folder:
    """The folder a dataset is written in (``path``, until it is renamed to ``final``); every
    write checked, a failure a DatasetError naming the file."""

    def __init__(self, path: Path, final: Path) -> None:
        self.path = path
        self.final = final

    def mkdir(self, name: str) -> None:
        with writing(self.final, name):
            (self.path / name).mkdir(exist_ok=True)

    def write_text(self, name: str, text: str) -> None:
        with writing(self.final, name):
            (self.path / name).write_text(text)

    def write_array(self, name: str, write: Callable[[Path], None]) -> None:
        """``write(path)`` writes the file (``np.save``, ``ndarray.tofile``)."""
        with writing(self.final, name):
            write(self.path / name)

    def write_image(self, name: str, image: np.ndarray) -> None:
        with writing(self.final, name):
            written = cv2.imwrite(str(self.path / name), image)
        if not written:  # OpenCV says no more than that (a full disk, a file size limit)
            msg = f'{self.final}: cannot write {name} (is the disk full?)'
            raise DatasetError(msg)


@contextlib.contextmanager
def writing(out: Path, name: str) -> Iterator[None]:
    """OSError (and OpenCV's errors) while writing ``name`` of the dataset ``out`` as one
    DatasetError naming it."""
    try:
        yield
    except (OSError, cv2.error) as exc:
        if isinstance(exc, OSError) and exc.strerror:
            reason = exc.strerror + (f': {exc.filename}' if exc.filename else '')
        else:
            reason = ' '.join(str(exc).split())
        msg = f'{out}: cannot write {name or "the dataset"} ({reason})'
        raise DatasetError(msg) from exc


def _remove(path: Path) -> None:
    """``path``, whatever it is; a link is removed, never followed."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _kitti_cloud(folder: Folder, name: str, cloud: LabelledCloud) -> None:
    """SemanticKITTI: x, y, z, intensity as float32 rows; a uint32 label per point (the
    semantic id in the lower 16 bits, instance 0 above)."""
    for sub in ('velodyne', 'labels'):
        folder.mkdir(sub)
    points = np.column_stack([cloud.xyz, cloud.intensity]).astype('<f4')
    folder.write_array(f'velodyne/{name}.bin', points.tofile)
    folder.write_array(f'labels/{name}.label', cloud.labels.astype('<u4').tofile)


def _npy_cloud(folder: Folder, name: str, cloud: LabelledCloud) -> None:
    """One structured array per cloud: x, y, z, intensity (float32) and label (uint8)."""
    folder.mkdir('clouds')
    points = np.empty(len(cloud.xyz), dtype=CLOUD_DTYPE)
    points['x'], points['y'], points['z'] = cloud.xyz.T
    points['intensity'], points['label'] = cloud.intensity, cloud.labels
    folder.write_array(f'clouds/{name}.npy', lambda path: np.save(path, points))


CLOUD_DTYPE: Final = np.dtype([('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('intensity', '<f4'),
                               ('label', 'u1')])


class YoloWriter:
    """One ``labels/<image>.txt`` per image, ``class cx cy w h`` normalised to the image."""

    def __init__(self, folder: Folder) -> None:
        self.folder = folder
        folder.mkdir('labels')

    def add(self, name: str, frame: CameraFrame, found: Iterable[Box2D],
            _instances: np.ndarray) -> None:
        height, width = frame.semantic.shape
        lines = []
        for box in found:
            cx, cy = box.center()
            lines.append(f'{CLASS_NAMES.index(box.name)} {cx / width:.6f} {cy / height:.6f} '
                         f'{box.width / width:.6f} {box.height / height:.6f}')
        self.folder.write_text(f'labels/{name}.txt', ''.join(f'{line}\n' for line in lines))

    def close(self) -> None:
        data = {'path': str(self.folder.final.resolve()), 'train': 'images', 'val': 'images',
                'names': dict(enumerate(CLASS_NAMES))}
        self.folder.write_text('data.yaml', yaml.safe_dump(data, sort_keys=False))


class CocoWriter:
    """``annotations.json``: boxes, pixel areas and outline polygons, with each object's
    truncation and occlusion as attributes."""

    def __init__(self, folder: Folder) -> None:
        self.folder = folder
        self.images: list[dict[str, Any]] = []
        self.annotations: list[dict[str, Any]] = []

    def add(self, name: str, frame: CameraFrame, found: Iterable[Box2D],
            instances: np.ndarray) -> None:
        height, width = frame.semantic.shape
        image_id = len(self.images) + 1
        self.images.append({'id': image_id, 'file_name': f'{name}.png', 'width': width,
                            'height': height, 'camera': frame.camera,
                            'stamp_ns': frame.stamp_ns})
        for index, box in enumerate(found, start=1):
            self.annotations.append({
                'id': len(self.annotations) + 1, 'image_id': image_id,
                'category_id': CLASS_NAMES.index(box.name) + 1,
                'bbox': [box.x, box.y, box.width, box.height], 'area': box.pixels,
                'segmentation': outline(instances == index), 'iscrowd': 0,
                'attributes': {'occluded': box.occluded, 'truncated': box.truncated}})

    def close(self) -> None:
        categories = [{'id': i, 'name': name, 'supercategory': 'cone' if 'cone' in name
                       else 'vehicle'} for i, name in enumerate(CLASS_NAMES, start=1)]
        document = {'info': {'description': 'arsim ground truth'}, 'images': self.images,
                    'annotations': self.annotations, 'categories': categories}
        self.folder.write_text('annotations.json', json.dumps(document))


def outline(mask: np.ndarray) -> list[list[float]]:
    """COCO polygons (x, y, x, y, ...) around the pixels of ``mask``, one per region; a region
    of one or two pixels is given its pixel square, since a polygon needs three points."""
    contours, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL,
                                   cv2.CHAIN_APPROX_SIMPLE)
    polygons = []
    for contour in contours:
        points = contour.reshape(-1, 2).astype(float)
        if len(points) < 3:
            x, y = points.min(axis=0)
            w, h = points.max(axis=0) - points.min(axis=0) + 1
            points = np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]])
        polygons.append([float(v) for v in points.reshape(-1)])
    return polygons
