"""Plane geometry on closed polylines (centerlines) and open or closed wall polylines.

Closed centerlines never repeat their first point; wall polylines do, which is how a wall says
it is closed. Everything is vectorised numpy so that full-scale tracks with thousands of points
stay fast.
"""

from __future__ import annotations

import numpy as np


def segments_closed(points: np.ndarray) -> np.ndarray:
    """Segment vectors (N, 2) of a closed polyline, the last one closing the loop."""
    return np.roll(points, -1, axis=0) - points


def closed_length(points: np.ndarray) -> float:
    """Length of a closed polyline including the closing segment."""
    return float(np.hypot(*segments_closed(points).T).sum())


def arc_length(points: np.ndarray) -> np.ndarray:
    """Cumulative arc length (N,) from the first point of a closed polyline."""
    seg = np.hypot(*segments_closed(points).T)
    return np.concatenate([[0.0], np.cumsum(seg[:-1])])


def tangents(points: np.ndarray) -> np.ndarray:
    """Unit tangents (N, 2) of a closed polyline by central differences.

    Central differences put the tangent of a corner point halfway between its two segments,
    which keeps offset edges symmetric around the centerline.
    """
    d = np.roll(points, -1, axis=0) - np.roll(points, 1, axis=0)
    norm = np.hypot(*d.T)
    norm[norm == 0.0] = 1.0
    return d / norm[:, None]


def headings(points: np.ndarray) -> np.ndarray:
    """Heading angle (N,) of a closed polyline, radians."""
    t = tangents(points)
    return np.arctan2(t[:, 1], t[:, 0])


def left_normals(points: np.ndarray) -> np.ndarray:
    """Unit normals (N, 2) pointing to the left of the direction of travel."""
    t = tangents(points)
    return np.stack([-t[:, 1], t[:, 0]], axis=1)


def offset(points: np.ndarray, distance: np.ndarray | float) -> np.ndarray:
    """Points offset sideways along the left normal (negative distance = to the right)."""
    dist = np.broadcast_to(np.asarray(distance, dtype=float), (points.shape[0],))
    return points + left_normals(points) * dist[:, None]


def curvature(points: np.ndarray) -> np.ndarray:
    """Signed curvature (N,) of a closed polyline by the circle through three neighbours.

    Positive for left turns. The circumscribed-circle formula is exact for points on a circle
    and needs no smoothing, which matters when checking a minimum turn radius.
    """
    a = np.roll(points, 1, axis=0)
    b = points
    c = np.roll(points, -1, axis=0)
    ab = b - a
    bc = c - b
    ca = a - c
    cross = ab[:, 0] * bc[:, 1] - ab[:, 1] * bc[:, 0]
    la = np.hypot(*ab.T)
    lb = np.hypot(*bc.T)
    lc = np.hypot(*ca.T)
    denom = la * lb * lc
    out = np.zeros(points.shape[0])
    ok = denom > 1e-12
    out[ok] = 2.0 * cross[ok] / denom[ok]
    return out


def closed_moving_average(values: np.ndarray, count: int) -> np.ndarray:
    """Each value of a closed loop averaged with its neighbours, ``count`` values in all."""
    n = max(1, int(count))
    kernel = np.ones(n) / n
    padded = np.concatenate([values[-n:], values, values[:n]])
    return np.convolve(padded, kernel, mode='same')[n:-n]


def closed_runs(mask: np.ndarray) -> list[np.ndarray]:
    """Index runs where ``mask`` holds on a closed loop (a run may wrap around the end)."""
    if mask.all():
        return [np.arange(mask.size)]
    if not mask.any():
        return []
    start = int(np.flatnonzero(~mask)[0])
    order = np.roll(np.arange(mask.size), -start)
    rolled = mask[order]
    edges = np.flatnonzero(np.diff(np.concatenate([[0], rolled.astype(int), [0]])))
    return [order[a:b] for a, b in zip(edges[::2], edges[1::2], strict=True)]


def signed_area(points: np.ndarray) -> float:
    """Shoelace area of a closed polyline; positive when counter-clockwise."""
    x, y = points[:, 0], points[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y))


def close_wall(points: np.ndarray) -> np.ndarray:
    """Repeat the first point at the end, the wall convention for a closed polyline."""
    return np.vstack([points, points[:1]])


