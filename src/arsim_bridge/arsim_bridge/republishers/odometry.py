"""Odometry republishers: wheel odometry integrated as vesc_to_odom does (noisy speed and
steering angle, wheelbase), and the exact ground truth in the world frame."""

from __future__ import annotations

import math

import numpy as np
from nav_msgs.msg import Odometry

from arsim_bridge import qos
from arsim_bridge.common import set_pose_2d, to_time
from arsim_bridge.republishers.base import CarFrame, SensorContext
from arsim_core.config.sensors import WheelOdometrySpec
from arsim_core.sensors.kinematics import WheelOdometry


class WheelOdometryRepublisher:
    """Pose in the sensor's own frame (``header.frame_id``, starting where the car starts);
    no TF is published, base_link already has its parent from the ground-truth odometry."""

    def __init__(self, ctx: SensorContext) -> None:
        self.ctx = ctx
        self.spec: WheelOdometrySpec = ctx.spec
        spec = self.spec
        self.pub = ctx.node.create_publisher(Odometry, ctx.topic, qos.SENSOR)
        self.odometry = WheelOdometry(spec.wheelbase or ctx.wheelbase)
        self.rng = np.random.default_rng(ctx.seed)
        msg = self.msg = Odometry()
        msg.header.frame_id, msg.child_frame_id = ctx.frame, ctx.base_frame
        cx, cy, cyaw = spec.pose_covariance
        covariance = [0.0] * 36
        covariance[0], covariance[7], covariance[35] = cx, cy, cyaw
        msg.pose.covariance = covariance

    def static_transforms(self) -> list:
        return []

    def publish(self, frame: CarFrame) -> None:
        if not self.ctx.due(frame.step):
            return
        spec, state = self.spec, frame.state
        speed = state.vx + self.rng.normal(0.0, spec.speed_noise_std)
        steering = state.steering_angle + self.rng.normal(0.0, spec.steering_noise_std)
        speed, yaw_rate = self.odometry.step(frame.time_ns, speed, steering)
        odometry, msg = self.odometry, self.msg
        msg.header.stamp = to_time(frame.time_ns)
        set_pose_2d(msg.pose.pose, odometry.x, odometry.y, odometry.yaw)
        msg.twist.twist.linear.x, msg.twist.twist.angular.z = speed, yaw_rate
        wheelbase = odometry.wheelbase
        rate_std = math.hypot(math.tan(steering) / wheelbase * spec.speed_noise_std,
                              abs(speed) / wheelbase / math.cos(steering) ** 2
                              * spec.steering_noise_std)
        covariance = [0.0] * 36
        covariance[0], covariance[35] = spec.speed_noise_std ** 2, rate_std ** 2
        msg.twist.covariance = covariance
        self.pub.publish(msg)


class GroundTruthRepublisher:
    """base_link's exact pose in the world frame and its velocity in base_link."""

    def __init__(self, ctx: SensorContext) -> None:
        self.ctx = ctx
        self.pub = ctx.node.create_publisher(Odometry, ctx.topic, qos.SENSOR)
        msg = self.msg = Odometry()
        msg.header.frame_id, msg.child_frame_id = ctx.world_frame, ctx.base_frame

    def static_transforms(self) -> list:
        return []

    def publish(self, frame: CarFrame) -> None:
        if not self.ctx.due(frame.step):
            return
        state, msg = frame.state, self.msg
        msg.header.stamp = to_time(frame.time_ns)
        set_pose_2d(msg.pose.pose, state.x, state.y, state.yaw)
        msg.twist.twist.linear.x, msg.twist.twist.linear.y = state.vx, state.vy
        msg.twist.twist.angular.z = state.yaw_rate
        self.pub.publish(msg)
