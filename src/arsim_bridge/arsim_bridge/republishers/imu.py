"""IMU republisher: sensor_msgs/Imu from the car's state, gravity included (+g on z at rest),
with Gaussian noise and constant biases; orientation relative to the world frame (ENU)."""

from __future__ import annotations

import math

import numpy as np
from sensor_msgs.msg import Imu

from arsim_bridge import qos
from arsim_bridge.common import to_time
from arsim_bridge.republishers.base import CarFrame, SensorContext, mount_transforms
from arsim_core.config.sensors import ImuSpec
from arsim_core.geometry import rotation_matrix
from arsim_core.sensors.kinematics import body_acceleration, specific_force


def _quaternion(matrix: np.ndarray) -> tuple[float, float, float, float]:
    """(x, y, z, w) of a rotation matrix."""
    w = math.sqrt(max(0.0, 1.0 + matrix[0, 0] + matrix[1, 1] + matrix[2, 2])) / 2.0
    x = math.copysign(math.sqrt(max(0.0, 1.0 + matrix[0, 0] - matrix[1, 1] - matrix[2, 2]))
                      / 2.0, matrix[2, 1] - matrix[1, 2])
    y = math.copysign(math.sqrt(max(0.0, 1.0 - matrix[0, 0] + matrix[1, 1] - matrix[2, 2]))
                      / 2.0, matrix[0, 2] - matrix[2, 0])
    z = math.copysign(math.sqrt(max(0.0, 1.0 - matrix[0, 0] - matrix[1, 1] + matrix[2, 2]))
                      / 2.0, matrix[1, 0] - matrix[0, 1])
    return x, y, z, w


class ImuRepublisher:
    def __init__(self, ctx: SensorContext) -> None:
        self.ctx = ctx
        self.spec: ImuSpec = ctx.spec
        spec = self.spec
        self.pub = ctx.node.create_publisher(Imu, ctx.topic, qos.SENSOR)
        m = spec.mount
        self.lever = np.array([m.x, m.y, m.z])
        self.mount_rotation = rotation_matrix(m.roll, m.pitch, m.yaw)
        self.rng = np.random.default_rng(ctx.seed)
        msg = self.msg = Imu()
        msg.header.frame_id = ctx.frame
        msg.orientation_covariance = _diagonal(spec.orientation_noise_std)
        msg.angular_velocity_covariance = _diagonal(spec.gyro_noise_std)
        msg.linear_acceleration_covariance = _diagonal(spec.accel_noise_std)

    def static_transforms(self) -> list:
        return mount_transforms(self.ctx)

    def publish(self, frame: CarFrame) -> None:
        if not self.ctx.due(frame.step):
            return
        spec, state = self.spec, frame.state
        accel = frame.accel or body_acceleration(frame.previous, state)
        force = specific_force(accel, state.yaw_rate, spec.gravity, self.lever,
                               self.mount_rotation)
        force += np.asarray(spec.accel_bias) + self.rng.normal(0.0, spec.accel_noise_std, 3)
        rate = self.mount_rotation.T @ np.array([0.0, 0.0, state.yaw_rate])
        rate += np.asarray(spec.gyro_bias) + self.rng.normal(0.0, spec.gyro_noise_std, 3)
        roll, pitch, yaw = self.rng.normal(0.0, spec.orientation_noise_std, 3)
        orientation = rotation_matrix(roll, pitch, yaw + state.yaw) @ self.mount_rotation
        msg = self.msg
        msg.header.stamp = to_time(frame.time_ns)
        q = msg.orientation
        q.x, q.y, q.z, q.w = _quaternion(orientation)
        a = msg.linear_acceleration
        a.x, a.y, a.z = (float(v) for v in force)
        w = msg.angular_velocity
        w.x, w.y, w.z = (float(v) for v in rate)
        self.pub.publish(msg)


def _diagonal(std: float) -> list[float]:
    variance = std * std
    return [variance, 0.0, 0.0, 0.0, variance, 0.0, 0.0, 0.0, variance]
