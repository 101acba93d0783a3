"""Kinematic single-track model KS (CommonRoad).

Source: Althoff & Wuersching, "CommonRoad: Vehicle Models", 2020, Sec. 4 (kinematic single-track
model), and ``vehiclemodels.vehicle_dynamics_ks`` v3.0.2. Reference point: **centre of the rear
axle**. No tyre slip: valid for low lateral acceleration only.

State x (SI units):
    0  x       position of the rear axle centre, world frame [m]
    1  y       [m]
    2  delta   front wheel steering angle, positive left [rad]
    3  v       speed of the rear axle centre along the car [m/s]
    4  psi     yaw angle, counter-clockwise from world x [rad]

Input u: 0 steering rate v_delta [rad/s], 1 longitudinal acceleration a_long [m/s^2], both
clipped by :mod:`~arsim_core.dynamics.constraints` first.

Equations (l = lf + lr):
    x' = v cos(psi),  y' = v sin(psi),  delta' = v_delta,  v' = a_long,
    psi' = v / l * tan(delta)
"""

from __future__ import annotations

import math
from collections.abc import MutableSequence, Sequence
from typing import ClassVar

from .._jit import kernel
from .base import VehicleModel, evaluate_rhs
from .constraints import acceleration, steering_rate
from .params import (
    A_MAX,
    LF,
    LR,
    STEER_MAX,
    STEER_MIN,
    SV_MAX,
    SV_MIN,
    V_MAX,
    V_MIN,
    V_SWITCH,
    CarParameters,
)

X, Y, STEER, V, YAW = range(5)
N_STATES = 5


@kernel
def rhs(x: Sequence[float], u0: float, u1: float, p: Sequence[float],
        out: MutableSequence[float]) -> None:
    """KS derivative into ``out`` (packed parameters ``p``); see the module docstring."""
    sv = steering_rate(x[2], u0, p[STEER_MIN], p[STEER_MAX], p[SV_MIN], p[SV_MAX])
    acc = acceleration(x[3], u1, p[V_SWITCH], p[A_MAX], p[V_MIN], p[V_MAX])
    lwb = p[LF] + p[LR]
    out[0] = x[3] * math.cos(x[4])
    out[1] = x[3] * math.sin(x[4])
    out[2] = sv
    out[3] = acc
    out[4] = x[3] / lwb * math.tan(x[2])


@kernel
def kinematic_cog(x: Sequence[float], sv: float, acc: float, lf: float, lr: float,
                  out: MutableSequence[float]) -> None:
    """KS about the centre of gravity (CommonRoad ``vehicle_dynamics_ks_cog``), first 5 states.

    Used by ST and STD at low speed. ``sv``/``acc`` must already be constrained.
    beta = atan(tan(delta) lr / l);  x' = v cos(beta + psi);  y' = v sin(beta + psi);
    psi' = v cos(beta) tan(delta) / l.
    """
    lwb = lf + lr
    beta = math.atan(math.tan(x[2]) * lr / lwb)
    out[0] = x[3] * math.cos(beta + x[4])
    out[1] = x[3] * math.sin(beta + x[4])
    out[2] = sv
    out[3] = acc
    out[4] = x[3] * math.cos(beta) * math.tan(x[2]) / lwb


def derivative(x: Sequence[float], u: Sequence[float], p: CarParameters) -> list[float]:
    """KS dx/dt (pure). State, input, units and equations: see :mod:`arsim_core.dynamics.ks`."""
    return evaluate_rhs(rhs, N_STATES, x, u, p)


class KinematicSingleTrack(VehicleModel):
    """KS: kinematic bicycle about the rear axle (CommonRoad KS)."""

    name: ClassVar[str] = 'ks'
    state_names: ClassVar[tuple[str, ...]] = ('x', 'y', 'steering_angle', 'speed', 'yaw')
    reference_point: ClassVar[str] = 'rear axle centre'
    derivative = staticmethod(derivative)
    rhs_kernel = rhs

    @classmethod
    def body_velocity(cls, x: Sequence[float], p: CarParameters) -> tuple[float, float, float]:
        """No side slip at the rear axle: (v, 0, v tan(delta) / l)."""
        v = float(x[V])
        return v, 0.0, v / p.body.wheelbase * math.tan(x[STEER])

    @classmethod
    def body_acceleration(cls, x: Sequence[float], u: Sequence[float],
                          p: CarParameters) -> tuple[float, float]:
        """(v', v * yaw rate): tangential and centripetal acceleration of the rear axle."""
        dx = derivative(x, u, p)
        return dx[V], float(x[V]) * dx[YAW]
