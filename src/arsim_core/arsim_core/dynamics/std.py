"""Single-track drift model STD (CommonRoad): Pacejka tyres and wheel spin dynamics.

Source: Althoff & Wuersching, "CommonRoad: Vehicle Models", 2020, Sec. 7 (single-track drift
model), and ``vehiclemodels.vehicle_dynamics_std`` v3.0.2, reproduced operation by operation.
Reference point: **centre of gravity**. Combined-slip Magic Formula tyres (:mod:`.tyre`), so the
car can drift and spin its wheels; below ~0.2 m/s it is blended smoothly into the kinematic
model (weight w = (tanh((v - 0.2) / 0.05) + 1) / 2). Forward driving only: the wheel speeds are
kept >= 0 (CommonRoad clamps them the same way).

State x (SI units):
    0  x        CoG position, world frame [m]
    1  y        [m]
    2  delta    front wheel steering angle, positive left [rad]
    3  v        CoG speed [m/s]
    4  psi      yaw angle [rad]
    5  psi'     yaw rate [rad/s]
    6  beta     side slip angle at the CoG [rad]
    7  omega_f  front wheel angular speed [rad/s]
    8  omega_r  rear wheel angular speed [rad/s]

Input u: 0 steering rate v_delta [rad/s], 1 longitudinal acceleration a_long [m/s^2], both
clipped by :mod:`~arsim_core.dynamics.constraints` first. The acceleration is turned into drive
torque T_E = m R_w a (a > 0) or brake torque T_B = m R_w a (a <= 0), split front/rear by T_se /
T_sb; the tyres then produce the actual forces.

Equations (F: tyre forces, front f / rear r, x along / y across the wheel):
    Fzf = m (g lr - a h) / l,  Fzr = m (g lf + a h) / l
    alpha_f = atan((v sin(beta) + psi' lf) / (v cos(beta))) - delta,
    alpha_r = atan((v sin(beta) - psi' lr) / (v cos(beta)))
    s_f = 1 - R_w omega_f / max(u_wf, 0.1),  s_r = 1 - R_w omega_r / max(u_wr, 0.1)
    v'     = (-Fyf sin(delta - beta) + Fyr sin(beta) + Fxr cos(beta) + Fxf cos(delta - beta)) / m
    psi''  = (Fyf cos(delta) lf - Fyr lr + Fxf sin(delta) lf) / I_z
    beta'  = -psi' + (Fyf cos(delta - beta) + Fyr cos(beta) - Fxr sin(beta)
                      + Fxf sin(delta - beta)) / (m v)
    omega_f' = (-R_w Fxf + T_sb T_B + T_se T_E) / I_y_w
    omega_r' = (-R_w Fxr + (1 - T_sb) T_B + (1 - T_se) T_E) / I_y_w

Numerics: the wheel-slip dynamics are stiff (eigenvalue ~ -R_w^2 Fz p_kx1 / (I_y_w v)), so an
explicit integrator needs a high physics rate at low speed; see docs/dynamics.md.
"""

from __future__ import annotations

import math
from collections.abc import MutableSequence, Sequence
from typing import ClassVar

from .._jit import kernel, python_function
from .base import VehicleModel, evaluate_rhs
from .constraints import acceleration, steering_rate
from .params import (
    A_MAX,
    GRAVITY,
    H_COG,
    I_W,
    I_Z,
    LF,
    LR,
    MASS,
    R_W,
    STEER_MAX,
    STEER_MIN,
    SV_MAX,
    SV_MIN,
    T_SB,
    T_SE,
    V_MAX,
    V_MIN,
    V_SWITCH,
    CarParameters,
)
from .st import slip_body_acceleration, slip_body_velocity
from .tyre import lateral, lateral_combined, longitudinal, longitudinal_combined

X, Y, STEER, V, YAW, YAW_RATE, BETA, OMEGA_F, OMEGA_R = range(9)
N_STATES = 9
#: Blend centre and width [m/s] between the kinematic and the drift model (CommonRoad v_s, v_b).
V_BLEND = 0.2
V_BLEND_WIDTH = 0.05
#: Slip quantities are evaluated only above this speed [m/s] (CommonRoad v_min = v_s / 2).
V_SLIP = V_BLEND / 2
#: Time constant [s] pulling the wheel speeds to rolling speed in the kinematic regime.
WHEEL_TAU = 0.02


