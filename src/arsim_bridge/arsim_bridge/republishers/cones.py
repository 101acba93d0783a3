"""Cones republisher (``type: cones``): the placed cones around a car as EUFS sim's
``/ground_truth/cones`` has them, eufs_msgs/ConeArrayWithCovariance in base_link, by colour,
those within ``range_m``, where they stand or lie now (the engine's cone rows ride along with
each fan-out frame)."""

from __future__ import annotations

import numpy as np

from arsim_bridge import qos
from arsim_bridge.fs_outputs import cone_array
from arsim_bridge.republishers.base import CarFrame, SensorContext
from arsim_core.config.sensors import ConesSpec
from arsim_core.engine.cones import CONES_ARRAY


class ConesRepublisher:
    def __init__(self, ctx: SensorContext) -> None:
        from eufs_msgs.msg import ConeArrayWithCovariance  # only for a car that has the sensor

        self.ctx = ctx
        self.spec: ConesSpec = ctx.spec
        self.pub = ctx.node.create_publisher(ConeArrayWithCovariance, ctx.topic, qos.SENSOR)

    def static_transforms(self) -> list:
        return []

    def publish(self, frame: CarFrame) -> None:
        if not self.ctx.due(frame.step):
            return
        rows = frame.arrays.get(CONES_ARRAY)
        local = np.zeros((0, 5)) if rows is None else in_car_frame(
            np.asarray(rows), frame.state.x, frame.state.y, frame.state.yaw, self.spec.range_m)
        self.pub.publish(cone_array(local, self.ctx.base_frame, frame.time_ns))


def in_car_frame(rows: np.ndarray, x: float, y: float, yaw: float,
                 range_m: float) -> np.ndarray:
    """Cone rows within ``range_m`` of the car at (x, y, yaw), moved into its frame."""
    offset = rows[:, :2] - (x, y)
    near = np.hypot(offset[:, 0], offset[:, 1]) <= range_m
    cos, sin = np.cos(yaw), np.sin(yaw)
    local = rows[near].copy()
    local[:, 0] = offset[near, 0] * cos + offset[near, 1] * sin
    local[:, 1] = -offset[near, 0] * sin + offset[near, 1] * cos
    return local
