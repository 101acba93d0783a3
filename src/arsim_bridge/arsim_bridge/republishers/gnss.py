"""GNSS republisher: sensor_msgs/NavSatFix from the engine's computed fix of the antenna
(latitude, longitude, altitude with noise, ``arsim_core.sensors.computed``); the covariance
from the spec."""

from __future__ import annotations

from sensor_msgs.msg import NavSatFix, NavSatStatus

from arsim_bridge import qos
from arsim_bridge.common import to_time
from arsim_bridge.republishers.base import CarFrame, SensorContext, mount_transforms
from arsim_core.config.sensors import GnssSpec


class GnssRepublisher:
    def __init__(self, ctx: SensorContext) -> None:
        self.ctx = ctx
        self.spec: GnssSpec = ctx.spec
        spec = self.spec
        self.pub = ctx.node.create_publisher(NavSatFix, ctx.topic, qos.SENSOR)
        msg = self.msg = NavSatFix()
        msg.header.frame_id = ctx.frame
        msg.status.status = NavSatStatus.STATUS_FIX
        msg.status.service = NavSatStatus.SERVICE_GPS
        h, v = spec.horizontal_noise_std ** 2, spec.vertical_noise_std ** 2
        msg.position_covariance = [h, 0.0, 0.0, 0.0, h, 0.0, 0.0, 0.0, v]
        msg.position_covariance_type = NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN

    def static_transforms(self) -> list:
        return mount_transforms(self.ctx)

    def publish(self, frame: CarFrame) -> None:
        values = frame.computed(self.ctx.car, self.spec.name, 'gnss')
        if values is None:
            return
        msg = self.msg
        msg.header.stamp = to_time(frame.stamp_ns(self.ctx.car, self.spec.name))
        msg.latitude, msg.longitude, msg.altitude = values.tolist()
        self.pub.publish(msg)
