"""Vehicle: commands, sub-stepping, read-outs and divergence (arsim_core.dynamics.vehicle)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from arsim_core.dynamics import (
    F1TENTH,
    ModelDivergedError,
    Vehicle,
    VehicleConfig,
    ackermann_out_of_range,
    load_vehicle_config,
    rk4_step,
)
from arsim_core.dynamics.controllers import control, initial_controller
from arsim_core.dynamics.params import pack
from arsim_core.dynamics.st import derivative as st_derivative
from arsim_core.errors import ArsimError


def make(profile: dict[str, Any], **changes: Any) -> Vehicle:
    profile.update(changes)
    return Vehicle(load_vehicle_config(profile, 'test.yaml'))


@pytest.mark.parametrize('model', ['ks', 'st', 'std'])
@pytest.mark.parametrize('integrator', ['euler', 'rk4'])
def test_drives_straight_to_target_speed(f1tenth_profile: dict[str, Any], model: str,
                                         integrator: str) -> None:
    rate = 1000.0 if model == 'std' else 200.0
    car = make(f1tenth_profile, model=model, integrator=integrator, physics_rate_hz=rate)
    assert car.model_name == model
    car.reset(1.0, 2.0, math.pi / 2)
    assert car.pose == pytest.approx((1.0, 2.0, math.pi / 2))
    car.set_ackermann(2.0, 0.0)
    for _ in range(120):  # 3 s
        car.advance(0.025)
    x, y, yaw = car.pose
    vx, vy, r = car.body_velocity
    assert vx == pytest.approx(2.0, abs=0.02)
    assert vy == pytest.approx(0.0, abs=1e-3)
    assert r == pytest.approx(0.0, abs=1e-3)
    # STD's tyres (CommonRoad's asymmetric set) pull sideways a little while accelerating
    drift = 0.3 if model == 'std' else 1e-9
    assert x == pytest.approx(1.0, abs=drift)
    assert 4.5 < y - 2.0 < 6.0
    assert yaw == pytest.approx(math.pi / 2, abs=0.1 if model == 'std' else 1e-9)
    assert car.time == pytest.approx(3.0)


def test_advance_equals_substeps_of_controller_and_rk4(f1tenth_profile: dict[str, Any]) -> None:
    car = make(f1tenth_profile)
    car.reset(0.0, 0.0, 0.3, speed=1.0)
    car.set_ackermann(3.0, 0.25)
    car.advance(0.025)  # 5 sub-steps at 200 Hz

    x = list(car.config.model.initial_state(0.0, 0.0, 0.3, 1.0, F1TENTH))
    c = initial_controller(car.config.controller, F1TENTH)
    c[1], c[2] = 3.0, 0.25  # speed and steering targets
    p = list(pack(F1TENTH))
    ctrl = getattr(control, 'py_func', control)
    for _ in range(5):
        u = ctrl(x[2], x[3], p, c, 0.005)
        x = rk4_step(st_derivative, x, u, F1TENTH, 0.005)
    np.testing.assert_allclose(car.state, x, rtol=1e-12, atol=1e-12)


def test_odd_dt_uses_ceil_substeps(f1tenth_profile: dict[str, Any]) -> None:
    a = make(f1tenth_profile)
    b = make(f1tenth_profile)
    for car in (a, b):
        car.reset(0.0, 0.0, 0.0, speed=2.0)
        car.set_ackermann(2.0, 0.2)
    a.advance(0.0123)  # ceil(2.46) = 3 sub-steps of 4.1 ms
    for _ in range(3):
        b.advance(0.0041)
    np.testing.assert_allclose(a.state, b.state, rtol=1e-12, atol=1e-12)
    a.advance(0.0)
    with pytest.raises(ValueError):
        a.advance(-0.01)


def test_circle_read_outs_are_consistent(f1tenth_profile: dict[str, Any]) -> None:
    car = make(f1tenth_profile)
    car.reset(0.0, 0.0, 0.0, speed=2.0)
    car.set_ackermann(2.0, 0.2)
    for _ in range(200):
        car.advance(0.025)
    vx, vy, r = car.body_velocity
    ax, ay = car.body_acceleration
    speed = math.hypot(vx, vy)
    assert speed == pytest.approx(2.0, abs=1e-3)
    assert car.steering_angle == pytest.approx(0.2, abs=1e-6)
    assert r > 0  # positive steering turns left (REP-103)
    # steady circle: only the centripetal v * r, pointing to the centre
    assert math.hypot(ax, ay) == pytest.approx(speed * r, rel=1e-6)
    assert ay == pytest.approx(vx * r, rel=1e-6)
    assert ax == pytest.approx(-vy * r, rel=1e-6)
    assert -math.pi <= car.pose[2] < math.pi
    state = car.state
    state[0] = 1e9
    assert car.state[0] != 1e9  # a copy


def test_steering_rate_and_acceleration_limits(f1tenth_profile: dict[str, Any]) -> None:
    car = make(f1tenth_profile)
    car.set_ackermann(5.0, 0.4, steering_angle_velocity=1.0, acceleration=2.0)
    for _ in range(4):  # 0.1 s
        car.advance(0.025)
    assert car.steering_angle == pytest.approx(0.1, abs=1e-9)
    assert car.speed == pytest.approx(0.2, abs=1e-9)
    # 0 = as fast as the car can: 3.2 rad/s steering rate, a_max
    fast = make(f1tenth_profile)
    fast.set_ackermann(5.0, 0.4)
    fast.advance(0.025)
    assert fast.steering_angle > 0.07
    # f1tenth_gym's controller treats standstill as reverse: gain 2 a_max / v_max for 1 step
    first = 2 * 9.51 / 20.0 * 5.0 * 0.005
    assert fast.speed == pytest.approx(first + 4 * 9.51 * 0.005, rel=1e-9)


def test_jerk_limit(f1tenth_profile: dict[str, Any]) -> None:
    car = make(f1tenth_profile)
    car.set_ackermann(5.0, 0.0, jerk=10.0)
    car.advance(0.1)  # acceleration ramps 0 -> 1 m/s^2 in 20 steps of 5 ms
    expected = sum(10.0 * 0.005 * k * 0.005 for k in range(1, 21))
    assert car.speed == pytest.approx(expected, rel=1e-9)


def test_targets_are_clipped_to_the_car(f1tenth_profile: dict[str, Any]) -> None:
    car = make(f1tenth_profile, model='ks')
    car.set_ackermann(100.0, 2.0)
    for _ in range(400):
        car.advance(0.025)
    assert car.steering_angle == pytest.approx(0.4189, abs=1e-9)
    assert car.speed <= 20.0 + 1e-9


def test_normalised_command(f1tenth_profile: dict[str, Any]) -> None:
    car = make(f1tenth_profile)
    car.set_normalised(throttle=0.5, brake=0.0, steering=-1.0)
    for _ in range(20):  # 0.5 s
        car.advance(0.025)
    assert car.steering_angle == pytest.approx(-0.4189, abs=1e-6)
    # coasting resistance acts from the second sub-step on (the car stands still in the first)
    assert car.speed == pytest.approx(0.5 * 9.51 * 0.5 - 0.5 * 0.495, rel=1e-9)
    car.set_normalised(throttle=0.0, brake=1.0, steering=0.0)
    for _ in range(40):
        car.advance(0.025)
    assert car.speed == pytest.approx(0.0, abs=1e-9)  # stops, does not reverse
    car.set_normalised(throttle=2.0, brake=-1.0, steering=5.0)  # clipped
    car.advance(0.025)
    assert car.speed > 0.0


def test_reset_holds_speed_and_clears_commands(f1tenth_profile: dict[str, Any]) -> None:
    car = make(f1tenth_profile)
    car.set_normalised(1.0, 0.0, 1.0)
    car.advance(0.5)
    car.reset(3.0, 4.0, -1.0, speed=4.0)
    assert car.time == 0.0
    car.advance(0.5)
    assert car.speed == pytest.approx(4.0, abs=1e-9)
    assert car.steering_angle == pytest.approx(0.0, abs=1e-12)


def test_non_finite_commands_are_rejected(f1tenth_profile: dict[str, Any]) -> None:
    car = make(f1tenth_profile)
    with pytest.raises(ValueError, match='speed'):
        car.set_ackermann(float('nan'), 0.0)
    with pytest.raises(ValueError, match='steering'):
        car.set_normalised(0.0, 0.0, float('inf'))
    with pytest.raises(ValueError, match='yaw'):
        car.reset(0.0, 0.0, float('nan'))


def test_builtin_model_divergence_raises_and_reset_recovers(
        full_scale_profile: dict[str, Any]) -> None:
    # Far too coarse a step for the tyre dynamics of a car doing 50 m/s: explicit Euler explodes.
    full_scale_profile['Controller']['speed'] = {k: 0.5 for k in full_scale_profile['Controller']
                                                 ['speed']}
    full_scale_profile['Controller']['steering']['kp'] = 0.5
    car = make(full_scale_profile, integrator='euler', physics_rate_hz=1.0, model='st')
    car.reset(0.0, 0.0, 0.0, speed=50.0)
    car.set_ackermann(50.0, 1.0)
    with pytest.raises(ModelDivergedError, match='diverged') as info:
        for _ in range(2000):
            car.advance(1.0)
    assert isinstance(info.value, ArsimError)
    with pytest.raises(ModelDivergedError, match='reset'):
        car.advance(0.025)
    car.reset(0.0, 0.0, 0.0)
    car.advance(0.025)
    assert np.all(np.isfinite(car.state))


def test_mixed_models_and_integrators_run_side_by_side(f1tenth_profile: dict[str, Any],
                                                       full_scale_profile: dict[str, Any]) -> None:
    cars = []
    for profile, model, integrator in [(f1tenth_profile, 'ks', 'euler'),
                                       (dict(f1tenth_profile), 'st', 'rk4'),
                                       (full_scale_profile, 'st', 'euler'),
                                       (dict(full_scale_profile), 'ks', 'rk4')]:
        cars.append(make(dict(profile), model=model, integrator=integrator))
    for car in cars:
        car.set_ackermann(3.0, 0.1)
    for _ in range(40):
        for car in cars:
            car.advance(0.025)
    assert [len(car.state) for car in cars] == [5, 7, 7, 5]
    assert all(car.speed > 1.0 for car in cars)
    assert cars[0].pose != cars[1].pose


def test_config_is_exposed(f1tenth_profile: dict[str, Any]) -> None:
    car = make(f1tenth_profile)
    assert isinstance(car.config, VehicleConfig)
    assert car.config.params.body.mass == 3.74


def test_a_command_at_the_limits_is_in_range_after_travelling_as_float32(
        f1tenth_profile: dict[str, Any]) -> None:
    """AckermannDrive carries float32: the steering limit 0.4189 arrives as 0.41890001."""
    params = make(f1tenth_profile).config.params
    limit, top = params.steering.max_angle, params.longitudinal.max_speed
    assert float(np.float32(limit)) > limit  # the case that was refused
    for steering in (limit, -limit, params.steering.min_angle):
        assert ackermann_out_of_range(params, float(np.float32(top)),
                                      float(np.float32(steering))) is None
    assert 'steering_angle outside' in ackermann_out_of_range(params, 1.0, limit + 1e-4)
    assert 'speed outside' in ackermann_out_of_range(params, top + 0.01, 0.0)
    assert 'speed outside' in ackermann_out_of_range(params, params.longitudinal.min_speed - 1,
                                                     0.0)
