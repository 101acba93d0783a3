"""Odometry republishers: the engine's wheel odometry (integrated as vesc_to_odom does from
noisy speed and steering angle, ``arsim_core.sensors.computed``), and the exact ground truth in
the world frame."""

from __future__ import annotations

from nav_msgs.msg import Odometry

from arsim_bridge import qos
from arsim_bridge.common import set_pose_2d, to_time
from arsim_bridge.republishers.base import CarFrame, SensorContext
from arsim_core.config.sensors import WheelOdometrySpec


class WheelOdometryRepublisher:
    """Pose in the sensor's own frame (``header.frame_id``, starting where the car starts);
    no TF is published, base_link already has its parent from the ground-truth odometry."""

    def __init__(self, ctx: SensorContext) -> None:
        self.ctx = ctx
        self.spec: WheelOdometrySpec = ctx.spec
        spec = self.spec
        self.pub = ctx.node.create_publisher(Odometry, ctx.topic, qos.SENSOR)
        msg = self.msg = Odometry()
        msg.header.frame_id, msg.child_frame_id = ctx.frame, ctx.base_frame
        cx, cy, cyaw = spec.pose_covariance
        covariance = [0.0] * 36
        covariance[0], covariance[7], covariance[35] = cx, cy, cyaw
        msg.pose.covariance = covariance

    def static_transforms(self) -> list:
        return []

    def publish(self, frame: CarFrame) -> None:
        values = frame.computed(self.ctx.car, self.spec.name, 'wheel_odometry')
        if values is None:
            return
        x, y, yaw, speed, yaw_rate, _steering, speed_variance, rate_variance = values.tolist()
        msg = self.msg
        msg.header.stamp = to_time(frame.stamp_ns(self.ctx.car, self.spec.name))
        set_pose_2d(msg.pose.pose, x, y, yaw)
        msg.twist.twist.linear.x, msg.twist.twist.angular.z = speed, yaw_rate
        covariance = [0.0] * 36
        covariance[0], covariance[35] = speed_variance, rate_variance
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
