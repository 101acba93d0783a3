"""The cones a track places, as objects a car can knock over.

Contact model (docs/formula-student.md): a standing cone is hit when its base circle overlaps a
car's footprint rectangle. It falls over at once, its tip along the car's direction of travel
at the point of contact, and lands clear of the car: its base is carried to the footprint's
edge along that direction and on by ``KNOCK_S`` seconds of the car's speed (at most
``KNOCK_MAX_M``). A cone that lies stays where it lies and is not hit again. Every hit is a
``ConeHit``; the mission referee counts it as a cone down or out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from arsim_core.sensors.objects import CONE_STATE_COLUMNS, placed_cone_rows
from arsim_core.track.mesh import PLACED_CONE_SIZES, placed_cones_mesh
from arsim_core.track.model import Cones, TrackMesh

KNOCK_S = 0.1  # how far a hit cone flies: this long at the car's speed [s]
KNOCK_MAX_M = 3.0
REACH_M = 3.0  # cones farther than this from a car's footprint are not looked at [m]
CONE_DOWN = 'cone_down'  # the event of a hit


@dataclass(frozen=True)
class ConeHit:
    """Car ``car`` knocked cone ``index`` (its number on the track) over; it lies at x, y."""

    car: str
    index: int
    label: int
    x: float
    y: float

    def describe(self) -> str:
        return f'{self.car} knocked cone {self.index} over; it lies at ({self.x:.2f}, {self.y:.2f})'


class ConeField:
    """Every placed cone of one track: standing where the track puts it, or lying where a car
    left it. ``version`` counts the changes, so a renderer knows when to take a new mesh."""

    def __init__(self, cones: Cones) -> None:
        self.cones = cones
        sizes = np.array([PLACED_CONE_SIZES[int(label)] for label in cones.labels])
        self.radius = sizes[:, 0] if len(cones) else np.zeros(0)
        self.version = 0
        self.positions = np.array(cones.positions, np.float64)
        self.lying = np.full((len(cones), 3), np.nan)  # x, y, yaw of the cones down
        # The version each shows, and the rows: made again only when a cone moved.
        self._boxes: tuple[int, np.ndarray] | None = None
        self._state_rows: tuple[int, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self.cones)

    @property
    def down(self) -> np.ndarray:
        return np.isfinite(self.lying[:, 0])

    def reset(self) -> None:
        """Every cone back on its place, standing."""
        if np.any(self.down):
            self.version += 1
        self.positions = np.array(self.cones.positions, np.float64)
        self.lying[:] = np.nan

    def strike(self, names: Sequence[str], poses: np.ndarray, half_extents: np.ndarray,
               velocities: np.ndarray) -> list[ConeHit]:
        """Knock over the standing cones the cars' footprints touch. ``poses`` (n, 3) are the
        cars' x, y, yaw, ``half_extents`` (n, 2) half their footprints' length and width,
        ``velocities`` (n, 2) their velocity in the world frame [m/s]."""
        hits: list[ConeHit] = []
        if not len(self.cones):
            return hits
        standing = ~self.down
        for i, name in enumerate(names):
            x, y, yaw = poses[i]
            half = half_extents[i]
            offset = self.positions - (x, y)
            near = standing & (np.abs(offset).max(axis=1) <= half.max() + REACH_M)
            if not np.any(near):
                continue
            cos, sin = np.cos(yaw), np.sin(yaw)
            local = offset[near] @ np.array([[cos, -sin], [sin, cos]])  # car frame
            gap = np.hypot(*np.maximum(np.abs(local) - half, 0.0).T)
            touched = np.flatnonzero(near)[gap <= self.radius[near]]
            for index in touched:
                hits.append(self._knock(name, int(index), (x, y, yaw), half, velocities[i]))
                standing[index] = False
        if hits:
            self.version += 1
        return hits

    def _knock(self, car: str, index: int, pose: tuple[float, float, float], half: np.ndarray,
               velocity: np.ndarray) -> ConeHit:
        x, y, yaw = pose
        cos, sin = np.cos(yaw), np.sin(yaw)
        speed = float(np.hypot(*velocity))
        if speed > 1e-3:
            direction = velocity / speed
        else:  # pushed at a standstill: away from the car's centre
            away = self.positions[index] - (x, y)
            direction = away / max(float(np.hypot(*away)), 1e-9)
        # The footprint's edge along the direction, from the cone's base, in the car frame.
        rel = self.positions[index] - (x, y)
        local = np.array([rel[0] * cos + rel[1] * sin, -rel[0] * sin + rel[1] * cos])
        d_local = np.array([direction[0] * cos + direction[1] * sin,
                            -direction[0] * sin + direction[1] * cos])
        with np.errstate(divide='ignore', invalid='ignore'):
            exits = np.where(d_local > 0, (half - local) / d_local,
                             np.where(d_local < 0, (-half - local) / d_local, np.inf))
        clear = max(float(np.min(exits)), 0.0) + self.radius[index]
        travel = clear + min(KNOCK_S * speed, KNOCK_MAX_M)
        lands = self.positions[index] + direction * travel
        self.positions[index] = lands
        self.lying[index] = (lands[0], lands[1], float(np.arctan2(direction[1], direction[0])))
        return ConeHit(car, index, int(self.cones.labels[index]), float(lands[0]),
                       float(lands[1]))

    def mesh(self) -> TrackMesh:
        """The cones as they stand or lie now, for the renderers."""
        return placed_cones_mesh(self.cones, self.lying if np.any(self.down) else None)

    def boxes(self) -> np.ndarray:
        """The cones' boxes as objects sensors see them, world-frame rows of
        ``sensors.objects.COLUMNS``; made again only when a cone moved."""
        if self._boxes is None or self._boxes[0] != self.version:
            self._boxes = (self.version, placed_cone_rows(self.state_rows()))
        return self._boxes[1]

    def state_rows(self) -> np.ndarray:
        """(K, 5) float64 rows of ``sensors.objects.CONE_STATE_COLUMNS`` in the world frame,
        for ground truth and the cones sensors; made again only when a cone moved (read, never
        change them)."""
        if self._state_rows is None or self._state_rows[0] != self.version:
            down = self.down
            rows = np.zeros((len(self.cones), len(CONE_STATE_COLUMNS)))
            rows[:, :2] = self.positions
            rows[:, 2] = np.where(down, self.lying[:, 2], 0.0)
            rows[:, 3] = down
            rows[:, 4] = self.cones.labels
            self._state_rows = (self.version, rows)
        return self._state_rows[1]
