"""A combustion powertrain: engine torque by RPM through a gearbox, shifts with the torque cut.

Beside the acceleration-limited drive every car has (``CarParameters.longitudinal``), a car
profile may give a ``Powertrain`` section of type ``combustion`` (full-scale cars; the F1TENTH
car's electric drive is its VESC, :mod:`.vesc`). It bounds the acceleration the wheels can
push the car with, at every frame, from where the engine turns:

- engine speed ``rpm = |v| / r_w * g * f * 60 / (2 pi)`` in gear ratio ``g`` and final drive
  ``f``; below ``idle_rpm`` the clutch slips and the engine holds idle (a launch);
- the engine's torque at that speed from ``torque_curve`` (linear between its points; none
  beyond the last, the rev limiter), through the gears with ``efficiency``:
  ``a = T g f efficiency / (r_w m)``;
- an automatic gearbox: up a gear at ``upshift_rpm``, down at ``downshift_rpm``; while it
  shifts (``shift_time``) the clutch is open and no torque reaches the wheels. Reverse uses the
  first gear's ratio.

Braking, steering and the car's own limits (``max_acceleration``, the power limit above the
switching speed) are unchanged. ``layout`` (fwd, rwd, awd) names which wheels drive; it must
agree with ``drive_torque_split_front``, which the STD model uses. The bound acts on an
Ackermann command's acceleration and on a normalised throttle (throttle 1 is the whole torque
the engine has); the direct inputs of an agent are the model's inputs and pass unchanged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: ``layout`` -> the share of drive torque on the front axle it means (awd: any in between).
LAYOUTS = {'fwd': 1.0, 'rwd': 0.0, 'awd': None}
_RPM_PER_RAD_S = 60.0 / (2.0 * math.pi)


@dataclass(frozen=True)
class CombustionParameters:
    """An engine and its gearbox (``Powertrain`` with ``type: combustion`` in the profile)."""

    torque_rpm: tuple[float, ...]  #: engine speeds of the torque curve, increasing [rpm]
    torque_nm: tuple[float, ...]  #: engine torque at each [N m]
    gear_ratios: tuple[float, ...]  #: first gear first, decreasing
    final_drive: float
    efficiency: float = 0.9  #: gearbox and final drive together [0-1]
    idle_rpm: float = 800.0
    upshift_rpm: float = 6000.0
    downshift_rpm: float = 2500.0
    shift_time: float = 0.3  #: [s], clutch open, no drive torque
    layout: str = 'rwd'

    @property
    def redline_rpm(self) -> float:
        return self.torque_rpm[-1]


class Gearbox:
    """The gearbox's state (gear, shift in progress) and the drive bound it gives a car."""

    def __init__(self, params: CombustionParameters, mass: float, wheel_radius: float) -> None:
        self.params = params
        self._curve_rpm = np.asarray(params.torque_rpm, dtype=np.float64)
        self._curve_nm = np.asarray(params.torque_nm, dtype=np.float64)
        # acceleration per N m of engine torque in each gear: g f efficiency / (r_w m)
        self._accel_per_nm = [g * params.final_drive * params.efficiency / (wheel_radius * mass)
                              for g in params.gear_ratios]
        self._rpm_per_speed = [g * params.final_drive / wheel_radius * _RPM_PER_RAD_S
                               for g in params.gear_ratios]
        self.gear = 1
        self.shifting_to = 0  #: the gear being engaged, 0: none
        self.shift_left = 0.0  #: [s]
        self.rpm = params.idle_rpm

    def reset(self) -> None:
        """First gear, engine at idle, no shift: a car placed at rest."""
        self.gear, self.shifting_to, self.shift_left = 1, 0, 0.0
        self.rpm = self.params.idle_rpm

    def engine_rpm(self, speed: float, gear: int) -> float:
        """The engine's speed at ``speed`` [m/s] in ``gear`` with the clutch closed."""
        return abs(speed) * self._rpm_per_speed[gear - 1]

    def drive_limit(self, speed: float, dt: float) -> float:
        """The largest acceleration [m/s^2] the wheels can push with over the next ``dt`` s
        at ``speed``; 0 while a shift has the clutch open. Shifts as the RPM calls for."""
        p = self.params
        if self.shifting_to:
            self.shift_left -= dt
            if self.shift_left > 1e-12:
                self.rpm = max(self.engine_rpm(speed, self.shifting_to), p.idle_rpm)
                return 0.0
            self.gear, self.shifting_to = self.shifting_to, 0
        rpm = self.engine_rpm(speed, self.gear)
        target = self.gear
        if rpm >= p.upshift_rpm and self.gear < len(p.gear_ratios):
            target = self.gear + 1
        elif rpm <= p.downshift_rpm and self.gear > 1:
            target = self.gear - 1
        if target != self.gear and p.shift_time > 0.0:
            self.shifting_to, self.shift_left = target, p.shift_time
            self.rpm = max(self.engine_rpm(speed, target), p.idle_rpm)
            return 0.0
        self.gear = target
        self.rpm = max(self.engine_rpm(speed, self.gear), p.idle_rpm)
        if self.rpm > p.redline_rpm:
            return 0.0  # the rev limiter cuts the fuel
        torque = float(np.interp(self.rpm, self._curve_rpm, self._curve_nm))
        return max(torque, 0.0) * self._accel_per_nm[self.gear - 1]
