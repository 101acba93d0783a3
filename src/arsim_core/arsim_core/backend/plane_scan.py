"""A level 2D LiDAR's exact fast path: the world sliced at the scanner's height, then
rasterised into its beams.

A 2D scanner whose beams are horizontal (neither the car nor the mount tilted) sees only the
slice of the world at its height: the line segments where the track's triangles cross that
plane. ``slice_mesh`` cuts them once per height and files them in a grid of cells; a scan
(``rasterise``) takes the cells nearest first, skips a cell whose beams all end before it,
and tests each segment against the few beams its angle spans, so it does no 3D traversal and
touches about as many segments as the scan has beams. A beam's range is then the exact 2D
intersection of its ray (the same float32 direction Embree is given) with the segment, which
lies on the triangle: the 3D caster's range to within a few micrometres.

Where a triangle edge crosses the plane the cut point is computed from the edge's two vertices
in one order (by their coordinates), so the two triangles that share the edge end their
segments at the very same point, even where the mesh repeats the vertex, and no beam slips
between them, as Embree's watertight mode ensures in 3D. The two halves of a flat quad (one
wall panel) are joined into one segment (``_join_halves``): half as many segments to visit,
at most a few nanometres off the halves.

Many of the segments a scan reaches cannot be the first thing a beam meets: where the
slice's segments form simple closed loops (``_loops``: each point of a loop begins one segment
and ends one, with the normal on each segment's right), a beam's first crossing of a loop
leaves the side of the loop that the scanner is on. So it meets a segment facing the scanner
if the scanner is on the side the loop's normals point to, and a segment facing away
otherwise, whichever way the mesh's normals point (a track's barriers are often seen from
behind). A scan finds the scanner's side of every loop from its winding number (``_winding``)
and skips each loop's segments that face the other way: the ranges, labels and cosines of a
scan that tests every segment. This holds for a surface seen from both sides too (a
zero-thickness barrier, whose second copy the ``Layer`` drops): a loop's first crossing is the
only one a beam can meet first. Segments that are on no simple loop (a T-junction, a free
panel) are always tested.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from arsim_core._jit import inline_kernel, kernel
from arsim_core.labels import CAR, NONE

TWO_PI = 2.0 * math.pi
BLOCK = 32  # beams per block of ``rasterise``'s block maxima
# How far a beam's heading may be from where ``rasterise`` expects it [rad]: ``_atan2``'s error
# (1.7e-6) and the float32 rounding of the beam's direction (6e-8), twice over. The beams a
# segment spans are widened by it, so rounding never drops a beam the exact test would hit.
HEADING_ERROR = 4e-6
RINGS = 256  # distance classes ``rasterise`` takes the cells in, nearest first
# Segments per cell the grid aims at: more visit segments behind others, fewer visit cells.
SEGMENTS_PER_CELL = 24


@dataclass(frozen=True, eq=False)
class PlaneSlice:
    """The world at one height: segments (x0, y0, x1, y1) grouped by grid cell, each with its
    triangle (for the label) and the horizontal part of that triangle's unit normal (for the
    incidence cosine of a horizontal ray); ``cells`` bound each cell's segments (x_min, y_min,
    x_max, y_max), whose segments are ``starts[c]:starts[c + 1]``. ``loops`` is each
    segment's simple closed loop (-1: none), ``sides`` the way it runs round it (1: from its
    first point to its second the normal is on its right, -1: the other way round), and
    ``front`` each loop's winding number on the side its normals point to (0 for a loop that
    runs counter-clockwise so, -1 for one that runs clockwise)."""

    height: float
    segments: np.ndarray
    normals: np.ndarray
    triangles: np.ndarray
    cells: np.ndarray
    starts: np.ndarray
    loops: np.ndarray
    sides: np.ndarray
    front: np.ndarray

    def arrays(self) -> tuple[np.ndarray, ...]:
        """What ``rasterise`` takes as its ``plane``."""
        return (self.segments, self.normals, self.triangles, self.cells, self.starts,
                self.loops, self.sides, self.front)


def slice_mesh(vertices: np.ndarray, triangles: np.ndarray, height: float,
               labels: np.ndarray | None = None) -> PlaneSlice:
    """The slice of the mesh (float32 vertices, as the 3D caster has them) at ``height``.
    Triangles in the plane, or touching it at a point, give nothing: a horizontal ray meets
    them edge on. ``labels`` (one per triangle) keeps halves of different labels apart."""
    corners = np.asarray(vertices, np.float32).astype(np.float64)
    index = np.asarray(triangles, np.int64).reshape(-1, 3)
    points, count = _cut_points(corners, index, float(height))
    kept = np.flatnonzero(count == 2)
    segments = np.concatenate([points[kept, 0], points[kept, 1]], axis=1)
    normals = _horizontal_normals(corners[index[kept]])
    triangle = kept.astype(np.int32)
    moves = (segments[:, 0] != segments[:, 2]) | (segments[:, 1] != segments[:, 3])
    segments, normals, triangle = segments[moves], normals[moves], triangle[moves]
    label = np.zeros(len(triangle), np.int64) if labels is None \
        else np.asarray(labels, np.int64)[triangle]
    segments, normals, triangle = _join_halves(segments, normals, triangle, label)
    return _gridded(float(height), segments, normals, triangle, *_loops(segments, normals))


def _cut_points(corners: np.ndarray, index: np.ndarray,
                height: float) -> tuple[np.ndarray, np.ndarray]:
    """Per triangle, up to three points where it meets the plane (edges crossing it, then
    vertices on it), and how many."""
    points = np.zeros((len(index), 3, 2))
    count = np.zeros(len(index), np.int64)
    z = corners[index][:, :, 2]
    for a, b in ((0, 1), (1, 2), (2, 0)):
        first, second = corners[index[:, a]], corners[index[:, b]]
        ordered = _lexicographic_before(first, second)[:, None]
        start, end = np.where(ordered, first, second), np.where(ordered, second, first)
        crossing = np.flatnonzero(((z[:, a] < height) & (z[:, b] > height))
                                  | ((z[:, a] > height) & (z[:, b] < height)))
        s, e = start[crossing], end[crossing]
        share = (height - s[:, 2]) / (e[:, 2] - s[:, 2])
        _append(points, count, crossing, s[:, :2] + share[:, None] * (e[:, :2] - s[:, :2]))
    for v in range(3):
        on = np.flatnonzero(z[:, v] == height)
        _append(points, count, on, corners[index[on, v], :2])
    return points, count


def _lexicographic_before(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Whether each point (row) of ``p`` comes before, or is, its point of ``q``, ordered by
    their first coordinate, then the next."""
    before = np.ones(len(p), bool)
    for axis in reversed(range(p.shape[1])):
        before = (p[:, axis] < q[:, axis]) | ((p[:, axis] == q[:, axis]) & before)
    return before


