"""The VESC motor controller and steering servo of an electric car, as its ROS driver sees them.

On the real F1TENTH car a stack's ``/drive`` goes through ``ackermann_to_vesc`` (speed ->
electrical RPM, steering angle -> servo position) to the VESC, which holds the motor at the
commanded ERPM with its speed controller, within its current limit; ``vesc_to_odom`` turns the
VESC's telemetry back into odometry. This module is that motor controller's half of the
contract, so a simulated car answers those nodes as the real one does:

- **Commands** (what ``vesc_driver`` accepts): a speed in ERPM, clipped to
  ``[speed_min, speed_max]``, becomes a speed target ``(erpm - offset) / gain`` held within the
  acceleration the motor current limit allows; a servo position, clipped to
  ``[servo_min, servo_max]``, becomes a steering angle ``(servo - offset) / gain``; a brake
  current stops the car with the deceleration that current gives.
- **Telemetry** (``vesc_msgs/VescState``): the motor's ERPM, duty cycle, motor and input
  current, battery voltage and the tachometer.

The motor (a sensorless brushless DC motor) links current and force through its speed constant:
a motor of ``kv`` [rpm/V] has the torque constant ``60 / (2 pi kv)`` [Nm/A], and with the gear
and wheel folded into ``speed_to_erpm_gain`` (``G`` ERPM per m/s, ``p`` pole pairs) the force at
the wheels is ``I G / (kv p)`` for a motor current ``I``: the wheel radius and gear ratio cancel.
So the car's acceleration at current ``I`` is ``I G / (m kv p)``, and at full duty on a battery
of ``V`` volts the motor turns at most ``kv p V`` ERPM. The tachometer counts six steps per
electrical revolution, as the VESC firmware does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Tachometer counts per electrical revolution (the VESC counts commutation steps).
TACHO_COUNTS_PER_EREV = 6
_INT32 = 1 << 32


@dataclass(frozen=True)
class VescParameters:
    """A car's VESC and servo (``Vesc`` in the car profile; docs/digital-twins.md)."""

    speed_to_erpm_gain: float  #: G [ERPM per m/s], as ackermann_to_vesc's parameter
    steering_angle_to_servo_gain: float  #: [1/rad]
    steering_angle_to_servo_offset: float  #: servo position at straight ahead [0-1]
    speed_to_erpm_offset: float = 0.0  #: [ERPM]
    servo_min: float = 0.0  #: the driver's servo clip [0-1]
    servo_max: float = 1.0
    speed_min: float = -1e5  #: the driver's ERPM clip
    speed_max: float = 1e5
    brake_max: float = 200.0  #: the driver's brake current clip [A]
    current_max: float = 100.0  #: motor current limit of the speed controller [A]
    motor_kv: float = 3500.0  #: [rpm/V]
    motor_pole_pairs: int = 2
    battery_voltage: float = 11.1  #: [V]
    #: The sign the VESC reports the motor's ERPM with, driving forward. f1tenth/vesc's
    #: ``vesc_to_odom`` reads ``-state.speed``: on the F1TENTH car forward is negative (-1).
    reported_speed_sign: float = 1.0

    def speed_from_erpm(self, erpm: float) -> float:
        """The speed target [m/s] of an ERPM command, clipped as the driver clips it."""
        erpm = min(max(erpm, self.speed_min), self.speed_max)
        speed = (erpm - self.speed_to_erpm_offset) / self.speed_to_erpm_gain
        top = self.top_speed
        return min(max(speed, -top), top)

    def erpm(self, speed: float) -> float:
        """The motor's ERPM at ``speed`` [m/s], as ackermann_to_vesc computes it."""
        return self.speed_to_erpm_gain * speed + self.speed_to_erpm_offset

    def clip_servo(self, servo: float) -> float:
        """A servo command as the servo takes it (and as the driver reports it back)."""
        return min(max(servo, self.servo_min), self.servo_max)

    def steering_from_servo(self, servo: float) -> float:
        """The steering angle [rad] of a servo position, after the driver's clip."""
        return (self.clip_servo(servo) - self.steering_angle_to_servo_offset) \
            / self.steering_angle_to_servo_gain

    def acceleration_per_amp(self, mass: float) -> float:
        """The car's acceleration per ampere of motor current [m/s^2/A]: G / (m kv p)."""
        return self.speed_to_erpm_gain / (mass * self.motor_kv * self.motor_pole_pairs)

    def acceleration_limit(self, mass: float) -> float:
        """The largest acceleration the speed controller reaches, at ``current_max``."""
        return self.current_max * self.acceleration_per_amp(mass)

    def brake_deceleration(self, current: float, mass: float) -> float:
        """The deceleration of a brake current [A], clipped to ``brake_max``; 0 for none."""
        return min(max(current, 0.0), self.brake_max) * self.acceleration_per_amp(mass)

    @property
    def full_duty_erpm(self) -> float:
        """The motor's ERPM at full duty cycle without load: kv p V."""
        return self.motor_kv * self.motor_pole_pairs * self.battery_voltage

    @property
    def top_speed(self) -> float:
        """The speed at full duty cycle [m/s]: no speed command goes beyond it."""
        return self.full_duty_erpm / abs(self.speed_to_erpm_gain)


