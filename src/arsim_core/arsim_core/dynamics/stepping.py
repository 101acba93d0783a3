"""The one compiled sub-step loop of the built-in models: controller, integrator, model hook.

Every built-in model steps the same way: the controller turns the command into the inputs, RK4
or Euler integrates the model's right-hand side, the model's post-step hook runs (STD keeps its
wheel speeds non-negative) and the state is checked for NaN or infinity. Only the right-hand
side and the hook differ, so one kernel takes the model's id and calls them by id: a branch per
call, nothing next to the model's arithmetic. (A kernel made per model from a closure would not
be served from numba's on-disk cache, and every process would compile it again.)
"""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence

import numpy as np

from .._jit import inline_kernel, kernel, parallel_kernel, prange
from . import ks, st, std
from .base import VehicleModel
from .controllers import control
from .integrators import RK4, all_finite, euler_update, rk4_stage, rk4_update

KS, ST, STD = 0, 1, 2
#: The built-in models by id. Exactly these classes: a subclass may change the equations.
MODEL_IDS: dict[type[VehicleModel], int] = {
    ks.KinematicSingleTrack: KS, st.SingleTrack: ST, std.SingleTrackDrift: STD}
STEER, SPEED = 2, 3  # where every built-in model keeps its steering angle and speed


@kernel
def rhs(model: int, x: Sequence[float], u0: float, u1: float, p: Sequence[float],
        out: MutableSequence[float]) -> None:
    """Model ``model``'s derivative into ``out``."""
    if model == KS:
        ks.rhs(x, u0, u1, p, out)
    elif model == ST:
        st.rhs(x, u0, u1, p, out)
    else:
        std.rhs(x, u0, u1, p, out)


@kernel
def advance(model: int, x: MutableSequence[float], p: Sequence[float],
            c: MutableSequence[float], n: int, h: float, method: int,
            buf: Sequence[MutableSequence[float]] | np.ndarray) -> bool:
    """``n`` controller + integrator sub-steps of ``h`` s in place; False once x is not finite."""
    k1, k2, k3, k4, tmp = buf[0], buf[1], buf[2], buf[3], buf[4]
    for _ in range(n):
        u0, u1 = control(x[STEER], x[SPEED], p, c, h)
        rhs(model, x, u0, u1, p, k1)
        if method == RK4:
            rk4_stage(tmp, x, k1, 0.5 * h)
            rhs(model, tmp, u0, u1, p, k2)
            rk4_stage(tmp, x, k2, 0.5 * h)
            rhs(model, tmp, u0, u1, p, k3)
            rk4_stage(tmp, x, k3, h)
            rhs(model, tmp, u0, u1, p, k4)
            rk4_update(x, k1, k2, k3, k4, h)
        else:
            euler_update(x, k1, h)
        if model == STD:
            std.clamp_wheel_speeds(x)
        if not all_finite(x):
            return False
    return True


@inline_kernel
def _advance_range(model: int, x: np.ndarray, p: np.ndarray, c: np.ndarray, skip: np.ndarray,
                   n: int, h: float, method: int, buf: np.ndarray, ok: np.ndarray, first: int,
                   last: int) -> None:
    """``advance_rows`` of rows ``first`` to ``last`` (excluded)."""
    for i in range(first, last):
        ok[i] = True if skip[i] else advance(model, x[i], p[i], c[i], n, h, method, buf)


@kernel
def advance_rows(model: int, x: np.ndarray, p: np.ndarray, c: np.ndarray, skip: np.ndarray,
                 n: int, h: float, method: int, buf: np.ndarray, ok: np.ndarray) -> None:
    """``advance`` of every row not in ``skip``; ``ok[i]`` False where row i stopped being
    finite (skipped rows are ok)."""
    _advance_range(model, x, p, c, skip, n, h, method, buf, ok, 0, x.shape[0])


@parallel_kernel
def advance_rows_threaded(model: int, x: np.ndarray, p: np.ndarray, c: np.ndarray,
                          skip: np.ndarray, n: int, h: float, method: int, buf: np.ndarray,
                          ok: np.ndarray, threads: int) -> None:
    """``advance_rows`` in ``threads`` runs of rows on numba's threads: each row steps as
    alone, so the states are the serial kernel's, bit for bit."""
    rows = x.shape[0]
    for run in prange(threads):
        own = np.empty_like(buf)  # the integrator's scratch rows, one set per run
        _advance_range(model, x, p, c, skip, n, h, method, own, ok, run * rows // threads,
                       (run + 1) * rows // threads)
