"""Fleet: many vehicles stepped, commanded and read in one call (arsim_core.dynamics.fleet)."""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import pytest

from arsim_core.dynamics import NUMBA_ENABLED, ModelDivergedError, Vehicle, load_vehicle_config
from arsim_core.dynamics.fleet import Fleet

pytestmark = pytest.mark.skipif(not NUMBA_ENABLED, reason='fleets step compiled kernels only')


def vehicles(profile: dict[str, Any], n: int, **changes: Any) -> dict[str, Vehicle]:
    profile = {**copy.deepcopy(profile), **changes}
    return {f'car{i}': Vehicle(load_vehicle_config(profile, 'test.yaml')) for i in range(n)}


def place(cars: dict[str, Vehicle]) -> None:
    for i, car in enumerate(cars.values()):
        car.reset(float(i), -float(i), 0.3 * i, speed=0.5 * i)


@pytest.mark.parametrize('model', ['ks', 'st', 'std'])
def test_a_fleet_steps_as_each_vehicle_would_alone(f1tenth_profile: dict[str, Any],
                                                   model: str) -> None:
    rate = 1000.0 if model == 'std' else 200.0
    alone = vehicles(f1tenth_profile, 4, model=model, physics_rate_hz=rate)
    together = vehicles(f1tenth_profile, 4, model=model, physics_rate_hz=rate)
    place(alone)
    place(together)
    (fleet,) = Fleet.group(together)
    rng = np.random.default_rng(3)
    for _ in range(60):
        speed, steer = rng.uniform(-1.0, 6.0, 4), rng.uniform(-0.6, 0.6, 4)  # beyond limits too
        for car, v, s in zip(alone.values(), speed, steer, strict=True):
            car.set_ackermann(float(v), float(s))
            car.advance(0.01)
        fleet.set_ackermann(np.ones(4, dtype=bool), speed, steer)
        assert fleet.advance(0.01) == {}
    for name, car in alone.items():
        assert np.array_equal(together[name].state, car.state)  # the same kernel, bit for bit
        assert together[name].time == pytest.approx(car.time)
    expected = np.array([car.planar_state() for car in alone.values()])
    np.testing.assert_allclose(fleet.planar(), expected, rtol=0.0, atol=1e-12)


def test_single_vehicle_calls_act_on_the_fleet_rows(f1tenth_profile: dict[str, Any]) -> None:
    cars = vehicles(f1tenth_profile, 3)
    (fleet,) = Fleet.group(cars)
    cars['car1'].reset(5.0, 6.0, 1.0)
    cars['car1'].set_ackermann(2.0, 0.1)
    assert fleet.advance(0.05, skip=['car0']) == {}
    assert fleet.planar()[0, :3].tolist() == [0.0, 0.0, 0.0]  # skipped, not moved
    x, y, _, vx, *_ = fleet.planar()[1]
    assert (x, y) != (5.0, 6.0) and vx > 0.0
    assert cars['car1'].pose[:2] == pytest.approx((x, y), abs=1e-12)


def test_only_active_rows_take_a_command(f1tenth_profile: dict[str, Any]) -> None:
    cars = vehicles(f1tenth_profile, 3)
    (fleet,) = Fleet.group(cars)
    fleet.set_inputs(np.array([True, False, True]), np.full(3, 0.2), np.full(3, 3.0))
    for _ in range(20):
        fleet.advance(0.01)
    speeds = fleet.planar()[:, 3]
    assert speeds[0] > 0.5 and speeds[2] > 0.5 and speeds[1] == 0.0


def test_a_diverged_row_is_reported_by_name_and_the_others_run_on(
        full_scale_profile: dict[str, Any]) -> None:
    full_scale_profile['Controller']['speed'] = {
        k: 0.5 for k in full_scale_profile['Controller']['speed']}
    full_scale_profile['Controller']['steering']['kp'] = 0.5
    cars = vehicles(full_scale_profile, 2, integrator='euler', physics_rate_hz=1.0, model='st')
    (fleet,) = Fleet.group(cars)
    cars['car0'].reset(0.0, 0.0, 0.0, speed=50.0)
    cars['car0'].set_ackermann(50.0, 1.0)
    diverged: dict[str, ModelDivergedError] = {}
    for _ in range(2000):
        diverged = fleet.advance(1.0)
        if diverged:
            break
    assert list(diverged) == ['car0']
    assert 'diverged' in str(diverged['car0'])
    assert np.all(np.isfinite(cars['car1'].state))
    assert cars['car1'].time == pytest.approx(cars['car0'].time + 1.0)


def test_vehicles_that_cannot_share_a_call_are_not_grouped(
        f1tenth_profile: dict[str, Any]) -> None:
    cars = {**vehicles(f1tenth_profile, 2, model='st'),
            'ks': vehicles(f1tenth_profile, 1, model='ks')['car0'],
            'fast': vehicles(f1tenth_profile, 1, physics_rate_hz=900.0)['car0']}
    groups = Fleet.group(cars)
    assert [fleet.names for fleet in groups] == [('car0', 'car1')]
    assert math.isfinite(groups[0].planar().sum())
