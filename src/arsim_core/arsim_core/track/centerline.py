"""Centerline extraction from an occupancy map, for maps that come without one.

The drivable area of a circuit is a ring of free cells: enclosed by the outer barrier, with
the infield as its hole. The centerline is where the distance to the outer barrier equals the
distance to the infield. Splitting the ring that way (instead of skeletonising it) always gives
a single closed curve, with no spurs at wide spots or gaps in the barriers.
"""

from __future__ import annotations

import cv2
import numpy as np

from arsim_core.errors import TrackError
from arsim_core.track import polylines
from arsim_core.track.model import FREE, OccupancyGridData

MIN_INFIELD_CELLS = 16


def _track_region(
    free: np.ndarray, seed_cell: tuple[int, int] | None
) -> tuple[np.ndarray, np.ndarray]:
    """Free region that encloses a hole (the track) and its largest hole (the infield).

    With a seed cell (col, row) the region containing it is used; otherwise the largest free
    region that does not touch the map border and has a hole. The outside of the barriers
    touches the border and the infield has no hole, so neither is taken for the track; the
    thin gap inside a thick barrier does have a hole but is far smaller than the track.
    """
    count, labels, stats, _ = cv2.connectedComponentsWithStats(free.astype(np.uint8), 4)
    h, w = free.shape
    candidates = []
    for label in range(1, count):
        x, y, bw, bh, area = stats[label]
        touches = x == 0 or y == 0 or x + bw == w or y + bh == h
        if seed_cell is None and touches:
            continue
        candidates.append((int(area), label))
    if seed_cell is not None:
        col, row = seed_cell
        if not (0 <= row < h and 0 <= col < w) or labels[row, col] == 0:
            msg = 'the given start point is not on a free cell of the map'
            raise TrackError(msg)
        candidates = [(0, int(labels[row, col]))]
    candidates.sort(reverse=True)
    for _, label in candidates[:8]:
        x, y, bw, bh, _ = stats[label]
        region = (labels == label).astype(np.uint8)
        contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        filled = np.zeros_like(region)
        cv2.drawContours(filled, contours, -1, 1, thickness=cv2.FILLED)
        holes = (filled > 0) & (region == 0)
        n_holes, hole_labels, hole_stats, _ = cv2.connectedComponentsWithStats(
            holes.astype(np.uint8), 8
        )
        if n_holes < 2:
            continue
        biggest = 1 + int(np.argmax(hole_stats[1:, cv2.CC_STAT_AREA]))
        if hole_stats[biggest, cv2.CC_STAT_AREA] >= MIN_INFIELD_CELLS:
            return filled > 0, hole_labels == biggest
    msg = 'no closed track found: no free area of the map runs around an infield'
    raise TrackError(msg)


def extract_centerline(
    grid: OccupancyGridData,
    spacing: float | None = None,
    start_near: tuple[float, float] | None = (0.0, 0.0),
    clockwise: bool = False,
    seed: tuple[float, float] | None = None,
    smoothing: float = 1.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Centerline (N, 2), right and left widths (N,) of the track in an occupancy grid.

    ``spacing`` between points defaults to five cells. The loop runs counter-clockwise
    unless ``clockwise``, and starts at the point nearest ``start_near`` (the map origin by
    default, where map_saver maps usually have the car's start). ``seed`` is a world point on
    the track when the map holds more than one closed free area. ``smoothing`` (metres) is the
    window of the moving average that removes the cell staircase.
    """
    res = grid.resolution
    free = grid.data == FREE
    seed_cell = None
    if seed is not None:
        c = grid.world_to_cell(np.asarray(seed, dtype=float))[0]
        seed_cell = (int(c[0]), int(c[1]))
    filled, infield = _track_region(free, seed_cell)
    outside = ~filled
    d_out = cv2.distanceTransform(np.where(outside, 0, 1).astype(np.uint8), cv2.DIST_L2, 5)
    d_in = cv2.distanceTransform(np.where(infield, 0, 1).astype(np.uint8), cv2.DIST_L2, 5)
    inner_half = (infield | (filled & (d_in <= d_out))).astype(np.uint8)
    contours, _ = cv2.findContours(inner_half, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not contours:
        msg = 'centerline extraction found no contour'
        raise TrackError(msg)
    cells = max(contours, key=cv2.contourArea).reshape(-1, 2).astype(np.float64)
    if cells.shape[0] < 8:
        msg = 'the track in the map is too small to extract a centerline'
        raise TrackError(msg)
    window = max(1, round(smoothing / res))
    if window > 1:
        kernel = np.ones(window) / window
        padded = np.concatenate([cells[-window:], cells, cells[:window]])
        cells = np.stack(
            [np.convolve(padded[:, k], kernel, mode='same')[window:-window] for k in range(2)],
            axis=1,
        )
    step = spacing if spacing is not None else 5.0 * res
    cells, _ = polylines.resample_closed(cells, step / res)
    # Sample both distance fields at the points; the barrier surface is half a cell nearer
    # than the centre of the first blocked cell.
    from scipy.ndimage import map_coordinates  # as scipy.interpolate in polylines

    coords = np.stack([cells[:, 1], cells[:, 0]])
    to_in = np.maximum(map_coordinates(d_in, coords, order=1) - 0.5, 0.0) * res
    to_out = np.maximum(map_coordinates(d_out, coords, order=1) - 0.5, 0.0) * res
    world = grid.cell_to_world(cells[:, 0] + 0.5, cells[:, 1] + 0.5)
    ccw = polylines.signed_area(world) > 0
    if ccw == clockwise:
        world, to_in, to_out = world[::-1], to_in[::-1], to_out[::-1]
    # Counter-clockwise around the infield means the infield is on the left.
    width_left, width_right = (to_out, to_in) if clockwise else (to_in, to_out)
    if start_near is not None:
        first = int(np.argmin(np.hypot(*(world - np.asarray(start_near)).T)))
        world = np.roll(world, -first, axis=0)
        width_left = np.roll(width_left, -first)
        width_right = np.roll(width_right, -first)
    return world, width_right, width_left
