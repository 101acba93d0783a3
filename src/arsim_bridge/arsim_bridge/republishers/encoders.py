"""Wheel encoders republisher: sensor_msgs/JointState of the two rear wheels: the angles their
encoders resolve (whole ticks x 2 pi / ticks per wheel revolution) and the wheels' angular
speeds, from the engine's computed values (``arsim_core.sensors.computed``)."""

from __future__ import annotations

from sensor_msgs.msg import JointState

from arsim_bridge import qos
from arsim_bridge.common import to_time
from arsim_bridge.republishers.base import CarFrame, SensorContext
from arsim_core.config.sensors import WheelEncodersSpec


class WheelEncodersRepublisher:
    """``header.frame_id`` is the car's base frame; the joint names are the spec's."""

    def __init__(self, ctx: SensorContext) -> None:
        self.ctx = ctx
        self.spec: WheelEncodersSpec = ctx.spec
        self.pub = ctx.node.create_publisher(JointState, ctx.topic, qos.SENSOR)
        msg = self.msg = JointState()
        msg.header.frame_id = ctx.base_frame
        msg.name = list(self.spec.joint_names)

    def static_transforms(self) -> list:
        return []

    def publish(self, frame: CarFrame) -> None:
        values = frame.computed(self.ctx.car, self.spec.name, 'wheel_encoders')
        if values is None:
            return
        _, _, left, right, rate_left, rate_right = values.tolist()
        msg = self.msg
        msg.header.stamp = to_time(frame.stamp_ns(self.ctx.car, self.spec.name))
        msg.position = [left, right]
        msg.velocity = [rate_left, rate_right]
        self.pub.publish(msg)
