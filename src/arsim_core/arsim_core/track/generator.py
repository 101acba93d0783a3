"""Making tracks: smooth splines through control points, and reproducible random tracks.

Random tracks start from a star-shaped polygon of random waypoints around the centre of the
area (star-shaped, so it cannot cross itself), run a periodic spline through it, and check the
result. Where a turn is too tight or the track pinches, only the nearby waypoints are smoothed,
so the track keeps its character. A draw that cannot be repaired is replaced by a new one, and
as a last resort the evenly spaced ellipse of the area is used, which meets every feasible
limit; so every seed yields a track, and the same seed always yields the same one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import shapely

from arsim_core.errors import TrackError
from arsim_core.track import polylines


@dataclass(frozen=True)
class SplineTrack:
    """Centerline and widths sampled from a spline, before it becomes a ``Track``."""

    centerline: np.ndarray
    width_right: np.ndarray
    width_left: np.ndarray

    @property
    def min_radius(self) -> float:
        """Smallest turn radius of the centerline in metres."""
        kappa = np.abs(polylines.curvature(self.centerline)).max()
        return float(np.inf if kappa == 0 else 1.0 / kappa)

    @property
    def length(self) -> float:
        """Length of the closed centerline in metres."""
        return polylines.closed_length(self.centerline)


def spline_track(
    control_points: np.ndarray,
    width_right: np.ndarray | float,
    width_left: np.ndarray | float,
    spacing: float = 0.1,
) -> SplineTrack:
    """Closed track through control points (K, 2) with widths given at each control point.

    A periodic cubic spline keeps curvature continuous, so a car's steering never has to jump.
    """
    pts = np.asarray(control_points, dtype=float)
    if pts.ndim != 2 or pts.shape[1] != 2 or pts.shape[0] < 3:
        msg = f'control points must be (K>=3, 2), got {pts.shape}'
        raise TrackError(msg)
    k = pts.shape[0]
    widths = np.column_stack(
        [np.broadcast_to(width_right, (k,)), np.broadcast_to(width_left, (k,))]
    ).astype(float)
    center, vals = polylines.periodic_spline(pts, spacing, widths)
    assert vals is not None
    return SplineTrack(center, vals[:, 0], vals[:, 1])


def track_problems(track: SplineTrack, min_radius: float, min_width: float) -> list[str]:
    """Reasons a centerline with widths is not a valid track (empty when valid).

    Valid means: closed and simple, no turn tighter than ``min_radius``, total width at least
    ``min_width``, and both edges simple and apart, so barriers never cross each other.
    """
    problems = []
    center = track.centerline
    if track.min_radius < min_radius * (1.0 - 1e-6):
        problems.append(f'turn radius {track.min_radius:.3g} m < {min_radius:.3g} m')
    width = track.width_left + track.width_right
    if width.min() < min_width * (1.0 - 1e-6):
        problems.append(f'width {width.min():.3g} m < {min_width:.3g} m')
    ring = shapely.LinearRing(center)
    if not ring.is_simple:
        problems.append('centerline crosses itself')
        return problems
    left = shapely.LinearRing(polylines.offset(center, track.width_left))
    right = shapely.LinearRing(polylines.offset(center, -track.width_right))
    if not (left.is_simple and right.is_simple) or left.intersects(right):
        problems.append('track edges cross')
    return problems


@dataclass(frozen=True)
class RandomTrackParams:
    """Limits of a random track; lengths in metres. Defaults suit a 1:10 F1TENTH car."""

    waypoints: int = 12
    area: tuple[float, float] = (30.0, 20.0)
    min_radius: float = 2.0
    min_width: float = 2.0
    width_variation: float = 0.6
    spacing: float = 0.2
    seed: int = 0


def _waypoints(params: RandomTrackParams, ang: np.ndarray, rad: np.ndarray) -> np.ndarray:
    """Waypoints (n, 2) at polar angles and relative radii inside the area's ellipse."""
    half_w, half_h = 0.5 * np.asarray(params.area) - _edge_room(params)
    return np.stack([half_w * rad * np.cos(ang), half_h * rad * np.sin(ang)], axis=1)


def _fit(params: RandomTrackParams, pts: np.ndarray) -> np.ndarray:
    """Centre the waypoints and scale them uniformly to fill the area.

    Uniform scaling up only widens turns, and it undoes the shrinking that smoothing causes.
    """
    half = 0.5 * np.asarray(params.area) - _edge_room(params)
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    centred = pts - 0.5 * (lo + hi)
    scale = float(np.min(half / np.maximum(0.5 * (hi - lo), 1e-9)))
    return centred * scale


def _overshoot(params: RandomTrackParams, track: SplineTrack) -> float:
    """Scale (< 1 when needed) that brings a track and its edges inside the area.

    A spline swings a little beyond its waypoints, so the waypoint fit alone is not enough.
    Uniform scaling keeps the spline's shape, as its chord-length parameters scale along.
    """
    lo, hi = track.centerline.min(axis=0), track.centerline.max(axis=0)
    widest = float(max(track.width_left.max(), track.width_right.max()))
    room = 0.995 * (0.5 * np.asarray(params.area) - widest)
    return float(min(1.0, np.min(room / np.maximum(0.5 * (hi - lo), 1e-9))))


