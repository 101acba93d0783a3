"""The combustion powertrain (arsim_core.dynamics.powertrain): the engine's torque through the
gears bounds the drive, the gearbox shifts at its RPMs with the clutch open for the shift
time, and the rev limiter holds the top speed of the last gear."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from arsim_core.dynamics import NUMBA_ENABLED, Vehicle, load_vehicle_config
from arsim_core.dynamics.fleet import Fleet
from arsim_core.errors import ArsimError

FRAME_S = 0.01


def engine_car(profile: dict[str, Any], **changes: Any) -> Vehicle:
    profile['Powertrain'].update(changes)
    vehicle = Vehicle(load_vehicle_config(profile, 'car.yaml'))
    vehicle.reset(0.0, 0.0, 0.0)
    return vehicle


def torque_bound(vehicle: Vehicle, speed: float, gear: int) -> float:
    """What the docs say the engine pushes with at ``speed`` in ``gear`` [m/s^2]."""
    p = vehicle.config.powertrain
    assert p is not None
    body, tyre = vehicle.config.params.body, vehicle.config.params.tyre
    ratio = p.gear_ratios[gear - 1] * p.final_drive
    rpm = max(speed / tyre.wheel_radius * ratio * 60 / (2 * math.pi), p.idle_rpm)
    torque = float(np.interp(rpm, p.torque_rpm, p.torque_nm))
    return torque * ratio * p.efficiency / (tyre.wheel_radius * body.mass)


def test_first_gear_pushes_with_the_engine_torque(full_scale_profile: dict[str, Any]) -> None:
    car = engine_car(full_scale_profile, shift_time=0.0)
    car.set_ackermann(40.0, 0.0)
    for _ in range(100):  # to 4-5 m/s, below the power limit of the switching speed
        car.advance(FRAME_S)
    assert car.gearbox is not None and car.gearbox.gear == 1
    before = car.speed
    car.advance(FRAME_S)
    measured = (car.speed - before) / FRAME_S
    expected = torque_bound(car, before, 1)
    assert expected < car.config.params.longitudinal.max_acceleration  # the engine bounds it
    assert measured == pytest.approx(expected, rel=0.02)


def test_the_gearbox_shifts_up_at_its_rpm_with_no_drive_while_the_clutch_is_open(
        full_scale_profile: dict[str, Any]) -> None:
    car = engine_car(full_scale_profile)
    gearbox = car.gearbox
    assert gearbox is not None
    p = gearbox.params
    car.set_ackermann(45.0, 0.0)
    shifts = []  # (speed when it began, speed when it ended, frames with the clutch open)
    for _ in range(2000):
        was = gearbox.gear, gearbox.shifting_to
        speed = car.speed
        car.advance(FRAME_S)
        if gearbox.shifting_to and not was[1]:  # a shift began in this frame
            assert gearbox.engine_rpm(speed, was[0]) >= p.upshift_rpm
            shifts.append([speed, None, 0])
        if gearbox.shifting_to:
            shifts[-1][2] += 1
        elif was[1]:
            shifts[-1][1] = speed  # the frame the new gear engaged in began at this speed
    assert gearbox.gear >= 4 and len(shifts) == gearbox.gear - 1  # one gear at a time
    open_frames = round(p.shift_time / FRAME_S)
    for began, ended, frames in shifts:
        assert open_frames - 1 <= frames <= open_frames
        assert ended is not None and ended <= began + 1e-9  # no torque: no faster


def test_the_rev_limiter_holds_the_top_speed_of_the_last_gear(
        full_scale_profile: dict[str, Any]) -> None:
    car = engine_car(full_scale_profile, gear_ratios=[2.0], upshift_rpm=7000.0)
    p, tyre = car.config.powertrain, car.config.params.tyre
    assert p is not None
    redline_speed = 7000.0 / 60 * 2 * math.pi * tyre.wheel_radius / (2.0 * p.final_drive)
    car.set_ackermann(50.0, 0.0)
    for _ in range(4000):
        car.advance(FRAME_S)
    assert car.speed == pytest.approx(redline_speed, rel=0.01)


def test_a_normalised_throttle_is_a_share_of_the_engine_torque(
        full_scale_profile: dict[str, Any]) -> None:
    rates = []
    for throttle in (1.0, 0.5):
        full_scale_profile['CarParameters']['drivetrain']['coast_deceleration'] = 0.0
        car = engine_car(full_scale_profile)
        car.set_normalised(throttle, 0.0, 0.0)
        for _ in range(50):
            car.advance(FRAME_S)
        before = car.speed
        car.advance(FRAME_S)
        rates.append(((car.speed - before) / FRAME_S, torque_bound(car, before, 1)))
    (full, full_bound), (half, half_bound) = rates
    assert full == pytest.approx(full_bound, rel=0.02)
    assert half == pytest.approx(0.5 * half_bound, rel=0.02)


def test_a_car_without_a_powertrain_keeps_its_acceleration_limits(
        full_scale_profile: dict[str, Any]) -> None:
    del full_scale_profile['Powertrain']
    car = Vehicle(load_vehicle_config(full_scale_profile, 'car.yaml'))
    car.reset(0.0, 0.0, 0.0)
    assert car.gearbox is None
    car.set_ackermann(40.0, 0.0)
    car.advance(FRAME_S)
    assert car.speed / FRAME_S == pytest.approx(
        car.config.params.longitudinal.max_acceleration, rel=0.02)


@pytest.mark.parametrize(('key', 'value', 'message'), [
    ('layout', 'fwd', 'layout fwd does not agree with'),
    ('torque_curve', [[3000, 200], [2000, 210]], 'increasing engine speeds'),
    ('torque_curve', [[3000, 200]], 'at least two'),
    ('torque_curve', [[0, 200], [2000, 210]], 'rpm > 0'),
    ('gear_ratios', [1.0, 2.0], 'decreasing ratios'),
    ('upshift_rpm', 9000.0, 'upshift_rpm <= the torque curve'),
    ('type', 'steam', 'expected one of'),
])
def test_a_bad_powertrain_is_refused_by_name(full_scale_profile: dict[str, Any], key: str,
                                             value: Any, message: str) -> None:
    full_scale_profile['Powertrain'][key] = value
    with pytest.raises(ArsimError, match=message) as error:
        load_vehicle_config(full_scale_profile, 'car.yaml')
    assert f'Powertrain.{key}' in str(error.value)


@pytest.mark.skipif(not NUMBA_ENABLED, reason='fleets step compiled kernels only')
def test_geared_cars_step_in_a_fleet_as_each_would_alone(
        full_scale_profile: dict[str, Any]) -> None:
    config = load_vehicle_config(full_scale_profile, 'car.yaml')
    fleet_cars = {f'car{i}': Vehicle(config) for i in range(2)}
    (fleet,) = Fleet.group(fleet_cars)
    alone = [Vehicle(config) for _ in range(2)]
    for i, car in enumerate([*fleet_cars.values(), *alone]):
        car.reset(0.0, 0.0, 0.0)
        car.set_ackermann(30.0 + 10.0 * (i % 2), 0.05)
    for _ in range(900):
        assert fleet.advance(FRAME_S) == {}
        for car in alone:
            car.advance(FRAME_S)
    for car, solo in zip(fleet_cars.values(), alone, strict=True):
        assert car.gearbox is not None and solo.gearbox is not None
        assert car.gearbox.gear == solo.gearbox.gear >= 3
        np.testing.assert_allclose(car.state, solo.state, rtol=1e-12, atol=1e-12)
