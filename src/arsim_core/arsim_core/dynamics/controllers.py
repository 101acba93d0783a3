"""Controllers that turn driver targets into the model inputs u = [steering rate, acceleration].

Two command interfaces, both evaluated once per physics sub-step (zero-order hold in between):

* **Ackermann** (``ackermann_msgs/AckermannDrive`` semantics): target ``speed`` [m/s] and
  ``steering_angle`` [rad, positive left]. ``steering_angle_velocity`` [rad/s], ``acceleration``
  [m/s^2] and ``jerk`` [m/s^3] are magnitude limits when non-zero; 0 means "as fast as possible",
  i.e. limited only by the car. Speed is tracked with f1tenth_gym's P-controller: separate gains
  for speeding up and braking, forwards and in reverse.
* **Direct**: the model inputs themselves, steering rate [rad/s] and acceleration [m/s^2],
  as f1tenth_gym's ``accl`` control; the model's input constraints still apply.
* **Normalised** (AR-Sim command): ``throttle`` in [0, 1] and ``brake`` in [0, 1] scale the
  drivetrain's ``throttle_acceleration`` / ``brake_deceleration``; ``steering`` in [-1, 1]
  scales the steering limit. Brake and coast resistance only slow the car down, never reverse
  it, so there is no reverse gear on this interface (use Ackermann with a negative speed).

The steering wheel follows its target with a saturated P-controller: rate = kp * error, clipped
to the car's (and the command's) rate limit. With kp * sub-step < 1 it reaches the target
without the chatter of f1tenth_gym's bang-bang law at a finite step.

Between the command and the controllers sits the actuators' first-order lag (time constants
``STEER_LAG`` and ``DRIVE_LAG``, :mod:`.actuators`): the controllers track the ``*_APPLIED``
values, which follow the command's at each sub-step.

The state of both controllers lives in a flat float vector (layout below) so the compiled
``advance`` kernels can run the controller inside the sub-step loop.
"""

from __future__ import annotations

import math
from collections.abc import MutableSequence, Sequence
from dataclasses import dataclass
from typing import Final

from .._jit import kernel
from .params import A_MAX, SV_MAX, SV_MIN, CarParameters

# --- flat controller vector layout ---------------------------------------------------------------
MODE: Final = 0  #: MODE_ACKERMANN or MODE_NORMALISED
SPEED_TARGET: Final = 1  #: [m/s]
STEER_TARGET: Final = 2  #: [rad]
SV_LIMIT: Final = 3  #: steering rate limit of the command [rad/s], 0 = car limit only
ACCEL_LIMIT: Final = 4  #: [m/s^2], 0 = car limit only
JERK_LIMIT: Final = 5  #: [m/s^3], 0 = unlimited
THROTTLE: Final = 6  #: [0, 1]
BRAKE: Final = 7  #: [0, 1]
KP_ACCEL_FWD: Final = 8  #: [1/s]
KP_BRAKE_FWD: Final = 9
KP_BRAKE_REV: Final = 10
KP_ACCEL_REV: Final = 11
KP_STEER: Final = 12  #: [1/s]
THROTTLE_ACCEL: Final = 13  #: [m/s^2]
BRAKE_DECEL: Final = 14  #: [m/s^2]
COAST_DECEL: Final = 15  #: [m/s^2]
LAST_ACCEL: Final = 16  #: acceleration applied in the previous sub-step (jerk limiter state)
LAST_SV: Final = 17  #: steering rate applied in the previous sub-step
STEER_RATE_INPUT: Final = 18  #: [rad/s], direct mode
ACCEL_INPUT: Final = 19  #: [m/s^2], direct mode
STEER_LAG: Final = 20  #: time constant of the steering actuator [s], 0 = none (.actuators)
DRIVE_LAG: Final = 21  #: time constant of the drive actuator [s], 0 = none
STEER_APPLIED: Final = 22  #: the steering target after the lag [rad]
SPEED_APPLIED: Final = 23  #: the speed target after the lag [m/s]
THROTTLE_APPLIED: Final = 24  #: throttle after the lag
BRAKE_APPLIED: Final = 25  #: brake after the lag
ACCEL_APPLIED: Final = 26  #: the direct acceleration input after the lag [m/s^2]
#: the largest acceleration the powertrain pushes with now [m/s^2]; < 0: no powertrain bound
#: (.powertrain sets it every frame)
DRIVE_LIMIT: Final = 27
N_CONTROL: Final = 28

MODE_ACKERMANN: Final = 0.0
MODE_NORMALISED: Final = 1.0
MODE_DIRECT: Final = 2.0  #: the model inputs themselves (f1tenth_gym's "accl" control)


@dataclass(frozen=True)
class SpeedGains:
    """Gains of the f1tenth_gym speed P-controller, acceleration = kp * speed error [1/s].

    "forward"/"reverse" is the current direction of travel; "accelerate" means the error points
    away from standstill, "brake" towards it.
    """

    kp_accelerate_forward: float
    kp_brake_forward: float
    kp_brake_reverse: float
    kp_accelerate_reverse: float

    @classmethod
    def f1tenth_gym(cls, p: CarParameters) -> SpeedGains:
        """f1tenth_gym's gains, derived from a_max and the speed range."""
        lo = p.longitudinal
        return cls(
            kp_accelerate_forward=10.0 * lo.max_acceleration / lo.max_speed,
            kp_brake_forward=10.0 * lo.max_acceleration / -lo.min_speed,
            kp_brake_reverse=2.0 * lo.max_acceleration / lo.max_speed,
            kp_accelerate_reverse=2.0 * lo.max_acceleration / -lo.min_speed,
        )


