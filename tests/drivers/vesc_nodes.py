"""The two nodes of f1tenth/vesc (ROS 2 branch) that sit between a stack and the VESC, as small
Python nodes doing what theirs do, for a process of their own beside a simulation:

- ``ackermann_to_vesc``: each AckermannDriveStamped on /drive becomes an ERPM on
  /commands/motor/speed (``gain * speed + offset``) and then a servo position on
  /commands/servo/position (``gain * steering_angle + offset``);
- ``vesc_to_odom``: each VescStateStamped on /sensors/core, with the last servo position from
  /sensors/servo_position_command, becomes an Odometry on /odom and odom -> base_link on /tf,
  dead-reckoned with ``speed = (-state.speed - offset) / gain`` and the bicycle's yaw rate.

They know nothing about arsim: their parameters are those of f1tenth_system's vesc.yaml.
"""

from __future__ import annotations

import argparse
import math
import sys

import rclpy
from ackermann_msgs.msg import AckermannDriveStamped
from geometry_msgs.msg import TransformStamped
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions
from rclpy.time import Time
from std_msgs.msg import Float64
from tf2_msgs.msg import TFMessage
from vesc_msgs.msg import VescStateStamped


class AckermannToVesc(Node):
    def __init__(self, args: argparse.Namespace) -> None:
        super().__init__('ackermann_to_vesc_node')
        self.args = args
        self.erpm_pub = self.create_publisher(Float64, '/commands/motor/speed', 10)
        self.servo_pub = self.create_publisher(Float64, '/commands/servo/position', 10)
        self.create_subscription(AckermannDriveStamped, '/drive', self.on_drive, 10)

    def on_drive(self, cmd: AckermannDriveStamped) -> None:
        a = self.args
        self.erpm_pub.publish(Float64(data=a.speed_to_erpm_gain * cmd.drive.speed
                                      + a.speed_to_erpm_offset))
        self.servo_pub.publish(Float64(data=a.steering_angle_to_servo_gain
                                       * cmd.drive.steering_angle
                                       + a.steering_angle_to_servo_offset))


class VescToOdom(Node):
    def __init__(self, args: argparse.Namespace) -> None:
        super().__init__('vesc_to_odom_node')
        self.args = args
        self.x = self.y = self.yaw = 0.0
        self.last_servo: float | None = None
        self.last_stamp: Time | None = None
        self.odom_pub = self.create_publisher(Odometry, '/odom', 10)
        self.tf_pub = self.create_publisher(TFMessage, '/tf', 10)
        self.create_subscription(VescStateStamped, '/sensors/core', self.on_state, 10)
        self.create_subscription(Float64, '/sensors/servo_position_command', self.on_servo, 10)

    def on_servo(self, msg: Float64) -> None:
        self.last_servo = msg.data

    def on_state(self, state: VescStateStamped) -> None:
        if self.last_servo is None:
            return
        a = self.args
        speed = (-state.state.speed - a.speed_to_erpm_offset) / a.speed_to_erpm_gain
        if abs(speed) < 0.05:
            speed = 0.0
        steering = (self.last_servo - a.steering_angle_to_servo_offset) \
            / a.steering_angle_to_servo_gain
        yaw_rate = speed * math.tan(steering) / a.wheelbase
        stamp = Time.from_msg(state.header.stamp)
        dt = 0.0 if self.last_stamp is None else (stamp - self.last_stamp).nanoseconds * 1e-9
        self.last_stamp = stamp
        self.x += speed * math.cos(self.yaw) * dt
        self.y += speed * math.sin(self.yaw) * dt
        self.yaw += yaw_rate * dt
        odom = Odometry()
        odom.header.stamp = state.header.stamp
        odom.header.frame_id, odom.child_frame_id = 'odom', 'base_link'
        odom.pose.pose.position.x, odom.pose.pose.position.y = self.x, self.y
        odom.pose.pose.orientation.z = math.sin(self.yaw / 2.0)
        odom.pose.pose.orientation.w = math.cos(self.yaw / 2.0)
        odom.twist.twist.linear.x, odom.twist.twist.angular.z = speed, yaw_rate
        self.odom_pub.publish(odom)
        tf = TransformStamped()
        tf.header = odom.header
        tf.child_frame_id = 'base_link'
        tf.transform.translation.x, tf.transform.translation.y = self.x, self.y
        tf.transform.rotation = odom.pose.pose.orientation
        self.tf_pub.publish(TFMessage(transforms=[tf]))


def main() -> int:
    parser = argparse.ArgumentParser()
    for name, default in (('speed_to_erpm_gain', 4614.0), ('speed_to_erpm_offset', 0.0),
                          ('steering_angle_to_servo_gain', -1.2135),
                          ('steering_angle_to_servo_offset', 0.5304), ('wheelbase', 0.25)):
        parser.add_argument(f'--{name}', type=float, default=default)
    args = parser.parse_args()
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    nodes = [AckermannToVesc(args), VescToOdom(args)]
    executor = SingleThreadedExecutor()
    for node in nodes:
        executor.add_node(node)
    print('vesc nodes ready', flush=True)
    try:
        executor.spin()
    except KeyboardInterrupt:
        pass
    finally:
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
