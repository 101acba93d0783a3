"""A level 2D LiDAR cast without 3D rays: the world's slice at the sensor's height,
rasterised into the beam angles.

A planar scanner whose plane is level (the car neither rolls nor pitches and the mount has no
roll or pitch) sends every beam along the plane z = h of its origin, so all it can see is the
track mesh cut by that plane (segments of walls, barriers, scenery, cones), and the other cars'
footprint rectangles where h lies within their boxes. ``Slice`` cuts the mesh once per height
into segments, each with its triangle's label and normal, bucketed in a uniform grid; a scan
takes the segments of the cells within range, and for each one only the beams whose angles it
spans (a one-dimensional depth buffer): a 1080-beam scan is a few microseconds, with no BVH.

The hits are exact: per beam, the same ray as the Embree caster's (float32 origin and
directions), tested against each segment with the signs of two cross products; a segment
counts its endpoints in, and adjacent segments compute a shared endpoint to the same bits, so
a beam through one never passes between them (Embree's robust mode is watertight too). A ray
in a surface's plane (a segment seen edge-on, or the sensor exactly on one) does not hit it,
as Embree does not. Distances agree with Embree's to float32 rounding, the incidence cosine
(against the triangle's 3D normal) likewise; the range model after the hits is the 3D
kernel's, in the same float32 arithmetic, on the same draws.

``ARSIM_SCAN2D=slice`` turns it on; the default (``3d``) casts every scan in 3D, because
Embree's packets are faster still on the tracks measured (arsim_ring: 38 us a scan on the
slice against 27 in 3D, a TUM track with scenery 44 against 36, through ``Lidar2D.render``,
one thread): tracks cut into many short segments (5 cm on arsim_ring) leave more segments in
view than the BVH visits nodes. Without numba the slice is off.
"""

from __future__ import annotations

import math
import os
import weakref
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from arsim_core._jit import NUMBA_ENABLED, kernel
from arsim_core.backend.boxes import EPSILON, cast_boxes
from arsim_core.sensors.labels import CAR, NONE

F = TypeVar('F', bound=Any)
_MODES = ('slice', '3d')
MODE = os.environ.get('ARSIM_SCAN2D', '3d').strip().lower() or '3d'
if MODE not in _MODES:
    msg = f'ARSIM_SCAN2D={MODE!r}: expected one of {", ".join(_MODES)}'
    raise ValueError(msg)
#: Level 2D scans take the slice (``ARSIM_SCAN2D=slice``); False: every scan is cast in 3D.
ENABLED = NUMBA_ENABLED and MODE == 'slice'

# Heights sliced per world at most: a mount height per car profile, and cars at a few
# heights; beyond this (cars climbing a slope) the 3D caster is cheaper than new slices.
MAX_HEIGHTS = 16
# Cells of the grid at most, and their smallest side [m].
_MAX_CELLS = 1 << 20
_MIN_CELL = 2.0
# The slack of a segment's angular span: it is computed with a fast atan2, the beams'
# exact tests decide.
_SLACK = 2e-4  # [rad]: _angle's error, the beams' float32 rounding and more
# Beams per block of the depth buffer's coarse copy (the farthest hit of each block), which
# tells cells hidden behind nearer hits.
_BLOCK = 16

_TWO_PI = 2.0 * math.pi


def _inline(func: F) -> F:
    """A helper of the kernels, compiled into each kernel that calls it (a call between
    separately compiled functions cost more than this module's small helpers do)."""
    if not NUMBA_ENABLED:
        return func
    import numba

    compiled: F = numba.njit(inline='always', nogil=True, error_model='numpy')(func)  # type: ignore[assignment]
    return compiled


_INF32 = np.float32(np.inf)
_NAN32 = np.float32(np.nan)
_ONE32 = np.float32(1.0)
_ZERO32 = np.float32(0.0)
_TINY32 = np.float32(1e-18)
_CAR = np.uint8(CAR)
_NONE = np.uint8(NONE)


@dataclass(frozen=True, eq=False)
class Slice:
    """The mesh cut by the plane z = ``height``: segments (s, 6: ax, ay, bx, by, then the
    x and y of the triangle's unit 3D normal) with their triangles' ``labels``, and a uniform
    grid over them: ``grid`` is x0, y0, cell side, columns, rows; cell c lists the segments
    ``items[start[c]:start[c + 1]]``, each in every cell its bounding box touches, and
    ``first`` (s, 2) is the column and row of a segment's lowest cell."""

    height: float
    segments: np.ndarray
    labels: np.ndarray
    grid: np.ndarray
    start: np.ndarray
    items: np.ndarray


