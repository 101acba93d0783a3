"""A user's ROS stack as a league runs it: a plain rclpy node that drives one car by
follow-the-gap (an F1TENTH car at 0.4 of its top speed), from the scan topic to the drive
topic it is given, stamping each command with its scan's time. ``--stop-after N`` ends it
after N scans, as a stack that crashes mid-race."""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np
import rclpy
from ackermann_msgs.msg import AckermannDriveStamped
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import LaserScan

from arsim_core.policies import FollowTheGap


class GapStack(Node):
    def __init__(self, scan_topic: str, drive_topic: str, stop_after: int) -> None:
        super().__init__('gap_stack')
        self.policy: FollowTheGap | None = None
        self.scans = 0
        self.stop_after = stop_after
        self.drive = self.create_publisher(AckermannDriveStamped, drive_topic, 10)
        self.create_subscription(LaserScan, scan_topic, self.on_scan, qos_profile_sensor_data)

    def on_scan(self, scan: LaserScan) -> None:
        if self.policy is None:
            self.policy = FollowTheGap(angle_min=scan.angle_min,
                                       angle_increment=scan.angle_increment,
                                       max_steering=0.4189, max_speed=20.0,
                                       range_max=scan.range_max, speed_scale=0.4)
        steering, speed = self.policy.act(np.asarray(scan.ranges, np.float32))
        command = AckermannDriveStamped()
        command.header = scan.header
        command.drive.steering_angle = float(steering)
        command.drive.speed = float(speed) if math.isfinite(speed) else 0.0
        self.drive.publish(command)
        self.scans += 1
        if self.scans == self.stop_after:
            raise SystemExit(0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--scan', required=True)
    parser.add_argument('--drive', required=True)
    parser.add_argument('--stop-after', type=int, default=0, help='scans; 0: never')
    args = parser.parse_args()
    rclpy.init()
    node = GapStack(args.scan, args.drive, args.stop_after)
    try:
        rclpy.spin(node)
    except (SystemExit, KeyboardInterrupt):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