class VescDrive:
    """What the VESC and the servo make of their latest commands: one Ackermann target.

    Each command replaces its own part: a speed command the drive (and ends a brake), a brake
    command the drive, a servo command the steering; ``ackermann`` is then the car's command.
    A command that is not a finite number is refused (the ``*`` methods return why) and the car
    keeps the last one, as for every other face's commands.
    """

    def __init__(self, params: VescParameters, mass: float) -> None:
        self.params = params
        self.mass = mass
        self.speed = 0.0  #: target [m/s]
        self.acceleration = params.acceleration_limit(mass)  #: its magnitude limit [m/s^2]
        self.servo = params.clip_servo(params.steering_angle_to_servo_offset)
        self.steering_angle = params.steering_from_servo(self.servo)

    def command_speed(self, erpm: float) -> str | None:
        """A ``commands/motor/speed`` message [ERPM]."""
        if not math.isfinite(erpm):
            return f'non-finite speed {erpm!r}'
        self.speed = self.params.speed_from_erpm(erpm)
        self.acceleration = self.params.acceleration_limit(self.mass)
        return None

    def command_brake(self, current: float) -> str | None:
        """A ``commands/motor/brake`` message [A]: stop with that current's deceleration."""
        if not math.isfinite(current) or current <= 0.0:
            return f'brake current {current!r} (expected a positive number of amperes)'
        self.speed = 0.0
        self.acceleration = self.params.brake_deceleration(current, self.mass)
        return None

    def command_servo(self, servo: float) -> str | None:
        """A ``commands/servo/position`` message [0-1]; ``servo`` is then the clipped one."""
        if not math.isfinite(servo):
            return f'non-finite servo position {servo!r}'
        self.servo = self.params.clip_servo(servo)
        self.steering_angle = self.params.steering_from_servo(servo)
        return None

    def ackermann(self) -> tuple[float, float, float, float, float]:
        """The command as ``Vehicle.set_ackermann`` takes it: speed, steering angle, steering
        rate limit (none), acceleration limit, jerk limit (none)."""
        return self.speed, self.steering_angle, 0.0, self.acceleration, 0.0


@dataclass(frozen=True)
class VescTelemetry:
    """One ``vesc_msgs/VescState`` of a simulated motor (the fields a simulator can know)."""

    speed: float  #: ERPM, with the profile's ``reported_speed_sign``
    duty_cycle: float  #: [-1, 1]
    current_motor: float  #: [A]
    current_input: float  #: [A], from the battery (lossless: motor power / battery voltage)
    voltage_input: float  #: [V]
    displacement: int  #: net tachometer counts, int32 as on the wire
    distance_traveled: int  #: total tachometer counts, int32 as on the wire


class VescMonitor:
    """The telemetry of one car's VESC: the tachometer it integrates and each frame's state."""

    def __init__(self, params: VescParameters, mass: float) -> None:
        self.params = params
        self._amps_per_accel = 1.0 / params.acceleration_per_amp(mass)
        self._counts_per_metre = TACHO_COUNTS_PER_EREV * params.speed_to_erpm_gain / 60.0
        self._net = self._total = self._speed = 0.0

    def reset(self) -> None:
        """Zero the tachometer, as on power-up, with the car standing."""
        self._net = self._total = self._speed = 0.0

    def advance(self, dt: float, speed: float) -> None:
        """Count the tachometer over ``dt`` [s] in which the speed went from the last one to
        ``speed`` [m/s] (trapezoidal; a change of direction within ``dt`` is not seen)."""
        counts = self._counts_per_metre * 0.5 * (self._speed + speed) * dt
        self._speed = speed
        self._net += counts
        self._total += abs(counts)

    def telemetry(self, speed: float, acceleration: float) -> VescTelemetry:
        """The state at ``speed`` [m/s] and longitudinal ``acceleration`` [m/s^2]."""
        p = self.params
        erpm = p.erpm(speed)
        duty = max(-1.0, min(1.0, erpm / p.full_duty_erpm))
        current = acceleration * self._amps_per_accel
        return VescTelemetry(
            speed=p.reported_speed_sign * erpm, duty_cycle=duty, current_motor=current,
            current_input=current * abs(duty), voltage_input=p.battery_voltage,
            displacement=_int32(self._net), distance_traveled=_int32(self._total))


def _int32(counts: float) -> int:
    """A count as the VESC's 32-bit counter holds it: it wraps, it does not saturate."""
    value = math.floor(counts) % _INT32
    return value - _INT32 if value >= _INT32 // 2 else value
