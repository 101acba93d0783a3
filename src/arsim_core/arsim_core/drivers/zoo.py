"""The driver zoo: every built-in driver by name, and the function that makes the driver a
car's ``driver`` names (docs/race-control.md, "The driver zoo").

- ``novice``: pure pursuit on the racing line at 0.55 of its speed profile; keeps its
  distance to the car ahead and passes only cars that have stopped;
- ``club``: the same at 0.7, and overtakes slower cars where there is room;
- ``expert``: the same at 0.85;
- ``racer``: the same at 0.92, and defends: covers the inside before a bend;
- ``follow_the_gap``: follow the gap on its 2D LiDAR at 0.4 of the car's top speed; it sees
  the others only in its scans and avoids what it sees.

The racing line is the track's raceline with its speed profile where it has one, else the
centerline with a curvature-limited profile for each car (``drivers.lines``). A Gym policy
(``package.module:callable``) drives by its observation (``drivers.gym_policy``).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from arsim_core.config.drivers import (
    CLUB,
    EXPERT,
    FOLLOW_THE_GAP,
    NOVICE,
    RACER,
    ZOO_NAMES,
    is_policy,
)
from arsim_core.config.scenario import CarSpec
from arsim_core.config.sensors import Lidar2DSpec
from arsim_core.drivers.gym_policy import GymPolicy
from arsim_core.drivers.lines import RacingLine
from arsim_core.drivers.racer import LineDriver, Skill
from arsim_core.drivers.seen import Driver, Seen
from arsim_core.drivers.unstick import Unstick
from arsim_core.engine.state import CarState
from arsim_core.errors import ConfigError
from arsim_core.policies import FollowTheGap, PurePursuit, autopilot

#: The line drivers' skills, by name.
SKILLS: Mapping[str, Skill] = {
    NOVICE: Skill(pace=0.55, overtakes=False, defends=False),
    CLUB: Skill(pace=0.7, overtakes=True, defends=False),
    EXPERT: Skill(pace=0.85, overtakes=True, defends=False),
    RACER: Skill(pace=0.92, overtakes=True, defends=True),
}
assert set(SKILLS) | {FOLLOW_THE_GAP} == set(ZOO_NAMES)


class GapDriver:
    """``FollowTheGap`` on the car's first 2D LiDAR, at the autopilot's share of top speed;
    standing still for a second (nosed into a wall, where the gap it sees is too narrow to
    drive into), it backs out (``drivers.unstick``)."""

    def __init__(self, car: CarSpec, period_s: float | None = None) -> None:
        """``period_s``: how often it acts (None: on every scan, as the autopilot node)."""
        spec, self.policy = autopilot(car)
        self.scan: Lidar2DSpec | None = spec
        self.unstick = Unstick(period_s or 1.0 / spec.rate_hz,
                               car.profile.vehicle.params.longitudinal.max_speed)

    def reset(self, state: CarState) -> None:
        """It reacts to each scan alone: only its backing out starts afresh."""
        self.unstick.reset()

    def act(self, seen: Seen) -> tuple[float, float]:
        if seen.scan is None:
            return 0.0, 0.0
        return self.drive(seen.scan, seen.state.vx)

    def drive(self, ranges: np.ndarray, vx: float) -> tuple[float, float]:
        """Steering and speed from a scan's ``ranges`` and the car's speed ``vx`` [m/s] (all
        it needs: the autopilot node drives it so on ROS)."""
        steer, speed = self.policy.act(ranges)
        return self.unstick.command(steer, speed, vx, True)


def build_driver(car: CarSpec, driver: str, line: RacingLine, index: int,
                 period_s: float) -> Driver:
    """The driver ``driver`` (a zoo name or ``module:callable``) of ``car``, the ``index``-th
    car of the field, on ``line``, acting every ``period_s``."""
    if is_policy(driver):
        scan = next((s for s in car.profile.sensors if isinstance(s, Lidar2DSpec)), None)
        if scan is None:
            msg = (f'car {car.name!r} ({car.profile.source}): a Gym policy observes a 2D '
                   f'LiDAR, and the car has none')
            raise ConfigError(msg)
        return GymPolicy(driver, scan)
    if driver == FOLLOW_THE_GAP:
        return GapDriver(car, period_s)
    skill = SKILLS.get(driver)
    if skill is None:
        msg = f'car {car.name!r}: unknown driver {driver!r}; expected one of {list(ZOO_NAMES)}'
        raise ConfigError(msg)
    params = car.profile.vehicle.params
    pursuit = PurePursuit(line.points, wheelbase=params.body.wheelbase,
                          max_steering=params.steering.max_angle,
                          max_speed=params.longitudinal.max_speed, speeds=line.speeds,
                          friction=params.tyre.friction, speed_scale=skill.pace)
    footprint = car.profile.footprint
    return LineDriver(line, pursuit, skill, index, length=footprint.length,
                      width=footprint.width, friction=params.tyre.friction, period_s=period_s)


__all__ = ['SKILLS', 'Driver', 'FollowTheGap', 'GapDriver', 'Seen', 'build_driver']