def is_closed_wall(points: np.ndarray, tol: float = 1e-9) -> bool:
    """True when a wall polyline ends where it starts."""
    return points.shape[0] > 2 and bool(np.hypot(*(points[-1] - points[0])) <= tol)


def periodic_spline(
    points: np.ndarray, spacing: float, values: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """Resample a closed polyline with a periodic cubic spline at about ``spacing`` metres.

    Parametrised by chord length, so unevenly spaced control points do not produce loops.
    ``values`` (N, k) are interpolated along with the points (e.g. widths). Returns the new
    points (M, 2) and values (M, k) or None.
    """
    # Imported here: scipy.interpolate takes about a second to import, which every process
    # of a simulation would pay for a spline only the track loader draws, and only once.
    from scipy.interpolate import CubicSpline

    pts = np.asarray(points, dtype=float)
    seg = np.hypot(*segments_closed(pts).T)
    t = np.concatenate([[0.0], np.cumsum(seg)])
    data = pts if values is None else np.hstack([pts, np.reshape(values, (pts.shape[0], -1))])
    data = np.vstack([data, data[:1]])
    spline = CubicSpline(t, data, bc_type='periodic', axis=0)
    # Evaluate densely first to measure the true spline length, then resample evenly by arc.
    dense_t = np.linspace(0.0, t[-1], max(8 * pts.shape[0], int(t[-1] / spacing) * 4) + 1)
    dense = spline(dense_t)[:, :2]
    ds = np.hypot(*np.diff(dense, axis=0).T)
    s = np.concatenate([[0.0], np.cumsum(ds)])
    count = max(3, round(float(s[-1]) / spacing))
    targets = np.linspace(0.0, s[-1], count + 1)[:-1]
    out = spline(np.interp(targets, s, dense_t))
    if values is None:
        return out[:, :2], None
    return out[:, :2], out[:, 2:]


def resample_closed(
    points: np.ndarray, spacing: float, values: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """Resample a closed polyline linearly at about ``spacing`` metres (no smoothing)."""
    pts = np.vstack([points, points[:1]])
    seg = np.hypot(*np.diff(pts, axis=0).T)
    s = np.concatenate([[0.0], np.cumsum(seg)])
    count = max(3, round(float(s[-1]) / spacing))
    targets = np.linspace(0.0, s[-1], count + 1)[:-1]
    out = np.stack([np.interp(targets, s, pts[:, 0]), np.interp(targets, s, pts[:, 1])], axis=1)
    if values is None:
        return out, None
    vals = np.reshape(values, (points.shape[0], -1))
    vals = np.vstack([vals, vals[:1]])
    res = np.stack([np.interp(targets, s, vals[:, k]) for k in range(vals.shape[1])], axis=1)
    return out, res


def self_intersections(points: np.ndarray, closed: bool = True) -> list[tuple[int, int]]:
    """Index pairs of non-adjacent segments that cross, for error messages and validation.

    Segment ``i`` runs from point ``i`` to point ``i + 1`` (wrapping when closed). Uses an
    STR-tree so that it stays fast on polylines with thousands of segments.
    """
    import shapely
    from shapely import STRtree

    pts = np.asarray(points, dtype=float)
    nxt = np.roll(pts, -1, axis=0) if closed else pts[1:]
    starts = pts if closed else pts[:-1]
    n = starts.shape[0]
    lines = shapely.linestrings(np.stack([starts, nxt], axis=1))
    tree = STRtree(lines)
    a_idx, b_idx = tree.query(lines, predicate='intersects')
    keep = a_idx < b_idx
    a_idx, b_idx = a_idx[keep], b_idx[keep]
    adjacent = (b_idx - a_idx == 1) | (closed & (a_idx == 0) & (b_idx == n - 1))
    a_idx, b_idx = a_idx[~adjacent], b_idx[~adjacent]
    return [(int(a), int(b)) for a, b in zip(a_idx, b_idx, strict=True)]


def point_to_polyline_distance(points: np.ndarray, polyline: np.ndarray) -> np.ndarray:
    """Distance (K,) of each point to the nearest point of a closed polyline."""
    import shapely

    ring = shapely.LinearRing(polyline)
    return shapely.distance(shapely.points(np.asarray(points, dtype=float)), ring)
