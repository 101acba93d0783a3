"""The VESC and servo of an electric car (arsim_core.dynamics.vesc): commands as the real
``ackermann_to_vesc`` sends them reach the intended speed and steering, within the motor's
current limit, and the telemetry reads back through ``vesc_to_odom``'s formula."""

from __future__ import annotations

import math
from typing import Any

import pytest

from arsim_core.dynamics import Vehicle, load_vehicle_config
from arsim_core.dynamics.vesc import VescDrive, VescMonitor, VescParameters
from arsim_core.errors import ArsimError

FRAME_S = 0.01


def vesc_car(profile: dict[str, Any], **vesc: float) -> tuple[Vehicle, VescDrive]:
    profile['Vesc'].update(vesc)
    vehicle = Vehicle(load_vehicle_config(profile, 'car.yaml'))
    vehicle.reset(0.0, 0.0, 0.0)
    params = vehicle.config.vesc
    assert params is not None
    return vehicle, VescDrive(params, vehicle.config.params.body.mass)


def ackermann_to_vesc(p: VescParameters, speed: float, steering: float) -> tuple[float, float]:
    """What f1tenth/vesc's ackermann_to_vesc publishes: ERPM and servo position."""
    return (p.speed_to_erpm_gain * speed + p.speed_to_erpm_offset,
            p.steering_angle_to_servo_gain * steering + p.steering_angle_to_servo_offset)


def vesc_to_odom_speed(p: VescParameters, reported_erpm: float) -> float:
    """What f1tenth/vesc's vesc_to_odom makes of the reported speed (it negates it)."""
    return (-reported_erpm - p.speed_to_erpm_offset) / p.speed_to_erpm_gain


def test_ackermann_to_vesc_commands_come_back_as_the_drive_they_encode(
        f1tenth_profile: dict[str, Any]) -> None:
    _, drive = vesc_car(f1tenth_profile, speed_to_erpm_offset=120.0)
    p = drive.params
    for speed, steering in ((0.0, 0.0), (3.2, 0.25), (-1.5, -0.2), (4.9, 0.3)):
        erpm, servo = ackermann_to_vesc(p, speed, steering)
        assert drive.command_speed(erpm) is None and drive.command_servo(servo) is None
        assert drive.speed == pytest.approx(speed, abs=1e-12)
        assert drive.steering_angle == pytest.approx(steering, abs=1e-12)


def test_commands_are_clipped_as_vesc_driver_clips_them(
        f1tenth_profile: dict[str, Any]) -> None:
    _, drive = vesc_car(f1tenth_profile)
    p = drive.params
    drive.command_speed(1e6)
    assert drive.speed == pytest.approx(p.speed_max / p.speed_to_erpm_gain)  # 5.04 m/s
    drive.command_servo(2.0)
    assert drive.servo == p.servo_max
    assert drive.steering_angle == pytest.approx(
        (p.servo_max - p.steering_angle_to_servo_offset) / p.steering_angle_to_servo_gain)


def test_a_command_that_is_not_a_number_leaves_the_last_one(
        f1tenth_profile: dict[str, Any]) -> None:
    _, drive = vesc_car(f1tenth_profile)
    drive.command_speed(9228.0)
    assert drive.command_speed(math.nan) is not None
    assert drive.command_servo(math.inf) is not None
    assert drive.command_brake(-5.0) is not None
    assert drive.speed == pytest.approx(2.0) and drive.steering_angle == pytest.approx(0.0)


def test_the_motor_current_limit_bounds_the_run_up(f1tenth_profile: dict[str, Any]) -> None:
    """With 10 A the F1TENTH motor pushes 3.74 kg at 10 * 4614 / (3.74 * 3500 * 2) m/s^2."""
    vehicle, drive = vesc_car(f1tenth_profile, current_max=10.0)
    limit = 10.0 * 4614.0 / (3.74 * 3500.0 * 2)
    assert drive.params.acceleration_limit(3.74) == pytest.approx(limit)
    drive.command_speed(4614.0 * 3.0)
    vehicle.set_ackermann(*drive.ackermann())
    seconds = 0.0
    while vehicle.speed < 2.9:
        vehicle.advance(FRAME_S)
        seconds += FRAME_S
        assert seconds < 10.0
    # The P speed controller eases in at the end: no faster than the limit, not much slower.
    assert 2.9 / limit <= seconds <= 1.2 * 3.0 / limit


