"""A minimal dynamics node of one's own: a unicycle that replaces arsim's model for one car.

It imports nothing from arsim but its message definitions, to show (and to test) that any node
keeping the contract in docs/dynamics-node.md can integrate a car declared ``dynamics: external``.

The model: the commanded speed v [m/s] is taken at once, the steering angle d [rad] becomes a
yaw rate w = v tan(d) / WHEELBASE_M, and the pose follows the exact arc for (v, w). The first
three ``model_state`` entries are x, y, yaw.

Topic names are relative; remap them as the launcher remaps arsim's own node::

    python3 custom_dynamics_node.py --ros-args -p car:=ego -r state:=/arsim/ego/state \\
        -r drive:=/drive -r reset:=/arsim/ego/reset -r track:=/arsim/track \\
        -r events:=/arsim/events

Parameter ``start_pose`` ([x, y, yaw]) gives the start pose; without it the car starts on the
track's start pose, which is right for the first car of a scene that names no pose for it.
"""

from __future__ import annotations

import math
import sys

import rclpy
from ackermann_msgs.msg import AckermannDriveStamped
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Pose
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock

from arsim_msgs.msg import CarReset, CarState, SimEvent, TrackGeometry

WHEELBASE_M = 0.3302  # F1TENTH: 0.15875 m + 0.17145 m
MODEL_NAME = 'unicycle'

# The QoS the contract asks for (the same as arsim_bridge.qos, spelled out here).
STREAM = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                    reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
LATCHED = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                     reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)

Pose2D = tuple[float, float, float]


def arc(pose: Pose2D, v: float, w: float, dt: float) -> Pose2D:
    """Exact unicycle motion over ``dt`` at constant speed ``v`` and yaw rate ``w``."""
    x, y, yaw = pose
    if abs(w) < 1e-12:
        return x + v * dt * math.cos(yaw), y + v * dt * math.sin(yaw), yaw
    end = yaw + w * dt
    return (x + v / w * (math.sin(end) - math.sin(yaw)),
            y - v / w * (math.cos(end) - math.cos(yaw)), end)


def yaw_of(pose: Pose) -> float:
    q = pose.orientation
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def stamp_ns(stamp: Time) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def to_time(ns: int) -> Time:
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


class UnicycleDynamics(Node):
    def __init__(self) -> None:
        super().__init__('unicycle_dynamics')
        self.car = self.declare_parameter('car', 'ego').value
        self.world_frame = self.declare_parameter('world_frame', 'map').value
        start = list(self.declare_parameter('start_pose', [0.0]).value)
        self.fixed_start: Pose2D | None = (start[0], start[1], start[2]) \
            if len(start) == 3 else None
        self.start = self.fixed_start
        self.pose: Pose2D = (0.0, 0.0, 0.0)
        self.speed = 0.0
        self.steering = 0.0
        self.time_ns: int | None = None
        self.pending: tuple[Pose2D, float] | None = None
        self.state_pub = self.create_publisher(CarState, 'state', STREAM)
        self.event_pub = self.create_publisher(SimEvent, 'events', STREAM)
        # Commands and resets before /clock: a single-threaded executor serves ready
        # subscriptions in creation order, so what arrived first is applied first.
        self.create_subscription(AckermannDriveStamped, 'drive', self.on_drive, STREAM)
        self.create_subscription(CarReset, 'reset', self.on_reset, STREAM)
        self.create_subscription(TrackGeometry, 'track', self.on_track, LATCHED)
        self.create_subscription(Clock, '/clock', self.on_clock, STREAM)

    @property
    def yaw_rate(self) -> float:
        return self.speed * math.tan(self.steering) / WHEELBASE_M

    def on_drive(self, msg: AckermannDriveStamped) -> None:
        if math.isfinite(msg.drive.speed) and math.isfinite(msg.drive.steering_angle):
            self.speed, self.steering = msg.drive.speed, msg.drive.steering_angle

    def on_track(self, msg: TrackGeometry) -> None:
        """The start pose comes with the track (the bridge moves the car on a switch)."""
        if self.fixed_start is None:
            self.start = (msg.start_pose.position.x, msg.start_pose.position.y,
                          yaw_of(msg.start_pose))

    def on_reset(self, msg: CarReset) -> None:
        if msg.to_start:
            if self.start is not None:
                self.pending = (self.start, 0.0)
        else:
            self.pending = ((msg.pose.position.x, msg.pose.position.y, yaw_of(msg.pose)),
                            msg.speed)

    def on_clock(self, msg: Clock) -> None:
        now = stamp_ns(msg.clock)
        if self.start is None:
            return  # no start pose yet: stay silent, the bridge asks again
        if self.time_ns is None or now < self.time_ns:
            self._place(self.start, 0.0)  # first frame, or a restarted simulation
            self.pending = None
        elif now > self.time_ns:
            if self.pending is not None:
                self._place(*self.pending)
                self._event(now, f'reset to {self.pose}')
                self.pending = None
            else:
                self.pose = arc(self.pose, self.speed, self.yaw_rate,
                                (now - self.time_ns) * 1e-9)
        self.time_ns = now
        self._publish(now)

    def _place(self, pose: Pose2D, speed: float) -> None:
        self.pose, self.speed, self.steering = pose, speed, 0.0

    def _event(self, now: int, detail: str) -> None:
        event = SimEvent(car_id=self.car, kind=SimEvent.RESET, detail=detail)
        event.header.stamp = to_time(now)
        event.header.frame_id = self.world_frame
        self.event_pub.publish(event)

    def _publish(self, now: int) -> None:
        x, y, yaw = self.pose
        msg = CarState(car_id=self.car, model=MODEL_NAME, steering_angle=self.steering)
        msg.header.stamp = to_time(now)
        msg.header.frame_id = self.world_frame
        msg.pose.position.x, msg.pose.position.y = x, y
        msg.pose.orientation.z, msg.pose.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
        msg.twist.linear.x, msg.twist.angular.z = self.speed, self.yaw_rate
        msg.accel.linear.y = self.speed * self.yaw_rate  # centripetal
        msg.model_state = [x, y, yaw]
        self.state_pub.publish(msg)


def main() -> int:
    rclpy.init(args=sys.argv)
    node = UnicycleDynamics()
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
