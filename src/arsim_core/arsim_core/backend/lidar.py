"""LiDAR rendering for the embedded backend: beam directions, ray casting, REP-117 ranges."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from arsim_core.backend.raycast import Raycaster
from arsim_core.geometry import rotation_matrix


@dataclass
class Lidar2D:
    """A planar scanner: one ray per beam in the sensor's x-y plane."""

    car: str
    name: str
    mount_position: np.ndarray
    mount_rotation: np.ndarray
    local_directions: np.ndarray
    range_min: float
    range_max: float
    noise_std: float
    rng: np.random.Generator

    @classmethod
    def from_wire(cls, car: str, spec: Mapping[str, Any], seed: int) -> Lidar2D:
        angles = spec['angle_min'] + spec['angle_increment'] * np.arange(int(spec['beams']))
        directions = np.stack([np.cos(angles), np.sin(angles), np.zeros_like(angles)], axis=1)
        x, y, z, roll, pitch, yaw = (float(v) for v in spec['mount'])
        return cls(car=car, name=str(spec['name']), mount_position=np.array([x, y, z]),
                   mount_rotation=rotation_matrix(roll, pitch, yaw),
                   local_directions=directions, range_min=float(spec['range_min']),
                   range_max=float(spec['range_max']), noise_std=float(spec['noise_std']),
                   rng=np.random.default_rng(seed))

    def render(self, raycaster: Raycaster, car_pose: Sequence[float]) -> np.ndarray:
        """Ranges [m] from the car pose (x, y, z, roll, pitch, yaw); +inf = no return within
        range_max, -inf = closer than range_min (REP-117)."""
        x, y, z, roll, pitch, yaw = car_pose
        car_rotation = rotation_matrix(roll, pitch, yaw)
        origin = np.array([x, y, z]) + car_rotation @ self.mount_position
        directions = self.local_directions @ (car_rotation @ self.mount_rotation).T
        origins = np.broadcast_to(origin, directions.shape)
        ranges, _ = raycaster.cast(origins, directions)
        if self.noise_std > 0.0:
            ranges = ranges + self.rng.normal(0.0, self.noise_std, ranges.shape).astype(np.float32)
        ranges = np.where(ranges > self.range_max, np.float32(np.inf), ranges)
        return np.where(ranges < self.range_min, np.float32(-np.inf), ranges).astype(np.float32)