def test_a_brake_current_stops_the_car_at_its_deceleration(
        f1tenth_profile: dict[str, Any]) -> None:
    vehicle, drive = vesc_car(f1tenth_profile)
    drive.command_speed(4614.0 * 3.0)
    vehicle.set_ackermann(*drive.ackermann())
    for _ in range(300):
        vehicle.advance(FRAME_S)
    assert vehicle.speed == pytest.approx(3.0, abs=0.01)
    assert drive.command_brake(5.0) is None
    vehicle.set_ackermann(*drive.ackermann())
    decel = drive.params.brake_deceleration(5.0, 3.74)
    seconds = 0.0
    while vehicle.speed > 0.05:
        vehicle.advance(FRAME_S)
        seconds += FRAME_S
        assert seconds < 10.0
    assert (3.0 - 0.05) / decel - 2 * FRAME_S <= seconds <= 1.15 * 3.0 / decel


def test_telemetry_reads_back_as_the_car_drives(f1tenth_profile: dict[str, Any]) -> None:
    vehicle, drive = vesc_car(f1tenth_profile, speed_to_erpm_offset=50.0)
    monitor = VescMonitor(drive.params, 3.74)
    drive.command_speed(4614.0 * 2.0 + 50.0)
    vehicle.set_ackermann(*drive.ackermann())
    distance = 0.0
    for _ in range(400):
        before = vehicle.speed
        vehicle.advance(FRAME_S)
        distance += 0.5 * (before + vehicle.speed) * FRAME_S
        monitor.advance(FRAME_S, vehicle.speed)
    t = monitor.telemetry(vehicle.speed, 0.0)
    assert vesc_to_odom_speed(drive.params, t.speed) == pytest.approx(vehicle.speed)
    assert t.speed < 0  # forward is negative on the F1TENTH car, as vesc_to_odom expects
    # Six counts per electrical revolution, G / 60 electrical revolutions per metre.
    assert t.displacement == pytest.approx(6 * 4614.0 / 60 * distance, abs=1)
    assert t.distance_traveled == t.displacement
    assert t.duty_cycle == pytest.approx((4614.0 * vehicle.speed + 50.0) / (3500 * 2 * 11.1))
    accelerating = monitor.telemetry(1.0, 5.0)
    assert accelerating.current_motor == pytest.approx(5.0 * 3.74 * 3500 * 2 / 4614.0)


def test_the_tachometer_wraps_as_a_32_bit_counter(f1tenth_profile: dict[str, Any]) -> None:
    _, drive = vesc_car(f1tenth_profile)
    monitor = VescMonitor(drive.params, 3.74)
    metres = (2**31 + 1000) / (6 * 4614.0 / 60)  # just past the largest int32
    monitor.advance(2.0, metres)  # trapezoid from standing: half of this speed over 2 s
    t = monitor.telemetry(0.0, 0.0)
    assert -2**31 <= t.displacement < -2**31 + 1100


@pytest.mark.parametrize(('key', 'value', 'message'), [
    ('speed_to_erpm_gain', 0.0, 'speed_to_erpm_gain'),
    ('servo_min', 0.9, 'servo_min < servo_max'),
    ('reported_speed_sign', 2, 'expected 1 or -1'),
    ('motor_pole_pairs', 0, 'motor_pole_pairs'),
    ('erpm_gain', 1.0, 'erpm_gain'),
])
def test_a_bad_vesc_section_is_refused_by_name(f1tenth_profile: dict[str, Any], key: str,
                                               value: float, message: str) -> None:
    f1tenth_profile['Vesc'][key] = value
    with pytest.raises(ArsimError, match=message) as error:
        load_vehicle_config(f1tenth_profile, 'car.yaml')
    assert 'car.yaml' in str(error.value) and 'Vesc' in str(error.value)