def _append(points: np.ndarray, count: np.ndarray, rows: np.ndarray,
            values: np.ndarray) -> None:
    points[rows, np.minimum(count[rows], 2)] = values
    count[rows] += 1


def _horizontal_normals(corners: np.ndarray) -> np.ndarray:
    """The x and y of each triangle's unit normal: |cos| of incidence for a horizontal ray."""
    normal = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    length = np.linalg.norm(normal, axis=1, keepdims=True)
    return np.ascontiguousarray(np.divide(normal, length, out=np.zeros_like(normal),
                                          where=length > 0)[:, :2])


def _join_halves(segments: np.ndarray, normals: np.ndarray, triangle: np.ndarray,
                 label: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Join two segments that end at one point no other segment ends at, carry one label and
    lie on one line (the point within 1e-9 m of the joined segment): the halves of a wall
    panel, split by its diagonal. Once, so a joined segment strays from its halves by at
    most that."""
    ends = np.concatenate([segments[:, :2], segments[:, 2:]])
    owner = np.concatenate([np.arange(len(segments))] * 2)
    _, key, uses = np.unique(ends, axis=0, return_inverse=True, return_counts=True)
    key = key.reshape(-1)
    shared = np.flatnonzero(uses[key] == 2)
    order = shared[np.argsort(key[shared], kind='stable')]
    first, second = owner[order[0::2]], owner[order[1::2]]
    mid = ends[order[0::2]]
    far_first = np.where((segments[first, :2] == mid).all(axis=1)[:, None],
                         segments[first, 2:], segments[first, :2])
    far_second = np.where((segments[second, :2] == mid).all(axis=1)[:, None],
                          segments[second, 2:], segments[second, :2])
    span = far_second - far_first
    offset = mid - far_first
    length = np.hypot(span[:, 0], span[:, 1])
    off_line = np.abs(span[:, 0] * offset[:, 1] - span[:, 1] * offset[:, 0]) \
        <= 1e-9 * np.maximum(length, 1e-300)
    along = np.einsum('ij,ij->i', offset, span)
    between = (along > 0.0) & (along < length * length)
    joinable = (first != second) & (label[first] == label[second]) & off_line & between
    taken = np.zeros(len(segments), bool)
    keep = np.ones(len(segments), bool)
    for pair in np.flatnonzero(joinable):  # each segment joins at most once
        a, b = first[pair], second[pair]
        if taken[a] or taken[b]:
            continue
        taken[a] = taken[b] = True
        segments[a] = (*far_first[pair], *far_second[pair])
        keep[b] = False
    return segments[keep], normals[keep], triangle[keep]


def _loops(segments: np.ndarray,
           normals: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``PlaneSlice.loops``, ``sides`` and ``front``: the simple closed loops the segments
    make when each runs with its normal on its right. Points meet only where they are equal
    (the slice cuts a shared edge at one point); a connected set of segments is a loop when
    each of its points begins exactly one of them and ends exactly one, and each has a
    normal."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    count = len(segments)
    if not count:
        return np.zeros(0, np.int32), np.zeros(0, np.int8), np.zeros(0, np.int8)
    run = segments[:, 2:] - segments[:, :2]
    forward = run[:, 1] * normals[:, 0] - run[:, 0] * normals[:, 1] >= 0.0  # normal on right
    begins = np.where(forward[:, None], segments[:, :2], segments[:, 2:])
    ends = np.where(forward[:, None], segments[:, 2:], segments[:, :2])
    _, point = np.unique(np.concatenate([begins, ends]), axis=0, return_inverse=True)
    point = point.reshape(-1)
    points = int(point.max()) + 1
    first, last = point[:count], point[count:]
    simple = (np.bincount(first, minlength=points) == 1) \
        & (np.bincount(last, minlength=points) == 1)
    _, component = connected_components(
        coo_matrix((np.ones(count), (first, last)), shape=(points, points)), directed=False)
    is_loop = np.ones(int(component.max()) + 1, bool)
    np.logical_and.at(is_loop, component, simple)
    # a segment of a degenerate triangle has no normal, so no side to face: not on a loop
    np.logical_and.at(is_loop, component[first], normals.any(axis=1))
    on_loop = is_loop[component[first]]
    numbers = np.cumsum(is_loop) - 1  # loops numbered in component order
    loops = np.where(on_loop, numbers[component[first]], -1).astype(np.int32)
    twice_area = np.bincount(loops[on_loop], weights=(begins[:, 0] * ends[:, 1] - ends[:, 0]
                                                      * begins[:, 1])[on_loop],
                             minlength=int(is_loop.sum()))
    front = np.where(twice_area > 0.0, 0, -1).astype(np.int8)
    return loops, np.where(forward, 1, -1).astype(np.int8), front


def _gridded(height: float, segments: np.ndarray, normals: np.ndarray, triangle: np.ndarray,
             loops: np.ndarray, sides: np.ndarray, front: np.ndarray) -> PlaneSlice:
    """The segments filed by the cell of their midpoint, in cells about SEGMENTS_PER_CELL
    segment lengths wide; each cell's bounds cover its segments whole."""
    if not len(segments):
        return PlaneSlice(height, np.zeros((0, 4)), np.zeros((0, 2)), np.zeros(0, np.int32),
                          np.zeros((0, 4)), np.zeros(1, np.int64), loops, sides, front)
    lengths = np.hypot(segments[:, 2] - segments[:, 0], segments[:, 3] - segments[:, 1])
    cell = max(float(np.median(lengths)) * SEGMENTS_PER_CELL, 1e-3)
    middle = (segments[:, :2] + segments[:, 2:]) / 2.0
    grid = np.floor((middle - middle.min(axis=0)) / cell).astype(np.int64)
    key = grid[:, 0] * (int(grid[:, 1].max()) + 1) + grid[:, 1]
    order = np.argsort(key, kind='stable')
    _, first = np.unique(key[order], return_index=True)
    starts = np.append(first, len(order)).astype(np.int64)
    segments = np.ascontiguousarray(segments[order])
    low = np.minimum(segments[:, :2], segments[:, 2:])
    high = np.maximum(segments[:, :2], segments[:, 2:])
    cells = np.column_stack([np.minimum.reduceat(low, first), np.maximum.reduceat(high, first)])
    return PlaneSlice(height, segments, np.ascontiguousarray(normals[order]),
                      np.ascontiguousarray(triangle[order]), np.ascontiguousarray(cells),
                      starts, np.ascontiguousarray(loops[order]),
                      np.ascontiguousarray(sides[order]), front)


@inline_kernel
def _atan2(y: float, x: float) -> float:
    """atan2 within 1.7e-6 rad, without a library call: it only picks candidate beams."""
    ax, ay = abs(x), abs(y)
    big, small = max(ax, ay), min(ax, ay)
    if big == 0.0:
        return 0.0
    a = small / big
    s = a * a
    r = ((((-0.0117212 * s + 0.05265332) * s - 0.11643287) * s + 0.19354346) * s
         - 0.33262347) * s * a + 0.99997726 * a
    if ay > ax:
        r = 0.5 * math.pi - r
    if x < 0.0:
        r = math.pi - r
    return -r if y < 0.0 else r


@inline_kernel
def _beam_span(start: float, end: float, theta0: float, step: float,
               per_radian: float) -> tuple[float, float]:
    """The arc counter-clockwise from angle ``start`` to ``end`` as beam coordinates: beam i
    of a scan whose beam 0 points at ``theta0`` and which turns by ``step`` per beam lies at
    i (modulo a turn, ``TWO_PI * per_radian`` beams, ``per_radian`` being 1 / |step|); its
    first and last coordinate."""
    width = end - start
    if width < 0.0:
        width += TWO_PI
    first = start if step > 0.0 else end
    u = (first - theta0) * (1.0 if step > 0.0 else -1.0)
    if u < 0.0:
        u += TWO_PI
    if u >= TWO_PI:
        u -= TWO_PI
    return u * per_radian, (u + width) * per_radian


@inline_kernel
def _any_open(low: int, high: int, first: int, last: int, block_max: np.ndarray,
              distance: float) -> bool:
    """Whether a beam of ``low``..``high`` (clipped to the window ``first``..``last - 1``)
    may still end beyond ``distance``, by its block's maximum."""
    low, high = max(low, first), min(high, last - 1)
    if low > high:
        return False
    for block in range((low - first) // BLOCK, (high - first) // BLOCK + 1):
        if block_max[block] > distance:
            return True
    return False


@inline_kernel
def _hit(low: int, high: int, first: int, last: int, x0: float, y0: float, ex: float,
         ey: float, dx: np.ndarray, dy: np.ndarray, depth: np.ndarray, triangle: np.ndarray,
         cosine: np.ndarray, which: int, nx: float, ny: float) -> None:
    """Intersect beams ``low``..``high`` (clipped to the window) with the segment from
    (x0, y0) along (ex, ey), relative to the scanner; keep the nearer hits. No division
    but for a hit: u = un / den in [0, 1], t = tn / den in (0, depth)."""
    for i in range(max(low, first), min(high, last - 1) + 1):
        k = i - first
        bx, by = dx[k], dy[k]
        den = bx * ey - by * ex
        tn = x0 * ey - y0 * ex
        un = x0 * by - y0 * bx
        if den < 0.0:
            den, tn, un = -den, -tn, -un
        if den > 0.0 and 0.0 <= un <= den and 0.0 < tn < depth[k] * den:
            depth[k] = tn / den
            triangle[k] = which
            cosine[k] = abs(nx * bx + ny * by)


@inline_kernel
def _silhouette(x0: float, y0: float, x1: float, y1: float) -> tuple[float, float]:
    """The angles from the origin, outside the box, to the box's two silhouette corners,
    counter-clockwise."""
    if x0 > 0.0:
        if y0 > 0.0:
            return _atan2(y0, x1), _atan2(y1, x0)
        if y1 < 0.0:
            return _atan2(y0, x0), _atan2(y1, x1)
        return _atan2(y0, x0), _atan2(y1, x0)
    if x1 < 0.0:
        if y0 > 0.0:
            return _atan2(y1, x1), _atan2(y0, x0)
        if y1 < 0.0:
            return _atan2(y1, x0), _atan2(y0, x1)
        return _atan2(y1, x1), _atan2(y0, x1)
    if y0 > 0.0:
        return _atan2(y0, x1), _atan2(y0, x0)
    return _atan2(y1, x0), _atan2(y1, x1)


@inline_kernel
def _nearest_first(cells: np.ndarray, ox: float, oy: float,
                   far: float) -> tuple[np.ndarray, np.ndarray, float]:
    """The cells within ``far`` of (ox, oy) by distance class (RINGS of them, a counting
    sort: within a class, in no order of distance), every cell's distance, and the width of a
    class."""
    total = cells.shape[0]
    reach = np.empty(total)
    farthest = 0.0
    for c in range(total):
        gx = max(cells[c, 0] - ox, 0.0, ox - cells[c, 2])
        gy = max(cells[c, 1] - oy, 0.0, oy - cells[c, 3])
        reach[c] = math.sqrt(gx * gx + gy * gy)
        if reach[c] < far:
            farthest = max(farthest, reach[c])
    scale = (RINGS - 1) / farthest if farthest > 0.0 else 0.0
    starts = np.zeros(RINGS + 1, np.int64)
    for c in range(total):
        if reach[c] < far:
            starts[int(reach[c] * scale) + 1] += 1
    for ring in range(RINGS):
        starts[ring + 1] += starts[ring]
    order = np.empty(starts[RINGS], np.int64)
    for c in range(total):
        if reach[c] < far:
            ring = int(reach[c] * scale)
            order[starts[ring]] = c
            starts[ring] += 1
    return order, reach, farthest / (RINGS - 1)


@inline_kernel
def beam_turn(x0: float, y0: float, x1: float, y1: float,
              beams: int) -> tuple[float, float]:
    """The heading of beam 0, along (x0, y0), and the turn from it to beam 1, along (x1, y1)
    (a whole turn for a scan of one beam): a scan's ``theta0`` and ``step``."""
    theta0 = math.atan2(y0, x0)
    if beams < 2:
        return theta0, TWO_PI
    return theta0, math.atan2(x0 * y1 - y0 * x1, x0 * x1 + y0 * y1)


@inline_kernel
def _fan(theta0: float, step: float, beams: int, first: int,
         count: int) -> tuple[float, float, float, float, float, int, int, int]:
    """What ``_cut`` needs of a scan of ``beams`` beams, beam i pointing at about ``theta0 +
    i * step``, cut into beams ``first`` to ``first + count - 1`` (the window): the heading
    of beam 0, the turn per beam, beams per radian, beams per turn, the heading error in
    beams, the turns the scan covers (it may go round more than once), and the window."""
    per_radian = 1.0 / abs(step)
    period = TWO_PI * per_radian
    return (theta0, step, per_radian, period, HEADING_ERROR * per_radian,
            int(beams / period) + 1, first, first + count)


@inline_kernel
def _cut(x0: float, y0: float, x1: float, y1: float, which: int, nx: float, ny: float,
         fan: tuple[float, float, float, float, float, int, int, int], dx: np.ndarray,
         dy: np.ndarray, depth: np.ndarray, triangle: np.ndarray,
         cosine: np.ndarray) -> tuple[int, int]:
    """The segment from (x0, y0) to (x1, y1), relative to the scanner, into the window's
    beams its angle spans (``_hit``); the first and last beam it was tested against."""
    theta0, step, per_radian, period, slack, turns, first, last = fan
    if x0 * y1 - y0 * x1 < 0.0:  # counter-clockwise from (x0, y0)
        x0, y0, x1, y1 = x1, y1, x0, y0
    low, high = _beam_span(_atan2(y0, x0), _atan2(y1, x1), theta0, step, per_radian)
    touched_low, touched_high = last, first - 1
    for turn in range(-1, turns):
        shift = turn * period
        a = math.ceil(low + shift - slack)
        b = math.floor(high + shift + slack)
        if b < first or a >= last:
            continue
        _hit(a, b, first, last, x0, y0, x1 - x0, y1 - y0, dx, dy, depth, triangle, cosine,
             which, nx, ny)
        touched_low = min(touched_low, max(a, first))
        touched_high = max(touched_high, min(b, last - 1))
    return touched_low, touched_high


@inline_kernel
def _winding(segments: np.ndarray, cells: np.ndarray, starts: np.ndarray, loops: np.ndarray,
             sides: np.ndarray, ox: float, oy: float, winding: np.ndarray) -> None:
    """How many times each loop winds round (ox, oy), into ``winding``: the signed
    crossings of the ray towards +x (upward +1), a point counted on the side above it."""
    winding[:] = 0
    for c in range(cells.shape[0]):
        if cells[c, 1] > oy or cells[c, 3] < oy or cells[c, 2] <= ox:
            continue
        for s in range(starts[c], starts[c + 1]):
            loop = loops[s]
            if loop < 0:
                continue
            ax, ay, bx, by = segments[s, 0], segments[s, 1], segments[s, 2], segments[s, 3]
            if sides[s] < 0:
                ax, ay, bx, by = bx, by, ax, ay
            if ay <= oy < by:
                step = 1
            elif by <= oy < ay:
                step = -1
            else:
                continue
            if ax + (oy - ay) * (bx - ax) / (by - ay) > ox:
                winding[loop] += step


@kernel
def rasterise(plane: tuple[np.ndarray, ...],
              ox: float, oy: float, theta0: float, step: float, beams: int, first: int,
              dx: np.ndarray, dy: np.ndarray, far: float, depth: np.ndarray,
              triangle: np.ndarray, cosine: np.ndarray) -> None:
    """The hits of beams ``first``..``first + len(dx) - 1`` of a scan of ``beams`` beams
    from (ox, oy), beam i pointing at about ``theta0 + i * step`` exactly along (dx, dy)
    (window-relative, float64 of the float32 directions): ``depth`` (``far`` for none),
    ``triangle`` (-1 for none) and ``cosine`` (0 for none), window-relative.

    Cells are taken nearest first. A cell whose beams (those its bounds span, by their
    blocks' maxima) all end nearer than the cell is skipped, and the scan ends at the first
    cell whose distance class lies beyond every beam's range (cells of one class come in no
    order of distance, so the class, not the cell, must be beyond). A loop's segments that
    face the other way than its first crossing must are skipped (see the module's
    docstring)."""
    segments, normals, triangles, cells, starts, loops, sides, front = plane
    count = dx.shape[0]
    fan = _fan(theta0, step, beams, first, count)
    _, _, per_radian, period, slack, turns, _, last = fan
    for k in range(count):
        depth[k] = far
        triangle[k] = -1
        cosine[k] = 0.0
    blocks = (count + BLOCK - 1) // BLOCK
    block_max = np.full(blocks, far)
    order, reach, ring_width = _nearest_first(cells, ox, oy, far)
    winding = np.empty(front.shape[0], np.int64)
    _winding(segments, cells, starts, loops, sides, ox, oy, winding)
    # every cell after this one is at least this far (its class's near edge, less a class for
    # the rounding of the classes): the scan ends once that is beyond every beam's range
    reach_slack = 2.0 * ring_width
    bound = far  # the longest range of any beam, taken after each cell that changed one
    for c in order:
        gap = reach[c]
        if gap - reach_slack >= bound:
            break
        if gap > 0.0:  # outside the cell: the beams its silhouette spans
            start, end = _silhouette(cells[c, 0] - ox, cells[c, 1] - oy, cells[c, 2] - ox,
                                     cells[c, 3] - oy)
            low, high = _beam_span(start, end, theta0, step, per_radian)
            seen = False
            for turn in range(-1, turns):
                shift = turn * period
                if _any_open(math.ceil(low + shift - slack), math.floor(high + shift + slack),
                             first, last, block_max, gap):
                    seen = True
                    break
            if not seen:
                continue
        touched_low, touched_high = last, first - 1
        for s in range(starts[c], starts[c + 1]):
            loop = loops[s]
            if loop >= 0 and ((normals[s, 0] * (segments[s, 0] - ox)
                               + normals[s, 1] * (segments[s, 1] - oy) < 0.0)
                              != (winding[loop] == front[loop])):
                continue  # not what a first crossing of its loop meets: hidden
            low_beam, high_beam = _cut(segments[s, 0] - ox, segments[s, 1] - oy,
                                       segments[s, 2] - ox, segments[s, 3] - oy, triangles[s],
                                       normals[s, 0], normals[s, 1], fan, dx, dy, depth,
                                       triangle, cosine)
            touched_low = min(touched_low, low_beam)
            touched_high = max(touched_high, high_beam)
        if touched_low > touched_high:
            continue
        for block in range((touched_low - first) // BLOCK, (touched_high - first) // BLOCK + 1):
            top = 0.0
            for k in range(block * BLOCK, min(count, (block + 1) * BLOCK)):
                top = max(top, depth[k])
            block_max[block] = top
        bound = 0.0
        for block in range(blocks):
            bound = max(bound, block_max[block])


@kernel
def rasterise_boxes(frames: np.ndarray, skip: int, origin: np.ndarray,
                    directions: np.ndarray, far: float, distance: np.ndarray,
                    label: np.ndarray, cosine: np.ndarray) -> bool:
    """``boxes.cast_boxes`` for the horizontal, evenly turned rays (n, 3) of a level 2D
    scanner from ``origin``: each box (``boxes.box_frames``) but ``skip`` that reaches the
    rays' height, and may be within ``far``, is cut there to its outline, whose sides that
    face the scanner (all four from inside the outline) are rasterised into the beams as
    ``rasterise`` does segments; the hits are written as ``cast_boxes`` writes them.
    False, with nothing written, if a box is tilted: its outline is no rectangle."""
    n = directions.shape[0]
    for b in range(frames.shape[0]):
        if b != skip and (abs(frames[b, 9]) > 1e-12 or abs(frames[b, 10]) > 1e-12):
            return False
    ox, oy, oz = origin[0], origin[1], origin[2]
    dx, dy = directions[:, 0], directions[:, 1]
    second = min(1, n - 1)
    theta0, step = beam_turn(dx[0], dy[0], dx[second], dy[second], n)
    fan = _fan(theta0, step, n, 0, n)
    depth = np.full(n, far)
    box = np.full(n, -1, np.int32)
    incidence = np.zeros(n)
    for b in range(frames.shape[0]):
        half_height = frames[b, 14]
        if b == skip or abs(oz - frames[b, 2]) > half_height:
            continue
        cx, cy = frames[b, 0] - ox, frames[b, 1] - oy
        if math.sqrt(cx * cx + cy * cy) - frames[b, 15] > far:  # out of every beam's reach
            continue
        # where the scanner is along the box's axes: from outside, a beam enters the box
        # through a side that faces the scanner, so only those can be its first hit
        along_x = -(cx * frames[b, 3] + cy * frames[b, 4])
        along_y = -(cx * frames[b, 6] + cy * frames[b, 7])
        facing = (along_x > frames[b, 12], along_y > frames[b, 13],
                  along_x < -frames[b, 12], along_y < -frames[b, 13])
        outside = facing[0] or facing[1] or facing[2] or facing[3]
        ax, ay = frames[b, 3] * frames[b, 12], frames[b, 4] * frames[b, 12]
        bx, by = frames[b, 6] * frames[b, 13], frames[b, 7] * frames[b, 13]
        for side in range(4):  # +x, +y, -x, -y: the corners counter-clockwise
            if outside and not facing[side]:
                continue
            sign = 1.0 if side < 2 else -1.0
            if side % 2 == 0:  # along the box's y axis, facing its x axis
                px, py, qx, qy = ax, ay, bx, by
                nx, ny = frames[b, 3], frames[b, 4]
            else:
                px, py, qx, qy = bx, by, -ax, -ay
                nx, ny = frames[b, 6], frames[b, 7]
            x0, y0 = cx + sign * (px - qx), cy + sign * (py - qy)
            x1, y1 = cx + sign * (px + qx), cy + sign * (py + qy)
            _cut(x0, y0, x1, y1, b, nx, ny, fan, dx, dy, depth, box, incidence)
    for k in range(n):
        hit = box[k] >= 0
        distance[k] = depth[k] if hit else np.inf
        label[k] = CAR if hit else NONE
        cosine[k] = incidence[k] if hit else 0.0
    return True


@kernel
def rasterise_boxes_rows(frames: np.ndarray, skips: np.ndarray, rows: np.ndarray,
                         origins: np.ndarray, directions: np.ndarray, far: np.ndarray,
                         distance: np.ndarray, label: np.ndarray, cosine: np.ndarray,
                         done: np.ndarray) -> None:
    """``rasterise_boxes`` of several level scanners among the same boxes, in one call: for
    each of ``rows``, row r of ``skips``, ``origins`` (n, 3), ``directions`` (n, beams, 3),
    ``far`` and the hit arrays (n, beams); ``done[r]`` is what it returned (False: a box
    but its own is tilted, nothing written)."""
    for r in rows:
        done[r] = rasterise_boxes(frames, skips[r], origins[r], directions[r], far[r],
                                  distance[r], label[r], cosine[r])
