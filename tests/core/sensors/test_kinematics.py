"""IMU, GNSS and wheel-odometry models against closed-form answers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arsim_core.geometry import rotation_matrix
from arsim_core.sensors.geodesy import ecef_to_geodetic, enu_to_geodetic, geodetic_to_ecef
from arsim_core.sensors.kinematics import (
    PlanarState,
    WheelEncoders,
    WheelOdometry,
    body_acceleration,
    specific_force,
)


def test_an_imu_at_rest_reads_plus_g_on_z() -> None:
    force = specific_force((0.0, 0.0, 0.0), 0.0, 9.81, np.array([0.1, 0.0, 0.05]), np.eye(3))
    assert force == pytest.approx([0.0, 0.0, 9.81])
    upside_down = specific_force((0.0, 0.0, 0.0), 0.0, 9.81, np.zeros(3),
                                 rotation_matrix(math.pi, 0.0, 0.0))
    assert upside_down == pytest.approx([0.0, 0.0, -9.81])


def test_a_turning_imu_feels_the_centripetal_acceleration_of_its_mount() -> None:
    # base_link turning on the spot at 2 rad/s; an IMU 0.5 m ahead feels w^2 r towards it
    force = specific_force((0.0, 0.0, 0.0), 2.0, 9.81, np.array([0.5, 0.0, 0.0]), np.eye(3))
    assert force == pytest.approx([-2.0, 0.0, 9.81])


def test_body_acceleration_on_a_circle_is_v_squared_over_r() -> None:
    v, r = 3.0, 5.0
    w = v / r
    before = PlanarState(0, 0.0, 0.0, 0.0, v, 0.0, w)
    after = PlanarState(25_000_000, 0.0, 0.0, 0.0, v, 0.0, w)
    ax, ay, alpha = body_acceleration(before, after)
    assert (ax, ay, alpha) == pytest.approx((0.0, v * v / r, 0.0))


def test_geodesy_round_trips_and_puts_east_and_north_where_they_belong() -> None:
    origin = (48.2626, 11.6681, 480.0)
    assert ecef_to_geodetic(*geodetic_to_ecef(*origin)) == pytest.approx(origin, abs=1e-6)
    assert enu_to_geodetic(0.0, 0.0, 0.0, origin) == pytest.approx(origin, abs=1e-6)  # um
    lat, lon, alt = enu_to_geodetic(0.0, 1000.0, 0.0, origin)
    assert lat > origin[0] and lon == pytest.approx(origin[1], abs=1e-9)
    # one arc-minute of latitude is about 1853 m here
    assert (lat - origin[0]) * 60 * 1853.0 == pytest.approx(1000.0, rel=2e-3)
    lat, lon, alt = enu_to_geodetic(1000.0, 0.0, 0.0, origin)
    assert lon > origin[1] and alt == pytest.approx(480.0 + 1000.0**2 / (2 * 6.38e6), abs=0.01)


def test_wheel_odometry_integrates_like_vesc_to_odom() -> None:
    odometry = WheelOdometry(wheelbase=0.33)
    speed, steering = 2.0, 0.2
    yaw_rate = speed * math.tan(steering) / 0.33
    dt = 1_000_000  # 1 ms steps: explicit Euler close to the exact circle
    for k in range(1001):
        assert odometry.step(k * dt, speed, steering) == pytest.approx((speed, yaw_rate))
    radius = speed / yaw_rate
    assert odometry.yaw == pytest.approx(yaw_rate * 1.0)
    assert odometry.x == pytest.approx(radius * math.sin(odometry.yaw), abs=5e-3)
    assert odometry.y == pytest.approx(radius * (1 - math.cos(odometry.yaw)), abs=5e-3)
    assert WheelOdometry(0.33).step(0, 0.04, 0.3) == (0.0, 0.0)  # VESC's standstill band


def test_wheel_encoders_count_the_whole_ticks_each_rear_wheel_turned() -> None:
    """1 s at 2 m/s turning left at 0.5 rad/s: the inner (left) wheel rolls 1.94 m, the outer
    2.06 m; with 5 cm wheels and 100 ticks a revolution each counts its whole ticks."""
    encoders = WheelEncoders(track_width=0.24, wheel_radius=0.05,
                             ticks_per_wheel_revolution=100.0)
    for k in range(101):  # 100 Hz
        encoders.advance(k * 10_000_000, 2.0, 0.5)
    left, right, angle_left, angle_right, rate_left, rate_right = encoders.reading()
    turn = 2.0 * math.pi * 0.05
    assert (left, right) == (math.floor(1.94 / turn * 100), math.floor(2.06 / turn * 100))
    assert (angle_left, angle_right) == pytest.approx((left * 2 * math.pi / 100,
                                                      right * 2 * math.pi / 100), rel=1e-15)
    assert (rate_left, rate_right) == pytest.approx((1.94 / 0.05, 2.06 / 0.05))


def test_wheel_encoders_count_down_in_reverse_and_hold_still_at_rest() -> None:
    encoders = WheelEncoders(track_width=0.3, wheel_radius=0.1, ticks_per_wheel_revolution=64.0)
    encoders.advance(0, 0.0, 0.0)
    encoders.advance(500_000_000, 0.0, 0.0)
    assert encoders.reading()[:2] == (0.0, 0.0)
    for k in range(2, 12):
        encoders.advance(k * 250_000_000, -1.0, 0.0)
    ticks = encoders.reading()[0]
    assert ticks == math.floor(-1.0 * 2.25 / (2.0 * math.pi * 0.1) * 64.0) < 0
