"""A sample Formula Student driver: reads cones, odometry and the AS state, writes Ackermann.

Run as its own process next to a simulation that speaks the EUFS interface; it knows nothing
about arsim. The planning is ``cone_planner``'s: between the blue and yellow cones for
acceleration, autocross and trackdrive (counting the timekeeping gate to stop after the laps),
or along a given path (``--path``, the skidpad's ``path.csv``) from the car's pose. It sends
speed 0 until the autonomous system is in AS Driving, and a command for every cones message.
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np
from ackermann_msgs.msg import AckermannDriveStamped
from cone_planner import ConePlanner, PathFollower  # beside this script
from eufs_msgs.msg import CanState, ConeArrayWithCovariance
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from spinning import spin_driver

AS_DRIVING = 2  # eufs_msgs/CanState as_state
KINDS = ('acceleration', 'skidpad', 'autocross', 'trackdrive')
# The state is published once per change, latched: a late subscriber must still get it.
STATE_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.TRANSIENT_LOCAL)


def cone_points(cones: list) -> np.ndarray:
    """(k, 2) x, y of a list of eufs_msgs/ConeWithCovariance."""
    return np.array([(c.point.x, c.point.y) for c in cones], dtype=float).reshape(-1, 2)


def read_path(path: str) -> np.ndarray:
    """A path file: one ``x_m,y_m`` line per point after a ``#`` header."""
    return np.loadtxt(path, delimiter=',', comments='#', ndmin=2)[:, :2]


class ConeDriver(Node):
    def __init__(self, args: argparse.Namespace) -> None:
        super().__init__('cone_driver')
        self.planner: ConePlanner | PathFollower
        if args.path:
            self.planner = PathFollower(read_path(args.path), args.wheelbase, args.max_steer,
                                        args.max_speed, rear_axle_x=args.rear_axle_x,
                                        stop_short=args.stop_short)
        else:
            self.planner = ConePlanner(args.wheelbase, args.max_steer, args.max_speed,
                                       args.mission, args.laps, rear_axle_x=args.rear_axle_x,
                                       offset=args.offset)
        self.driving = False
        self.pose: tuple[float, float, float] | None = None
        self.speed = 0.0
        self.pub = self.create_publisher(AckermannDriveStamped, args.drive, 10)
        self.create_subscription(ConeArrayWithCovariance, args.cones, self.on_cones,
                                 qos_profile_sensor_data)
        self.create_subscription(Odometry, args.odom, self.on_odom, qos_profile_sensor_data)
        self.create_subscription(CanState, args.state, self.on_state, STATE_QOS)

    def on_state(self, msg: CanState) -> None:
        self.driving = msg.as_state == AS_DRIVING

    def on_odom(self, msg: Odometry) -> None:
        p, q = msg.pose.pose.position, msg.pose.pose.orientation
        yaw = math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))
        self.pose = (p.x, p.y, yaw)
        self.speed = msg.twist.twist.linear.x

    def on_cones(self, msg: ConeArrayWithCovariance) -> None:
        speed, steer = 0.0, 0.0
        if self.driving and isinstance(self.planner, PathFollower):
            if self.pose is not None:  # the path is in the map frame: wait for a pose
                speed, steer = self.planner.step(*self.pose, self.speed)
        elif self.driving:
            cones = {'blue': cone_points(msg.blue_cones),
                     'yellow': cone_points(msg.yellow_cones),
                     'orange': cone_points(msg.orange_cones),
                     'big_orange': cone_points(msg.big_orange_cones)}
            speed, steer = self.planner.step(cones, self.speed)
        out = AckermannDriveStamped()
        out.header.stamp = msg.header.stamp
        out.header.frame_id = 'base_link'
        out.drive.speed = float(speed)
        out.drive.steering_angle = float(steer)
        self.pub.publish(out)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('--mission', choices=KINDS, required=True)
    parser.add_argument('--laps', type=int, required=True)
    parser.add_argument('--path', help='x_m,y_m lines to follow instead of the cones (skidpad)')
    parser.add_argument('--wheelbase', type=float, default=1.53)
    parser.add_argument('--max-steer', type=float, default=0.52)
    parser.add_argument('--max-speed', type=float, default=20.0)
    parser.add_argument('--rear-axle-x', type=float, default=-0.765,
                        help='x of the rear axle in base_link, m (the FS car: its CoG)')
    parser.add_argument('--stop-short', type=float, default=3.2,
                        help='stop the rear axle this far before the path end, m (the FS '
                             "car's front is 2.2 m ahead of it)")
    parser.add_argument('--offset', type=float, default=0.0,
                        help='drive this far left of the middle, m (to hit cones on purpose)')
    parser.add_argument('--cones', default='/ground_truth/cones')
    parser.add_argument('--odom', default='/ground_truth/odom')
    parser.add_argument('--state', default='/ros_can/state')
    parser.add_argument('--drive', default='/cmd')
    args = parser.parse_args()
    if args.mission == 'skidpad' and not args.path:
        parser.error('the skidpad needs --path: its cone midpoints are ambiguous at the crossing')
    return spin_driver(lambda: ConeDriver(args))

if __name__ == '__main__':
    sys.exit(main())
