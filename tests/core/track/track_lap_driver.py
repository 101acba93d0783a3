"""A minimal follow-the-gap driver and kinematic car, to prove a track can be lapped.

This is test equipment, not the simulator's dynamics: a kinematic bicycle the size of an
F1TENTH car (0.58 x 0.31 m), a 1080-beam LiDAR over 4.7 rad cast against the track mesh with
Embree, and the classic follow-the-gap steering.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely

from arsim_core.track import Track, track_mesh

CAR_LENGTH = 0.58
CAR_WIDTH = 0.31
WHEELBASE = 0.33
MAX_STEER = 0.4189
BEAMS = 1080
FOV = 4.7


@dataclass
class LapResult:
    """How far the car got, and whether and where it touched a wall."""

    progress: float
    time: float
    crashed: bool
    min_clearance: float
    pose: tuple[float, float, float]


def follow_the_gap(ranges: np.ndarray, angles: np.ndarray, bubble: float = 0.45) -> float:
    """Steering target angle: the middle of the widest free gap after masking the nearest hit.

    Gaps are runs of beams longer than a threshold, so the car aims at open road, and the
    bubble around the nearest obstacle keeps it off the inside wall in corners.
    """
    r = np.clip(ranges, 0.0, 6.0)
    r = np.convolve(r, np.ones(5) / 5, mode='same')
    front = np.abs(angles) < np.deg2rad(100)
    r = np.where(front, r, 0.0)
    i = int(np.argmin(np.where(front, r, np.inf)))
    half = np.arctan2(bubble, max(r[i], 0.05))
    r = np.where(np.abs(angles - angles[i]) < half, 0.0, r)
    free = r > 1.4
    if not free.any():
        return float(angles[int(np.argmax(r))])
    edges = np.diff(np.concatenate([[0], free.astype(int), [0]]))
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    k = int(np.argmax(stops - starts))
    gap = slice(starts[k], stops[k])
    gap_r = r[gap]
    # Aim between the gap's middle and its deepest point.
    deepest = starts[k] + int(np.argmax(gap_r))
    middle = (starts[k] + stops[k] - 1) // 2
    return float(0.5 * (angles[deepest] + angles[middle]))


def drive_lap(
    track: Track,
    caster_cls: type,
    speed_range: tuple[float, float] = (3.0, 5.0),
    dt: float = 0.02,
    max_time: float = 60.0,
    laps: float = 1.0,
) -> LapResult:
    """Drive from the start pose until ``laps`` laps are done, time runs out or a wall is hit."""
    mesh = track_mesh(track)
    caster = caster_cls(mesh.vertices, mesh.triangles)
    walls = shapely.MultiLineString([w for w in track.walls])
    shapely.prepare(walls)
    angles = np.linspace(-FOV / 2, FOV / 2, BEAMS)
    x, y, yaw = track.start_pose
    center = track.centerline
    s_table = track.s
    idx = int(np.argmin(np.hypot(*(center - [x, y]).T)))
    progress = 0.0
    t = 0.0
    min_clear = np.inf
    vmin, vmax = speed_range
    while t < max_time and progress < laps * track.length:
        dirs = np.stack([np.cos(yaw + angles), np.sin(yaw + angles), np.zeros(BEAMS)], axis=1)
        origin = np.array([x + 0.1 * np.cos(yaw), y + 0.1 * np.sin(yaw), 0.1])
        ranges, _ = caster.cast(np.broadcast_to(origin, (BEAMS, 3)), dirs)
        target = follow_the_gap(ranges, angles)
        steer = float(np.clip(target * 0.9, -MAX_STEER, MAX_STEER))
        ahead = ranges[np.abs(angles) < 0.1].min()
        v = vmin + (vmax - vmin) * np.clip((ahead - 2.0) / 4.0, 0, 1) * (1 - abs(steer) / MAX_STEER)
        x += v * np.cos(yaw) * dt
        y += v * np.sin(yaw) * dt
        yaw += v / WHEELBASE * np.tan(steer) * dt
        t += dt
        body = _footprint(x, y, yaw)
        clear = float(shapely.distance(body, walls))
        min_clear = min(min_clear, clear)
        if clear <= 0.0:
            return LapResult(progress, t, True, 0.0, (x, y, yaw))
        window = (idx + np.arange(-20, 60)) % len(center)
        new = int(window[np.argmin(np.hypot(*(center[window] - [x, y]).T))])
        step = (s_table[new] - s_table[idx]) % track.length
        if step > track.length / 2:
            step -= track.length
        progress += step
        idx = new
    return LapResult(progress, t, False, min_clear, (x, y, yaw))


def _footprint(x: float, y: float, yaw: float) -> shapely.Polygon:
    """The car's rectangle, its centre at the rear-axle-plus-half-wheelbase point."""
    hl, hw = CAR_LENGTH / 2, CAR_WIDTH / 2
    local = np.array([[hl, hw], [-hl, hw], [-hl, -hw], [hl, -hw]])
    c, s = np.cos(yaw), np.sin(yaw)
    rot = np.array([[c, -s], [s, c]])
    return shapely.Polygon(local @ rot.T + [x, y])