@kernel
def rhs(x: Sequence[float], u0: float, u1: float, p: Sequence[float],
        out: MutableSequence[float]) -> None:
    """STD derivative into ``out`` (packed parameters ``p``); see the module docstring."""
    g = GRAVITY
    lf = p[LF]
    lr = p[LR]
    lwb = lf + lr
    m = p[MASS]
    i_z = p[I_Z]
    r_w = p[R_W]
    i_y_w = p[I_W]
    t_sb = p[T_SB]
    t_se = p[T_SE]
    h_s = p[H_COG]
    v_min = V_SLIP
    sv = steering_rate(x[2], u0, p[STEER_MIN], p[STEER_MAX], p[SV_MIN], p[SV_MAX])
    acc = acceleration(x[3], u1, p[V_SWITCH], p[A_MAX], p[V_MIN], p[V_MAX])

    # lateral tyre slip angles
    if x[3] > v_min:
        alpha_f = math.atan((x[3] * math.sin(x[6]) + x[5] * lf) / (x[3] * math.cos(x[6]))) - x[2]
        alpha_r = math.atan((x[3] * math.sin(x[6]) - x[5] * lr) / (x[3] * math.cos(x[6])))
    else:
        alpha_f = 0.0
        alpha_r = 0.0

    # vertical tyre forces (static load + longitudinal load transfer)
    f_zf = m * (-acc * h_s + g * lr) / (lr + lf)
    f_zr = m * (acc * h_s + g * lf) / (lr + lf)

    # wheel ground speeds and longitudinal slip
    u_wf = max(0.0, x[3] * math.cos(x[6]) * math.cos(x[2])
               + (x[3] * math.sin(x[6]) + lf * x[5]) * math.sin(x[2]))
    u_wr = max(0.0, x[3] * math.cos(x[6]))
    s_f = 1 - r_w * x[7] / max(u_wf, v_min)
    s_r = 1 - r_w * x[8] / max(u_wr, v_min)

    # tyre forces: pure slip, then combined slip
    f0_xf = longitudinal(s_f, 0.0, f_zf, p)
    f0_xr = longitudinal(s_r, 0.0, f_zr, p)
    f0_yf, mu_yf = lateral(alpha_f, 0.0, f_zf, p)
    f0_yr, mu_yr = lateral(alpha_r, 0.0, f_zr, p)
    f_xf = longitudinal_combined(s_f, alpha_f, f0_xf, p)
    f_xr = longitudinal_combined(s_r, alpha_r, f0_xr, p)
    f_yf = lateral_combined(s_f, alpha_f, 0.0, mu_yf, f_zf, f0_yf, p)
    f_yr = lateral_combined(s_r, alpha_r, 0.0, mu_yr, f_zr, f0_yr, p)

    # acceleration input -> engine or brake torque
    if acc > 0:
        t_b = 0.0
        t_e = m * r_w * acc
    else:
        t_b = m * r_w * acc
        t_e = 0.0

    # drift model
    d_v = 1 / m * (-f_yf * math.sin(x[2] - x[6]) + f_yr * math.sin(x[6]) + f_xr * math.cos(x[6])
                   + f_xf * math.cos(x[2] - x[6]))
    dd_psi = 1 / i_z * (f_yf * math.cos(x[2]) * lf - f_yr * lr + f_xf * math.sin(x[2]) * lf)
    if x[3] > v_min:
        d_beta = -x[5] + 1 / (m * x[3]) * (f_yf * math.cos(x[2] - x[6]) + f_yr * math.cos(x[6])
                                           - f_xr * math.sin(x[6]) + f_xf * math.sin(x[2] - x[6]))
    else:
        d_beta = 0.0
    # wheel dynamics; no negative wheel spin
    omega_f = x[7]
    omega_r = x[8]
    if omega_f >= 0:
        d_omega_f = 1 / i_y_w * (-r_w * f_xf + t_sb * t_b + t_se * t_e)
    else:
        d_omega_f = 0.0
        omega_f = 0.0
    if omega_r >= 0:
        d_omega_r = 1 / i_y_w * (-r_w * f_xr + (1 - t_sb) * t_b + (1 - t_se) * t_e)
    else:
        d_omega_r = 0.0
        omega_r = 0.0

    # kinematic model about the CoG, for low speeds
    beta_ks = math.atan(math.tan(x[2]) * lr / lwb)
    d_psi_ks = x[3] * math.cos(beta_ks) * math.tan(x[2]) / lwb
    d_beta_ks = (lr * sv) / (lwb * math.cos(x[2]) ** 2
                             * (1 + (math.tan(x[2]) ** 2 * lr / lwb) ** 2))
    dd_psi_ks = 1 / lwb * (acc * math.cos(x[6]) * math.tan(x[2])
                           - x[3] * math.sin(x[6]) * d_beta_ks * math.tan(x[2])
                           + x[3] * math.cos(x[6]) * sv / math.cos(x[2]) ** 2)
    d_omega_f_ks = (1 / WHEEL_TAU) * (u_wf / r_w - omega_f)
    d_omega_r_ks = (1 / WHEEL_TAU) * (u_wr / r_w - omega_r)

    # blend both models around V_BLEND
    w_std = 0.5 * (math.tanh((x[3] - V_BLEND) / V_BLEND_WIDTH) + 1)
    w_ks = 1 - w_std
    out[0] = x[3] * math.cos(x[6] + x[4])
    out[1] = x[3] * math.sin(x[6] + x[4])
    out[2] = sv
    out[3] = w_std * d_v + w_ks * acc
    out[4] = w_std * x[5] + w_ks * d_psi_ks
    out[5] = w_std * dd_psi + w_ks * dd_psi_ks
    out[6] = w_std * d_beta + w_ks * d_beta_ks
    out[7] = w_std * d_omega_f + w_ks * d_omega_f_ks
    out[8] = w_std * d_omega_r + w_ks * d_omega_r_ks


