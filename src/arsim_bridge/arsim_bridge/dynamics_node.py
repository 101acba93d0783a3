"""Per-car dynamics node: integrates one car's vehicle model in lockstep with /clock.

Contract (docs/dynamics-node.md): on every /clock message the node integrates from the previous
clock time to the new one with the latest command, then publishes the car's state stamped with
the new time on ``state``. Any node that keeps this contract can replace this one for a car.

This node also says on ``answered`` when a driver's command reached it (an Ackermann or arsim
command, or a VESC's servo position, the last of the two that ``ackermann_to_vesc`` sends),
applied or refused: a bridge that waits for the drivers (``wait_for_drivers``) moves /clock on
only then, so the command acts from the next integration however late its message reached
this node compared with the bridge's copy.
"""

from __future__ import annotations

from typing import Any

from ackermann_msgs.msg import AckermannDriveStamped
from geometry_msgs.msg import Pose, PoseStamped, PoseWithCovarianceStamped
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Header

from arsim_bridge import qos
from arsim_bridge.car_state_msg import car_state_message
from arsim_bridge.common import (
    declare_car,
    declare_scenario,
    finite,
    planar,
    run_node,
    to_ns,
    to_time,
)
from arsim_bridge.ledger import CountingNode
from arsim_bridge.sim_events import sim_event
from arsim_bridge.vesc_port import VescPort
from arsim_core.dynamics import Vehicle, drive_command_problem
from arsim_core.engine import car_steps
from arsim_core.engine.referee import MODEL_ERROR, Event
from arsim_core.engine.start_grid import Lane, start_poses
from arsim_core.recording.ledger import dynamics_publisher
from arsim_msgs.msg import CarCommand, CarReset, CarState, SimEvent, TrackGeometry

WARN_PERIOD_S = 2.0


