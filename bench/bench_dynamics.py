"""Per-step cost of arsim's vehicle models against commonroad-vehicle-models.

For KS, ST and STD one RK4 integration step is timed twice in this process, with the same
parameters (F1TENTH made CommonRoad compatible), state and step size:

* arsim: ``Vehicle.advance(0.025)`` as the dynamics node calls it (controller, RK4 sub-steps,
  divergence check), divided by the number of sub-steps;
* CommonRoad: the same RK4 scheme over plain Python lists calling ``vehicle_dynamics_<model>``.

The figure is CommonRoad time / arsim time (higher is better). Details go to stderr.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

try:
    import arsim_core.dynamics  # noqa: F401
except ImportError:  # running from a source checkout without the workspace sourced
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'src' / 'arsim_core'))

from benchkit import Row, main, sized, take_smoke_flag  # noqa: E402

from arsim_core._jit import NUMBA_ENABLED  # noqa: E402
from arsim_core.dynamics import (  # noqa: E402
    F1TENTH,
    CarParameters,
    ControllerGains,
    Vehicle,
    VehicleConfig,
    VehicleModel,
    resolve_model,
)

DT = 0.025  # one /clock tick of the dynamics node [s]
#: Physics rate per model [Hz]: 200 Hz for KS/ST (default profile); STD needs ~1 kHz.
RATES = {'ks': 200.0, 'st': 200.0, 'std': 1000.0}
REPEATS = 5
MODELS = ('ks', 'st', 'std')
ROWS = (*(Row(f'dynamics_speedup_vs_commonroad_{name}', 'x') for name in MODELS),
        Row('numba_dynamics', 'flag'))


def _best_of(fn: Callable[[], None], loops: int) -> float:
    """Fastest of REPEATS runs of ``loops`` calls, seconds per call."""
    best = math.inf
    loops = sized(loops, 20)
    for _ in range(sized(REPEATS, 1)):
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        best = min(best, (time.perf_counter() - start) / loops)
    return best


def _params() -> CarParameters:
    """F1TENTH with CommonRoad's single stiffness, so both sides model the same car."""
    p = F1TENTH
    c = p.tyre.cornering_stiffness_front
    pacejka = replace(p.tyre.pacejka, p_dy1=p.tyre.friction, p_ky1=-c * p.tyre.friction)
    return replace(p, tyre=replace(p.tyre, cornering_stiffness_rear=c, pacejka=pacejka))


def _commonroad(p: CarParameters) -> object:
    """CommonRoad parameter object for ``p``."""
    from vehiclemodels.utils.longitudinal_parameters import LongitudinalParameters
    from vehiclemodels.utils.steering_parameters import SteeringParameters
    from vehiclemodels.utils.tireParameters import TireParameters
    from vehiclemodels.vehicle_parameters import VehicleParameters

    cr = VehicleParameters()
    body, tyre, s, lo, d = p.body, p.tyre, p.steering, p.longitudinal, p.drivetrain
    cr.a, cr.b, cr.m, cr.I_z, cr.h_s = (body.cog_to_front_axle, body.cog_to_rear_axle, body.mass,
                                        body.yaw_inertia, body.cog_height)
    cr.R_w, cr.I_y_w = tyre.wheel_radius, tyre.wheel_inertia
    cr.T_sb, cr.T_se = d.brake_torque_split_front, d.drive_torque_split_front
    cr.steering = SteeringParameters(min=s.min_angle, max=s.max_angle, v_min=s.min_rate,
                                     v_max=s.max_rate)
    cr.longitudinal = LongitudinalParameters(v_min=lo.min_speed, v_max=lo.max_speed,
                                             v_switch=lo.switching_speed,
                                             a_max=lo.max_acceleration)
    cr.tire = TireParameters(**vars(tyre.pacejka))
    return cr


def _commonroad_step_s(model: str, x0: list[float], u: list[float], cr: object,
                       h: float) -> float:
    """Seconds per RK4 step of CommonRoad's model on plain lists."""
    import importlib
    f = getattr(importlib.import_module(f'vehiclemodels.vehicle_dynamics_{model}'),
                f'vehicle_dynamics_{model}')
    state = [list(x0)]

    def step() -> None:
        x = state[0]
        k1 = f(x, u, cr)
        k2 = f([a + h / 2 * b for a, b in zip(x, k1, strict=True)], u, cr)
        k3 = f([a + h / 2 * b for a, b in zip(x, k2, strict=True)], u, cr)
        k4 = f([a + h * b for a, b in zip(x, k3, strict=True)], u, cr)
        new = [a + h / 6 * (b + 2 * c + 2 * d + e)
               for a, b, c, d, e in zip(x, k1, k2, k3, k4, strict=True)]
        state[0] = new if all(math.isfinite(v) for v in new) else list(x0)

    return _best_of(step, 2000 if model == 'std' else 5000)


def _arsim_step_s(model: type[VehicleModel], name: str,
                  p: CarParameters) -> tuple[float, Vehicle]:
    """Seconds per sub-step of Vehicle.advance(DT) driving a 5 m/s circle."""
    rate = RATES[name]
    config = VehicleConfig(model=model, model_name=name, integrator='rk4', physics_rate_hz=rate,
                           params=p, controller=ControllerGains.default(p), source='bench')
    car = Vehicle(config)
    car.reset(0.0, 0.0, 0.0, speed=5.0)
    car.set_ackermann(5.0, 0.2)
    for _ in range(40):  # settle into the circle (and compile)
        car.advance(DT)
    per_call = _best_of(lambda: car.advance(DT), 2000 if NUMBA_ENABLED else 100)
    return per_call / math.ceil(DT * rate - 1e-9), car


def run() -> list[tuple[str, float, str]]:
    """Speed-up of arsim's step over CommonRoad's for KS, ST and STD."""
    p = _params()
    cr = _commonroad(p)
    figures = []
    compiled = NUMBA_ENABLED
    for name in MODELS:
        model = resolve_model(name, 'bench')
        ours, car = _arsim_step_s(model, name, p)
        x = car.state.tolist()
        u = [0.0, 0.5]  # a typical input: steering held, mild acceleration
        theirs = _commonroad_step_s(name, x, u, cr, 1.0 / RATES[name])
        print(f'[bench_dynamics] {name}: arsim {ours * 1e6:.3f} us/step '
              f'({"numba" if NUMBA_ENABLED else "pure Python"}, advance({DT}) = '
              f'{ours * math.ceil(DT * RATES[name] - 1e-9) * 1e6:.2f} us), '
              f'commonroad {theirs * 1e6:.2f} us/step', file=sys.stderr)
        figures.append((f'dynamics_speedup_vs_commonroad_{name}', theirs / ours, 'x'))
        compiled = compiled and car.compiled
    # Whether the figures above (and every simulation run here) had compiled dynamics: 1 with
    # numba, 0 when the pure-Python fallback ran and every figure is far lower.
    figures.append(('numba_dynamics', 1.0 if compiled else 0.0, 'flag'))
    return figures


if __name__ == '__main__':
    take_smoke_flag()
    sys.exit(main(run, ROWS))
