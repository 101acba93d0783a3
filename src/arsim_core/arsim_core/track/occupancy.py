"""Rasterising track walls into a ROS occupancy grid (the ``/map`` a planner or localiser sees).

Walls are drawn with OpenCV, which keeps a full-scale circuit at 0.2 m per cell well under a
second. Wall lines are 4-connected so that a ray marched cell by cell through the grid, or a
flood fill of the free space, can never slip diagonally through a wall. Outlines of occupied
map regions are filled, which turns a map's walls back into the very cells they came from.
"""

from __future__ import annotations

import math

# OpenCV (about 15 MiB a process) is imported by the functions that use it: the launcher
# imports this module to check a scenario and never calls them.
import numpy as np

from arsim_core.errors import TrackError
from arsim_core.track.model import OCCUPIED, OccupancyGridData, Track

_SHIFT = 4
_ONE = 1 << _SHIFT
MAX_CELLS = 400_000_000


def _grid_frame(
    walls: tuple[np.ndarray, ...], resolution: float, margin: float
) -> tuple[tuple[float, float, float], tuple[int, int]]:
    """Origin and (height, width) of a grid covering all walls plus ``margin`` metres."""
    pts = np.concatenate([w for w in walls if w.size], axis=0)
    xmin, ymin = pts.min(axis=0) - margin
    xmax, ymax = pts.max(axis=0) + margin
    width = max(1, math.ceil((xmax - xmin) / resolution))
    height = max(1, math.ceil((ymax - ymin) / resolution))
    return (float(xmin), float(ymin), 0.0), (height, width)


def rasterize_walls(
    walls: tuple[np.ndarray, ...],
    resolution: float,
    margin: float = 1.0,
    closed_fill: bool = False,
    wall_thickness: float | None = None,
    origin: tuple[float, float, float] | None = None,
    shape: tuple[int, int] | None = None,
) -> OccupancyGridData:
    """Draw wall polylines into a free grid; see ``rasterize`` for the parameters.

    ``closed_fill`` fills closed walls with the even-odd rule (outer outlines and their holes),
    which is how outlines of occupied map regions turn back into the cells they came from.
    """
    import cv2
    if resolution <= 0:
        msg = f'resolution must be positive, got {resolution}'
        raise TrackError(msg)
    walls = tuple(np.asarray(w, dtype=float).reshape(-1, 2) for w in walls)
    if not any(w.size for w in walls):
        msg = 'track has no walls to rasterise'
        raise TrackError(msg)
    if origin is None or shape is None:
        frame_origin, frame_shape = _grid_frame(walls, resolution, margin)
        origin = origin or frame_origin
        shape = shape or frame_shape
    height, width = int(shape[0]), int(shape[1])
    if height * width > MAX_CELLS:
        msg = (
            f'grid of {width} x {height} cells at {resolution} m is too large; '
            'use a coarser resolution'
        )
        raise TrackError(msg)
    grid = OccupancyGridData(np.zeros((1, 1), np.int8), resolution, origin)
    canvas = np.zeros((height, width), dtype=np.uint8)
    cells = [grid.world_to_cell(w) - 0.5 for w in walls if w.shape[0]]
    thickness = 1
    if wall_thickness is not None:
        thickness = max(1, round(wall_thickness / resolution))
    if closed_fill:
        # Outlines of occupied regions run through cell centres: filling them in fixed point
        # gives back exactly the cells they were traced from.
        fixed = [np.round(c * _ONE).astype(np.int32).reshape(-1, 1, 2) for c in cells]
        cv2.fillPoly(canvas, fixed, OCCUPIED, cv2.LINE_8, _SHIFT)
        cv2.polylines(canvas, fixed, False, OCCUPIED, thickness, cv2.LINE_8, _SHIFT)
    else:
        # OpenCV draws 8-connected lines whenever a fractional shift is used, so lines are
        # drawn on whole cells to stay 4-connected.
        whole = [np.floor(c + 0.5).astype(np.int32).reshape(-1, 1, 2) for c in cells]
        cv2.polylines(canvas, whole, False, OCCUPIED, thickness, cv2.LINE_4)
    return OccupancyGridData(canvas.view(np.int8), resolution, origin)


def cone_outlines(track: Track, sides: int = 8) -> tuple[np.ndarray, ...]:
    """Closed base outlines of the track's placed cones (none for a track without them)."""
    if track.cones is None or not len(track.cones):
        return ()
    from arsim_core.track.mesh import PLACED_CONE_SIZES

    ang = np.linspace(0.0, 2.0 * np.pi, sides + 1)
    ring = np.stack([np.cos(ang), np.sin(ang)], axis=1)
    radii = np.array([PLACED_CONE_SIZES[int(label)][0] for label in track.cones.labels])
    outlines = track.cones.positions[:, None, :] + radii[:, None, None] * ring[None]
    return tuple(outlines)


def rasterize(
    track: Track,
    resolution: float = 0.05,
    margin: float = 1.0,
    wall_thickness: float | None = None,
    origin: tuple[float, float, float] | None = None,
    shape: tuple[int, int] | None = None,
) -> OccupancyGridData:
    """Occupancy grid of a track's barriers: walls occupied (100), everything else free (0).

    ``margin`` metres of free space surround the walls. ``wall_thickness`` (metres) widens the
    drawn walls; by default they are one cell wide. Pass ``origin`` and ``shape`` (rows, cols)
    to draw onto a given grid, e.g. to compare with the map a track was loaded from. Cones the
    track places itself (``track.cones``) are drawn as their base outlines.
    """
    return rasterize_walls(
        track.walls + cone_outlines(track),
        resolution,
        margin,
        closed_fill=track.walls_are_outlines,
        wall_thickness=wall_thickness,
        origin=origin,
        shape=shape,
    )
