"""Input constraints against CommonRoad's (arsim_core.dynamics.constraints)."""

from __future__ import annotations

import numpy as np

from arsim_core.dynamics import F1TENTH, constraints

from .commonroad_ref import commonroad_compatible, to_commonroad


def test_match_commonroad_constraints() -> None:
    from vehiclemodels.utils.acceleration_constraints import acceleration_constraints
    from vehiclemodels.utils.steering_constraints import steering_constraints

    p = F1TENTH
    cr = to_commonroad(commonroad_compatible(p))
    s, lo = p.steering, p.longitudinal
    rng = np.random.default_rng(5)
    for angle, rate, speed, accel in zip(
            np.r_[rng.uniform(-0.5, 0.5, 3000), [s.min_angle, s.max_angle] * 50],
            np.r_[rng.uniform(-5, 5, 3000), [-1.0, 1.0, 0.0, 0.0] * 25],
            np.r_[rng.uniform(-6, 21, 3000), [lo.min_speed, lo.max_speed, 7.319, 0.0] * 25],
            np.r_[rng.uniform(-12, 12, 3000), [-1.0, 1.0, 0.0, 20.0] * 25], strict=True):
        assert constraints.steering_rate(angle, rate, s.min_angle, s.max_angle, s.min_rate,
                                         s.max_rate) == steering_constraints(angle, rate,
                                                                             cr.steering)
        assert constraints.acceleration(speed, accel, lo.switching_speed, lo.max_acceleration,
                                        lo.min_speed, lo.max_speed) == \
            acceleration_constraints(speed, accel, cr.longitudinal)


def test_power_limit_above_switching_speed() -> None:
    lo = F1TENTH.longitudinal
    assert constraints.acceleration(2 * lo.switching_speed, 100.0, lo.switching_speed,
                                    lo.max_acceleration, lo.min_speed, lo.max_speed) \
        == lo.max_acceleration / 2
