"""Building blocks the event layouts share: rows of cones, the closed drive line of a straight
event, and assembling the ``Track``.

A ``Track`` has a closed centerline (progress and laps are measured along it). The straight
events (acceleration, skidpad) are not loops, so their centerline runs along the event's lane
and comes back on a return loop beyond the lane that no car drives: the return loop has zero
width, so it adds no road surface, and the track has no barriers, only its cones.
"""

from __future__ import annotations

import math

import numpy as np

from arsim_core.track.fs.mission import Mission
from arsim_core.track.loaders import TrackOptions, track_from_centerline
from arsim_core.track.model import Cones, Track

LANE_SPACING = 0.5
"""Centerline point spacing of the generated layouts, m."""
RETURN_RADIUS = 15.0
"""Radius of the turns of the return loop of a straight event, m."""


def cone_row(a: np.ndarray | tuple[float, float], b: np.ndarray | tuple[float, float],
             spacing: float) -> np.ndarray:
    """Cones (k, 2) from ``a`` to ``b`` inclusive, evenly spaced at most ``spacing`` apart."""
    pa, pb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    count = max(1, math.ceil(float(np.hypot(*(pb - pa))) / spacing - 1e-9))
    t = np.linspace(0.0, 1.0, count + 1)[:, None]
    return pa + t * (pb - pa)


def straight_drive_line(x_start: float, x_end: float, x_stage: float,
                        half_width: float) -> tuple[np.ndarray, np.ndarray, int]:
    """Closed centerline of a straight event driven along +x on y = 0.

    The lane runs from ``x_start`` to ``x_end`` with a point exactly at ``x_stage`` (where the
    car is staged), then a zero-width return loop closes it. Returns the centerline (N, 2), the
    half width of each point (N,) and the index of the staging point.
    """
    ds = LANE_SPACING
    behind = np.arange(x_stage, x_start - 1e-9, -ds)[::-1]
    ahead = np.arange(x_stage + ds, x_end - 0.25 * ds, ds)
    lane_x = np.concatenate([behind, ahead, [x_end]])
    if lane_x[0] - x_start > 0.25 * ds:
        lane_x = np.concatenate([[x_start], lane_x])
    lane = np.column_stack([lane_x, np.zeros_like(lane_x)])
    r = RETURN_RADIUS
    n_arc = math.ceil(math.pi * r / ds)
    phi = np.linspace(0.5 * math.pi, -0.5 * math.pi, n_arc + 1)[1:]
    arc_out = np.column_stack([x_end + r * np.cos(phi), -r + r * np.sin(phi)])
    n_back = math.ceil((x_end - x_start) / ds)
    back_x = np.linspace(x_end, x_start, n_back + 1)[1:-1]
    back = np.column_stack([back_x, np.full_like(back_x, -2.0 * r)])
    phi = np.linspace(-0.5 * math.pi, -1.5 * math.pi, n_arc + 1)[:-1]
    arc_in = np.column_stack([x_start + r * np.cos(phi), -r + r * np.sin(phi)])
    center = np.vstack([lane, arc_out, back, arc_in])
    widths = np.zeros(center.shape[0])
    widths[: lane.shape[0]] = half_width
    stage = int(np.argmin(np.abs(lane_x - x_stage)))
    return center, widths, stage


def cones(parts: list[tuple[np.ndarray, int]]) -> Cones:
    """One ``Cones`` from (positions, label) groups."""
    pos = [np.reshape(p, (-1, 2)) for p, _ in parts]
    labs = [np.full(len(p), label, dtype=np.uint8)
            for p, (_, label) in zip(pos, parts, strict=True)]
    return Cones(np.vstack(pos), np.concatenate(labs))


def assemble(name: str, center: np.ndarray, width_right: np.ndarray, width_left: np.ndarray,
             start_index: int, placed: Cones, mission: Mission) -> Track:
    """The ``Track`` of a layout: no barriers, the given cones and mission."""
    return track_from_centerline(
        name, center, width_right, width_left,
        TrackOptions(name=name, start_index=start_index), walls=(), cones=placed,
        mission=mission)


def lane_polygon(x0: float, x1: float, half_width: float) -> np.ndarray:
    """Rectangle (4, 2) of the lane along +x between ``x0`` and ``x1``."""
    return np.array([[x0, -half_width], [x1, -half_width], [x1, half_width], [x0, half_width]])


def across(x: float, half_width: float) -> np.ndarray:
    """Segment (2, 2) across the lane along +x at ``x``, right end first."""
    return np.array([[x, -half_width], [x, half_width]])

