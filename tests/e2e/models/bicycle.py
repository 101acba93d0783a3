"""User vehicle models for the end-to-end tests, loaded by arsim from a car profile.

A profile names one of them as ``model: <path to this file>:RearAxleBicycle`` (or
``:FragileBicycle``), the path relative to the profile. Nothing here is part of arsim: this is
what a user writes to add a model without touching the package.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from arsim_core.dynamics import CarParameters, VehicleModel, constraints


class RearAxleBicycle(VehicleModel):
    """Kinematic bicycle about the rear axle, with CommonRoad's input constraints.

    It overrides ``body_velocity`` and ``body_acceleration`` with exact formulas: the defaults
    would evaluate the derivative (and a finite difference of it) on every published state.
    """

    name = 'rear_axle_bicycle'
    state_names = ('x', 'y', 'steering_angle', 'speed', 'yaw')
    reference_point = 'rear axle'

    @staticmethod
    def derivative(x: Sequence[float], u: Sequence[float], p: CarParameters) -> list[float]:
        s, lo = p.steering, p.longitudinal
        sv = constraints.steering_rate(x[2], u[0], s.min_angle, s.max_angle, s.min_rate,
                                       s.max_rate)
        a = constraints.acceleration(x[3], u[1], lo.switching_speed, lo.max_acceleration,
                                     lo.min_speed, lo.max_speed)
        return [x[3] * math.cos(x[4]), x[3] * math.sin(x[4]), sv, a,
                x[3] / p.body.wheelbase * math.tan(x[2])]

    @classmethod
    def body_velocity(cls, x: Sequence[float], p: CarParameters) -> tuple[float, float, float]:
        return float(x[3]), 0.0, float(x[3] / p.body.wheelbase * math.tan(x[2]))

    @classmethod
    def body_acceleration(cls, x: Sequence[float], u: Sequence[float],
                          p: CarParameters) -> tuple[float, float]:
        a = cls.derivative(x, u, p)[3]
        return float(a), float(x[3] ** 2 / p.body.wheelbase * math.tan(x[2]))


class FragileBicycle(RearAxleBicycle):
    """The same bicycle, broken on purpose: above SPEED_LIMIT its derivative is NaN.

    Stands for a user model that fails at run time; the dynamics node must catch it, report it
    and reset this car only.
    """

    name = 'fragile_bicycle'
    SPEED_LIMIT = 1.5  # [m/s]

    @staticmethod
    def derivative(x: Sequence[float], u: Sequence[float], p: CarParameters) -> list[float]:
        if x[3] > FragileBicycle.SPEED_LIMIT:
            return [math.nan] * 5
        return RearAxleBicycle.derivative(x, u, p)
