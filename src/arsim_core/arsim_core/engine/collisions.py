"""Multi-car geometry: footprints and collisions against barriers and each other, and the check
that no two start poses overlap (the grid itself: ``engine.start_grid``, re-exported here).

Footprints are rectangles centred on base_link; barriers come from the track mesh (triangles
labelled as barrier or cone), so collisions agree with what the sensors see.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import shapely

from arsim_core import labels as semantic
from arsim_core._jit import kernel
from arsim_core.config.scenario import CarSpec
from arsim_core.engine.start_grid import grid_slot as grid_slot
from arsim_core.engine.start_grid import start_poses as start_poses
from arsim_core.errors import ConfigError
from arsim_core.geometry import Footprint, Pose2D

BARRIER = 'barrier'


def footprint_polygon(pose: Pose2D, footprint: Footprint) -> shapely.Polygon:
    x, y, yaw = pose
    c, s = math.cos(yaw), math.sin(yaw)
    hl, hw = footprint.length / 2.0, footprint.width / 2.0
    corners = [(hl, hw), (-hl, hw), (-hl, -hw), (hl, -hw)]
    return shapely.Polygon([(x + c * px - s * py, y + s * px + c * py) for px, py in corners])


def check_start_poses(cars: Sequence[CarSpec], poses: Mapping[str, Pose2D],
                      source: str) -> None:
    """Refuse overlapping start poses, naming both cars."""
    bodies = [(car, footprint_polygon(poses[car.name], car.profile.footprint)) for car in cars]
    for i, (car, body) in enumerate(bodies):
        for other, other_body in bodies[:i]:
            if body.intersects(other_body):
                msg = (f'{source}: cars[{car.index}]: car {car.name!r} starts at '
                       f'{tuple(round(v, 3) for v in poses[car.name])}, overlapping car '
                       f'{other.name!r} at {tuple(round(v, 3) for v in poses[other.name])}; '
                       f'give one of them another pose')
                raise ConfigError(msg)


@dataclass(frozen=True)
class Contact:
    car: str
    other: str  # another car's name, or BARRIER


class CollisionWorld:
    """Barrier segments of one track; finds which footprints touch them or each other.

    ``contacts_at`` answers from poses and footprint sizes in a few microseconds per frame,
    fast enough for every frame of a training environment: the segments sit in a uniform grid,
    and compiled kernels test the few near a car with exact predicates (as GEOS decides with
    robust ones), so even a car touching a wall at distance 0 is judged as shapely's
    ``intersects`` judges the ``footprint_polygon`` (the tests hold the two together).
    """

    def __init__(self, vertices: np.ndarray, triangles: np.ndarray, labels: np.ndarray,
                 cell_size: float | None = None) -> None:
        """``cell_size`` [m] of the segment grid; by default derived from the segment lengths."""
        obstacles = triangles[np.isin(labels, semantic.OBSTACLES)]
        edges = np.concatenate([obstacles[:, [0, 1]], obstacles[:, [1, 2]],
                                obstacles[:, [2, 0]]])
        segments = vertices[edges][:, :, :2].astype(np.float64)
        lengths = np.linalg.norm(segments[:, 1] - segments[:, 0], axis=1)
        segments = np.unique(np.round(segments[lengths > 1e-6], 6), axis=0)
        self.grid = SegmentGrid(segments.reshape(-1, 4), cell_size)

    def contacts_at(self, names: Sequence[str], poses: np.ndarray, half_extents: np.ndarray,
                    car_to_car: bool) -> list[Contact]:
        """Cars touching a barrier (in car order), then touching pairs, each both ways.

        ``poses`` is (n, 3) x, y, yaw of each car's base_link, ``half_extents`` (n, 2) half the
        length and half the width of its footprint; ``names`` must be distinct.
        """
        n = len(names)
        poses = np.asarray(poses, dtype=np.float64)
        half_extents = np.asarray(half_extents, dtype=np.float64)
        if poses.shape != (n, 3) or half_extents.shape != (n, 2):
            msg = (f'contacts_at: {n} names need poses of shape ({n}, 3) and half_extents of '
                   f'shape ({n}, 2), got {poses.shape} and {half_extents.shape}')
            raise ValueError(msg)
        grid = self.grid
        codes = footprint_contacts(poses, half_extents, car_to_car, grid.segments,
                                   grid.cell_start, grid.cell_segments, grid.frame)
        if not codes.size:
            return []
        found = []
        for code in codes.tolist():
            if code < n:
                found.append(Contact(names[code], BARRIER))
            else:
                i, j = divmod(code - n, n)
                found += [Contact(names[i], names[j]), Contact(names[j], names[i])]
        return found


MAX_GRID_CELLS = 1 << 20  # 4 MB of cell offsets at most, even for a many-kilometre circuit
CELL_PER_SEGMENT = 4.0  # default cell size in median segment lengths: a wall leaves few per cell


class SegmentGrid:
    """Barrier segments bucketed by a uniform grid, in compressed sparse rows.

    ``segments`` is (m, 4) ax, ay, bx, by, each segment once, with ax <= bx; cell
    ``iy * nx + ix`` holds ``cell_segments[cell_start[cell]:cell_start[cell + 1]]``, every segment
    whose bounding box meets the cell. ``frame`` is x0, y0, 1 / cell size, nx, ny: the numbers
    ``grid_cell`` needs.
    """

    def __init__(self, segments: np.ndarray, cell_size: float | None = None) -> None:
        segments = np.asarray(segments, dtype=np.float64).reshape(-1, 4)
        reverse = (segments[:, 0] > segments[:, 2]) | (
            (segments[:, 0] == segments[:, 2]) & (segments[:, 1] > segments[:, 3]))
        segments = np.where(reverse[:, None], segments[:, [2, 3, 0, 1]], segments)
        self.segments = np.ascontiguousarray(np.unique(segments, axis=0))
        lows = np.minimum(self.segments[:, :2], self.segments[:, 2:])
        highs = np.maximum(self.segments[:, :2], self.segments[:, 2:])
        origin = lows.min(axis=0) if len(lows) else np.zeros(2)
        span = highs.max(axis=0) - origin if len(highs) else np.zeros(2)
        if cell_size is None:
            lengths = np.linalg.norm(self.segments[:, 2:] - self.segments[:, :2], axis=1)
            cell_size = CELL_PER_SEGMENT * float(np.median(lengths)) if len(lengths) else 1.0
        if not cell_size > 0.0:
            msg = f'cell_size must be positive, got {cell_size}'
            raise ValueError(msg)
        cell = float(cell_size)
        while np.prod(np.floor(span / cell) + 1.0) > MAX_GRID_CELLS:
            cell *= 2.0
        inverse = 1.0 / cell
        shape = (np.floor(span * inverse) + 1.0).astype(np.int64)
        self.cell_size = cell
        self.shape = (int(shape[0]), int(shape[1]))
        self.frame = np.array([origin[0], origin[1], inverse, shape[0], shape[1]])
        first = self._cells(lows, origin, inverse, shape)
        last = self._cells(highs, origin, inverse, shape)
        width = last[:, 0] - first[:, 0] + 1
        counts = width * (last[:, 1] - first[:, 1] + 1)
        owner = np.repeat(np.arange(len(counts)), counts)
        rank = np.arange(owner.size) - np.repeat(np.cumsum(counts) - counts, counts)
        cells = ((first[owner, 1] + rank // width[owner]) * shape[0]
                 + first[owner, 0] + rank % width[owner])
        order = np.argsort(cells, kind='stable')
        self.cell_segments = owner[order].astype(np.int32)
        self.cell_start = np.zeros(int(shape.prod()) + 1, dtype=np.int32)
        np.cumsum(np.bincount(cells, minlength=int(shape.prod())), out=self.cell_start[1:])

    @staticmethod
    def _cells(points: np.ndarray, origin: np.ndarray, inverse: float,
               shape: np.ndarray) -> np.ndarray:
        """Cell column and row of each point, computed exactly as ``grid_cell`` does."""
        return np.clip(np.floor((points - origin) * inverse), 0, shape - 1).astype(np.int64)


_EPS = 2.0 ** -53  # unit roundoff of float64
_ORIENTATION_ERROR = (3.0 + 16.0 * _EPS) * _EPS  # Shewchuk's bound for the float determinant
_SPLITTER = 2.0 ** 27 + 1.0  # Dekker's constant splitting a float64 into two halves


@kernel
def _two_sum(a: float, b: float) -> tuple[float, float]:
    """``a + b`` rounded, and the rounding error, which is exact (Knuth)."""
    total = a + b
    b_part = total - a
    a_part = total - b_part
    return total, (a - a_part) + (b - b_part)


@kernel
def _two_product(a: float, b: float) -> tuple[float, float]:
    """``a * b`` rounded, and the rounding error, which is exact (Dekker)."""
    product = a * b
    big = _SPLITTER * a
    a_high = big - (big - a)
    a_low = a - a_high
    big = _SPLITTER * b
    b_high = big - (big - b)
    b_low = b - b_high
    return product, a_low * b_low - (((product - a_high * b_high) - a_low * b_high)
                                     - a_high * b_low)


@kernel
def _sum_sign(terms: np.ndarray) -> int:
    """Exact sign of a sum of floats.

    Grows a nonoverlapping expansion of the partial sums in place, dropping zeros (Shewchuk's
    grow-expansion); its last component is the largest and carries the sign.
    """
    parts = np.empty(terms.size + 1)
    size = 0
    for term in terms:
        carry = term
        kept = 0
        for i in range(size):
            carry, error = _two_sum(carry, parts[i])
            if error != 0.0:
                parts[kept] = error
                kept += 1
        if carry != 0.0 or kept == 0:
            parts[kept] = carry
            kept += 1
        size = kept
    top = parts[size - 1]
    return 1 if top > 0.0 else (-1 if top < 0.0 else 0)


@kernel
def _exact_orientation(ax: float, ay: float, bx: float, by: float, cx: float,
                       cy: float) -> int:
    """Sign of the orientation determinant in exact arithmetic: every difference as two
    floats, every product of those as two more, and the exact sign of the sixteen terms."""
    acx, acx_error = _two_sum(ax, -cx)
    acy, acy_error = _two_sum(ay, -cy)
    bcx, bcx_error = _two_sum(bx, -cx)
    bcy, bcy_error = _two_sum(by, -cy)
    terms = np.empty(16)
    k = 0
    for u in (acx, acx_error):
        for v in (bcy, bcy_error):
            product, error = _two_product(u, v)
            terms[k] = product
            terms[k + 1] = error
            k += 2
    for u in (acy, acy_error):
        for v in (bcx, bcx_error):
            product, error = _two_product(u, v)
            terms[k] = -product
            terms[k + 1] = -error
            k += 2
    return _sum_sign(terms)


@kernel
def orientation(ax: float, ay: float, bx: float, by: float, cx: float, cy: float) -> int:
    """1 if a, b, c turn left, -1 if right, 0 if collinear: exact for any float64 input.

    Exact, as GEOS's robust predicates are, so that footprints touching at distance 0 are judged
    as shapely judges them. The float determinant decides unless it is within its error bound.
    """
    left = (ax - cx) * (by - cy)
    right = (ay - cy) * (bx - cx)
    det = left - right
    bound = _ORIENTATION_ERROR * (abs(left) + abs(right))
    if det > bound:
        return 1
    if det < -bound:
        return -1
    return _exact_orientation(ax, ay, bx, by, cx, cy)


@kernel
def footprint_corners(x: float, y: float, yaw: float, half_length: float, half_width: float,
                      quad: np.ndarray) -> None:
    """Corners of ``footprint_polygon`` into ``quad`` (x0, y0, ... x3, y3, counterclockwise),
    with the same float operations so that they are the very same points."""
    c = math.cos(yaw)
    s = math.sin(yaw)
    for k in range(4):
        px = half_length if k == 0 or k == 3 else -half_length
        py = half_width if k < 2 else -half_width
        quad[2 * k] = x + c * px - s * py
        quad[2 * k + 1] = y + s * px + c * py


@kernel
def segment_touches_quad(quad: np.ndarray, ax: float, ay: float, bx: float, by: float) -> bool:
    """Whether segment ab and the closed convex counterclockwise quad share a point.

    Separating axes: a quad edge with both ends of the segment strictly outside, or the
    segment's line with all corners strictly on one side; touching is not separating.
    """
    for k in range(4):
        px, py = quad[2 * k], quad[2 * k + 1]
        qx, qy = quad[(2 * k + 2) % 8], quad[(2 * k + 3) % 8]
        if orientation(px, py, qx, qy, ax, ay) < 0 and orientation(px, py, qx, qy, bx, by) < 0:
            return False
    side = 0
    for k in range(4):
        turn = orientation(ax, ay, bx, by, quad[2 * k], quad[2 * k + 1])
        if turn == 0 or turn == -side:
            return True
        side = turn
    return False


@kernel
def _edge_separates(quad: np.ndarray, other: np.ndarray) -> bool:
    """Whether some edge of ``quad`` has every corner of ``other`` strictly outside it."""
    for k in range(4):
        px, py = quad[2 * k], quad[2 * k + 1]
        qx, qy = quad[(2 * k + 2) % 8], quad[(2 * k + 3) % 8]
        outside = 0
        for m in range(4):
            if orientation(px, py, qx, qy, other[2 * m], other[2 * m + 1]) >= 0:
                break
            outside += 1
        if outside == 4:
            return True
    return False


@kernel
def quads_touch(quad: np.ndarray, other: np.ndarray) -> bool:
    """Whether two closed convex counterclockwise quads share a point (separating axes)."""
    return not (_edge_separates(quad, other) or _edge_separates(other, quad))


@kernel
def grid_cell(value: float, origin: float, inverse: float, count: int) -> int:
    """Grid column (or row) of a coordinate, clamped to the grid; NaN gives 0."""
    f = (value - origin) * inverse
    if not f > 0.0:
        return 0
    if f >= count - 1:
        return count - 1
    return int(f)


@kernel
def _touches_barrier(quad: np.ndarray, box: np.ndarray, segments: np.ndarray,
                     cell_start: np.ndarray, cell_segments: np.ndarray,
                     frame: np.ndarray) -> bool:
    """Whether the footprint touches any segment in the grid cells under its bounding box.

    A segment filed in several of those cells may be tested more than once: cheaper than
    remembering which were seen.
    """
    nx = int(frame[3])
    ny = int(frame[4])
    first_x = grid_cell(box[0], frame[0], frame[2], nx)
    last_x = grid_cell(box[2], frame[0], frame[2], nx)
    first_y = grid_cell(box[1], frame[1], frame[2], ny)
    last_y = grid_cell(box[3], frame[1], frame[2], ny)
    for row in range(first_y, last_y + 1):
        for cell in range(row * nx + first_x, row * nx + last_x + 1):
            for k in range(cell_start[cell], cell_start[cell + 1]):
                index = cell_segments[k]
                ax, ay = segments[index, 0], segments[index, 1]
                bx, by = segments[index, 2], segments[index, 3]
                if (ax <= box[2] and box[0] <= bx and min(ay, by) <= box[3]
                        and box[1] <= max(ay, by) and segment_touches_quad(quad, ax, ay, bx, by)):
                    return True
    return False


@kernel
def footprint_contacts(poses: np.ndarray, half_extents: np.ndarray, car_to_car: bool,
                       segments: np.ndarray, cell_start: np.ndarray,
                       cell_segments: np.ndarray, frame: np.ndarray) -> np.ndarray:
    """Contacts of all footprints of one frame, as codes in ``contacts`` order: ``i`` for car
    i touching a barrier, then ``n + i * n + j`` for cars i < j touching each other."""
    n = poses.shape[0]
    quads = np.empty((n, 8))
    boxes = np.empty((n, 4))
    codes = np.empty(n + n * (n - 1) // 2, dtype=np.int64)
    count = 0
    for i in range(n):
        quad = quads[i]
        footprint_corners(poses[i, 0], poses[i, 1], poses[i, 2], half_extents[i, 0],
                          half_extents[i, 1], quad)
        box = boxes[i]
        box[0] = min(quad[0], quad[2], quad[4], quad[6])
        box[1] = min(quad[1], quad[3], quad[5], quad[7])
        box[2] = max(quad[0], quad[2], quad[4], quad[6])
        box[3] = max(quad[1], quad[3], quad[5], quad[7])
        if _touches_barrier(quad, box, segments, cell_start, cell_segments, frame):
            codes[count] = i
            count += 1
    if car_to_car:
        for i in range(n):
            for j in range(i + 1, n):
                if (boxes[i, 0] <= boxes[j, 2] and boxes[j, 0] <= boxes[i, 2]
                        and boxes[i, 1] <= boxes[j, 3] and boxes[j, 1] <= boxes[i, 3]
                        and quads_touch(quads[i], quads[j])):
                    codes[count] = n + i * n + j
                    count += 1
    return codes[:count]
