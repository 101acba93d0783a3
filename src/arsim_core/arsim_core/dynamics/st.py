"""Single-track model ST (CommonRoad), with CommonRoad's switch to kinematics at low speed.

Source: Althoff & Wuersching, "CommonRoad: Vehicle Models", 2020, Sec. 5 (single-track model),
and ``vehiclemodels.vehicle_dynamics_st`` v3.0.2, reproduced operation by operation. Reference
point: **centre of gravity**. Linear tyres (cornering stiffness scaled by friction and load,
with load transfer from the longitudinal acceleration).

State x (SI units):
    0  x       CoG position, world frame [m]
    1  y       [m]
    2  delta   front wheel steering angle, positive left [rad]
    3  v       CoG speed (magnitude along the velocity direction) [m/s]
    4  psi     yaw angle [rad]
    5  psi'    yaw rate [rad/s]
    6  beta    side slip angle at the CoG [rad]

Input u: 0 steering rate v_delta [rad/s], 1 longitudinal acceleration a_long [m/s^2], both
clipped by :mod:`~arsim_core.dynamics.constraints` first.

Equations for v >= v_k (g = 9.81, l = lf + lr, Fzf ~ g lr - a h, Fzr ~ g lf + a h):
    x' = v cos(psi + beta),  y' = v sin(psi + beta),  delta' = v_delta,  v' = a_long,
    psi'' = -mu m / (v I l) (lf^2 C_Sf Fzf + lr^2 C_Sr Fzr) psi'
            + mu m / (I l) (lr C_Sr Fzr - lf C_Sf Fzf) beta + mu m / (I l) lf C_Sf Fzf delta
    beta' = (mu / (v^2 l) (C_Sr Fzr lr - C_Sf Fzf lf) - 1) psi'
            - mu / (v l) (C_Sr Fzr + C_Sf Fzf) beta + mu / (v l) C_Sf Fzf delta
For v < v_k the positions, delta, v and psi follow the kinematic model about the CoG and
psi', beta are driven by the time derivatives of their kinematic values (CommonRoad's formula,
including its ``(tan(delta)^2 lr / l)^2`` term, is kept as is so results match CommonRoad).

The one deliberate difference to CommonRoad is where the kinematic branch applies:
v_k = ``tyre.kinematic_speed`` instead of CommonRoad's fixed |v| < 0.1 m/s, and for every
negative speed. In reverse CommonRoad's dynamic branch makes the lateral tyre forces push along
the sliding direction (the 1/v terms change sign), so yaw rate and slip grow exponentially
(also seen in f1tenth_gym, issue #53); CommonRoad's own STD model is kinematic in reverse too.
The tyre terms are also stiff at low speed (eigenvalues ~ -114/v 1/s for F1TENTH), which a
fixed-step integrator only survives for h * |eigenvalue| < 2 (Euler) or 2.79 (RK4). With
v_k = 0.1 and v >= 0 the equations are CommonRoad's, operation for operation.
"""

from __future__ import annotations

import math
from collections.abc import MutableSequence, Sequence
from typing import ClassVar

from .._jit import kernel
from .base import VehicleModel, evaluate_rhs
from .constraints import acceleration, steering_rate
from .ks import kinematic_cog
from .params import (
    A_MAX,
    C_SF,
    C_SR,
    GRAVITY,
    H_COG,
    I_Z,
    LF,
    LR,
    MASS,
    MU,
    STEER_MAX,
    STEER_MIN,
    SV_MAX,
    SV_MIN,
    V_KIN,
    V_MAX,
    V_MIN,
    V_SWITCH,
    CarParameters,
)

X, Y, STEER, V, YAW, YAW_RATE, BETA = range(7)
N_STATES = 7
#: CommonRoad's kinematic switch speed [m/s] (|v| below it); arsim reads it from the parameters.
COMMONROAD_KINEMATIC_SPEED = 0.1


