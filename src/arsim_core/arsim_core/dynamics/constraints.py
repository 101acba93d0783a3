"""CommonRoad input constraints (paper Sec. 3.1; ``vehiclemodels.utils``).

Every model clips its inputs through these two functions before evaluating its equations, so a
controller may ask for anything and the car still respects its steering and motor limits.
"""

from __future__ import annotations

from .._jit import kernel


@kernel
def steering_rate(angle: float, rate: float, angle_min: float, angle_max: float,
                  rate_min: float, rate_max: float) -> float:
    """Steering rate [rad/s] after the CommonRoad steering constraints.

    Zero while the wheel sits at an angle limit and is pushed further; otherwise ``rate``
    clipped to [rate_min, rate_max].
    """
    if (angle <= angle_min and rate <= 0.0) or (angle >= angle_max and rate >= 0.0):
        return 0.0
    if rate <= rate_min:
        return rate_min
    if rate >= rate_max:
        return rate_max
    return rate


@kernel
def acceleration(speed: float, accel: float, v_switch: float, a_max: float,
                 v_min: float, v_max: float) -> float:
    """Longitudinal acceleration [m/s^2] after the CommonRoad acceleration constraints.

    Drive acceleration is limited to a_max below ``v_switch`` and to a_max * v_switch / v above
    it (constant power); braking is limited to a_max; nothing pushes beyond v_min/v_max.
    """
    if speed > v_switch:
        pos_limit = a_max * v_switch / speed
    else:
        pos_limit = a_max
    if (speed <= v_min and accel <= 0.0) or (speed >= v_max and accel >= 0.0):
        return 0.0
    if accel <= -a_max:
        return -a_max
    if accel >= pos_limit:
        return pos_limit
    return accel
