"""The line a track's line drivers follow, and where it lies on the track.

A track with a raceline (the F1TENTH racetracks' ``*_raceline.csv``) gives its line and speed
profile. A track without one gives its centerline, and each driver's pure pursuit computes a
curvature-limited speed profile for its own car along it (``PurePursuit``): the cornering
speed sqrt(mu g / |kappa|), lowered where the car could not brake down to the next corner.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arsim_core.engine.race_metrics import project
from arsim_core.track import Track
from arsim_core.track.polylines import arc_length, closed_length, closed_moving_average, curvature

SMOOTHING_M = 0.5  # the curvature is averaged over this much of the line: no point jitter

RACELINE = 'raceline'
CENTERLINE = 'centerline'


@dataclass(frozen=True, eq=False)
class RacingLine:
    """``points`` (N, 2) in the driving direction, closed implicitly; ``speeds`` (N,) its own
    speed profile [m/s] or None; ``lateral`` (N,) how far each point lies left of the
    centerline [m]; ``curvature`` (N,) signed, + a left-hand bend [1/m]."""

    points: np.ndarray
    speeds: np.ndarray | None
    lateral: np.ndarray
    curvature: np.ndarray
    source: str

    @classmethod
    def of(cls, track: Track) -> RacingLine:
        """The raceline of ``track`` where it has one, else its centerline."""
        if track.raceline is None:
            return cls.along(np.asarray(track.centerline, np.float64))
        points = np.asarray(track.raceline, np.float64)
        center = np.asarray(track.centerline, np.float64)
        s = arc_length(center)
        lateral = np.empty(len(points))
        hint = -1
        for k, point in enumerate(points):  # once per track: each point near the last one
            _, lateral[k], hint = project(center, s, point, hint)
        speeds = None if track.raceline_speed is None else \
            np.asarray(track.raceline_speed, np.float64)
        return cls(points, speeds, lateral, _bends(points), RACELINE)

    @classmethod
    def along(cls, centerline: np.ndarray) -> RacingLine:
        """The centerline itself, each driver's speed profile its own."""
        center = np.asarray(centerline, np.float64)
        return cls(center, None, np.zeros(len(center)), _bends(center), CENTERLINE)


def _bends(points: np.ndarray) -> np.ndarray:
    """Signed curvature of a closed line, averaged over ``SMOOTHING_M``."""
    spacing = closed_length(points) / len(points)
    return closed_moving_average(curvature(points), max(1, round(SMOOTHING_M / spacing)))