class DynamicsNode(CountingNode):
    def __init__(self, **node_options: Any) -> None:
        super().__init__('dynamics', **node_options)
        scenario = declare_scenario(self)
        self.car = declare_car(self, scenario)
        self.vehicle = Vehicle(self.car.profile.vehicle, scenario.seed, self.car.index)
        self.scenario = scenario
        self.world_frame = scenario.topic_map.world_frame
        self.start_pose = self.car.pose
        self.time_ns: int | None = None
        self.pending_reset: tuple[float, float, float, float] | None = None

        self.start_counting(scenario, dynamics_publisher(self.car.name))
        self.state_pub = self.create_publisher(CarState, 'state', qos.STREAM)
        self.event_pub = self.create_publisher(SimEvent, 'events', qos.STREAM)
        self.answered_pub = self.create_publisher(Header, 'answered', qos.STREAM)
        # Commands are subscribed before /clock: when both are waiting, the executor serves
        # them in creation order, so a command is applied before the frame it arrived for.
        # A car driven through its VESC takes no Ackermann command: the user's
        # ackermann_to_vesc takes them and sends the VESC's.
        vesc = self.car.names.vesc
        self.vesc: VescPort | None = None
        if vesc is None:
            self.create_subscription(AckermannDriveStamped, 'drive', self.on_drive, qos.STREAM)
        else:
            assert self.car.profile.vehicle.vesc is not None  # checked with the scenario
            self.vesc = VescPort(self, self.vehicle, self.car.profile.vehicle.vesc, vesc,
                                 self.answered)
        self.create_subscription(CarCommand, 'command', self.on_command, qos.STREAM)
        self.create_subscription(CarReset, 'reset', self.on_reset, qos.STREAM)
        pose_tool = {0: (PoseWithCovarianceStamped, scenario.topic_map.initialpose_topic),
                     1: (PoseStamped, scenario.topic_map.goal_pose_topic)}.get(self.car.index)
        if pose_tool is not None:  # RViz's pose tools move the first two cars
            self.create_subscription(pose_tool[0], pose_tool[1], self.on_pose_tool, qos.STREAM)
        self.create_subscription(TrackGeometry, 'track', self.on_track, qos.LATCHED)
        self.create_subscription(Clock, '/clock', self.on_clock, qos.CLOCK)
        self.report_published(0)

    def on_track(self, msg: TrackGeometry) -> None:
        """Take the start pose from the track. On a switch at run time the bridge moves the
        car, in the frame its referee moves to the new track."""
        lane = Lane.from_arrays(msg.centerline, msg.width_left, msg.width_right)
        self.start_pose = start_poses(self.scenario.cars, planar(msg.start_pose),
                                      staged_front=bool(msg.mission.kind),
                                      lane=lane)[self.car.name]

    def on_clock(self, msg: Clock) -> None:
        now = to_ns(msg.clock)
        if self.start_pose is None:
            return  # not placed yet: the bridge keeps asking until every car answers
        dt = 0.0
        if self.time_ns is None or now < self.time_ns:
            self.vehicle.reset(*self.start_pose)
            self.pending_reset = None
            if self.vesc is not None:
                self.vesc.reset()
        elif now > self.time_ns:
            dt = (now - self.time_ns) * 1e-9
            self._advance(dt, now)
        self.time_ns = now
        self._publish_state(now)
        if self.vesc is not None:
            self.vesc.publish(dt, now)
        self.report_published(now)

    def _advance(self, dt: float, now: int) -> None:
        """Integrate to ``now``, or apply a pending reset instead; events carry ``now``, the
        frame whose state shows their outcome."""
        if self.pending_reset is not None:
            x, y, yaw, speed = self.pending_reset
            self._event(car_steps.place(self.vehicle, self.car.name, (x, y, yaw), speed), now)
            self.pending_reset = None
            return
        assert self.start_pose is not None  # placed: on_clock steps only then
        for event in car_steps.advance(self.vehicle, self.car.name, dt, self.start_pose):
            if event.kind == MODEL_ERROR:
                self.get_logger().error(f'{self.car.name}: {event.detail}; resetting the car')
            self._event(event, now)

    def on_drive(self, msg: AckermannDriveStamped) -> None:
        d = msg.drive
        values = (d.speed, d.steering_angle, d.steering_angle_velocity, d.acceleration, d.jerk)
        problem = drive_command_problem(self.vehicle.config.params, *values)
        if problem:
            self.get_logger().warn(f'ignoring drive command ({problem}): speed={d.speed} '
                                   f'steering_angle={d.steering_angle}',
                                   throttle_duration_sec=WARN_PERIOD_S)
        else:
            self.vehicle.set_ackermann(*values)
        self.answered()

    def on_command(self, msg: CarCommand) -> None:
        ok = finite(msg.throttle, msg.brake, msg.steering) and 0.0 <= msg.throttle <= 1.0 \
            and 0.0 <= msg.brake <= 1.0 and -1.0 <= msg.steering <= 1.0
        if not ok:
            self.get_logger().warn(
                f'ignoring command: throttle={msg.throttle} brake={msg.brake} steering='
                f'{msg.steering} (expected [0,1], [0,1], [-1,1])',
                throttle_duration_sec=WARN_PERIOD_S)
        else:
            self.vehicle.set_normalised(msg.throttle, msg.brake, msg.steering)
        self.answered()

    def answered(self) -> None:
        """A driver's command reached this car (module docstring), stamped with the last
        clock time the car stepped to."""
        header = Header(stamp=to_time(self.time_ns or 0), frame_id=self.car.names.base_frame)
        self.answered_pub.publish(header)

    def on_pose_tool(self, msg: PoseWithCovarianceStamped | PoseStamped) -> None:
        """RViz's '2D Pose Estimate' (ego) or '2D Goal Pose' (second car): place the car."""
        pose = msg.pose.pose if isinstance(msg, PoseWithCovarianceStamped) else msg.pose
        self._request_reset(msg.header.frame_id, pose, 0.0)

    def on_reset(self, msg: CarReset) -> None:
        if msg.to_start:
            if self.start_pose is not None:
                self.pending_reset = (*self.start_pose, 0.0)
            return
        self._request_reset(msg.header.frame_id, msg.pose, msg.speed)

    def _request_reset(self, frame: str, pose: Pose, speed: float) -> None:
        if frame not in ('', self.world_frame):
            self.get_logger().warn(f'ignoring a pose in frame {frame!r}; expected '
                                   f'{self.world_frame!r}', throttle_duration_sec=WARN_PERIOD_S)
            return
        target = (*planar(pose), speed)
        if not finite(*target):
            self.get_logger().warn('ignoring a non-finite pose',
                                   throttle_duration_sec=WARN_PERIOD_S)
            return
        self.pending_reset = target

    def _event(self, event: Event, stamp_ns: int) -> None:
        self.event_pub.publish(sim_event(event, stamp_ns, self.world_frame))

    def _publish_state(self, now: int) -> None:
        self.state_pub.publish(car_state_message(self.car.name, self.vehicle, now,
                                                 self.world_frame))


def main() -> int:
    return run_node(DynamicsNode)
