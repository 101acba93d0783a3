"""The interface every vehicle model implements, built-in or user supplied.

A model is a class, never instantiated, that subclasses :class:`VehicleModel`. The minimum is
``state_names`` and ``derivative``; everything else has a default that assumes CommonRoad's
state layout ``[x, y, steering angle, speed, yaw, ...]``. A user model lives in one Python
file and is named in the car profile as ``model: path/to/my_model.py:MyModel`` (path relative
to the profile)::

    import math
    from arsim_core.dynamics import VehicleModel, constraints

    class MyModel(VehicleModel):
        \"\"\"Kinematic bicycle about the rear axle.\"\"\"
        state_names = ('x', 'y', 'steering_angle', 'speed', 'yaw')
        reference_point = 'rear axle'

        @staticmethod
        def derivative(x, u, p):
            l = p.body.wheelbase
            return [x[3] * math.cos(x[4]), x[3] * math.sin(x[4]), u[0], u[1],
                    x[3] / l * math.tan(x[2])]

Built-in models additionally provide a compiled right-hand side (``rhs_kernel``), which the one
compiled sub-step loop (:mod:`.stepping`) calls; user models run through the generic pure-Python
path, which is slower but needs nothing else.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, MutableSequence, Sequence
from typing import Any, ClassVar

import numpy as np

from .._jit import NUMBA_ENABLED
from .params import CarParameters, pack, pack_array

#: ``rhs(x, u0, u1, p, out) -> None``: derivative into ``out``, packed parameters ``p``.
RhsKernel = Callable[..., None]


def evaluate_rhs(rhs: RhsKernel, n: int, x: Sequence[float], u: Sequence[float],
                 p: CarParameters) -> list[float]:
    """dx/dt as a list from a derivative kernel ``rhs(x, u0, u1, packed p, out)``.

    Compiled kernels are called with float64 arrays (what they are compiled for), the
    pure-Python fallback with plain sequences.
    """
    u0, u1 = float(u[0]), float(u[1])
    if not NUMBA_ENABLED:
        out = [0.0] * n
        rhs(x, u0, u1, pack(p), out)
        return out
    arr = np.empty(n, dtype=np.float64)
    rhs(np.asarray(x, dtype=np.float64), u0, u1, pack_array(p), arr)
    return arr.tolist()


class VehicleModel(ABC):
    """A vehicle model: state layout, equations and how to read pose and velocities.

    Class attributes:
        name: short name (registry key for built-ins; informational for user models).
        state_names: one name per state entry; its length is the state dimension.
        reference_point: the body point whose position is ``pose`` (and what ``reset`` places).
        X, Y, STEER, SPEED, YAW: indices of those quantities in the state.
        rhs_kernel: optional compiled right-hand side (see the module docstring).
    """

    name: ClassVar[str] = ''
    state_names: ClassVar[tuple[str, ...]] = ()
    reference_point: ClassVar[str] = 'centre of gravity'
    X: ClassVar[int] = 0
    Y: ClassVar[int] = 1
    STEER: ClassVar[int] = 2
    SPEED: ClassVar[int] = 3
    YAW: ClassVar[int] = 4
    rhs_kernel: ClassVar[RhsKernel | None] = None

    @staticmethod
    @abstractmethod
    def derivative(x: Sequence[float], u: Sequence[float], p: CarParameters) -> Sequence[float]:
        """dx/dt at state ``x`` under input u = [steering rate rad/s, acceleration m/s^2].

        Must be pure (no side effects) and apply the input constraints itself.
        """

    @classmethod
    def initial_state(cls, x: float, y: float, yaw: float, speed: float,
                      p: CarParameters) -> list[float]:
        """State at rest pose (x, y, yaw) of the reference point, straight wheels, ``speed``."""
        state = [0.0] * len(cls.state_names)
        state[cls.X] = x
        state[cls.Y] = y
        state[cls.YAW] = yaw
        state[cls.SPEED] = speed
        return state

    @classmethod
    def project(cls, x: MutableSequence[float], p: CarParameters) -> None:
        """Put ``x`` back into the model's domain after a step (default: nothing to do)."""
        return None

    @classmethod
    def pose(cls, x: Sequence[float]) -> tuple[float, float, float]:
        """(x [m], y [m], yaw [rad]) of the reference point in the world frame."""
        return float(x[cls.X]), float(x[cls.Y]), float(x[cls.YAW])

    @classmethod
    def steering_angle(cls, x: Sequence[float]) -> float:
        """Front wheel steering angle [rad], positive left."""
        return float(x[cls.STEER])

    @classmethod
    def speed(cls, x: Sequence[float]) -> float:
        """The speed the speed controller tracks [m/s]."""
        return float(x[cls.SPEED])

    @classmethod
    def body_velocity(cls, x: Sequence[float], p: CarParameters) -> tuple[float, float, float]:
        """(vx [m/s], vy [m/s], yaw rate [rad/s]) of the reference point in the car frame.

        Default: the world-frame position derivative rotated into the car frame (REP-103:
        x forward, y left, z up).
        """
        dx = cls.derivative(x, (0.0, 0.0), p)
        yaw = x[cls.YAW]
        c, s = math.cos(yaw), math.sin(yaw)
        vxw, vyw = dx[cls.X], dx[cls.Y]
        return c * vxw + s * vyw, -s * vxw + c * vyw, float(dx[cls.YAW])

    @classmethod
    def body_acceleration(cls, x: Sequence[float], u: Sequence[float],
                          p: CarParameters) -> tuple[float, float]:
        """(ax, ay) [m/s^2] of the reference point in the car frame, gravity excluded.

        a = dv_body/dt + omega x v_body. Default: dv_body/dt by a central finite difference
        along dx/dt, which works for any model; built-ins override it with the exact formula.
        """
        dx = cls.derivative(x, u, p)
        vx, vy, r = cls.body_velocity(x, p)
        eps = 1e-5
        ahead = cls.body_velocity([xi + eps * di for xi, di in zip(x, dx, strict=True)], p)
        behind = cls.body_velocity([xi - eps * di for xi, di in zip(x, dx, strict=True)], p)
        dvx = (ahead[0] - behind[0]) / (2 * eps)
        dvy = (ahead[1] - behind[1]) / (2 * eps)
        return dvx - r * vy, dvy + r * vx

    @classmethod
    def describe(cls) -> dict[str, Any]:
        """Name, state layout and reference point, for logs and documentation."""
        return {'name': cls.name, 'states': cls.state_names, 'reference_point': cls.reference_point}
