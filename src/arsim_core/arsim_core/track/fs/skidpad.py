"""The skidpad: a figure of eight of two circles driven twice each, right then left.

The car enters along +x. The timekeeping line is x = 0, through both circle centres: the
right circle's centre is at (0, -9.125), the left one's at (0, 9.125), 18.25 m apart. The
driving lane of each circle lies between diameters 15.25 m and 21.25 m; cones stand 0.15 m
outside the lane, 16 on each inner circle and 13 on each outer one (the places in the crossing
are left free). Seen from the car, the right circle (driven clockwise) has yellow cones inside
and blue outside, the left circle (counter-clockwise) blue inside and yellow outside. Four big
orange cones mark the timekeeping line; small orange cones line the 3 m entry and exit lanes,
and a row of them closes the stop area 25 m after the line.

The track's centerline is the straight through the crossing (entry lane, crossing, exit lane);
the figure of eight the car follows is ``mission.path``.
"""

from __future__ import annotations

import math

import numpy as np

from arsim_core.track.fs import layout, rules
from arsim_core.track.fs.mission import Mission
from arsim_core.track.model import (
    LABEL_CONE_BIG_ORANGE,
    LABEL_CONE_BLUE,
    LABEL_CONE_ORANGE,
    LABEL_CONE_YELLOW,
    Track,
)

CENTRE_Y = 0.5 * rules.SKIDPAD_CENTRE_DISTANCE
"""|y| of the circle centres; the right circle is at -CENTRE_Y, the left one at +CENTRE_Y."""
PATH_SPACING = 0.25
"""Point spacing of the path the car is to follow, m."""


def _ring(centre_y: float, radius: float, places: int) -> np.ndarray:
    """``places`` evenly spaced points (k, 2) on a circle, the first on the +x side."""
    ang = np.arange(places) * (2.0 * math.pi / places)
    return np.column_stack([radius * np.cos(ang), centre_y + radius * np.sin(ang)])


def _outer(centre_y: float) -> np.ndarray:
    """Outer circle cones: the evenly spaced places on this circle's side of the x axis."""
    radius = 0.5 * rules.SKIDPAD_OUTER_DIAMETER + rules.CONE_EDGE_OFFSET
    ring = _ring(centre_y, radius, rules.SKIDPAD_OUTER_PLACES)
    return ring[np.sign(ring[:, 1]) == np.sign(centre_y)]


def skidpad_path() -> np.ndarray:
    """The line (M, 2) the car follows: staging point, right circle twice, left circle twice,
    out along the exit lane to the end of the stop area."""
    radius = CENTRE_Y  # the middle of the lane passes through the crossing point
    entry_x = np.arange(-rules.SKIDPAD_STAGING, 0.0, PATH_SPACING)
    entry = np.column_stack([entry_x, np.zeros_like(entry_x)])
    per_lap = math.ceil(2.0 * math.pi * radius / PATH_SPACING)
    laps_each = rules.SKIDPAD_LAPS // 2
    t = np.arange(laps_each * per_lap) * (2.0 * math.pi / per_lap)
    right = np.column_stack([radius * np.sin(t), -radius + radius * np.cos(t)])  # clockwise
    left = np.column_stack([radius * np.sin(t), radius - radius * np.cos(t)])
    exit_x = np.arange(0.0, rules.SKIDPAD_STOP_LENGTH + 1e-9, PATH_SPACING)
    out = np.column_stack([exit_x, np.zeros_like(exit_x)])
    return np.vstack([entry, right, left, out])


def skidpad_track(name: str = 'fs_skidpad') -> Track:
    """The skidpad layout as a ``Track`` with its cones and ``Mission``."""
    inner_r = 0.5 * rules.SKIDPAD_INNER_DIAMETER - rules.CONE_EDGE_OFFSET
    half = 0.5 * rules.SKIDPAD_LANE_WIDTH
    y = half + rules.CONE_EDGE_OFFSET
    spacing = rules.SKIDPAD_LANE_CONE_SPACING
    # Lane cones start half a spacing beyond where their rows meet the outer circles' cones.
    outer_r = 0.5 * rules.SKIDPAD_OUTER_DIAMETER + rules.CONE_EDGE_OFFSET
    lane_start = math.sqrt(outer_r**2 - (CENTRE_Y - y) ** 2) + 0.5 * spacing
    entry_x = layout.cone_row((-rules.SKIDPAD_ENTRY_LENGTH, 0.0), (-lane_start, 0.0), spacing)
    exit_x = layout.cone_row((lane_start, 0.0), (rules.SKIDPAD_STOP_LENGTH, 0.0), spacing)
    lane_x = np.concatenate([entry_x[:, 0], exit_x[:, 0]])
    end = rules.SKIDPAD_STOP_LENGTH
    closing = np.linspace(-y, y, 4)[1:-1]
    placed = layout.cones([
        (_ring(-CENTRE_Y, inner_r, rules.SKIDPAD_INNER_CONES), LABEL_CONE_YELLOW),
        (_outer(-CENTRE_Y), LABEL_CONE_BLUE),
        (_ring(CENTRE_Y, inner_r, rules.SKIDPAD_INNER_CONES), LABEL_CONE_BLUE),
        (_outer(CENTRE_Y), LABEL_CONE_YELLOW),
        (np.array(rules.SKIDPAD_TIMING_CONES, dtype=float), LABEL_CONE_BIG_ORANGE),
        (np.column_stack([lane_x, np.full_like(lane_x, y)]), LABEL_CONE_ORANGE),
        (np.column_stack([lane_x, np.full_like(lane_x, -y)]), LABEL_CONE_ORANGE),
        (np.column_stack([np.full_like(closing, end), closing]), LABEL_CONE_ORANGE),
    ])
    line = layout.across(0.0, half)
    mission = Mission(
        kind='skidpad',
        laps=rules.SKIDPAD_LAPS,
        start_line=line,
        finish_line=line,
        stop_zone=layout.lane_polygon(0.0, end, half),
        timed_laps=rules.SKIDPAD_TIMED_LAPS,
        path=skidpad_path(),
    )
    center, widths, stage = layout.straight_drive_line(
        -rules.SKIDPAD_ENTRY_LENGTH, end, -rules.SKIDPAD_STAGING, half)
    return layout.assemble(name, center, widths, widths, stage, placed, mission)
