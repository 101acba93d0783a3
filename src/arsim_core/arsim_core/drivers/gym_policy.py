"""A user's Gym policy as a driver: an import path ``package.module:callable`` to a function
(or any callable object) that maps an observation of ``arsim_gym`` to an action.

The observation is the single environment's (docs/gym.md): ``scan`` (the 2D LiDAR's ranges,
clipped as the gym clips them: ``sensors.scan_ranges``), ``pose``
(x, y, yaw), ``velocity`` (vx, vy, yaw rate), ``steering``, ``lap_fraction``, ``progress``,
``laps`` and ``lap_time``; the action is ``(steering angle [rad], speed [m/s])``, as with
``action='speed'``. A policy that raises, or answers with anything but two finite numbers,
fails: the race retires its car and goes on.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

from arsim_core.config.sensors import Lidar2DSpec
from arsim_core.drivers.seen import Seen
from arsim_core.engine.state import CarState
from arsim_core.errors import ArsimError, ConfigError
from arsim_core.sensors.scan_ranges import clip_ranges

Policy = Callable[[dict[str, np.ndarray]], Any]


class DriverError(ArsimError):
    """A driver could not answer; its car is retired."""


def load_policy(path: str) -> Policy:
    """The callable at ``package.module:callable`` (attributes may be dotted)."""
    module_name, _, attribute = path.partition(':')
    try:
        found: Any = importlib.import_module(module_name)
        for part in attribute.split('.'):
            found = getattr(found, part)
    except (ImportError, AttributeError) as exc:
        msg = f'Gym policy {path!r}: cannot import it ({type(exc).__name__}: {exc})'
        raise ConfigError(msg) from exc
    if not callable(found):
        msg = f'Gym policy {path!r}: {type(found).__name__} is not callable'
        raise ConfigError(msg)
    policy: Policy = found
    return policy


class GymPolicy:
    """Drives a car with ``policy`` on its 2D LiDAR ``scan``."""

    def __init__(self, path: str, scan: Lidar2DSpec) -> None:
        self.path = path
        self.policy = load_policy(path)
        self.scan: Lidar2DSpec | None = scan
        self._low, self._high = np.float32(scan.range_min), np.float32(scan.range_max)

    def reset(self, state: CarState) -> None:
        """Nothing to reset: a policy with a memory resets itself when its laps start over."""

    def act(self, seen: Seen) -> tuple[float, float]:
        if seen.scan is None:
            msg = f'{self.path}: no scan to observe'
            raise DriverError(msg)
        s = seen.state
        values = np.array((s.x, s.y, s.yaw, s.vx, s.vy, s.yaw_rate, s.steering_angle),
                          np.float32)
        fraction, progress, laps, lap_time = seen.progress
        observation = {
            'scan': clip_ranges(seen.scan, self._low, self._high),
            'pose': values[0:3], 'velocity': values[3:6], 'steering': values[6:7],
            'lap_fraction': np.array((fraction,), np.float32),
            'progress': np.array((progress,), np.float32),
            'laps': np.array((laps,), np.int32),
            'lap_time': np.array((lap_time,), np.float32),
        }
        try:
            answer = self.policy(observation)
            action = np.asarray(answer, np.float64).reshape(-1)
        except Exception as exc:  # a user's code: whatever it raises retires the car
            msg = f'{self.path} failed: {type(exc).__name__}: {exc}'
            raise DriverError(msg) from exc
        if action.shape != (2,) or not np.all(np.isfinite(action)):
            msg = f'{self.path} answered {action!r}; expected (steering angle, speed)'
            raise DriverError(msg)
        return float(action[0]), float(action[1])
