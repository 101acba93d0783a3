"""What a driver of the zoo gets each frame, and what every driver offers the race that runs
it (``arsim_core.league.race``)."""

from __future__ import annotations

from typing import NamedTuple, Protocol

import numpy as np

from arsim_core.config.sensors import Lidar2DSpec
from arsim_core.drivers.field import Field
from arsim_core.engine.state import CarState


class Seen(NamedTuple):
    """One car's frame: its ``state``, its latest 2D scan (None for a driver without one),
    the ``field`` of every car along the track, and its race as the gym observes it:
    ``progress`` holds lap fraction, progress [m], completed laps and the lap's time [s]."""

    state: CarState
    scan: np.ndarray | None
    field: Field
    progress: tuple[float, float, float, float]


class Driver(Protocol):
    """A driver: ``scan`` is the 2D LiDAR it drives by (None: none); ``act`` returns an
    Ackermann command (steering angle [rad, + left], speed [m/s]) and may raise
    ``DriverError``, which retires its car."""

    @property
    def scan(self) -> Lidar2DSpec | None: ...

    def reset(self, state: CarState) -> None: ...

    def act(self, seen: Seen) -> tuple[float, float]: ...
