"""A small follow-the-gap driver: reads only /scan, writes only /drive.

Run as its own process next to a simulation; it knows nothing about arsim. The method: cap far
ranges, blank a safety bubble around the closest obstacle, pick the deepest point of the widest
free gap, steer towards it and slow down in proportion to the steering angle.
"""

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


class FollowTheGap(Node):
    def __init__(self, speed: float, max_steer: float) -> None:
        super().__init__('follow_the_gap')
        self.speed = speed
        self.max_steer = max_steer
        self.bubble_m = 0.4
        self.horizon_m = 4.0
        self.pub = self.create_publisher(AckermannDriveStamped, '/drive', 10)
        self.create_subscription(LaserScan, '/scan', self.on_scan, qos_profile_sensor_data)

    def on_scan(self, scan: LaserScan) -> None:
        ranges = np.asarray(scan.ranges, dtype=np.float64)
        ranges = np.where(np.isfinite(ranges), ranges, np.where(ranges > 0, scan.range_max, 0.0))
        angles = scan.angle_min + scan.angle_increment * np.arange(len(ranges))
        front = np.abs(angles) <= math.radians(100)
        view = np.convolve(np.minimum(ranges, self.horizon_m), np.ones(5) / 5, mode='same')
        view[~front] = 0.0
        closest = int(np.argmin(np.where(front, ranges, np.inf)))
        half_width = int(math.atan2(self.bubble_m, max(ranges[closest], 0.1))
                         / scan.angle_increment)
        view[max(0, closest - half_width):closest + half_width + 1] = 0.0
        free = view > 1.5
        best, best_len, start = (0, 0), 0, None
        for i, is_free in enumerate(np.append(free, False)):
            if is_free and start is None:
                start = i
            elif not is_free and start is not None:
                if i - start > best_len:
                    best, best_len = (start, i), i - start
                start = None
        if best_len == 0:
            target = int(np.argmax(view))
        else:
            gap = view[best[0]:best[1]]
            deepest = np.flatnonzero(gap >= gap.max() - 0.05)
            target = best[0] + int(deepest[len(deepest) // 2])
        steer = float(np.clip(angles[target], -self.max_steer, self.max_steer))
        msg = AckermannDriveStamped()
        msg.header.stamp = scan.header.stamp
        msg.header.frame_id = 'base_link'
        msg.drive.steering_angle = steer
        msg.drive.speed = self.speed * max(0.4, 1.0 - abs(steer) / self.max_steer * 0.6)
        self.pub.publish(msg)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('--speed', type=float, default=3.0)
    parser.add_argument('--max-steer', type=float, default=0.4)
    args = parser.parse_args()
    rclpy.init()
    node = FollowTheGap(args.speed, args.max_steer)
    print('follow_the_gap ready', flush=True)
    try:
        rclpy.spin(node)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
