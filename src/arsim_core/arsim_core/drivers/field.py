"""The field as the built-in drivers see it: every car along the track in one frame.

Built once per frame from the race metrics' projection of the cars (arc length, lateral
offset, centerline segment) and their speeds, so twenty drivers asking "who is ahead of me in
my lane" cost one small array operation each, not a projection of their own. The built-in
drivers read this ground truth as a racing game's opponents do; a user's policy sees only its
observation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from arsim_core.engine.race_metrics import LATERAL, SEGMENT, RaceMetrics, S


class Neighbour(NamedTuple):
    """Another car (its row ``car``) relative to one car: ``gap`` bumper to bumper along the
    track [m] (ahead of it, or behind it), its lateral offset left of the centerline [m],
    speed [m/s] and width [m]."""

    car: int
    gap: float
    lateral: float
    speed: float
    width: float


class Field:
    """Every car of ``metrics`` along the track, with their footprints' ``lengths`` and
    ``widths`` and the track's edges (``width_left``/``width_right`` per centerline point)."""

    def __init__(self, metrics: RaceMetrics, lengths: Sequence[float],
                 widths: Sequence[float], width_left: np.ndarray,
                 width_right: np.ndarray) -> None:
        self.metrics = metrics
        self.names = metrics.cars
        self.length = metrics.length
        self.lengths = np.asarray(lengths, np.float64)
        self.widths = np.asarray(widths, np.float64)
        self.width_left = np.asarray(width_left, np.float64)
        self.width_right = np.asarray(width_right, np.float64)
        self._half = 0.5 * (self.lengths[:, None] + self.lengths[None, :])
        count = len(self.names)
        self.s = np.zeros(count)
        self.lateral = np.zeros(count)
        self.segment = np.zeros(count, np.intp)
        self.speed = np.zeros(count)
        self._ahead = np.zeros((count, count))

    def update(self, speeds: np.ndarray) -> None:
        """Take this frame's projection from the metrics, and the cars' ``speeds`` [m/s]."""
        rows = self.metrics.rows
        self.s = rows[:, S].copy()
        self.lateral = rows[:, LATERAL].copy()
        self.segment = np.maximum(rows[:, SEGMENT], 0).astype(np.intp)
        self.speed = np.asarray(speeds, np.float64)
        length = self.length
        # ahead[i, j] > 0: car j is that far ahead of car i, centre to centre
        self._ahead = (self.s[None, :] - self.s[:, None] + 0.5 * length) % length - 0.5 * length

    def edges(self, i: int) -> tuple[float, float]:
        """How far the track's left and right edges lie from the centerline beside car ``i``."""
        k = int(self.segment[i])
        return float(self.width_left[k]), float(self.width_right[k])

    def ahead(self, i: int, low: float, high: float, reach: float) -> Neighbour | None:
        """The nearest car ahead of car ``i`` within ``reach`` [m, bumper to bumper] that
        overlaps the band of lateral offsets [``low``, ``high``] (car ``i``'s own width added
        on either side), or None. A car alongside (the bumpers overlap) is ahead only where it
        overlaps car ``i``'s own lane: braking does not keep clear of the others, holding the
        lane does (``beside``)."""
        return self._nearest(i, low, high, reach, 1.0)

    def behind(self, i: int, reach: float) -> Neighbour | None:
        """The nearest car behind car ``i`` within ``reach`` [m, bumper to bumper], any lane,
        not alongside."""
        return self._nearest(i, -np.inf, np.inf, reach, -1.0)

    def gap(self, i: int, j: int) -> float:
        """Bumper-to-bumper gap from car ``i`` forward to car ``j`` [m]: negative while they
        overlap, and far negative once ``j`` is behind."""
        ahead = float(self._ahead[i, j])
        return ahead - float(self._half[i, j]) if ahead >= 0.0 else ahead

    def beside(self, i: int, low: float, high: float, margin: float = 0.0) -> bool:
        """Whether any car from half a length ahead of car ``i`` to one and a half behind it
        (bumper to bumper) overlaps the lateral band [``low``, ``high``] with car ``i``'s own
        width and ``margin`` added on either side: a car that moving across that band would
        hit, or cut off. A car behind in car ``i``'s own lane follows it: it is not in the
        way."""
        ahead = self._ahead[i]
        gap = np.abs(ahead) - self._half[i]
        reach = np.where(ahead >= 0.0, 0.5, 1.5) * self.lengths[i]
        half = 0.5 * (self.widths + self.widths[i]) + margin
        hit = (gap < reach) & (self.lateral + half > low) & (self.lateral - half < high)
        # a car following in car i's own lane is not in the way of its moving over
        hit &= (ahead >= 0.0) | (np.abs(self.lateral - self.lateral[i]) >= half - margin)
        hit[i] = False
        return bool(hit.any())

    def _nearest(self, i: int, low: float, high: float, reach: float,
                 sign: float) -> Neighbour | None:
        gap = sign * self._ahead[i] - self._half[i]
        half = 0.5 * (self.widths + self.widths[i])
        candidates = (sign * self._ahead[i] > 0.0) & (gap < reach) \
            & (self.lateral + half > low) & (self.lateral - half < high)
        # alongside (the bumpers overlap): only a car it is touching, or about to
        mine = float(self.lateral[i])
        candidates &= (gap >= 0.0) | (np.abs(self.lateral - mine) < half)
        candidates[i] = False
        if not candidates.any():
            return None
        found = np.flatnonzero(candidates)
        j = int(found[np.argmin(gap[found])])
        return Neighbour(j, float(gap[j]), float(self.lateral[j]), float(self.speed[j]),
                         float(self.widths[j]))
