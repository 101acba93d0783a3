"""Reference side of the CommonRoad comparisons: parameter mapping, CommonRoad stepping.

``commonroad-vehicle-models`` (import name ``vehiclemodels``) is a test-only dependency.
"""

from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from arsim_core.dynamics import CarParameters, PacejkaParameters
from arsim_core.dynamics.st import COMMONROAD_KINEMATIC_SPEED

vm = pytest.importorskip('vehiclemodels')
from vehiclemodels.utils.longitudinal_parameters import LongitudinalParameters  # noqa: E402
from vehiclemodels.utils.steering_parameters import SteeringParameters  # noqa: E402
from vehiclemodels.utils.tireParameters import TireParameters  # noqa: E402
from vehiclemodels.vehicle_dynamics_ks import vehicle_dynamics_ks  # noqa: E402
from vehiclemodels.vehicle_dynamics_st import vehicle_dynamics_st  # noqa: E402
from vehiclemodels.vehicle_dynamics_std import vehicle_dynamics_std  # noqa: E402
from vehiclemodels.vehicle_parameters import VehicleParameters  # noqa: E402

#: CommonRoad derivative function of each model name.
CR_FUNCTIONS: dict[str, Callable[..., list[float]]] = {
    'ks': vehicle_dynamics_ks, 'st': vehicle_dynamics_st, 'std': vehicle_dynamics_std,
}


def commonroad_compatible(p: CarParameters) -> CarParameters:
    """``p`` with CommonRoad's ST tyre: one stiffness C_S for both axles, mu = p_dy1,
    p_ky1 = -C_S mu (CommonRoad derives mu and C_S from the Pacejka set) and the kinematic
    switch at CommonRoad's 0.1 m/s."""
    stiffness = p.tyre.cornering_stiffness_front
    pacejka = replace(p.tyre.pacejka, p_dy1=p.tyre.friction,
                      p_ky1=-stiffness * p.tyre.friction)
    return replace(p, tyre=replace(p.tyre, cornering_stiffness_rear=stiffness, pacejka=pacejka,
                                   kinematic_speed=COMMONROAD_KINEMATIC_SPEED))


def to_commonroad(p: CarParameters) -> VehicleParameters:
    """The CommonRoad parameter object equivalent to ``p`` (which must be compatible)."""
    t = p.tyre
    assert t.cornering_stiffness_front == t.cornering_stiffness_rear
    assert t.pacejka.p_dy1 == t.friction
    assert -t.pacejka.p_ky1 / t.pacejka.p_dy1 == pytest.approx(t.cornering_stiffness_front,
                                                                rel=1e-15)
    cr = VehicleParameters()
    cr.a = p.body.cog_to_front_axle
    cr.b = p.body.cog_to_rear_axle
    cr.m = p.body.mass
    cr.I_z = p.body.yaw_inertia
    cr.h_s = p.body.cog_height
    cr.R_w = t.wheel_radius
    cr.I_y_w = t.wheel_inertia
    cr.T_sb = p.drivetrain.brake_torque_split_front
    cr.T_se = p.drivetrain.drive_torque_split_front
    cr.steering = SteeringParameters(min=p.steering.min_angle, max=p.steering.max_angle,
                                     v_min=p.steering.min_rate, v_max=p.steering.max_rate)
    lo = p.longitudinal
    cr.longitudinal = LongitudinalParameters(v_min=lo.min_speed, v_max=lo.max_speed,
                                             v_switch=lo.switching_speed, a_max=lo.max_acceleration)
    cr.tire = TireParameters(**{name: getattr(t.pacejka, name)
                                for name in PacejkaParameters.__dataclass_fields__})
    return cr


@contextlib.contextmanager
def commonroad_st_kinematic() -> Iterator[None]:
    """Make CommonRoad's ST take its kinematic branch at every speed.

    Its switch is ``abs(x[3]) < 0.1``; a module-level ``abs`` returning 0 shadows the builtin,
    so the reference for reverse driving is CommonRoad's own kinematic code.
    """
    module = sys.modules[vehicle_dynamics_st.__module__]
    module.abs = lambda value: 0.0  # type: ignore[attr-defined]
    try:
        yield
    finally:
        del module.abs  # type: ignore[attr-defined]


def cr_derivative(model: str, x: Sequence[float], u: Sequence[float], cr: Any) -> list[float]:
    """CommonRoad's derivative on a copy of ``x`` (its STD clamps wheel speeds in place)."""
    return [float(v) for v in CR_FUNCTIONS[model](list(x), list(u), cr)]


