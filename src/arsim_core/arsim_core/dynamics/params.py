"""Vehicle parameters: frozen dataclasses, the two presets and the flat vector the kernels read.

All values are SI (m, kg, s, rad, N). Field names are descriptive; the CommonRoad symbol of each
value is given in its comment (Althoff & Wuersching, "CommonRoad: Vehicle Models", 2020,
``vehicleModels_commonRoad.pdf``), so the equations can be checked against the paper.

The kernels read a flat tuple (see :func:`pack`) instead of the dataclasses because attribute
look-ups are what makes the reference implementation slow, and numba cannot read dataclasses.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import astuple, dataclass, field, fields
from types import MappingProxyType
from typing import Final

import numpy as np

#: Gravitational acceleration used by every CommonRoad model [m/s^2].
GRAVITY: Final = 9.81


@dataclass(frozen=True)
class BodyParameters:
    """Rigid chassis: mass, yaw inertia and the position of the centre of gravity (CoG)."""

    mass: float  #: total mass [kg] (CommonRoad m)
    yaw_inertia: float  #: moment of inertia about the vertical axis through the CoG [kg m^2] (I_z)
    cog_to_front_axle: float  #: CoG to front axle, along the car [m] (a, often lf)
    cog_to_rear_axle: float  #: CoG to rear axle, along the car [m] (b, often lr)
    cog_height: float  #: CoG height above ground [m] (h_s; f1tenth_gym h)

    @property
    def wheelbase(self) -> float:
        """Front to rear axle [m]."""
        return self.cog_to_front_axle + self.cog_to_rear_axle


@dataclass(frozen=True)
class PacejkaParameters:
    """Magic Formula coefficients used by the STD model (CommonRoad Tab. 7, dimensionless).

    Defaults are CommonRoad's ``parameters_tire.yaml`` (ADAMS handbook tyre), the only set
    CommonRoad publishes; it is shared by all CommonRoad vehicles because the coefficients are
    normalised by the wheel load.
    """

    # longitudinal, pure slip
    p_cx1: float = 1.6411  #: shape factor C_x
    p_dx1: float = 1.1739  #: peak friction mu_x
    p_dx3: float = 0.0  #: camber dependency of mu_x
    p_ex1: float = 0.46403  #: curvature E_x
    p_kx1: float = 22.303  #: slip stiffness K_x / F_z
    p_hx1: float = 0.0012297  #: horizontal shift
    p_vx1: float = -8.8098e-06  #: vertical shift / F_z
    # longitudinal, combined slip
    r_bx1: float = 13.276
    r_bx2: float = -13.778
    r_cx1: float = 1.2568
    r_ex1: float = 0.65225
    r_hx1: float = 0.0050722
    # lateral, pure slip
    p_cy1: float = 1.3507  #: shape factor C_y
    p_dy1: float = 1.0489  #: peak friction mu_y
    p_dy3: float = -2.8821  #: camber dependency of mu_y
    p_ey1: float = -0.0074722  #: curvature E_y
    p_ky1: float = -21.92  #: cornering stiffness K_y / F_z (negative: SAE sign convention)
    p_hy1: float = 0.0026747
    p_hy3: float = 0.031415
    p_vy1: float = 0.037318
    p_vy3: float = -0.32931
    # lateral, combined slip
    r_by1: float = 7.1433
    r_by2: float = 9.1916
    r_by3: float = -0.027856
    r_cy1: float = 1.0719
    r_ey1: float = -0.27572
    r_hy1: float = 5.7448e-06
    r_vy1: float = -0.027825
    r_vy3: float = -0.27568
    r_vy4: float = 12.12
    r_vy5: float = 1.9
    r_vy6: float = -10.704


@dataclass(frozen=True)
class TyreParameters:
    """Tyre and wheel data.

    ``friction`` and the cornering stiffnesses drive the linear tyre of the ST model; the wheel
    values and ``pacejka`` are used only by the STD model.
    """

    friction: float  #: friction coefficient mu [-] (CommonRoad ST: mu = p_dy1)
    cornering_stiffness_front: float  #: C_Sf: lateral force / (mu * load) per slip angle [1/rad]
    cornering_stiffness_rear: float  #: C_Sr [1/rad]
    #: ST only: below this speed, and whenever reversing, the kinematic equations replace the
    #: linear tyre model [m/s]. CommonRoad switches at |v| < 0.1, but its tyre terms grow like
    #: 1/v (stiff for fixed-step integrators) and are unstable for v < 0; see docs/dynamics.md.
    kinematic_speed: float
    wheel_radius: float  #: effective rolling radius [m] (R_w, STD)
    wheel_inertia: float  #: spin inertia of one axle's wheels [kg m^2] (I_y_w, STD)
    pacejka: PacejkaParameters = field(default_factory=PacejkaParameters)  #: STD tyre forces


@dataclass(frozen=True)
class SteeringParameters:
    """Steering limits (CommonRoad steering constraints, Sec. 3.1 of the paper)."""

    min_angle: float  #: [rad] (delta_min, negative = right)
    max_angle: float  #: [rad] (delta_max, positive = left)
    min_rate: float  #: most negative steering rate [rad/s] (v_delta_min)
    max_rate: float  #: [rad/s] (v_delta_max)


@dataclass(frozen=True)
class LongitudinalParameters:
    """Longitudinal limits (CommonRoad acceleration constraints).

    Above ``switching_speed`` the drive acceleration is limited to a_max * v_switch / v,
    CommonRoad's model of a power-limited motor.
    """

    max_acceleration: float  #: |acceleration| limit, driving and braking [m/s^2] (a_max)
    switching_speed: float  #: speed above which the motor is power limited [m/s] (v_switch)
    min_speed: float  #: [m/s] (v_min, negative = reverse)
    max_speed: float  #: [m/s] (v_max)


@dataclass(frozen=True)
class DrivetrainParameters:
    """Torque distribution (STD) and the mapping of the normalised throttle/brake command."""

    drive_torque_split_front: float  #: share of drive torque on the front axle [-] (T_se)
    brake_torque_split_front: float  #: share of brake torque on the front axle [-] (T_sb)
    throttle_acceleration: float  #: acceleration at throttle 1 [m/s^2]
    brake_deceleration: float  #: deceleration at brake 1 [m/s^2]
    coast_deceleration: float  #: rolling resistance + drag when coasting [m/s^2]


@dataclass(frozen=True)
class CarParameters:
    """Everything the dynamics of one car need, grouped as in the car profile YAML."""

    body: BodyParameters
    tyre: TyreParameters
    steering: SteeringParameters
    longitudinal: LongitudinalParameters
    drivetrain: DrivetrainParameters


# --- flat parameter vector ---------------------------------------------------------------------
# Index constants of the tuple returned by pack(); numba treats module-level ints as constants.
MU: Final = 0
C_SF: Final = 1
C_SR: Final = 2
LF: Final = 3
LR: Final = 4
H_COG: Final = 5
MASS: Final = 6
I_Z: Final = 7
STEER_MIN: Final = 8
STEER_MAX: Final = 9
SV_MIN: Final = 10
SV_MAX: Final = 11
V_SWITCH: Final = 12
A_MAX: Final = 13
V_MIN: Final = 14
V_MAX: Final = 15
R_W: Final = 16
I_W: Final = 17
T_SB: Final = 18
T_SE: Final = 19
V_KIN: Final = 20
#: First Pacejka coefficient; the others follow in PacejkaParameters field order.
PACEJKA: Final = 21
PACEJKA_NAMES: Final = tuple(f.name for f in fields(PacejkaParameters))
P_CX1, P_DX1, P_DX3, P_EX1, P_KX1, P_HX1, P_VX1 = range(PACEJKA, PACEJKA + 7)
R_BX1, R_BX2, R_CX1, R_EX1, R_HX1 = range(PACEJKA + 7, PACEJKA + 12)
P_CY1, P_DY1, P_DY3, P_EY1, P_KY1, P_HY1, P_HY3, P_VY1, P_VY3 = range(PACEJKA + 12, PACEJKA + 21)
R_BY1, R_BY2, R_BY3, R_CY1, R_EY1, R_HY1 = range(PACEJKA + 21, PACEJKA + 27)
R_VY1, R_VY3, R_VY4, R_VY5, R_VY6 = range(PACEJKA + 27, PACEJKA + 32)
N_PARAMS: Final = PACEJKA + len(PACEJKA_NAMES)


@functools.lru_cache(maxsize=64)
def pack(p: CarParameters) -> tuple[float, ...]:
    """Flatten ``p`` into the tuple layout the kernels index (cached: parameters are frozen)."""
    b, t, s, lo, d = p.body, p.tyre, p.steering, p.longitudinal, p.drivetrain
    head = (
        t.friction, t.cornering_stiffness_front, t.cornering_stiffness_rear,
        b.cog_to_front_axle, b.cog_to_rear_axle, b.cog_height, b.mass, b.yaw_inertia,
        s.min_angle, s.max_angle, s.min_rate, s.max_rate,
        lo.switching_speed, lo.max_acceleration, lo.min_speed, lo.max_speed,
        t.wheel_radius, t.wheel_inertia, d.brake_torque_split_front, d.drive_torque_split_front,
        t.kinematic_speed,
    )
    flat = tuple(float(v) for v in head + astuple(t.pacejka))
    assert len(flat) == N_PARAMS
    return flat


@functools.lru_cache(maxsize=64)
def pack_array(p: CarParameters) -> np.ndarray:
    """:func:`pack` as a float64 array, the form compiled kernels take (cached; do not modify)."""
    return np.array(pack(p), dtype=np.float64)


# --- presets -----------------------------------------------------------------------------------
def _f1tenth() -> CarParameters:
    """F1TENTH 1:10 car with the f1tenth_gym values.

    The STD-only values are not part of f1tenth_gym, so they come from CommonRoad: the Pacejka
    coefficients unchanged (they are normalised by load; f1tenth_gym's mu 1.0489 is CommonRoad's
    p_dy1), the brake split of parameter set 2, and a wheel of radius 0.05 m whose inertia is
    scaled so that I_y_w / (m R_w^2) equals CommonRoad set 2 (0.01314), i.e. the wheels hold
    the same share of the car's kinetic energy as on the full-scale car. The drive split is the
    one deliberate exception: the F1TENTH car is four-wheel drive (T_se = 0.5), and with set 2's
    rear drive (T_se = 0) a_max = 9.51 m/s^2 spins the rear wheels from standstill.
    ``kinematic_speed`` is f1tenth_gym's 0.5 m/s (ST eigenvalues about -114/v 1/s on this car).
    """
    mass = 3.74
    wheel_radius = 0.05
    return CarParameters(
        body=BodyParameters(
            mass=mass, yaw_inertia=0.04712, cog_to_front_axle=0.15875, cog_to_rear_axle=0.17145,
            cog_height=0.074,
        ),
        tyre=TyreParameters(
            friction=1.0489, cornering_stiffness_front=4.718, cornering_stiffness_rear=5.4562,
            kinematic_speed=0.5, wheel_radius=wheel_radius,
            wheel_inertia=round(_WHEEL_INERTIA_RATIO * mass * wheel_radius**2, 9),
        ),
        steering=SteeringParameters(min_angle=-0.4189, max_angle=0.4189, min_rate=-3.2,
                                    max_rate=3.2),
        longitudinal=LongitudinalParameters(max_acceleration=9.51, switching_speed=7.319,
                                            min_speed=-5.0, max_speed=20.0),
        drivetrain=DrivetrainParameters(
            drive_torque_split_front=0.5, brake_torque_split_front=0.66,
            throttle_acceleration=9.51, brake_deceleration=9.51, coast_deceleration=0.5,
        ),
    )


def _full_scale() -> CarParameters:
    """BMW 320i, CommonRoad parameter set 2 (vehicle ID 2).

    ST uses mu = p_dy1 and C_Sf = C_Sr = -p_ky1 / p_dy1 exactly as CommonRoad's ST does.
    ``kinematic_speed`` is 1 m/s: the ST tyre terms have eigenvalues of about -216/v 1/s on
    this car, which explicit Euler at 200 Hz only handles above ~0.55 m/s (RK4: ~0.4 m/s).
    """
    tyre = PacejkaParameters()
    stiffness = -tyre.p_ky1 / tyre.p_dy1
    return CarParameters(
        body=BodyParameters(
            mass=1093.2952334674046, yaw_inertia=1791.5995300122856,
            cog_to_front_axle=1.1561957064, cog_to_rear_axle=1.4227170936, cog_height=0.61373004,
        ),
        tyre=TyreParameters(
            friction=tyre.p_dy1, cornering_stiffness_front=stiffness,
            cornering_stiffness_rear=stiffness, kinematic_speed=1.0, wheel_radius=0.344,
            wheel_inertia=1.7,
            pacejka=tyre,
        ),
        steering=SteeringParameters(min_angle=-1.066, max_angle=1.066, min_rate=-0.4,
                                    max_rate=0.4),
        longitudinal=LongitudinalParameters(max_acceleration=11.5, switching_speed=7.319,
                                            min_speed=-13.9, max_speed=50.8),
        drivetrain=DrivetrainParameters(
            drive_torque_split_front=0.0, brake_torque_split_front=0.66,
            throttle_acceleration=11.5, brake_deceleration=11.5, coast_deceleration=0.3,
        ),
    )


#: I_y_w / (m R_w^2) of CommonRoad parameter set 2, used to scale the F1TENTH wheel inertia.
_WHEEL_INERTIA_RATIO: Final = 1.7 / (1093.2952334674046 * 0.344**2)

#: f1tenth_gym vehicle (see :func:`_f1tenth` for where the STD-only values come from).
F1TENTH: Final = _f1tenth()
#: CommonRoad parameter set 2 (BMW 320i).
FULL_SCALE: Final = _full_scale()
#: Parameter presets by name.
PRESETS: Final[Mapping[str, CarParameters]] = MappingProxyType(
    {'f1tenth': F1TENTH, 'full_scale': FULL_SCALE})
