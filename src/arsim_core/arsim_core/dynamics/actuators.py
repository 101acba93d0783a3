"""How late, how slowly and how exactly a car's actuators follow its commands: dead time,
command noise and first-order lag.

A real car does not obey a command in the frame it arrives: the servo and the motor controller
see it after a dead time (bus, firmware, PWM period), hit it only to within their resolution and
move towards it with a lag. These are rules of the car, so they live here and in ``Vehicle``,
under every face: a command given through ROS, the Gymnasium environment or the dataset runner
draws the same noise, goes through the same :class:`DeadTime` line and the same lag of the
controller kernel (:func:`.controllers.control`).

- **Dead time** [s]: a command given before the step at sim time ``t`` reaches the actuators at
  the first step at or after ``t + dead_time``; so it is exact in whole frames and at most one
  frame late otherwise. Steering and drive have one each; a change of command interface
  (Ackermann, normalised, direct) arrives with the drive's.
- **Noise**: every command a car is given is off by a normal draw of standard deviation
  ``noise_std``, before it is clipped to the car's limits: [rad] on the steering angle, and on
  the drive in the command's own unit (an Ackermann speed [m/s], a direct acceleration
  [m/s^2], the pressed pedal of a normalised command [0-1]). The draws come from the car's
  own stream of the run seed (:func:`command_noise`), so a run repeats exactly.
- **Lag** [s]: the time constant of a first-order filter between the command that arrived and
  the target the controllers track (steering angle; speed, throttle and brake, or the direct
  acceleration input), integrated exactly at every physics sub-step. A direct steering *rate*
  has no servo position to lag and passes unfiltered.

All zero (the default) is the ideal car of earlier releases, at no cost.
"""

from __future__ import annotations

import bisect
from collections.abc import MutableSequence, Sequence
from dataclasses import dataclass

import numpy as np

from .controllers import (
    ACCEL_INPUT,
    ACCEL_LIMIT,
    BRAKE,
    JERK_LIMIT,
    MODE,
    SPEED_TARGET,
    STEER_RATE_INPUT,
    STEER_TARGET,
    SV_LIMIT,
    THROTTLE,
)

#: The controller-vector entries a steering command sets, and those a drive command sets.
STEERING_SLOTS = (STEER_TARGET, SV_LIMIT, STEER_RATE_INPUT)
DRIVE_SLOTS = (MODE, SPEED_TARGET, ACCEL_LIMIT, JERK_LIMIT, THROTTLE, BRAKE, ACCEL_INPUT)
COMMAND_SLOTS = STEERING_SLOTS + DRIVE_SLOTS
#: The longest dead time or lag a profile or a randomisation may give [s]: beyond, no actuator.
MAX_ACTUATOR_TIME_S = 10.0
#: The largest command noise (std, in the command's unit): beyond, every command is a limit.
MAX_COMMAND_NOISE = 1000.0
#: Where a car's command noise stream sits among its noise streams: past every sensor index
#: (``arsim_core.sensors.computed.noise`` draws sensor ``i`` of car ``c`` from [seed, c, i]).
COMMAND_NOISE_STREAM = 1 << 16
# Sim time is a sum of float frame periods: a command due "at" a step must not miss it by an ulp.
_TIME_TOLERANCE_S = 1e-9


@dataclass(frozen=True)
class ActuatorParameters:
    """Dead times and lag time constants [s] and command noise of one car (``Actuators`` in
    the car profile)."""

    steering_dead_time: float = 0.0
    steering_lag: float = 0.0
    steering_noise_std: float = 0.0  #: [rad]
    drive_dead_time: float = 0.0
    drive_lag: float = 0.0
    drive_noise_std: float = 0.0  #: in the drive command's unit

    @property
    def noisy(self) -> bool:
        """Whether commands get noise at all."""
        return self.steering_noise_std > 0.0 or self.drive_noise_std > 0.0

    @property
    def delayed(self) -> bool:
        """Whether commands need a dead-time line at all."""
        return self.steering_dead_time > 0.0 or self.drive_dead_time > 0.0


def command_noise(seed: int, car_index: int) -> np.random.Generator:
    """The stream of command noise of the car ``car_index`` of its race, in a run seeded
    ``seed``."""
    return np.random.default_rng([seed, car_index, COMMAND_NOISE_STREAM])


class DeadTime:
    """The commands given to a car, released to its controller dead-time seconds later.

    Each step books the command as given so far with the vehicle's clock, then writes into the
    controller vector, for steering and for drive, the newest command at least that channel's
    dead time old (a binary search: a long dead time at a high frame rate holds thousands).
    Before any command is old enough the controller keeps what it had (the reset's hold-speed,
    straight-wheels target)."""

    def __init__(self, actuators: ActuatorParameters) -> None:
        self._channels = ((actuators.steering_dead_time, STEERING_SLOTS),
                          (actuators.drive_dead_time, DRIVE_SLOTS))
        self._longest = max(actuators.steering_dead_time, actuators.drive_dead_time)
        self._times: list[float] = []  # when each command was booked, ascending
        self._commands: list[tuple[float, ...]] = []
        self._first = 0  # the entries before it have passed every channel

    def clear(self) -> None:
        """Forget every command in flight (the car was placed anew)."""
        self._times.clear()
        self._commands.clear()
        self._first = 0

    def release(self, now: float, given: Sequence[float], controls: MutableSequence[float]
                ) -> None:
        """Book ``given`` (a controller vector holding the latest command) at ``now`` [s] and
        write what has come through each channel by ``now`` into ``controls``."""
        self._times.append(now)
        self._commands.append(tuple(float(value) for value in given))
        for dead_time, slots in self._channels:
            arrived = self._newest_by(now - dead_time)
            if arrived >= 0:
                command = self._commands[arrived]
                for slot in slots:
                    controls[slot] = command[slot]
        # The newest command the slowest channel has passed stays; older ones never come back.
        self._first = max(self._first, self._newest_by(now - self._longest))
        if self._first > 64 and 2 * self._first > len(self._times):
            del self._times[:self._first], self._commands[:self._first]
            self._first = 0

    def _newest_by(self, time: float) -> int:
        """The index of the newest command booked by ``time``, or -1 if there is none."""
        index = bisect.bisect_right(self._times, time + _TIME_TOLERANCE_S, self._first) - 1
        return index if index >= self._first else -1
