"""Speed/steering controllers (arsim_core.dynamics.controllers)."""

from __future__ import annotations

import pytest

from arsim_core.dynamics import F1TENTH, ControllerGains, SpeedGains, load_vehicle_config
from arsim_core.dynamics.controllers import (
    ACCEL_LIMIT,
    BRAKE,
    JERK_LIMIT,
    MODE,
    MODE_NORMALISED,
    SPEED_TARGET,
    STEER_TARGET,
    SV_LIMIT,
    THROTTLE,
    control,
    initial_controller,
)
from arsim_core.dynamics.params import pack

ctrl = getattr(control, 'py_func', control)
P = list(pack(F1TENTH))


def f1tenth_gym_accl(speed: float, current: float, max_a: float = 9.51, max_v: float = 20.0,
                     min_v: float = -5.0) -> float:
    """f1tenth_gym's pid() acceleration branch, restated."""
    diff = speed - current
    if current > 0.0:
        kp = 10.0 * max_a / max_v if diff > 0 else 10.0 * max_a / (-min_v)
    else:
        kp = 2.0 * max_a / max_v if diff > 0 else 2.0 * max_a / (-min_v)
    return kp * diff


def test_default_speed_gains_are_f1tenth_gyms(f1tenth_profile: dict) -> None:
    assert SpeedGains.f1tenth_gym(F1TENTH) == load_vehicle_config(
        f1tenth_profile, 'x').controller.speed
    c = initial_controller(ControllerGains.default(F1TENTH), F1TENTH)
    for target, current in [(5.0, 1.0), (1.0, 5.0), (-3.0, -1.0), (0.0, -2.0), (0.2, 0.1),
                            (2.0, 0.0), (-2.0, 0.0)]:
        c[SPEED_TARGET] = target
        c[2] = 0.0
        _, accel = ctrl(0.0, current, P, c, 0.005)
        expected = max(-9.51, min(9.51, f1tenth_gym_accl(target, current)))
        assert accel == pytest.approx(expected, rel=1e-12)


def test_steering_p_controller_saturates() -> None:
    c = initial_controller(ControllerGains.default(F1TENTH), F1TENTH)
    c[STEER_TARGET] = 0.4
    assert ctrl(0.0, 0.0, P, c, 0.005)[0] == 3.2
    assert ctrl(0.39, 0.0, P, c, 0.005)[0] == pytest.approx(60.0 * 0.01)
    c[SV_LIMIT] = 1.0
    assert ctrl(0.0, 0.0, P, c, 0.005)[0] == 1.0
    c[STEER_TARGET] = -0.4
    assert ctrl(0.0, 0.0, P, c, 0.005)[0] == -1.0


def test_acceleration_and_jerk_limits() -> None:
    c = initial_controller(ControllerGains.default(F1TENTH), F1TENTH)
    c[SPEED_TARGET] = 10.0
    c[ACCEL_LIMIT] = 2.0
    assert ctrl(0.0, 1.0, P, c, 0.005)[1] == 2.0
    c[JERK_LIMIT] = 100.0
    c[SPEED_TARGET] = 0.0  # wants -2 now, jerk allows 0.5 m/s^2 per 5 ms step
    assert ctrl(0.0, 1.0, P, c, 0.005)[1] == pytest.approx(1.5)
    assert ctrl(0.0, 1.0, P, c, 0.005)[1] == pytest.approx(1.0)


def test_normalised_mapping() -> None:
    c = initial_controller(ControllerGains.default(F1TENTH), F1TENTH)
    c[MODE] = MODE_NORMALISED
    c[THROTTLE] = 0.5
    assert ctrl(0.0, 0.0, P, c, 0.005)[1] == pytest.approx(0.5 * 9.51)  # no coasting at rest
    assert ctrl(0.0, 3.0, P, c, 0.005)[1] == pytest.approx(0.5 * 9.51 - 0.5)
    c[THROTTLE] = 0.0
    c[BRAKE] = 1.0
    assert ctrl(0.0, 3.0, P, c, 0.005)[1] == pytest.approx(-9.51)
    assert ctrl(0.0, 0.01, P, c, 0.005)[1] == pytest.approx(-2.0)  # stops, never reverses
    assert ctrl(0.0, -1.0, P, c, 0.005)[1] == pytest.approx(9.51)  # braking a rolling-back car