@dataclass(frozen=True)
class SteeringGains:
    """Gain of the steering-angle P-controller, rate = kp * angle error [1/s]."""

    kp: float


@dataclass(frozen=True)
class ControllerGains:
    """All controller gains of one car (``Controller`` section of the car profile)."""

    speed: SpeedGains
    steering: SteeringGains

    @classmethod
    def default(cls, p: CarParameters) -> ControllerGains:
        """f1tenth_gym speed gains and a steering gain of 60 1/s."""
        return cls(speed=SpeedGains.f1tenth_gym(p), steering=SteeringGains(kp=60.0))


def initial_controller(gains: ControllerGains, p: CarParameters, steering_lag: float = 0.0,
                       drive_lag: float = 0.0) -> list[float]:
    """A controller vector holding the gains and the actuators' lag time constants [s],
    Ackermann mode, all targets zero."""
    c = [0.0] * N_CONTROL
    c[DRIVE_LIMIT] = -1.0
    c[STEER_LAG] = steering_lag
    c[DRIVE_LAG] = drive_lag
    c[MODE] = MODE_ACKERMANN
    c[KP_ACCEL_FWD] = gains.speed.kp_accelerate_forward
    c[KP_BRAKE_FWD] = gains.speed.kp_brake_forward
    c[KP_BRAKE_REV] = gains.speed.kp_brake_reverse
    c[KP_ACCEL_REV] = gains.speed.kp_accelerate_reverse
    c[KP_STEER] = gains.steering.kp
    c[THROTTLE_ACCEL] = p.drivetrain.throttle_acceleration
    c[BRAKE_DECEL] = p.drivetrain.brake_deceleration
    c[COAST_DECEL] = p.drivetrain.coast_deceleration
    return c


@kernel
def _lagged(applied: float, commanded: float, lag: float, h: float) -> float:
    """``applied`` after ``h`` s of a first-order lag of time constant ``lag`` towards
    ``commanded`` (exact for a command held over the sub-step); ``commanded`` when no lag."""
    if lag <= 0.0:
        return commanded
    return applied + (commanded - applied) * (1.0 - math.exp(-h / lag))


@kernel
def control(steer: float, speed: float, p: Sequence[float], c: MutableSequence[float],
            h: float) -> tuple[float, float]:
    """Model input (steering rate [rad/s], acceleration [m/s^2]) for one sub-step of ``h`` s.

    ``steer``/``speed`` are the model's current steering angle and speed, ``p`` the packed car
    parameters, ``c`` the controller vector (updated: jerk limiter memory).
    """
    steer_lag = c[STEER_LAG]
    drive_lag = c[DRIVE_LAG]
    if c[MODE] == MODE_DIRECT:  # the model's constraints still clip both
        sv = c[STEER_RATE_INPUT]
        c[ACCEL_APPLIED] = _lagged(c[ACCEL_APPLIED], c[ACCEL_INPUT], drive_lag, h)
        accel = c[ACCEL_APPLIED]
        c[LAST_ACCEL] = accel
        c[LAST_SV] = sv
        return sv, accel
    # steering: saturated P-controller
    c[STEER_APPLIED] = _lagged(c[STEER_APPLIED], c[STEER_TARGET], steer_lag, h)
    sv = c[KP_STEER] * (c[STEER_APPLIED] - steer)
    lo = p[SV_MIN]
    hi = p[SV_MAX]
    lim = c[SV_LIMIT]
    if lim > 0.0:
        hi = min(hi, lim)
        lo = max(lo, -lim)
    sv = min(max(sv, lo), hi)

    if c[MODE] == MODE_ACKERMANN:
        # f1tenth_gym speed P-controller
        c[SPEED_APPLIED] = _lagged(c[SPEED_APPLIED], c[SPEED_TARGET], drive_lag, h)
        err = c[SPEED_APPLIED] - speed
        if speed > 0.0:
            kp = c[KP_ACCEL_FWD] if err > 0.0 else c[KP_BRAKE_FWD]
        else:
            kp = c[KP_BRAKE_REV] if err > 0.0 else c[KP_ACCEL_REV]
        accel = kp * err
        lim = c[ACCEL_LIMIT]
        if lim > 0.0:
            accel = min(max(accel, -lim), lim)
        drive = c[DRIVE_LIMIT]
        if drive >= 0.0:  # the powertrain bounds what pushes along the direction of travel
            if speed >= 0.0:
                accel = min(accel, drive)
            else:
                accel = max(accel, -drive)
    else:
        c[THROTTLE_APPLIED] = _lagged(c[THROTTLE_APPLIED], c[THROTTLE], drive_lag, h)
        c[BRAKE_APPLIED] = _lagged(c[BRAKE_APPLIED], c[BRAKE], drive_lag, h)
        drive = c[DRIVE_LIMIT]
        accel = c[THROTTLE_APPLIED] * (c[THROTTLE_ACCEL] if drive < 0.0 else drive)
        resist = c[BRAKE_APPLIED] * c[BRAKE_DECEL] + c[COAST_DECEL]
        # resistance opposes motion but must not reverse it within one sub-step
        resist = min(resist, abs(speed) / h)
        if speed > 0.0:
            accel -= resist
        elif speed < 0.0:
            accel += resist

    a_max = p[A_MAX]
    accel = min(max(accel, -a_max), a_max)
    jerk = c[JERK_LIMIT]
    if jerk > 0.0:
        last = c[LAST_ACCEL]
        accel = min(max(accel, last - jerk * h), last + jerk * h)
    c[LAST_ACCEL] = accel
    c[LAST_SV] = sv
    return sv, accel
