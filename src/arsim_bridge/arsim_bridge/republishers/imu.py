"""IMU republisher: sensor_msgs/Imu from the engine's computed IMU values (orientation in the
world frame (ENU), angular velocity, specific force with gravity: +g on z at rest; noise and
biases included, ``arsim_core.sensors.computed``); the covariances from the spec."""

from __future__ import annotations

from sensor_msgs.msg import Imu

from arsim_bridge import qos
from arsim_bridge.common import to_time
from arsim_bridge.republishers.base import CarFrame, SensorContext, mount_transforms
from arsim_core.config.sensors import ImuSpec


class ImuRepublisher:
    def __init__(self, ctx: SensorContext) -> None:
        self.ctx = ctx
        self.spec: ImuSpec = ctx.spec
        spec = self.spec
        self.pub = ctx.node.create_publisher(Imu, ctx.topic, qos.SENSOR)
        msg = self.msg = Imu()
        msg.header.frame_id = ctx.frame
        msg.orientation_covariance = _diagonal(spec.orientation_noise_std)
        msg.angular_velocity_covariance = _diagonal(spec.gyro_noise_std)
        msg.linear_acceleration_covariance = _diagonal(spec.accel_noise_std)

    def static_transforms(self) -> list:
        return mount_transforms(self.ctx)

    def publish(self, frame: CarFrame) -> None:
        values = frame.computed(self.ctx.car, self.spec.name, 'imu')
        if values is None:
            return
        qx, qy, qz, qw, wx, wy, wz, ax, ay, az = values.tolist()
        msg = self.msg
        msg.header.stamp = to_time(frame.stamp_ns(self.ctx.car, self.spec.name))
        q = msg.orientation
        q.x, q.y, q.z, q.w = qx, qy, qz, qw
        a = msg.linear_acceleration
        a.x, a.y, a.z = ax, ay, az
        w = msg.angular_velocity
        w.x, w.y, w.z = wx, wy, wz
        self.pub.publish(msg)


def _diagonal(std: float) -> list[float]:
    variance = std * std
    return [variance, 0.0, 0.0, 0.0, variance, 0.0, 0.0, 0.0, variance]
