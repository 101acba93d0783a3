"""Labelled data in the formats models train on, from a recorded bag: images as YOLO
(``images/``, ``labels/``, ``data.yaml``) or COCO (``images/``, ``annotations.json``), and
labelled LiDAR clouds as SemanticKITTI (``velodyne/*.bin``, ``labels/*.label``) or NumPy
(``clouds/*.npy``).

Image labels are the 2D ground truth of each frame's own semantic image
(``arsim_core.sensors.ground_truth``), so they match the pixels exactly. Class names follow
FSOCO, the Formula Student cone dataset, plus ``car``, in a fixed order so that datasets
exported at different times (or mixed with FSOCO) agree on the class ids. Cloud labels are the
semantic ids of ``arsim_core.sensors.labels``, named in ``labels.yaml``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final

import cv2
import numpy as np
import yaml

from arsim_core.dataset.frames import (
    CameraFrame,
    DatasetError,
    LabelledCloud,
    camera_frames,
    labelled_clouds,
)
from arsim_core.sensors import labels
from arsim_core.sensors.ground_truth import Box2D, boxes

CLASS_NAMES: Final = ('blue_cone', 'yellow_cone', 'orange_cone', 'large_orange_cone', 'car')
IMAGE_FORMATS: Final = ('yolo', 'coco')
CLOUD_FORMATS: Final = ('kitti', 'npy')
FORMATS: Final = IMAGE_FORMATS + CLOUD_FORMATS


def export(bag: Path, out: Path, fmt: str, sensor: str | None = None,
           progress: Callable[[int], None] | None = None) -> int:
    """Write the labelled frames (images or clouds, by format) of ``bag``, or of its sensor
    topic ``sensor`` only, into the new folder ``out``; the number of frames written.
    ``progress(n)`` is called after each frame."""
    if fmt not in FORMATS:
        msg = f'format {fmt!r} unknown; expected one of {list(FORMATS)}'
        raise DatasetError(msg)
    if out.exists():
        msg = f'{out} exists already; an export needs a new folder'
        raise DatasetError(msg)
    out.mkdir(parents=True)
    count = 0
    if fmt in CLOUD_FORMATS:
        write_cloud = _kitti_cloud if fmt == 'kitti' else _npy_cloud
        for count, cloud in enumerate(labelled_clouds(bag, sensor), start=1):
            write_cloud(out, f'{_file_stem(cloud.lidar)}_{cloud.stamp_ns:019d}', cloud)
            if progress is not None:
                progress(count)
        (out / 'labels.yaml').write_text(yaml.safe_dump(
            {'labels': dict(sorted(labels.NAMES.items()))}, sort_keys=False))
        return count
    (out / 'images').mkdir()
    writer = YoloWriter(out) if fmt == 'yolo' else CocoWriter(out)
    for count, frame in enumerate(camera_frames(bag, sensor), start=1):
        name = f'{_file_stem(frame.camera)}_{frame.stamp_ns:019d}'
        cv2.imwrite(str(out / 'images' / f'{name}.png'),
                    cv2.cvtColor(frame.rgb, cv2.COLOR_RGB2BGR))
        found, instances = boxes(frame.semantic, frame.depth)
        writer.add(name, frame, found, instances)
        if progress is not None:
            progress(count)
    writer.close()
    return count


def _file_stem(topic: str) -> str:
    return topic.strip('/').replace('/', '_')


def _kitti_cloud(out: Path, name: str, cloud: LabelledCloud) -> None:
    """SemanticKITTI: x, y, z, intensity as float32 rows; a uint32 label per point (the
    semantic id in the lower 16 bits, instance 0 above)."""
    for folder in ('velodyne', 'labels'):
        (out / folder).mkdir(exist_ok=True)
    points = np.column_stack([cloud.xyz, cloud.intensity]).astype('<f4')
    points.tofile(out / 'velodyne' / f'{name}.bin')
    cloud.labels.astype('<u4').tofile(out / 'labels' / f'{name}.label')


def _npy_cloud(out: Path, name: str, cloud: LabelledCloud) -> None:
    """One structured array per cloud: x, y, z, intensity (float32) and label (uint8)."""
    (out / 'clouds').mkdir(exist_ok=True)
    points = np.empty(len(cloud.xyz), dtype=CLOUD_DTYPE)
    points['x'], points['y'], points['z'] = cloud.xyz.T
    points['intensity'], points['label'] = cloud.intensity, cloud.labels
    np.save(out / 'clouds' / f'{name}.npy', points)


CLOUD_DTYPE: Final = np.dtype([('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('intensity', '<f4'),
                               ('label', 'u1')])


class YoloWriter:
    """One ``labels/<image>.txt`` per image, ``class cx cy w h`` normalised to the image."""

    def __init__(self, out: Path) -> None:
        self.out = out
        (out / 'labels').mkdir()

    def add(self, name: str, frame: CameraFrame, found: Iterable[Box2D],
            _instances: np.ndarray) -> None:
        height, width = frame.semantic.shape
        lines = []
        for box in found:
            cx, cy = box.center()
            lines.append(f'{CLASS_NAMES.index(box.name)} {cx / width:.6f} {cy / height:.6f} '
                         f'{box.width / width:.6f} {box.height / height:.6f}')
        (self.out / 'labels' / f'{name}.txt').write_text(''.join(f'{line}\n' for line in lines))

    def close(self) -> None:
        data = {'path': str(self.out.resolve()), 'train': 'images', 'val': 'images',
                'names': dict(enumerate(CLASS_NAMES))}
        (self.out / 'data.yaml').write_text(yaml.safe_dump(data, sort_keys=False))


class CocoWriter:
    """``annotations.json``: boxes, pixel areas and outline polygons, with each object's
    truncation and occlusion as attributes."""

    def __init__(self, out: Path) -> None:
        self.out = out
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
        (self.out / 'annotations.json').write_text(json.dumps(document))


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
