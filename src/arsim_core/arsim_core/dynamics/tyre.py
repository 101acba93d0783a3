"""Pacejka Magic Formula tyre forces as CommonRoad implements them (``vehiclemodels.utils.
tire_model``), for the STD model.

Turn slip is neglected and all scaling factors are 1, as in CommonRoad. One CommonRoad quirk is
kept on purpose so results stay identical: in the pure longitudinal force the vertical shift
S_vx is added inside the sine instead of outside (it is ~1e-5 of the load, so negligible).
Coefficients are read from the packed parameter vector (indices in :mod:`.params`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .._jit import kernel
from .params import (
    P_CX1,
    P_CY1,
    P_DX1,
    P_DX3,
    P_DY1,
    P_DY3,
    P_EX1,
    P_EY1,
    P_HX1,
    P_HY1,
    P_HY3,
    P_KX1,
    P_KY1,
    P_VX1,
    P_VY1,
    P_VY3,
    R_BX1,
    R_BX2,
    R_BY1,
    R_BY2,
    R_BY3,
    R_CX1,
    R_CY1,
    R_EX1,
    R_EY1,
    R_HX1,
    R_HY1,
    R_VY1,
    R_VY3,
    R_VY4,
    R_VY5,
    R_VY6,
)


@kernel
def sign(v: float) -> float:
    """-1, 0 or 1."""
    if v > 0.0:
        return 1.0
    if v < 0.0:
        return -1.0
    return 0.0


@kernel
def longitudinal(kappa: float, gamma: float, f_z: float, p: Sequence[float]) -> float:
    """Pure-slip longitudinal force [N] at slip ``kappa`` [-], camber ``gamma``, load ``f_z``."""
    kappa = -kappa  # coordinate system transformation
    s_hx = p[P_HX1]
    s_vx = f_z * p[P_VX1]
    kappa_x = kappa + s_hx
    mu_x = p[P_DX1] * (1 - p[P_DX3] * gamma ** 2)
    c_x = p[P_CX1]
    d_x = mu_x * f_z
    e_x = p[P_EX1]
    k_x = f_z * p[P_KX1]
    b_x = k_x / (c_x * d_x)
    return d_x * math.sin(c_x * math.atan(b_x * kappa_x - e_x * (b_x * kappa_x
                                                                  - math.atan(b_x * kappa_x)))
                          + s_vx)


@kernel
def lateral(alpha: float, gamma: float, f_z: float, p: Sequence[float]) -> tuple[float, float]:
    """Pure-slip lateral force [N] and friction mu_y at slip angle ``alpha`` [rad]."""
    s_hy = sign(gamma) * (p[P_HY1] + p[P_HY3] * abs(gamma))
    s_vy = sign(gamma) * f_z * (p[P_VY1] + p[P_VY3] * abs(gamma))
    alpha_y = alpha + s_hy
    mu_y = p[P_DY1] * (1 - p[P_DY3] * gamma ** 2)
    c_y = p[P_CY1]
    d_y = mu_y * f_z
    e_y = p[P_EY1]
    k_y = f_z * p[P_KY1]
    b_y = k_y / (c_y * d_y)
    f_y = d_y * math.sin(c_y * math.atan(b_y * alpha_y - e_y * (b_y * alpha_y
                                                                 - math.atan(b_y * alpha_y))))
    return f_y + s_vy, mu_y


@kernel
def longitudinal_combined(kappa: float, alpha: float, f0_x: float, p: Sequence[float]) -> float:
    """Longitudinal force [N] under combined slip, from the pure-slip force ``f0_x``."""
    s_hxalpha = p[R_HX1]
    alpha_s = alpha + s_hxalpha
    b_xalpha = p[R_BX1] * math.cos(math.atan(p[R_BX2] * kappa))
    c_xalpha = p[R_CX1]
    e_xalpha = p[R_EX1]
    shift = b_xalpha * s_hxalpha
    d_xalpha = f0_x / (math.cos(c_xalpha * math.atan(shift - e_xalpha
                                                     * (shift - math.atan(shift)))))
    return d_xalpha * math.cos(c_xalpha * math.atan(
        b_xalpha * alpha_s - e_xalpha * (b_xalpha * alpha_s - math.atan(b_xalpha * alpha_s))))


@kernel
def lateral_combined(kappa: float, alpha: float, gamma: float, mu_y: float, f_z: float,
                     f0_y: float, p: Sequence[float]) -> float:
    """Lateral force [N] under combined slip, from the pure-slip force ``f0_y``."""
    s_hykappa = p[R_HY1]
    kappa_s = kappa + s_hykappa
    b_ykappa = p[R_BY1] * math.cos(math.atan(p[R_BY2] * (alpha - p[R_BY3])))
    c_ykappa = p[R_CY1]
    e_ykappa = p[R_EY1]
    shift = b_ykappa * s_hykappa
    d_ykappa = f0_y / (math.cos(c_ykappa * math.atan(shift - e_ykappa
                                                     * (shift - math.atan(shift)))))
    d_vykappa = mu_y * f_z * (p[R_VY1] + p[R_VY3] * gamma) * math.cos(math.atan(p[R_VY4] * alpha))
    s_vykappa = d_vykappa * math.sin(p[R_VY5] * math.atan(p[R_VY6] * kappa))
    return d_ykappa * math.cos(c_ykappa * math.atan(
        b_ykappa * kappa_s - e_ykappa * (b_ykappa * kappa_s - math.atan(b_ykappa * kappa_s)))) \
        + s_vykappa
