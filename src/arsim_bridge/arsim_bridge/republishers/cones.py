"""Cones republisher (``type: cones``): the engine's ground-truth cones around a car
(``arsim_core.sensors.computed``: the track's placed cones within ``range_m``, where they stand
or lie in this frame, in base_link), packed as EUFS sim's ``/ground_truth/cones`` has them,
eufs_msgs/ConeArrayWithCovariance by colour."""

from __future__ import annotations

from arsim_bridge import qos
from arsim_bridge.fs_outputs import cone_array
from arsim_bridge.republishers.base import CarFrame, SensorContext
from arsim_core.config.sensors import ConesSpec


class ConesRepublisher:
    def __init__(self, ctx: SensorContext) -> None:
        from eufs_msgs.msg import ConeArrayWithCovariance  # only for a car that has the sensor

        self.ctx = ctx
        self.spec: ConesSpec = ctx.spec
        self.pub = ctx.node.create_publisher(ConeArrayWithCovariance, ctx.topic, qos.SENSOR)

    def static_transforms(self) -> list:
        return []

    def publish(self, frame: CarFrame) -> None:
        car, name = self.ctx.car, self.spec.name
        rows = frame.computed(car, name, 'cones')
        if rows is None:
            return
        self.pub.publish(cone_array(rows, self.ctx.base_frame, frame.stamp_ns(car, name)))
