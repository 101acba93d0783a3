"""GNSS republisher: sensor_msgs/NavSatFix of the antenna, the world frame anchored at the
configured geodetic origin (x east, y north), with Gaussian horizontal and vertical noise."""

from __future__ import annotations

import math

import numpy as np
from sensor_msgs.msg import NavSatFix, NavSatStatus

from arsim_bridge import qos
from arsim_bridge.common import to_time
from arsim_bridge.republishers.base import CarFrame, SensorContext, mount_transforms
from arsim_core.config.sensors import GnssSpec
from arsim_core.sensors.geodesy import enu_to_geodetic


class GnssRepublisher:
    def __init__(self, ctx: SensorContext) -> None:
        self.ctx = ctx
        self.spec: GnssSpec = ctx.spec
        spec = self.spec
        self.pub = ctx.node.create_publisher(NavSatFix, ctx.topic, qos.SENSOR)
        self.rng = np.random.default_rng(ctx.seed)
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
        if not self.ctx.due(frame.step):
            return
        spec, state = self.spec, frame.state
        m = spec.mount
        c, s = math.cos(state.yaw), math.sin(state.yaw)
        east = state.x + c * m.x - s * m.y + self.rng.normal(0.0, spec.horizontal_noise_std)
        north = state.y + s * m.x + c * m.y + self.rng.normal(0.0, spec.horizontal_noise_std)
        up = m.z + self.rng.normal(0.0, spec.vertical_noise_std)
        msg = self.msg
        msg.header.stamp = to_time(frame.time_ns)
        msg.latitude, msg.longitude, msg.altitude = enu_to_geodetic(east, north, up, spec.origin)
        self.pub.publish(msg)