def reference_step(f: Callable[[list[float]], list[float]], x: list[float], h: float,
                   method: str) -> list[float]:
    """Euler or classic RK4 written out independently of arsim's integrators."""
    k1 = f(x)
    if method == 'euler':
        return [a + h * b for a, b in zip(x, k1, strict=True)]
    k2 = f([a + h / 2 * b for a, b in zip(x, k1, strict=True)])
    k3 = f([a + h / 2 * b for a, b in zip(x, k2, strict=True)])
    k4 = f([a + h * b for a, b in zip(x, k3, strict=True)])
    return [a + h / 6 * (b + 2 * c + 2 * d + e)
            for a, b, c, d, e in zip(x, k1, k2, k3, k4, strict=True)]


def cr_trajectory(model: str, x0: Sequence[float], inputs: Callable[[float, list[float]],
                  Sequence[float]], cr: Any, h: float, steps: int,
                  method: str) -> np.ndarray:
    """States of CommonRoad's model over ``steps`` steps; ``inputs(t, x)`` gives u."""
    x = list(x0)
    out = [list(x)]
    for i in range(steps):
        u = list(inputs(i * h, x))
        x = reference_step(lambda s, u=u: cr_derivative(model, s, u, cr), x, h, method)
        if model == 'std':  # CommonRoad clamps the wheel speeds inside its derivative
            x[7], x[8] = max(0.0, x[7]), max(0.0, x[8])
        out.append(list(x))
    return np.array(out)


def wrap(angle: float) -> float:
    return (angle + math.pi) % math.tau - math.pi