def derivative(x: Sequence[float], u: Sequence[float], p: CarParameters) -> list[float]:
    """STD dx/dt (pure). State, input, units and equations: see :mod:`arsim_core.dynamics.std`.

    Unlike CommonRoad's function it does not clamp negative wheel speeds in ``x`` as a side
    effect; :meth:`SingleTrackDrift.project` does that after each integration step.
    """
    return evaluate_rhs(rhs, N_STATES, x, u, p)


@kernel
def clamp_wheel_speeds(x: MutableSequence[float]) -> None:
    """Negative wheel spin is not modelled: clamp omega_f, omega_r to >= 0."""
    x[7] = max(x[7], 0.0)
    x[8] = max(x[8], 0.0)


class SingleTrackDrift(VehicleModel):
    """STD: single-track drift model with Pacejka tyres (CommonRoad STD), CoG reference."""

    name: ClassVar[str] = 'std'
    state_names: ClassVar[tuple[str, ...]] = (
        'x', 'y', 'steering_angle', 'speed', 'yaw', 'yaw_rate', 'slip_angle',
        'front_wheel_speed', 'rear_wheel_speed')
    reference_point: ClassVar[str] = 'centre of gravity'
    derivative = staticmethod(derivative)
    rhs_kernel = rhs

    @classmethod
    def initial_state(cls, x: float, y: float, yaw: float, speed: float,
                      p: CarParameters) -> list[float]:
        """Straight, no slip, wheels rolling at ``speed`` (CommonRoad ``init_std``)."""
        state = super().initial_state(x, y, yaw, speed, p)
        rolling = speed / p.tyre.wheel_radius
        state[OMEGA_F] = rolling
        state[OMEGA_R] = rolling
        cls.project(state, p)
        return state

    @classmethod
    def project(cls, x: MutableSequence[float], p: CarParameters) -> None:
        """Clamp the wheel speeds to >= 0 (CommonRoad does this inside its derivative)."""
        python_function(clamp_wheel_speeds)(x)

    @classmethod
    def body_velocity(cls, x: Sequence[float], p: CarParameters) -> tuple[float, float, float]:
        """(v cos(beta), v sin(beta), yaw rate) at the CoG."""
        return slip_body_velocity(x)

    @classmethod
    def body_acceleration(cls, x: Sequence[float], u: Sequence[float],
                          p: CarParameters) -> tuple[float, float]:
        """Exact car-frame CoG acceleration, see :func:`.st.slip_body_acceleration`."""
        return slip_body_acceleration(x, derivative(x, u, p))