@kernel
def rhs(x: Sequence[float], u0: float, u1: float, p: Sequence[float],
        out: MutableSequence[float]) -> None:
    """ST derivative into ``out`` (packed parameters ``p``); see the module docstring."""
    g = GRAVITY
    mu = p[MU]
    c_sf = p[C_SF]
    c_sr = p[C_SR]
    lf = p[LF]
    lr = p[LR]
    h = p[H_COG]
    m = p[MASS]
    i_z = p[I_Z]
    sv = steering_rate(x[2], u0, p[STEER_MIN], p[STEER_MAX], p[SV_MIN], p[SV_MAX])
    acc = acceleration(x[3], u1, p[V_SWITCH], p[A_MAX], p[V_MIN], p[V_MAX])

    if x[3] < p[V_KIN]:
        lwb = lf + lr
        kinematic_cog(x, sv, acc, lf, lr, out)
        d_beta = (lr * sv) / (lwb * math.cos(x[2]) ** 2
                              * (1 + (math.tan(x[2]) ** 2 * lr / lwb) ** 2))
        dd_psi = 1 / lwb * (acc * math.cos(x[6]) * math.tan(x[2])
                            - x[3] * math.sin(x[6]) * d_beta * math.tan(x[2])
                            + x[3] * math.cos(x[6]) * sv / math.cos(x[2]) ** 2)
        out[5] = dd_psi
        out[6] = d_beta
        return

    out[0] = x[3] * math.cos(x[6] + x[4])
    out[1] = x[3] * math.sin(x[6] + x[4])
    out[2] = sv
    out[3] = acc
    out[4] = x[5]
    out[5] = (-mu * m / (x[3] * i_z * (lr + lf))
              * (lf ** 2 * c_sf * (g * lr - acc * h) + lr ** 2 * c_sr * (g * lf + acc * h)) * x[5]
              + mu * m / (i_z * (lr + lf))
              * (lr * c_sr * (g * lf + acc * h) - lf * c_sf * (g * lr - acc * h)) * x[6]
              + mu * m / (i_z * (lr + lf)) * lf * c_sf * (g * lr - acc * h) * x[2])
    out[6] = ((mu / (x[3] ** 2 * (lr + lf))
               * (c_sr * (g * lf + acc * h) * lr - c_sf * (g * lr - acc * h) * lf) - 1) * x[5]
              - mu / (x[3] * (lr + lf)) * (c_sr * (g * lf + acc * h) + c_sf * (g * lr - acc * h))
              * x[6]
              + mu / (x[3] * (lr + lf)) * (c_sf * (g * lr - acc * h)) * x[2])


def derivative(x: Sequence[float], u: Sequence[float], p: CarParameters) -> list[float]:
    """ST dx/dt (pure). State, input, units and equations: see :mod:`arsim_core.dynamics.st`."""
    return evaluate_rhs(rhs, N_STATES, x, u, p)


def slip_body_velocity(x: Sequence[float]) -> tuple[float, float, float]:
    """(v cos(beta), v sin(beta), psi') for the ST/STD state layout."""
    v, beta = float(x[V]), float(x[BETA])
    return v * math.cos(beta), v * math.sin(beta), float(x[YAW_RATE])


def slip_body_acceleration(x: Sequence[float], dx: Sequence[float]) -> tuple[float, float]:
    """Car-frame acceleration of the CoG from v, beta and their derivatives (ST/STD layout).

    With vx = v cos(beta), vy = v sin(beta): ax = vx' - psi' vy, ay = vy' + psi' vx, i.e.
    ax = v' cos(beta) - v sin(beta) (beta' + psi'), ay = v' sin(beta) + v cos(beta) (beta' + psi').
    """
    v, beta = float(x[V]), float(x[BETA])
    turn = dx[BETA] + dx[YAW]
    cb, sb = math.cos(beta), math.sin(beta)
    return dx[V] * cb - v * sb * turn, dx[V] * sb + v * cb * turn


class SingleTrack(VehicleModel):
    """ST: single-track model with linear tyres (CommonRoad ST), CoG reference point."""

    name: ClassVar[str] = 'st'
    state_names: ClassVar[tuple[str, ...]] = (
        'x', 'y', 'steering_angle', 'speed', 'yaw', 'yaw_rate', 'slip_angle')
    reference_point: ClassVar[str] = 'centre of gravity'
    derivative = staticmethod(derivative)
    rhs_kernel = rhs

    @classmethod
    def body_velocity(cls, x: Sequence[float], p: CarParameters) -> tuple[float, float, float]:
        """(v cos(beta), v sin(beta), yaw rate) at the CoG."""
        return slip_body_velocity(x)

    @classmethod
    def body_acceleration(cls, x: Sequence[float], u: Sequence[float],
                          p: CarParameters) -> tuple[float, float]:
        """Exact car-frame CoG acceleration, see :func:`slip_body_acceleration`."""
        return slip_body_acceleration(x, derivative(x, u, p))
