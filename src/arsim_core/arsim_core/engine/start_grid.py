"""The starting grid: where each car without a ``pose`` of its own starts, for every face (the
engine's referee, the ROS dynamics nodes, the launch checks, the gym, races in process).

The slots: the first car on the track's start pose, the others in pairs side by side (0.8 of
a car's width either side of the first), one and a half car lengths per row. Measured in a
straight line behind the start pose they fit a track whose straight behind the line is as
long as the grid, and every scenario whose grid fits keeps the poses it always had. A longer
grid runs off the track at the first bend behind the line: twenty 1:10 cars need 8.7 m, and
the straight grid puts six of them off our ring. Where any straight slot leaves the track
(its car's body past an edge, or nearer another part of the track than its own), every slot
is measured along the centerline instead: at the same distance behind the start along the
track, at the same offset from the centerline (kept inside the edges), facing along it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from arsim_core.config.scenario import CarSpec
from arsim_core.engine.race_metrics import project
from arsim_core.geometry import Footprint, Pose2D
from arsim_core.track.polylines import arc_length, closed_length

ROW_LENGTHS = 1.5  # car lengths from one row to the next
SIDE_WIDTHS = 0.8  # car widths either side of the first car's line
EDGE_WIDTHS = 0.2  # of a car's width, kept clear of the track's edge on an along-track slot


class Lane(NamedTuple):
    """The track a grid lies on: its closed centerline (N, 2) in the driving direction and
    the edges' distances left and right of each point."""

    centerline: np.ndarray
    width_left: np.ndarray
    width_right: np.ndarray

    @classmethod
    def of(cls, track: Any) -> Lane | None:
        """The lane of a ``Track`` or ``TrackWorld`` (None without a centerline)."""
        if getattr(track, 'centerline', None) is None or track.width_left is None:
            return None
        return cls.from_arrays(track.centerline, track.width_left, track.width_right)

    @classmethod
    def from_arrays(cls, centerline: Sequence[float] | np.ndarray,
                    width_left: Sequence[float] | np.ndarray,
                    width_right: Sequence[float] | np.ndarray) -> Lane | None:
        """From arrays or flat lists (a ``TrackGeometry`` message's x0, y0, x1, ...); None
        where there is no usable centerline."""
        points = np.asarray(centerline, np.float64).reshape(-1, 2)
        left = np.asarray(width_left, np.float64).reshape(-1)
        right = np.asarray(width_right, np.float64).reshape(-1)
        if len(points) < 3 or len(left) != len(points) or len(right) != len(points):
            return None
        return cls(points, left, right)


def grid_slot(start: Pose2D, index: int, footprint: Footprint) -> Pose2D:
    """Start pose of the car at ``index`` on the straight grid behind ``start``."""
    if index == 0:
        return start
    x, y, yaw = start
    back, side = _offsets(index, footprint)
    c, s = math.cos(yaw), math.sin(yaw)
    return x - back * c - side * s, y - back * s + side * c, yaw


def start_poses(cars: Sequence[CarSpec], track_start: Pose2D, staged_front: bool = False,
                lane: Lane | None = None) -> dict[str, Pose2D]:
    """Every car's start pose: its own ``pose`` from the settings, or its grid slot, straight
    behind the start or, where that leaves the track ``lane``, along it (see the module).
    With ``staged_front`` (a Formula Student mission, whose rules stage the car's foremost
    part) the track's start pose is where the front of the first car is, not its centre."""
    def start_of(car: CarSpec) -> Pose2D:
        if not staged_front:
            return track_start
        x, y, yaw = track_start
        back = car.profile.footprint.length / 2.0
        return x - back * math.cos(yaw), y - back * math.sin(yaw), yaw

    gridded = [car for car in cars if car.pose is None]
    slots = {car.name: grid_slot(start_of(car), car.index, car.profile.footprint)
             for car in gridded}
    if lane is not None and any(car.index > 0 for car in gridded):
        along = _AlongTrack(lane)
        if any(along.leaves(slots[car.name], start_of(car), car.index, car.profile.footprint)
               for car in gridded if car.index > 0):
            slots = {car.name: along.slot(start_of(car), car.index, car.profile.footprint)
                     for car in gridded}
    return {car.name: car.pose or slots[car.name] for car in cars}


def _offsets(index: int, footprint: Footprint) -> tuple[float, float]:
    """How far behind the first car the slot lies, and how far to its left."""
    back = (index + 1) // 2 * ROW_LENGTHS * footprint.length
    side = (SIDE_WIDTHS if index % 2 else -SIDE_WIDTHS) * footprint.width
    return back, side


class _AlongTrack:
    """Slots measured along a lane's centerline."""

    def __init__(self, lane: Lane) -> None:
        self.lane = lane
        self.s = arc_length(lane.centerline)
        self.length = closed_length(lane.centerline)

    def leaves(self, slot: Pose2D, start: Pose2D, index: int, footprint: Footprint) -> bool:
        """Whether a straight ``slot`` puts its car past an edge, or nearer another part of
        the track than the stretch behind the start (a grid cutting across a bend)."""
        start_s, _, _ = project(self.lane.centerline, self.s, start[:2])
        s, lateral, segment = project(self.lane.centerline, self.s, slot[:2])
        back, _ = _offsets(index, footprint)
        behind = (start_s - s) % self.length
        if abs(behind - back) > footprint.length:
            return True
        half = footprint.width / 2.0
        return lateral + half > self.lane.width_left[segment] or \
            -lateral + half > self.lane.width_right[segment]

    def slot(self, start: Pose2D, index: int, footprint: Footprint) -> Pose2D:
        """The slot at its distance behind ``start`` along the centerline, at its offset from
        the start's line, kept inside the edges, facing along the track."""
        if index == 0:
            return start
        points = self.lane.centerline
        start_s, start_lateral, _ = project(points, self.s, start[:2])
        back, side = _offsets(index, footprint)
        at = (start_s - back) % self.length
        n = len(points)
        k = int(np.searchsorted(self.s, at, side='right') - 1) % n
        j = (k + 1) % n
        segment = (self.s[j] if j else self.length) - self.s[k]
        t = 0.0 if segment <= 0.0 else (at - self.s[k]) / segment
        x, y = points[k] + t * (points[j] - points[k])
        yaw = math.atan2(points[j, 1] - points[k, 1], points[j, 0] - points[k, 0])
        keep = (0.5 + EDGE_WIDTHS) * footprint.width
        left = float(self.lane.width_left[k]) - keep
        right = float(self.lane.width_right[k]) - keep
        lateral = start_lateral + side
        lateral = min(max(lateral, -right), left) if left > -right else 0.0
        return (float(x - lateral * math.sin(yaw)), float(y + lateral * math.cos(yaw)), yaw)
