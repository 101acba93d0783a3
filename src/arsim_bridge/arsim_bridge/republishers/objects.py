"""Objects republisher (``type: objects``): the engine's 3D ground truth around a car
(``arsim_core.sensors.computed``: the track's cones, its placed cones as they stand or lie, and
the other cars' footprint boxes at their poses of the frame, within ``range_m``), packed as
vision_msgs/Detection3DArray in base_link. Class ids as FSOCO names them, score 1; a car's
detection id is its name, a cone's its number on the track."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from vision_msgs.msg import (
    Detection3D,
    Detection3DArray,
    ObjectHypothesis,
    ObjectHypothesisWithPose,
)

from arsim_bridge import qos
from arsim_bridge.common import set_pose_2d, to_time
from arsim_bridge.republishers.base import CarFrame, SensorContext
from arsim_core import labels
from arsim_core.config.sensors import ObjectsSpec
from arsim_core.errors import ProtocolError
from arsim_core.sensors.ground_truth import CLASSES
from arsim_core.sensors.objects import Box3D


class ObjectsRepublisher:
    def __init__(self, ctx: SensorContext) -> None:
        self.ctx = ctx
        self.spec: ObjectsSpec = ctx.spec
        self.pub = ctx.node.create_publisher(Detection3DArray, ctx.topic, qos.SENSOR)
        self.cars = tuple(car.name for car in ctx.scenario.cars)  # a car's id: its index

    def static_transforms(self) -> list:
        return []

    def publish(self, frame: CarFrame) -> None:
        car, name = self.ctx.car, self.spec.name
        rows = frame.computed(car, name, 'objects')
        if rows is None:
            return
        array = Detection3DArray()
        array.header.stamp = to_time(frame.stamp_ns(car, name))
        array.header.frame_id = self.ctx.base_frame
        array.detections = [detection(box, array.header)
                            for box in boxes(rows, self.cars, f'{car}/{name}')]
        self.pub.publish(array)


def boxes(rows: np.ndarray, cars: Sequence[str], frame: str) -> list[Box3D]:
    """The boxes of an objects frame's rows (``arsim_core.sensors.objects.COLUMNS``); a row
    with a label no class has, or a car id that names no car, is refused naming ``frame``."""
    found = []
    for x, y, z, yaw, length, width, height, label, number in rows.tolist():
        if label not in CLASSES or not math.isfinite(number) or not number.is_integer() \
                or number < 0 or (label == labels.CAR and number >= len(cars)):
            msg = (f'frame {frame}: an objects row has label {label} and id {number}; '
                   f'expected a label of {sorted(CLASSES)} and a cone number or car index '
                   f'(below {len(cars)})')
            raise ProtocolError(msg)
        ident = cars[int(number)] if label == labels.CAR else str(int(number))
        found.append(Box3D(int(label), x, y, z, length, width, height, yaw, ident))
    return found


def detection(box: Box3D, header: object) -> Detection3D:
    found = Detection3D(id=box.id)
    found.header = header
    set_pose_2d(found.bbox.center, box.x, box.y, box.yaw)
    found.bbox.center.position.z = box.z
    found.bbox.size.x, found.bbox.size.y, found.bbox.size.z = box.length, box.width, box.height
    found.results = [ObjectHypothesisWithPose(
        hypothesis=ObjectHypothesis(class_id=box.name, score=1.0))]
    found.results[0].pose.pose = found.bbox.center
    return found
