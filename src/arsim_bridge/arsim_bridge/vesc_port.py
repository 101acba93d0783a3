"""A car's VESC on the ROS graph, under ``vesc_driver``'s names, for the real F1TENTH stack.

The dynamics node of a car whose topic map has a ``vesc`` section takes its commands here
instead of on the drive topic: ERPM, brake current and servo position as ``std_msgs/Float64``;
every frame it publishes the motor's telemetry (``vesc_msgs/VescStateStamped``, stamped with
the frame time), and on each servo command the position the servo took, as the driver does.
What those numbers mean is the car's rule (``arsim_core.dynamics.vesc``); this module only
carries them. ``vesc_msgs`` is imported only for such a car, so a workspace without it runs
every other topic map.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from std_msgs.msg import Float64

from arsim_bridge import qos
from arsim_bridge.common import to_time
from arsim_core.config.topic_map import VescTopics
from arsim_core.dynamics import Vehicle
from arsim_core.dynamics.vesc import VescDrive, VescMonitor, VescParameters

WARN_PERIOD_S = 2.0


class VescPort:
    """The VESC topics of one car, bound to its ``Vehicle``."""

    def __init__(self, node: Any, vehicle: Vehicle, params: VescParameters,
                 topics: VescTopics, answered: Callable[[], None]) -> None:
        from vesc_msgs.msg import VescStateStamped

        mass = vehicle.config.params.body.mass
        self.node = node
        self.vehicle = vehicle
        self.answered = answered  # after each servo position, a driver's command's last message
        self.drive = VescDrive(params, mass)
        self.monitor = VescMonitor(params, mass)
        self._state = VescStateStamped()
        self.state_pub = node.create_publisher(VescStateStamped, topics.state_topic, qos.STREAM)
        self.servo_pub = node.create_publisher(Float64, topics.servo_state_topic, qos.STREAM)
        node.create_subscription(Float64, topics.speed_topic, self.on_speed, qos.STREAM)
        node.create_subscription(Float64, topics.brake_topic, self.on_brake, qos.STREAM)
        node.create_subscription(Float64, topics.servo_topic, self.on_servo, qos.STREAM)

    def on_speed(self, msg: Float64) -> None:
        self._apply(self.drive.command_speed(msg.data))

    def on_brake(self, msg: Float64) -> None:
        self._apply(self.drive.command_brake(msg.data))

    def on_servo(self, msg: Float64) -> None:
        if self._apply(self.drive.command_servo(msg.data)):
            self.servo_pub.publish(Float64(data=self.drive.servo))
        self.answered()

    def _apply(self, problem: str | None) -> bool:
        """Give the car the VESC's command, or say why a message changed nothing."""
        if problem is not None:
            self.node.get_logger().warn(f'ignoring VESC command: {problem}',
                                        throttle_duration_sec=WARN_PERIOD_S)
            return False
        self.vehicle.set_ackermann(*self.drive.ackermann())
        return True

    def reset(self) -> None:
        self.monitor.reset()

    def publish(self, dt: float, time_ns: int) -> None:
        """Count the tachometer over the frame just stepped and publish the state after it."""
        speed = self.vehicle.body_velocity[0]
        self.monitor.advance(dt, speed)
        t = self.monitor.telemetry(speed, self.vehicle.body_acceleration[0])
        msg = self._state
        msg.header.stamp = to_time(time_ns)
        s = msg.state
        s.speed, s.duty_cycle, s.voltage_input = t.speed, t.duty_cycle, t.voltage_input
        s.current_motor, s.current_input = t.current_motor, t.current_input
        s.displacement, s.distance_traveled = t.displacement, t.distance_traveled
        self.state_pub.publish(msg)