def slice_mesh(vertices: np.ndarray, triangles: np.ndarray, labels: np.ndarray,
               height: float) -> Slice:
    """``Slice`` of a labelled mesh (float32 vertices, as the ray casters take them) at
    ``height``. Triangles in the plane are left out (a ray along a surface does not hit it),
    as are those that only touch it at a vertex; a triangle with an edge in the plane gives
    that edge. A crossing of an edge is computed from its endpoints in a fixed order (by
    position), so both triangles of an edge give the same point."""
    v = np.asarray(vertices, np.float32).reshape(-1, 3).astype(np.float64)
    tri = np.asarray(triangles).reshape(-1, 3).astype(np.int64)
    lab = np.asarray(labels, np.uint8).reshape(-1)
    if len(tri):  # each face once (zero-thickness walls carry both sides), as scene.Layer
        keys = np.column_stack([np.sort(tri, axis=1), lab])
        _, once = np.unique(keys, axis=0, return_index=True)
        once.sort()
        tri, lab = tri[once], lab[once]
    h = float(np.float32(height))
    side = v[:, 2] - h  # exact: float32 values apart
    s = side[tri]
    crosses = ~(np.all(s > 0.0, axis=1) | np.all(s < 0.0, axis=1) | np.all(s == 0.0, axis=1))
    tri, lab, s = tri[crosses], lab[crosses], s[crosses]
    p = v[tri]  # (t, 3 corners, xyz)
    normal = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    length = np.linalg.norm(normal, axis=1)
    points = np.zeros((len(tri), 6, 2))
    valid = np.zeros((len(tri), 6), bool)
    for k in range(3):
        points[:, k] = p[:, k, :2]
        valid[:, k] = s[:, k] == 0.0
        a, b = k, (k + 1) % 3
        pa, pb, sa, sb = p[:, a], p[:, b], s[:, a], s[:, b]
        # the endpoint first in (x, y, z) order goes first
        a_first = (pa[:, 0] < pb[:, 0]) | ((pa[:, 0] == pb[:, 0]) & (
            (pa[:, 1] < pb[:, 1]) | ((pa[:, 1] == pb[:, 1]) & (pa[:, 2] <= pb[:, 2]))))
        lo = np.where(a_first[:, None], pa, pb)
        hi = np.where(a_first[:, None], pb, pa)
        slo = np.where(a_first, sa, sb)
        shi = np.where(a_first, sb, sa)
        cut = ((sa > 0.0) & (sb < 0.0)) | ((sa < 0.0) & (sb > 0.0))
        with np.errstate(divide='ignore', invalid='ignore'):
            f = slo / (slo - shi)
            points[:, 3 + k] = lo[:, :2] + (hi[:, :2] - lo[:, :2]) * f[:, None]
        valid[:, 3 + k] = cut
    two = valid.sum(axis=1) == 2  # else a vertex touching the plane
    order = np.argsort(~valid, axis=1, kind='stable')[:, :2]
    ends = np.take_along_axis(points, order[:, :, None], axis=1)
    keep = two & (length > 0.0) & np.any(ends[:, 0] != ends[:, 1], axis=1)
    ends, lab, normal, length = ends[keep], lab[keep], normal[keep], length[keep]
    segments = np.column_stack([ends[:, 0], ends[:, 1], normal[:, :2] / length[:, None]])
    segments, lab = _joined(segments, lab)
    return _gridded(h, np.ascontiguousarray(segments, np.float64), lab)


