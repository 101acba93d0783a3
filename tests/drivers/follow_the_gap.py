"""A small follow-the-gap driver: reads only /scan, writes only /drive.

Run as its own process next to a simulation; it knows nothing about arsim. It uses the
disparity-extender variant of follow-the-gap: where neighbouring beams jump in range, the nearer
range is widened by half the car's width, so the chosen direction always leaves room for the
car's body; then it steers at the farthest free beam ahead and slows down when that beam is
short or far to the side.
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np
from ackermann_msgs.msg import AckermannDriveStamped
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import LaserScan
from spinning import spin_driver  # beside this script

HALF_WIDTH_M = 0.16 + 0.12       # half the car's width plus a safety margin
DISPARITY_M = 0.25               # a jump bigger than this is an edge
FIELD_RAD = math.radians(90)     # only drive towards beams within this angle ahead
SIDE_M = 0.5                     # never turn towards a side that is closer than this


def extend_disparities(ranges: np.ndarray, increment: float) -> np.ndarray:
    """Widen every near edge by the car's half width so gaps narrower than the car vanish."""
    extended = ranges.copy()
    jumps = np.flatnonzero(np.abs(np.diff(ranges)) > DISPARITY_M)
    for i in jumps:
        near, far_side = (i, 1) if ranges[i] < ranges[i + 1] else (i + 1, -1)
        span = int(math.ceil(math.atan2(HALF_WIDTH_M, max(ranges[near], 0.05)) / increment))
        lo, hi = (near, near + span + 1) if far_side > 0 else (max(0, near - span), near + 1)
        extended[lo:hi] = np.minimum(extended[lo:hi], ranges[near])
    return extended


class FollowTheGap(Node):
    def __init__(self, speed: float, max_steer: float, scan: str, drive: str) -> None:
        super().__init__('follow_the_gap')
        self.speed = speed
        self.max_steer = max_steer
        self.pub = self.create_publisher(AckermannDriveStamped, drive, 10)
        self.create_subscription(LaserScan, scan, self.on_scan, qos_profile_sensor_data)

    def on_scan(self, scan: LaserScan) -> None:
        raw = np.asarray(scan.ranges, dtype=np.float64)
        ranges = np.where(np.isposinf(raw), scan.range_max, np.nan_to_num(raw, nan=0.0,
                                                                         neginf=0.0))
        angles = scan.angle_min + scan.angle_increment * np.arange(len(ranges))
        extended = extend_disparities(ranges, scan.angle_increment)
        ahead = np.abs(angles) <= FIELD_RAD
        candidates = np.where(ahead, extended, -1.0)
        best = np.flatnonzero(candidates >= candidates.max() - 0.1)
        target = int(best[np.argmin(np.abs(angles[best]))])
        steer = float(np.clip(angles[target], -self.max_steer, self.max_steer))
        sides = (np.abs(angles) > math.radians(60)) & (np.abs(angles) < math.radians(120))
        if min(ranges[sides & (np.sign(angles) == np.sign(steer))], default=np.inf) < SIDE_M:
            steer = 0.0  # the body would swing into the wall on that side
        front = float(np.min(ranges[np.abs(angles) < math.radians(10)]))
        speed = self.speed * min(1.0, max(0.35, front / 4.0)) \
            * (1.0 - 0.5 * abs(steer) / self.max_steer)
        msg = AckermannDriveStamped()
        msg.header.stamp = scan.header.stamp
        msg.header.frame_id = 'base_link'
        msg.drive.steering_angle = steer
        msg.drive.speed = speed
        self.pub.publish(msg)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('--speed', type=float, default=3.0)
    parser.add_argument('--max-steer', type=float, default=0.41)
    parser.add_argument('--scan', default='/scan')
    parser.add_argument('--drive', default='/drive')
    args = parser.parse_args()
    return spin_driver(lambda: FollowTheGap(args.speed, args.max_steer, args.scan, args.drive))

if __name__ == '__main__':
    sys.exit(main())
