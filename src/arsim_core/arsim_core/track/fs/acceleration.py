"""The acceleration event: a 75 m straight from a standing start, then a braking lane.

The car drives along +x. The start line is at x = 0 and the finish line at x = 75 m, each
marked by two big orange cones on either side; blue cones line the left edge and yellow the
right between them; small orange cones line the stopping zone after the finish, which a row of
small orange cones closes. The car is staged with its front 0.30 m behind the start line.
"""

from __future__ import annotations

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


def acceleration_track(name: str = 'fs_acceleration') -> Track:
    """The acceleration layout as a ``Track`` with its cones and ``Mission``."""
    half = 0.5 * rules.ACCELERATION_WIDTH
    y = half + rules.CONE_EDGE_OFFSET
    finish = rules.ACCELERATION_LENGTH
    end = finish + rules.ACCELERATION_STOP_LENGTH
    entry = -rules.ACCELERATION_ENTRY_LENGTH
    spacing = rules.ACCELERATION_CONE_SPACING
    gap = 0.5 * rules.BIG_CONE_PAIR_GAP
    big = np.array([[x + dx, side * y] for x in (0.0, finish) for dx in (-gap, gap)
                    for side in (-1.0, 1.0)])
    lane_x = layout.cone_row((entry, 0.0), (finish, 0.0), spacing)[:, 0]
    # The big cones stand at the lines; no lane cone next to them.
    lane_x = lane_x[np.min(np.abs(lane_x[:, None] - big[None, :, 0]), axis=1) > 1.0]
    stop_x = layout.cone_row((finish, 0.0), (end, 0.0), spacing)[:, 0]
    stop_x = stop_x[np.min(np.abs(stop_x[:, None] - big[None, :, 0]), axis=1) > 1.0]
    closing = np.linspace(-y, y, 4)[1:-1]
    placed = layout.cones([
        (np.column_stack([lane_x, np.full_like(lane_x, y)]), LABEL_CONE_BLUE),
        (np.column_stack([lane_x, np.full_like(lane_x, -y)]), LABEL_CONE_YELLOW),
        (big, LABEL_CONE_BIG_ORANGE),
        (np.column_stack([stop_x, np.full_like(stop_x, y)]), LABEL_CONE_ORANGE),
        (np.column_stack([stop_x, np.full_like(stop_x, -y)]), LABEL_CONE_ORANGE),
        (np.column_stack([np.full_like(closing, end), closing]), LABEL_CONE_ORANGE),
    ])
    mission = Mission(
        kind='acceleration',
        laps=rules.ACCELERATION_LAPS,
        start_line=layout.across(0.0, half),
        finish_line=layout.across(finish, half),
        stop_zone=layout.lane_polygon(finish, end, half),
        timed_laps=(1,),
    )
    center, widths, stage = layout.straight_drive_line(entry, end, -rules.ACCELERATION_STAGING,
                                                       half)
    return layout.assemble(name, center, widths, widths, stage, placed, mission)