def _joined(segments: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``segments`` with runs that continue each other in a straight line joined into one:
    where an endpoint is shared by exactly two segments of one label and normal (to 1e-9),
    pointing the same way to 1e-12 of their lengths (a wall's quad is two triangles, cut in
    two halves on a line). A beam through the joint then meets one segment, not two."""
    if not len(segments):
        return segments, labels
    points = np.concatenate([segments[:, 0:2], segments[:, 2:4]])
    _, key, count = np.unique(points, axis=0, return_inverse=True, return_counts=True)
    key = key.reshape(-1)
    if not np.any(count == 2):
        return segments, labels
    joints: dict[int, list[int]] = {}
    for index, k in enumerate(key.tolist()):
        if count[k] == 2:
            joints.setdefault(k, []).append(index % len(segments))
    rows = segments.tolist()
    parent = list(range(len(rows)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for pair in joints.values():
        i, j = root(pair[0]), root(pair[1])
        if i == j or labels[i] != labels[j]:
            continue
        a, b = rows[i], rows[j]
        parallel = abs(abs(a[4] * b[4] + a[5] * b[5]) - 1.0)
        if abs(a[4] * b[5] - a[5] * b[4]) > 1e-9 or parallel > 1e-9:
            continue
        # the joint is an endpoint of both; q, r their other ends
        for p in ((a[0], a[1]), (a[2], a[3])):
            if p in ((b[0], b[1]), (b[2], b[3])):
                break
        else:
            continue
        q = (a[2], a[3]) if p == (a[0], a[1]) else (a[0], a[1])
        r = (b[2], b[3]) if p == (b[0], b[1]) else (b[0], b[1])
        ux, uy, vx, vy = p[0] - q[0], p[1] - q[1], r[0] - p[0], r[1] - p[1]
        lengths = math.hypot(ux, uy) * math.hypot(vx, vy)
        if abs(ux * vy - uy * vx) > 1e-12 * lengths or ux * vx + uy * vy <= 0.0:
            continue
        rows[i] = [q[0], q[1], r[0], r[1], a[4], a[5]]
        parent[j] = i
    alive = [i for i in range(len(rows)) if parent[i] == i]
    return np.array([rows[i] for i in alive], np.float64).reshape(-1, 6), labels[alive]


def _gridded(height: float, segments: np.ndarray, labels: np.ndarray) -> Slice:
    """``Slice`` of ``segments``: the grid around them and the cells of each."""
    if len(segments):
        x = segments[:, [0, 2]]
        y = segments[:, [1, 3]]
        x0, y0 = float(x.min()) - 1.0, float(y.min()) - 1.0
        width, depth = float(x.max()) + 1.0 - x0, float(y.max()) + 1.0 - y0
    else:
        x0 = y0 = 0.0
        width = depth = 1.0
        x = y = np.zeros((0, 2))
    cell = max(_MIN_CELL, math.sqrt(width * depth / _MAX_CELLS))
    columns, rows = int(width // cell) + 1, int(depth // cell) + 1
    ix0 = np.floor((x.min(axis=1) - x0) / cell).astype(np.int64)
    ix1 = np.floor((x.max(axis=1) - x0) / cell).astype(np.int64)
    iy0 = np.floor((y.min(axis=1) - y0) / cell).astype(np.int64)
    iy1 = np.floor((y.max(axis=1) - y0) / cell).astype(np.int64)
    span_x, span_y = ix1 - ix0 + 1, iy1 - iy0 + 1
    counts = span_x * span_y
    owner = np.repeat(np.arange(len(segments), dtype=np.int64), counts)
    k = np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)
    cx = ix0[owner] + k % span_x[owner]
    cy = iy0[owner] + k // span_x[owner]
    cells = cy * columns + cx
    order = np.argsort(cells, kind='stable')
    start = np.zeros(columns * rows + 1, np.int64)
    np.cumsum(np.bincount(cells, minlength=columns * rows), out=start[1:])
    return Slice(height, segments, np.ascontiguousarray(labels, np.uint8),
                 np.array([x0, y0, cell, columns, rows], np.float64), start,
                 owner[order].astype(np.int32))


_SLICES: weakref.WeakKeyDictionary[object, dict[float, Slice | None]] = \
    weakref.WeakKeyDictionary()


def plane(world: object, height: float) -> Slice | None:
    """The slice of ``world`` (a ``scene.World``: vertices, triangles, triangle_labels) at
    ``height`` (rounded to float32, as the rays' origin), made on first use; None once
    ``MAX_HEIGHTS`` heights of it are sliced (the 3D caster then)."""
    h = float(np.float32(height))
    cached = _SLICES.get(world)
    if cached is None:
        cached = _SLICES[world] = {}
    found = cached.get(h, False)
    if found is not False:
        return found  # type: ignore[return-value]
    made = None if len(cached) >= MAX_HEIGHTS else slice_mesh(
        world.vertices, world.triangles, world.triangle_labels, h)  # type: ignore[attr-defined]
    cached[h] = made
    return made


def beam_step(local: np.ndarray) -> float | None:
    """The angle between neighbouring beams of ``local`` directions (n, 3) in the sensor
    frame, if they lie in its x-y plane at even steps (0.0 for one beam); else None (no fast
    path)."""
    local = np.asarray(local, np.float64).reshape(-1, 3)
    if not len(local) or np.any(local[:, 2] != 0.0) or not np.all(np.isfinite(local)):
        return None
    if len(local) == 1:
        return 0.0
    angles = np.arctan2(local[:, 1], local[:, 0])
    step = float((angles[1] - angles[0] + math.pi) % _TWO_PI - math.pi)
    if step == 0.0:
        return None
    drift = (angles - angles[0] - step * np.arange(len(local)) + math.pi) % _TWO_PI - math.pi
    return step if float(np.max(np.abs(drift))) < 1e-6 else None


@_inline
def _steady(value: np.float32) -> np.float32:
    """A ray direction's component as Embree takes it (``embree._steady``)."""
    return value if abs(value) >= _TINY32 else _ZERO32


@kernel
def _sensor_frame(pose: np.ndarray, mount: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sensor's origin (3,) and rotation (3, 3) in the world, float64, term by term as
    the 3D scan kernel (``embree._compile_scan``) computes them."""
    cr, sr = np.cos(pose[3]), np.sin(pose[3])
    cp, sp = np.cos(pose[4]), np.sin(pose[4])
    cy, sy = np.cos(pose[5]), np.sin(pose[5])
    car = np.empty((3, 3))
    car[0, 0], car[0, 1], car[0, 2] = cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr
    car[1, 0], car[1, 1], car[1, 2] = sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr
    car[2, 0], car[2, 1], car[2, 2] = -sp, cp * sr, cp * cr
    rotation = np.empty((3, 3))
    origin = np.empty(3)
    for row in range(3):
        for column in range(3):
            rotation[row, column] = (car[row, 0] * mount[3 + column]
                                     + car[row, 1] * mount[6 + column]
                                     + car[row, 2] * mount[9 + column])
        origin[row] = pose[row] + (car[row, 0] * mount[0] + car[row, 1] * mount[1]
                                   + car[row, 2] * mount[2])
    return origin, rotation


@_inline
def _angle(y: float, x: float) -> float:
    """atan2(y, x) to within 1e-5 rad, several times faster: beam ranges are found with it
    and widened by ``_SLACK``; the beams' exact tests decide."""
    ax, ay = abs(x), abs(y)
    big, small = max(ax, ay), min(ax, ay)
    if big == 0.0:
        return 0.0
    a = small / big
    q = a * a
    r = a * (0.9998660 + q * (-0.3302995 + q * (0.1801410 + q * (-0.0851330
                                                               + q * 0.0208351))))
    if ay > ax:
        r = 0.5 * math.pi - r
    if x < 0.0:
        r = math.pi - r
    return -r if y < 0.0 else r


@_inline
def _offset(start: float, span: float, phase: float, step: float) -> float:
    """Where the arc from ``start`` over ``span`` counter-clockwise begins along the fan
    (beam i at ``phase`` + i ``step``), as an angle in [0, 2 pi) from beam 0 in the
    direction of the fan's steps."""
    offset = start - phase if step > 0.0 else phase - (start + span)
    return offset - _TWO_PI * math.floor(offset * (1.0 / _TWO_PI))


@_inline
def _beams(offset: float, span: float, width: float, n: int) -> tuple[int, int]:
    """First and last beam (last < first: none) within ``_SLACK`` of the arc from ``offset``
    over ``span`` along a fan of ``n`` beams ``width`` apart (0: every beam)."""
    if width == 0.0:
        return 0, n - 1
    inverse = 1.0 / width
    low = max(int(math.ceil((offset - _SLACK) * inverse)), 0)
    high = min(int(math.floor((offset + span + _SLACK) * inverse)), n - 1)
    return low, high


@_inline
def _origin_on(ax: float, ay: float, bx: float, by: float, nx: float, ny: float,
               label: np.uint8, directions: np.ndarray, nearest: np.ndarray,
               labels: np.ndarray, cosines: np.ndarray, dirty: np.ndarray) -> None:
    """The origin on the segment A-B: every beam but those along it meets it at distance
    0, as Embree's rays starting on a triangle do."""
    for beam in range(directions.shape[0]):
        dx, dy = directions[beam, 0], directions[beam, 1]
        if (dx * ay - dy * ax != 0.0 or dx * by - dy * bx != 0.0) and nearest[beam] > 0.0:
            nearest[beam] = 0.0
            labels[beam] = label
            cosines[beam] = abs(dx * nx + dy * ny)
            dirty[beam // _BLOCK] = True


@_inline
def _segment(ax: float, ay: float, bx: float, by: float, nx: float, ny: float,
             label: np.uint8, directions: np.ndarray, phase: float, step: float,
             nearest: np.ndarray, labels: np.ndarray, cosines: np.ndarray,
             closest: float, reach: float, dirty: np.ndarray) -> None:
    """Rasterise one segment (endpoints relative to the origin) into the beams: each beam
    whose angle its span covers is tested exactly, and takes the segment's distance,
    ``label`` and |cos| of incidence against the normal (nx, ny) where nearer than
    ``nearest`` holds and farther than ``closest``. A beam meets the closed segment A-B
    (counter-clockwise seen from the origin) where A and B lie on either side of it (or on
    it), at the distance A x B / (d x B - d x A). ``phase`` is the world angle of beam 0,
    ``step`` the signed angle between beams (0: test every beam)."""
    cross = ax * by - ay * bx
    if cross == 0.0:  # edge-on, or the origin on its line
        if closest == 0.0 and ax * bx + ay * by <= 0.0:
            _origin_on(ax, ay, bx, by, nx, ny, label, directions, nearest, labels, cosines,
                       dirty)
        return
    if cross < 0.0:  # A to B counter-clockwise seen from the origin
        ax, ay, bx, by = bx, by, ax, ay
        cross = -cross
    ex, ey = bx - ax, by - ay
    if cross * cross > reach * reach * (ex * ex + ey * ey):  # its line is out of reach
        return
    n = directions.shape[0]
    width = abs(step)
    start = _angle(ay, ax)
    span = _angle(by, bx) - start
    if span < 0.0:
        span += _TWO_PI
    offset = _offset(start, span, phase, step) if width > 0.0 else 0.0
    for turn in range(3):  # the arc, and the arc a turn before (wrapped) and after
        if turn == 1:
            if width == 0.0 or offset + span + _SLACK < _TWO_PI:
                continue
            offset -= _TWO_PI
        elif turn == 2:
            offset += 2.0 * _TWO_PI
            if width == 0.0 or (n - 1) * width + _SLACK < offset:
                continue
        low, high = _beams(offset, span, width, n)
        for beam in range(low, high + 1):
            dx, dy = directions[beam, 0], directions[beam, 1]
            ca = dx * ay - dy * ax
            cb = dx * by - dy * bx
            if ca <= 0.0 and cb >= 0.0:
                denominator = cb - ca  # > 0 but for a beam along the segment
                # closest < t < nearest[beam] for t = cross / denominator, and no division
                # for a beam it does not reach first
                if closest * denominator < cross < nearest[beam] * denominator:
                    nearest[beam] = cross / denominator
                    labels[beam] = label
                    cosines[beam] = abs(dx * nx + dy * ny)
                    dirty[beam // _BLOCK] = True


@_inline
def _hidden(x0: float, y0: float, x1: float, y1: float, phase: float, step: float,
            n: int, farthest: np.ndarray) -> bool:
    """Whether the box [x0, x1] x [y0, y1] (relative to the origin, which it does not hold)
    lies behind what the beams crossing it hit already: ``farthest`` is the farthest hit of
    each block of ``_BLOCK`` beams."""
    dx = x0 if x0 > 0.0 else (-x1 if x1 < 0.0 else 0.0)
    dy = y0 if y0 > 0.0 else (-y1 if y1 < 0.0 else 0.0)
    closest = math.sqrt(dx * dx + dy * dy) * (1.0 - 1e-9)
    if closest <= 0.0:
        return False
    middle = _angle(0.5 * (y0 + y1), 0.5 * (x0 + x1))
    low, high = 4.0, -4.0
    for corner in range(4):
        cx = x0 if corner % 2 == 0 else x1
        cy = y0 if corner < 2 else y1
        delta = _angle(cy, cx) - middle
        if delta > math.pi:
            delta -= _TWO_PI
        elif delta < -math.pi:
            delta += _TWO_PI
        low = min(low, delta)
        high = max(high, delta)
    width = abs(step)
    span = high - low
    offset = _offset(middle + low, span, phase, step) if width > 0.0 else 0.0
    for turn in range(3):  # as in _segment
        if turn == 1:
            if width == 0.0 or offset + span + _SLACK < _TWO_PI:
                continue
            offset -= _TWO_PI
        elif turn == 2:
            offset += 2.0 * _TWO_PI
            if width == 0.0 or (n - 1) * width + _SLACK < offset:
                continue
        first, last = _beams(offset, span, width, n)
        if first > last:
            continue
        for block in range(first // _BLOCK, last // _BLOCK + 1):
            if farthest[block] >= closest:
                return False
    return True


@_inline
def _cell(segments: np.ndarray, segment_labels: np.ndarray, start: np.ndarray,
          items: np.ndarray, c: int, ox: float, oy: float, reach: float,
          directions: np.ndarray, phase: float, step: float, seen: np.ndarray,
          nearest: np.ndarray, labels: np.ndarray, cosines: np.ndarray,
          dirty: np.ndarray) -> None:
    """Rasterise the segments of cell ``c`` not seen in an earlier cell."""
    for item in range(start[c], start[c + 1]):
        s = items[item]
        if seen[s]:
            continue
        seen[s] = True
        _segment(segments[s, 0] - ox, segments[s, 1] - oy, segments[s, 2] - ox,
                 segments[s, 3] - oy, segments[s, 4], segments[s, 5], segment_labels[s],
                 directions, phase, step, nearest, labels, cosines, 0.0, reach, dirty)


@kernel
def _track(segments: np.ndarray, segment_labels: np.ndarray, grid: np.ndarray,
           start: np.ndarray, items: np.ndarray, ox: float, oy: float, reach: float,
           directions: np.ndarray, phase: float, step: float, nearest: np.ndarray,
           labels: np.ndarray, cosines: np.ndarray) -> None:
    """Rasterise the segments of the cells within ``reach`` of (ox, oy) into the beams, the
    cells in rings outwards from the origin's, skipping those hidden behind nearer hits."""
    x0, y0, cell = grid[0], grid[1], grid[2]
    columns, rows = int(grid[3]), int(grid[4])
    if not (math.isfinite(ox) and math.isfinite(oy)):
        return
    n = directions.shape[0]
    reach = min(reach, 1e12)
    c0 = int(min(max(math.floor((ox - reach - x0) / cell), 0.0), columns))
    c1 = int(min(max(math.floor((ox + reach - x0) / cell), -1.0), columns - 1.0))
    r0 = int(min(max(math.floor((oy - reach - y0) / cell), 0.0), rows))
    r1 = int(min(max(math.floor((oy + reach - y0) / cell), -1.0), rows - 1.0))
    if c0 > c1 or r0 > r1:
        return
    oc = int(min(max(math.floor((ox - x0) / cell), float(c0)), float(c1)))
    orow = int(min(max(math.floor((oy - y0) / cell), float(r0)), float(r1)))
    rings = max(oc - c0, c1 - oc, orow - r0, r1 - orow)
    seen = np.zeros(segments.shape[0], np.bool_)
    blocks = (n + _BLOCK - 1) // _BLOCK
    farthest = np.full(blocks, np.inf)
    dirty = np.zeros(blocks, np.bool_)
    for ring in range(rings + 1):
        for row in range(max(orow - ring, r0), min(orow + ring, r1) + 1):
            edge = row == orow - ring or row == orow + ring
            column = max(oc - ring, c0)
            while column <= min(oc + ring, c1):
                c = row * columns + column
                if start[c + 1] > start[c]:
                    bx = x0 + column * cell - ox
                    by = y0 + row * cell - oy
                    if not _hidden(bx, by, bx + cell, by + cell, phase, step, n, farthest):
                        _cell(segments, segment_labels, start, items, c, ox, oy, reach,
                              directions, phase, step, seen, nearest, labels, cosines, dirty)
                        for block in range(blocks):
                            if dirty[block]:
                                dirty[block] = False
                                top = 0.0
                                for beam in range(block * _BLOCK,
                                                  min(n, (block + 1) * _BLOCK)):
                                    top = max(top, nearest[beam])
                                farthest[block] = top
                if edge or column >= oc + ring:
                    column += 1
                else:
                    column = oc + ring


@kernel
def _cars(frames: np.ndarray, origin: np.ndarray, directions: np.ndarray, phase: float,
          step: float, max_distance: float, nearest: np.ndarray, labels: np.ndarray,
          cosines: np.ndarray) -> None:
    """The other cars' boxes (``boxes.box_frames`` rows) along the level beams: a level box
    the plane cuts is its footprint rectangle (four segments, labelled CAR, the cosine
    against the face's axis, as ``boxes.cast_boxes`` gives); a tilted one is cast as
    ``cast_boxes`` does. ``directions`` are the float64 rays the box caster takes."""
    n = directions.shape[0]
    tilted = 0
    for b in range(frames.shape[0]):
        if frames[b, 9] != 0.0 or frames[b, 10] != 0.0:
            tilted += 1
            continue
        offset = origin[2] - frames[b, 2]
        half = frames[b, 14]
        if offset < -half or offset > half:  # the slab test's miss along the box's z axis
            continue
        cx, cy = frames[b, 0] - origin[0], frames[b, 1] - origin[1]
        ux, uy = frames[b, 3] * frames[b, 12], frames[b, 4] * frames[b, 12]
        vx, vy = frames[b, 6] * frames[b, 13], frames[b, 7] * frames[b, 13]
        corners = np.empty((4, 2))
        dirty = np.zeros((n + _BLOCK - 1) // _BLOCK, np.bool_)
        for k in range(4):  # counter-clockwise in the box's frame
            su = 1.0 if k == 1 or k == 2 else -1.0
            sv = 1.0 if k >= 2 else -1.0
            corners[k, 0] = cx + su * ux + sv * vx
            corners[k, 1] = cy + su * uy + sv * vy
        for k in range(4):
            j = (k + 1) % 4
            axis = 3 if k % 2 == 1 else 6  # edges 1-2, 3-0 face along x; 0-1, 2-3 along y
            _segment(corners[k, 0], corners[k, 1], corners[j, 0], corners[j, 1],
                     frames[b, axis], frames[b, axis + 1], _CAR, directions, phase, step,
                     nearest, labels, cosines, EPSILON, np.inf, dirty)
    for beam in range(n):
        if nearest[beam] > max_distance:
            nearest[beam] = np.inf
            labels[beam] = _NONE
            cosines[beam] = 0.0
    if tilted == 0:
        return
    others = np.empty((tilted, frames.shape[1]))
    k = 0
    for b in range(frames.shape[0]):
        if frames[b, 9] != 0.0 or frames[b, 10] != 0.0:
            others[k] = frames[b]
            k += 1
    rays = np.zeros(3 * n)
    for beam in range(n):
        rays[3 * beam] = directions[beam, 0]
        rays[3 * beam + 1] = directions[beam, 1]
    distance = np.empty(n, np.float32)
    label = np.empty(n, np.uint8)
    cosine = np.empty(n, np.float32)
    cast_boxes(others, origin.copy(), rays, max_distance, distance, label, cosine)
    for beam in range(n):
        if distance[beam] < nearest[beam]:
            nearest[beam] = distance[beam]
            labels[beam] = label[beam]
            cosines[beam] = cosine[beam]


@kernel
def _hits(segments: np.ndarray, segment_labels: np.ndarray,
          grid: np.ndarray, start: np.ndarray, items: np.ndarray, pose: np.ndarray,
          mount: np.ndarray, local: np.ndarray, step: float, max_distance: float,
          frames: np.ndarray, distance: np.ndarray, label: np.ndarray, cosine: np.ndarray,
          box_distance: np.ndarray, box_cosine: np.ndarray) -> bool:
    """One level sensor's hits: on the track (``distance`` float32, inf beyond
    ``max_distance``, ``label``, ``cosine`` float32) and on the boxes ``frames``
    (``box_distance`` float32, inf for none, ``box_cosine``). False, with nothing written,
    if its beams are not level (the 3D caster's then)."""
    n = distance.shape[0]
    origin, rotation = _sensor_frame(pose, mount)
    r00, r01, r02 = rotation[0, 0], rotation[0, 1], rotation[0, 2]
    r10, r11, r12 = rotation[1, 0], rotation[1, 1], rotation[1, 2]
    r20, r21, r22 = rotation[2, 0], rotation[2, 1], rotation[2, 2]
    lx, ly, lz = local[0], local[1], local[2]
    rays = np.empty((n, 2))  # what Embree gets: float32, steadied
    exact = np.empty((n, 2))  # what the box caster gets
    for i in range(n):
        x, y, z = lx[i], ly[i], lz[i]
        if _steady(np.float32(x * r20 + y * r21 + z * r22)) != _ZERO32:
            return False
        exact[i, 0] = x * r00 + y * r01 + z * r02
        exact[i, 1] = x * r10 + y * r11 + z * r12
        rays[i, 0] = _steady(np.float32(exact[i, 0]))
        rays[i, 1] = _steady(np.float32(exact[i, 1]))
    if n == 0:
        return True
    mirrored = r00 * r11 - r01 * r10 < 0.0
    turn = -step if mirrored else step
    far = np.float32(min(max_distance, 3.0e38))
    nearest = np.full(n, np.inf)
    labels = np.full(n, _NONE, np.uint8)
    cosines = np.zeros(n)
    ox, oy = float(np.float32(origin[0])), float(np.float32(origin[1]))
    _track(segments, segment_labels, grid, start, items, ox, oy, float(far), rays,
           math.atan2(rays[0, 1], rays[0, 0]), turn, nearest, labels, cosines)
    for i in range(n):
        value = np.float32(nearest[i])
        hit = value <= far
        distance[i] = value if hit else _INF32
        label[i] = labels[i] if hit else _NONE
        cosine[i] = np.float32(cosines[i]) if hit else _ZERO32
    if frames.shape[0] > 0:
        nearest[:] = np.inf
        labels[:] = _NONE
        cosines[:] = 0.0
        _cars(frames, origin, exact, math.atan2(exact[0, 1], exact[0, 0]), turn,
              max_distance, nearest, labels, cosines)
        for i in range(n):
            box_distance[i] = np.float32(nearest[i])
            box_cosine[i] = np.float32(cosines[i])
    else:
        for i in range(n):
            box_distance[i] = _INF32
    return True


@kernel
def scan(segments: np.ndarray, segment_labels: np.ndarray,
         grid: np.ndarray, start: np.ndarray, items: np.ndarray, rows: np.ndarray,
         poses: np.ndarray, mounts: np.ndarray, local: np.ndarray, steps: np.ndarray,
         settings: np.ndarray, noise: np.ndarray, draws: np.ndarray, gain: np.ndarray,
         frames: np.ndarray, frames_from: np.ndarray, ranges: np.ndarray,
         intensity: np.ndarray, done: np.ndarray) -> None:
    """The scans of sensors ``rows`` on one slice, as ``embree``'s ``scan_many`` lays them
    out: row i of ``poses``, ``mounts``, ``local`` (n, 3, beams padded), ``steps`` (the angle
    between beams in the sensor frame), ``settings`` (max_distance, range_min, range_max,
    noise_std, dropout), ``ranges`` and ``intensity`` is sensor i's; ``noise``, ``draws`` and
    ``intensity`` are (n, beams), or (1, 0) where no sensor has any. The boxes sensor i sees
    are ``frames[frames_from[i]:frames_from[i + 1]]``. The hits become measurements in the
    3D kernel's arithmetic: the box hit where strictly nearer, the noise, the intensity
    before the range limits, the limits, the dropout. ``done[i]`` is set to whether sensor
    i was level (else its rows are left for the 3D caster)."""
    beams = ranges.shape[1]
    shining = intensity.shape[1] > 0
    noisy = noise.shape[1] > 0
    dropping = draws.shape[1] > 0
    distance = np.empty(beams, np.float32)
    label = np.empty(beams, np.uint8)
    cosine = np.empty(beams, np.float32)
    box_distance = np.empty(beams, np.float32)
    box_cosine = np.empty(beams, np.float32)
    car_gain = gain[_CAR]
    for i in rows:
        settled = _hits(segments, segment_labels, grid, start, items, poses[i],
                        mounts[i], local[i], steps[i], settings[i, 0],
                        frames[frames_from[i]:frames_from[i + 1]], distance, label, cosine,
                        box_distance, box_cosine)
        done[i] = settled
        if not settled:
            continue
        range_min, range_max = np.float32(settings[i, 1]), np.float32(settings[i, 2])
        noise_std, dropout = np.float32(settings[i, 3]), np.float32(settings[i, 4])
        shocks = noise[min(i, noise.shape[0] - 1)]
        chances = draws[min(i, draws.shape[0] - 1)]
        out = ranges[i]
        shine = intensity[min(i, intensity.shape[0] - 1)]
        for k in range(beams):
            value = distance[k]
            strength = gain[label[k]]
            incidence = cosine[k]
            if box_distance[k] < value:  # scene.nearer
                value = box_distance[k]
                incidence = box_cosine[k]
                strength = car_gain
            if noisy:
                value = value + shocks[k] * noise_std
            if shining:  # before the range limits change the value
                clamped = max(value, _ONE32)
                shine[k] = strength * incidence / (clamped * clamped)
            if value > range_max:
                value = _INF32
            if value < range_min:
                value = -_INF32
            out[k] = value
            if dropping and chances[k] < dropout:
                out[k] = _NAN32
                if shining:
                    shine[k] = _ZERO32


@kernel
def sensor_hits(segments: np.ndarray, segment_labels: np.ndarray,
                grid: np.ndarray, start: np.ndarray, items: np.ndarray, pose: np.ndarray,
                mount: np.ndarray, local: np.ndarray, step: float, max_distance: float,
                frames: np.ndarray, distance: np.ndarray, label: np.ndarray,
                cosine: np.ndarray) -> bool:
    """What a level sensor's beams hit, before the range model: the track or the nearer
    box (``scene.nearer``), as ``World.cast`` gives it; False if its beams are not level."""
    n = distance.shape[0]
    box_distance = np.empty(n, np.float32)
    box_cosine = np.empty(n, np.float32)
    if not _hits(segments, segment_labels, grid, start, items, pose, mount, local,
                 step, max_distance, frames, distance, label, cosine, box_distance,
                 box_cosine):
        return False
    for k in range(n):
        if box_distance[k] < distance[k]:
            distance[k] = box_distance[k]
            label[k] = _CAR
            cosine[k] = box_cosine[k]
    return True
