"""Which rendered sensors are due in which frame: one rule for the ROS bridge, the Gymnasium
environment and the republishers (``frames_per_sample``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from arsim_core.beams import frames_per_sample
from arsim_core.config.scenario import CarSpec

SensorKey = tuple[str, str]  # (car, sensor)
DRIVER_INPUTS = frozenset({'cones'})  # computed kinds a stack drives on, waited for as scans


class SensorSchedule:
    """Rendered sensors only: IMU, GNSS and odometry are computed from the car state every
    frame carries, so a backend is never asked for them."""

    def __init__(self, cars: Sequence[CarSpec], frame_period_ns: int) -> None:
        self.every = {(car.name, s.name): frames_per_sample(s.rate_hz, frame_period_ns)
                      for car in cars for s in car.profile.sensors if s.rendered}
        # computed sensors a driver plans on, as it would on a scan: ground-truth cones
        self.perceived = {(car.name, s.name): frames_per_sample(s.rate_hz, frame_period_ns)
                          for car in cars for s in car.profile.sensors
                          if s.kind in DRIVER_INPUTS}
        # the pattern repeats every lcm of the periods: kept, while it is short
        self._cycle = math.lcm(*self.every.values()) if self.every else 1
        self._due: dict[int, list[SensorKey]] = {}

    def due(self, step: int) -> list[SensorKey]:
        """The (car, sensor) pairs to render in frame ``step`` (a list shared between calls:
        copy it to change it)."""
        phase = step % self._cycle
        found = self._due.get(phase)
        if found is None:
            found = [key for key, every in self.every.items() if step % every == 0]
            if self._cycle <= 1024:
                self._due[phase] = found
        return found

    def informed(self, step: int) -> set[str]:
        """The cars whose driver gets something to plan on in frame ``step``: a rendered
        sensor, or ground-truth cones; with ``wait_for_drivers`` the simulation waits for
        their answers."""
        cars = {car for car, _ in self.due(step)}
        cars.update(car for (car, _), every in self.perceived.items() if step % every == 0)
        return cars