def _spline(params: RandomTrackParams, pts: np.ndarray, wave: np.ndarray) -> SplineTrack:
    """Spline through waypoints with the drawn width variation."""
    base = 0.5 * params.min_width
    extra = 0.5 * params.width_variation * wave
    track = spline_track(pts, base + extra[:, 0], base + extra[:, 1], params.spacing)
    # The spline may swing past the widths at the waypoints; keep them within the limits.
    top = base + 0.5 * params.width_variation
    return SplineTrack(
        track.centerline,
        np.clip(track.width_right, base, top),
        np.clip(track.width_left, base, top),
    )


def _repair(
    params: RandomTrackParams, pts: np.ndarray, wave: np.ndarray, rounds: int = 25
) -> SplineTrack | None:
    """Smooth only the waypoints next to a violation until the track is valid.

    Local smoothing keeps the character of the rest of the track, where relaxing every
    waypoint at once would turn most draws into a plain oval.
    """
    pts = pts.copy()
    limit = 1.0 / params.min_radius
    for _ in range(rounds):
        track = _spline(params, pts, wave)
        shrink = _overshoot(params, track)
        if shrink < 1.0:
            pts = (pts - 0.5 * (track.centerline.min(0) + track.centerline.max(0))) * shrink
            track = _spline(params, pts, wave)
        problems = track_problems(track, params.min_radius, params.min_width)
        if not problems:
            return track
        kappa = np.abs(polylines.curvature(track.centerline))
        bad = track.centerline[kappa > limit]
        if bad.size:
            d = np.hypot(*(bad[:, None, :] - pts[None, :, :]).transpose(2, 0, 1))
            idx = np.unique(np.argmin(d, axis=1))
        else:
            idx = np.arange(pts.shape[0])
        near = np.unique(np.concatenate([idx - 1, idx, idx + 1]) % pts.shape[0])
        neighbours = 0.5 * (np.roll(pts, 1, axis=0) + np.roll(pts, -1, axis=0))
        pts[near] = 0.5 * pts[near] + 0.5 * neighbours[near]
        pts = _fit(params, pts)
    return None


def _edge_room(params: RandomTrackParams) -> float:
    """Half the widest track, kept free at the area's border so edges stay inside it."""
    return 0.5 * (params.min_width + params.width_variation)


def random_track(params: RandomTrackParams | None = None, **kwargs: object) -> SplineTrack:
    """A random closed track meeting ``params``; the same seed always gives the same track.

    Keyword arguments override fields of ``params`` (e.g. ``random_track(seed=3)``).
    """
    p = params or RandomTrackParams()
    if kwargs:
        p = replace(p, **kwargs)  # type: ignore[arg-type]
    if p.waypoints < 4:
        msg = f'a random track needs at least 4 waypoints, got {p.waypoints}'
        raise TrackError(msg)
    if p.min_width <= 0 or p.width_variation < 0 or p.spacing <= 0:
        msg = 'min_width and spacing must be positive and width_variation not negative'
        raise TrackError(msg)
    half_w, half_h = 0.5 * np.asarray(p.area, dtype=float) - _edge_room(p)
    a, b = max(half_w, half_h), min(half_w, half_h)
    if b <= 0 or b * b / a < p.min_radius * 1.15 or p.min_radius <= _edge_room(p):
        msg = (
            f'area {p.area[0]} x {p.area[1]} m cannot hold a track with turns of radius '
            f'{p.min_radius} m and width up to {p.min_width + p.width_variation} m; '
            'use a larger area or a smaller radius or width (radius must exceed half the width)'
        )
        raise TrackError(msg)
    rng = np.random.default_rng(p.seed)
    n = p.waypoints
    slot = 2.0 * np.pi / n
    for _ in range(6):
        ang = np.arange(n) * slot + rng.uniform(-0.35, 0.35, n) * slot
        ang += rng.uniform(0.0, 2.0 * np.pi)
        rad = rng.uniform(0.3, 1.0, n)
        wave = _smooth_noise(rng, n)
        track = _repair(p, _fit(p, _waypoints(p, ang, rad)), wave)
        if track is not None:
            return track
    # Fall back on the evenly spaced ellipse, which the checks above showed to be feasible.
    even = np.arange(n) * slot
    track = _repair(p, _waypoints(p, even, np.ones(n)), np.full((n, 2), 0.5), rounds=3)
    if track is not None:
        return track
    msg = f'no valid track found for seed {p.seed}; try a larger area or smaller limits'
    raise TrackError(msg)


def _smooth_noise(rng: np.random.Generator, n: int) -> np.ndarray:
    """Width variation (n, 2) in [0, 1] per side, smooth along the track (few harmonics)."""
    x = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    out = np.zeros((n, 2))
    for side in range(2):
        for k in (1, 2, 3):
            out[:, side] += rng.normal() / k * np.cos(k * x + rng.uniform(0, 2 * np.pi))
        lo, hi = out[:, side].min(), out[:, side].max()
        out[:, side] = (out[:, side] - lo) / (hi - lo) if hi > lo else 0.5
    return out
