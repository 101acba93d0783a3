"""Fixed-step integrators, kept apart from the models so any model runs with any integrator.

Two flavours of the same schemes:

* :func:`euler_step` / :func:`rk4_step` take any ``derivative(x, u, p)`` and return a new state;
  the :class:`~arsim_core.dynamics.vehicle.Vehicle` uses them for user models and tests use them
  as the reference.
* ``*_update`` / :func:`rk4_stage` are in-place kernels that the built-in models' compiled
  ``advance`` functions combine, because numba cannot cache functions that receive other
  compiled functions as arguments.

The input ``u`` is held constant over a step (zero-order hold), as CommonRoad assumes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, MutableSequence, Sequence
from types import MappingProxyType
from typing import Any, Final

from .._jit import kernel

#: Method ids understood by the compiled ``advance`` kernels.
EULER: Final = 0
RK4: Final = 1

Derivative = Callable[[Sequence[float], Sequence[float], Any], Sequence[float]]
Step = Callable[[Derivative, Sequence[float], Sequence[float], Any, float], list[float]]


def euler_step(f: Derivative, x: Sequence[float], u: Sequence[float], p: Any,
               h: float) -> list[float]:
    """One explicit Euler step of length ``h`` [s]: x + h f(x, u)."""
    k = f(x, u, p)
    return [xi + h * ki for xi, ki in zip(x, k, strict=True)]


def rk4_step(f: Derivative, x: Sequence[float], u: Sequence[float], p: Any,
             h: float) -> list[float]:
    """One classic fourth-order Runge-Kutta step of length ``h`` [s]."""
    half = 0.5 * h
    k1 = f(x, u, p)
    k2 = f([xi + half * ki for xi, ki in zip(x, k1, strict=True)], u, p)
    k3 = f([xi + half * ki for xi, ki in zip(x, k2, strict=True)], u, p)
    k4 = f([xi + h * ki for xi, ki in zip(x, k3, strict=True)], u, p)
    sixth = h / 6.0
    return [xi + sixth * (a + 2.0 * b + 2.0 * c + d)
            for xi, a, b, c, d in zip(x, k1, k2, k3, k4, strict=True)]


#: Integrators by the name used in the car profile (``integrator:``).
INTEGRATORS: Final[Mapping[str, Step]] = MappingProxyType({'euler': euler_step, 'rk4': rk4_step})
#: Kernel method id of each integrator name.
METHOD_IDS: Final[Mapping[str, int]] = MappingProxyType({'euler': EULER, 'rk4': RK4})


@kernel
def rk4_stage(out: MutableSequence[float], x: Sequence[float], k: Sequence[float],
              a: float) -> None:
    """out = x + a k (the argument of the next Runge-Kutta stage)."""
    for i in range(len(x)):
        out[i] = x[i] + a * k[i]


@kernel
def rk4_update(x: MutableSequence[float], k1: Sequence[float], k2: Sequence[float],
               k3: Sequence[float], k4: Sequence[float], h: float) -> None:
    """x += h/6 (k1 + 2 k2 + 2 k3 + k4), in place."""
    sixth = h / 6.0
    for i in range(len(x)):
        x[i] = x[i] + sixth * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])


@kernel
def euler_update(x: MutableSequence[float], k: Sequence[float], h: float) -> None:
    """x += h k, in place."""
    for i in range(len(x)):
        x[i] = x[i] + h * k[i]


@kernel
def all_finite(x: Sequence[float]) -> bool:
    """True when no state entry is NaN or infinite (the divergence check after a step)."""
    for i in range(len(x)):
        if not math.isfinite(x[i]):
            return False
    return True