def random_cases(model: str, p: CarParameters, n: int,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` random states and inputs covering limits, the low-speed switch and slip.

    A fifth of the speeds lie in [-0.3, 0.3] m/s (kinematic switch / blend), a tenth of the
    steering angles sit exactly on a limit, inputs reach 1.5x the limits to exercise the
    constraints.
    """
    s, lo = p.steering, p.longitudinal
    delta = rng.uniform(1.2 * s.min_angle, 1.2 * s.max_angle, n)
    on_limit = rng.random(n) < 0.1
    delta[on_limit] = rng.choice([s.min_angle, s.max_angle], on_limit.sum())
    v = rng.uniform(1.1 * lo.min_speed, 1.1 * lo.max_speed, n)
    slow = rng.random(n) < 0.2
    v[slow] = rng.uniform(-0.3, 0.3, slow.sum())
    special = rng.random(n) < 0.05
    v[special] = rng.choice([0.0, 0.1, -0.1, 0.2, lo.switching_speed, lo.max_speed,
                             lo.min_speed], special.sum())
    states = [rng.uniform(-100, 100, n), rng.uniform(-100, 100, n), delta, v,
              rng.uniform(-2 * math.pi, 2 * math.pi, n)]
    if model in ('st', 'std'):
        yaw_rate_scale = 3.0 / p.body.wheelbase
        states += [rng.uniform(-yaw_rate_scale, yaw_rate_scale, n), rng.uniform(-0.6, 0.6, n)]
    if model == 'std':
        rolling = np.abs(v) / p.tyre.wheel_radius
        states += [rolling * rng.uniform(0.0, 1.6, n) - rng.uniform(0, 2, n) * (rng.random(n) < .1)
                   for _ in range(2)]
    inputs = [rng.uniform(1.5 * s.min_rate, 1.5 * s.max_rate, n),
              rng.uniform(-1.3 * lo.max_acceleration, 1.3 * lo.max_acceleration, n)]
    zero = rng.random(n) < 0.05
    inputs[0][zero] = 0.0
    return np.column_stack(states), np.column_stack(inputs)


# --- checks shared by test_ks / test_st / test_std ------------------------------------------------
def _car(car: str) -> tuple[CarParameters, Any]:
    """Our parameters and the equivalent CommonRoad object for a preset name.

    The full-scale car is compared against CommonRoad's own parameter set 2 object.
    """
    from vehiclemodels.parameters_vehicle2 import parameters_vehicle2

    from arsim_core.dynamics import PRESETS
    if car == 'full_scale':
        full = PRESETS[car]
        full = replace(full, tyre=replace(full.tyre, kinematic_speed=COMMONROAD_KINEMATIC_SPEED))
        return full, parameters_vehicle2()
    p = commonroad_compatible(PRESETS[car])
    return p, to_commonroad(p)


def check_derivatives(model: str, car: str, n: int, seed: int) -> None:
    """Python and compiled derivatives agree with CommonRoad to 1e-9 relative."""
    from arsim_core.dynamics import MODELS, NUMBA_ENABLED
    from arsim_core.dynamics.params import pack

    cls = MODELS[model]
    p, cr = _car(car)
    states, inputs = random_cases(model, p, n, np.random.default_rng(seed))
    pairs = list(zip(states.tolist(), inputs.tolist(), strict=True))
    ref = np.array([cr_derivative(model, x, u, cr) for x, u in pairs])
    if model == 'st':  # reverse: arsim's ST is kinematic there, compare with CommonRoad's branch
        reverse = states[:, 3] <= -COMMONROAD_KINEMATIC_SPEED
        assert 0.2 * n < reverse.sum() < 0.8 * n
        with commonroad_st_kinematic():
            ref[reverse] = [cr_derivative(model, x, u, cr)
                            for x, u in zip(states[reverse].tolist(), inputs[reverse].tolist(),
                                            strict=True)]
    ours = np.array([cls.derivative(x, u, p) for x, u in pairs])
    assert np.all(np.isfinite(ref))
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-300)
    if NUMBA_ENABLED:
        kernel = cls.rhs_kernel
        assert kernel is not None
        pv = np.array(pack(p))
        out = np.empty(states.shape[1])
        compiled = np.empty_like(ref)
        for i in range(n):
            kernel(states[i], inputs[i, 0], inputs[i, 1], pv, out)
            compiled[i] = out
        np.testing.assert_allclose(compiled, ref, rtol=1e-9, atol=1e-300)


def scenario_inputs(name: str, p: CarParameters) -> tuple[float, Callable[[float, Any],
                                                                       tuple[float, float]]]:
    """Initial speed and open-loop input law u(t) of a named 10 s scenario."""
    s, lo = p.steering, p.longitudinal
    a_max, sv_max = lo.max_acceleration, s.max_rate
    if name == 'low_speed':  # crosses the 0.1 m/s switch and the STD blend, both directions
        return 0.06, lambda t, x: (0.5 * sv_max * math.sin(1.3 * t), 0.12 * math.cos(0.8 * t))
    if name == 'reverse':  # backing up with steering
        return 0.0, lambda t, x: (0.5 * sv_max * math.sin(0.7 * t),
                                  -0.3 * a_max if t < 2.0 else 0.0)
    if name == 'full_lock':  # steering runs into its limit and stays there
        return 0.3 * lo.switching_speed, lambda t, x: (sv_max, 0.1 * a_max)
    if name == 'braking':  # firm braking (0.6 a_max, below tyre lock) to a stop
        return 0.8 * lo.switching_speed, lambda t, x: (0.2 * sv_max * math.cos(t),
                                                       -0.6 * a_max if x[3] > 0.0 else 0.0)
    if name == 'drifting':  # fast, full throttle, hard alternating steering
        return (0.9 * lo.switching_speed,
                lambda t, x: (sv_max if math.sin(1.5 * t) >= 0 else -sv_max, a_max))
    raise KeyError(name)


def step_size(model: str, scenario: str) -> float:
    """Integration step [s] of a scenario: small enough for the reference to stay sane.

    ST's tyre terms are stiff just above CommonRoad's 0.1 m/s switch (eigenvalues down to
    -2150 1/s on the full-scale car), STD's wheel-slip dynamics are stiff at every speed.
    """
    if model == 'std':
        return 0.001
    if model == 'st' and scenario in ('low_speed', 'braking'):
        return 0.0005
    return 0.005


def check_trajectories(model: str, car: str, integrator: str, scenario: str) -> None:
    """10 s open-loop trajectories agree with CommonRoad's to 1e-6 m (same steps, same u)."""
    from arsim_core.dynamics import INTEGRATORS, MODELS

    cls = MODELS[model]
    p, cr = _car(car)
    h = step_size(model, scenario)
    steps = round(10.0 / h)
    v0, law = scenario_inputs(scenario, p)
    x0 = cls.initial_state(0.0, 0.0, 0.3, v0, p)
    with (commonroad_st_kinematic() if model == 'st' and scenario == 'reverse'
          else contextlib.nullcontext()):
        ref = cr_trajectory(model, x0, law, cr, h, steps, integrator)

    step = INTEGRATORS[integrator]
    x = list(x0)
    ours = [list(x)]
    for i in range(steps):
        x = step(cls.derivative, x, law(i * h, x), p, h)
        cls.project(x, p)
        ours.append(list(x))
    got = np.array(ours)
    assert np.all(np.isfinite(ref))
    position_error = np.max(np.hypot(got[:, 0] - ref[:, 0], got[:, 1] - ref[:, 1]))
    assert position_error < 1e-6, f'{scenario}: max position error {position_error:.3g} m'
    np.testing.assert_allclose(got[:, 4], ref[:, 4], rtol=0, atol=1e-6)  # yaw
