"""Euler and RK4 steps (arsim_core.dynamics.integrators)."""

from __future__ import annotations

import math

import pytest

from arsim_core.dynamics import INTEGRATORS, euler_step, rk4_step
from arsim_core.dynamics.integrators import euler_update, rk4_stage, rk4_update


def oscillator(x: list[float], u: list[float], p: float) -> list[float]:
    """Harmonic oscillator x'' = -p x + u0, exact solution known."""
    return [x[1], -p * x[0] + u[0]]


def final_error(step: object, h: float) -> float:
    x = [1.0, 0.0]
    for _ in range(round(2.0 / h)):
        x = step(oscillator, x, [0.0, 0.0], 4.0, h)  # type: ignore[operator]
    return abs(x[0] - math.cos(2.0 * 2.0))


@pytest.mark.parametrize(('step', 'order'), [(euler_step, 1), (rk4_step, 4)])
def test_convergence_order(step: object, order: int) -> None:
    ratio = final_error(step, 0.01) / final_error(step, 0.005)
    assert ratio == pytest.approx(2 ** order, rel=0.1)


def test_registry_names() -> None:
    assert dict(INTEGRATORS) == {'euler': euler_step, 'rk4': rk4_step}


def test_in_place_kernels_match_the_list_steps() -> None:
    import numpy as np
    x = np.array([1.0, 0.5])
    h = 0.1
    k1 = np.array(oscillator(list(x), [0.0], 4.0))
    tmp = np.empty(2)
    rk4_stage(tmp, x, k1, h / 2)
    k2 = np.array(oscillator(list(tmp), [0.0], 4.0))
    rk4_stage(tmp, x, k2, h / 2)
    k3 = np.array(oscillator(list(tmp), [0.0], 4.0))
    rk4_stage(tmp, x, k3, h)
    k4 = np.array(oscillator(list(tmp), [0.0], 4.0))
    y = x.copy()
    rk4_update(y, k1, k2, k3, k4, h)
    np.testing.assert_allclose(y, rk4_step(oscillator, [1.0, 0.5], [0.0], 4.0, h), rtol=1e-15)
    z = x.copy()
    euler_update(z, k1, h)
    np.testing.assert_allclose(z, euler_step(oscillator, [1.0, 0.5], [0.0], 4.0, h), rtol=1e-15)
