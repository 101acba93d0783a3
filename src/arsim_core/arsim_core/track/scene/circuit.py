"""Scenery of a full-scale circuit: grandstands, fences, buildings, trees, poles and signs,
and catch-fence posts lining both sides of the track.

Counts follow the track's length (so Spa gets more than a kart track) times ``density``.
Everything is proposed in batches near the track and kept only where it clears the
keep-out region and the objects already placed (``placement.Placer``).
"""

from __future__ import annotations

import numpy as np
import shapely
from shapely.geometry.base import BaseGeometry

from arsim_core.track import polylines
from arsim_core.track.model import Track
from arsim_core.track.scene import outdoor
from arsim_core.track.scene.instances import Instances, assemble
from arsim_core.track.scene.placement import Placer, near_track

STRAIGHT_RADIUS = 600.0  # m: a stretch curving less than this is a straight
STRAIGHT_WINDOW = 60.0  # m: the curvature of a straight is averaged over this length
MIN_STRAIGHT = 120.0  # m, the shortest straight that gets a grandstand
CORNER_RADIUS = 150.0  # m: a corner tighter than this gets distance boards before it
CORNER_WINDOW = 30.0  # m: the curvature of a corner is averaged over this length
POST_SPACING = (2.5, 5.0)  # m, range of the gaps between catch-fence posts


def _share(want: int, sel: np.ndarray) -> int:
    """The part of ``want`` objects that falls to the candidates ``sel`` picks."""
    return int(round(want * np.count_nonzero(sel) / sel.size)) if sel.size else 0


def _facing(heading: np.ndarray, side: np.ndarray) -> np.ndarray:
    """Yaw that turns an object's local -y towards the track from ``side`` of it."""
    return np.where(side > 0, heading, heading + np.pi)


def _outside_side(track: Track, idx: np.ndarray, outer: BaseGeometry,
                  dist: float) -> np.ndarray:
    """+1 where the left of the track at ``idx`` leads away from the infield, else -1."""
    normals = polylines.left_normals(track.centerline)[idx]
    probe = track.centerline[idx] + normals * (track.width_left[idx] + dist)[:, None]
    return np.where(shapely.contains_xy(outer, probe[:, 0], probe[:, 1]), -1.0, 1.0)


def _beside(track: Track, idx: np.ndarray, side: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """Points ``dist`` beyond the road edge on ``side`` of the centerline points ``idx``."""
    normals = polylines.left_normals(track.centerline)[idx]
    edge = np.where(side > 0, track.width_left[idx], track.width_right[idx])
    return track.centerline[idx] + normals * (side * (edge + dist))[:, None]


def grandstands(track: Track, placer: Placer, margin: float, density: float,
                outer: BaseGeometry, rng: np.random.Generator) -> list[Instances]:
    """Grandstands along the outside of the straights, a second, farther spot as fallback."""
    straight = np.abs(track.smoothed_curvature(STRAIGHT_WINDOW)) < 1.0 / STRAIGHT_RADIUS
    step = track.length / track.centerline.shape[0]
    spots = []
    for run in polylines.closed_runs(straight):
        run_len = run.size * step
        if run_len < MIN_STRAIGHT:
            continue
        n = int(np.ceil(run_len / 300.0))
        pick = run[((np.arange(n) + 0.5) * run.size / n).astype(int)]
        spots += [(i, min(rng.uniform(40.0, 120.0), 0.7 * run_len / n)) for i in pick]
    if not spots:
        return []
    order = rng.permutation(len(spots))
    idx = np.array([spots[i][0] for i in order], int)
    length = np.array([spots[i][1] for i in order])
    k = idx.size
    size = np.column_stack([length, rng.uniform(10.0, 18.0, k), rng.uniform(5.0, 12.0, k)])
    side = _outside_side(track, idx, outer, margin + 20.0)
    roof = rng.random(k) < 0.5
    gap = margin + rng.uniform(8.0, 14.0, k) + 0.5 * size[:, 1]
    yaw = _facing(track.heading[idx], side)
    out = []
    for r in (False, True):
        sel = roof == r
        left = int(round(density * np.count_nonzero(sel)))
        parts = outdoor.grandstand(size[sel], r, rng)
        for extra in (0.0, 8.0):  # the fallback spot overlaps the first: one of them stays
            xy = _beside(track, idx[sel], side[sel], gap[sel] + extra)
            stands = assemble(parts, xy, yaw[sel])
            placed = placer.place(stands, clearance=2.0, limit=left)
            left -= len(placed)
            out.append(placed)
    return out


def fences(track: Track, placer: Placer, margin: float, density: float, outer: BaseGeometry,
           rng: np.random.Generator) -> list[Instances]:
    """Fence panels along sections of a line a few metres outside the track."""
    line = shapely.buffer(outer, margin + rng.uniform(2.0, 4.0), quad_segs=4)
    rings = shapely.get_exterior_ring(shapely.get_parts(line))
    out = []
    for ring in rings:
        total = float(ring.length)
        dist = np.arange(0.0, total, 4.0)
        if dist.size < 3:
            continue
        pts = shapely.get_coordinates(shapely.line_interpolate_point(ring, dist))
        nxt = np.roll(pts, -1, axis=0)
        mid, delta = 0.5 * (pts + nxt), nxt - pts
        length = np.hypot(*delta.T) + 0.02
        section = (dist // rng.uniform(80.0, 200.0)).astype(int)
        keep = rng.random(section.max() + 1) < min(1.0, 0.6 * density)
        height = rng.uniform(1.0, 2.0, section.max() + 1)[section]
        sel = keep[section]
        panels = assemble(outdoor.fence_panel(length[sel], height[sel]), mid[sel],
                          np.arctan2(delta[sel, 1], delta[sel, 0]))
        out.append(placer.place(panels, overlap=True))
    return out


def buildings(track: Track, placer: Placer, margin: float, want: int,
              rng: np.random.Generator) -> list[Instances]:
    """Blocks of varied size and height, some with pitched roofs; a pit building first."""
    out = []
    if track.length > 1000.0:  # a pit building along the start straight, on either side
        x, y, yaw = track.start_pose
        width = rng.uniform(12.0, 20.0)
        length = min(rng.uniform(120.0, 250.0), 0.08 * track.length)
        parts = outdoor.pit_building(length, width, rng.uniform(8.0, 14.0), rng)
        idx = np.argmin(np.hypot(*(track.centerline - (x, y)).T))
        side = np.array([1.0, -1.0]) * (1.0 if rng.random() < 0.5 else -1.0)
        xy = _beside(track, np.array([idx, idx]), side, np.full(2, margin + 12.0 + 0.5 * width))
        pit = assemble(parts, xy, _facing(np.full(2, track.heading[idx]), side))
        out.append(placer.place(pit, clearance=3.0, limit=1))
    count = 4 * want
    xy, heading, _ = near_track(track, rng, count, margin + 20.0, margin + 150.0)
    size = np.column_stack([rng.uniform(8.0, 45.0, count), rng.uniform(8.0, 25.0, count),
                            rng.choice([4.0, 8.0, 15.0], count, p=[0.6, 0.3, 0.1])
                            * rng.uniform(1.0, 2.0, count)])
    yaw = heading + rng.choice([0.0, 0.5 * np.pi], count) + rng.normal(0.0, 0.05, count)
    pitched = rng.random(count) < 0.4
    roof = np.where(pitched, rng.uniform(0.25, 0.4, count) * size[:, 1],
                    rng.uniform(1.5, 3.0, count))
    for p in (True, False):
        sel = pitched == p
        blocks = assemble(outdoor.building(size[sel], roof[sel], p), xy[sel], yaw[sel])
        out.append(placer.place(blocks, clearance=3.0, limit=_share(want, sel)))
    return out


def trees(track: Track, placer: Placer, margin: float, want: int,
          rng: np.random.Generator) -> list[Instances]:
    """Trees and bushes, half of them scattered and half in copses."""
    loose, _, _ = near_track(track, rng, want, margin + 2.0, margin + 120.0)
    centres, _, _ = near_track(track, rng, max(want // 12, 1), margin + 10.0, margin + 140.0)
    copse = centres[rng.integers(0, centres.shape[0], want)] + rng.normal(0.0, 9.0, (want, 2))
    xy = np.concatenate([loose, copse])[rng.permutation(2 * want)]
    count = int(xy.shape[0])
    kind = rng.choice(3, size=count, p=[0.4, 0.45, 0.15])
    trunk = np.column_stack([rng.uniform(0.15, 0.35, count), rng.uniform(2.0, 4.0, count)])
    out = []
    sel = kind == 0
    crown = np.column_stack([rng.uniform(1.5, 3.0, count), rng.uniform(5.0, 12.0, count)])
    out.append(placer.place(assemble(outdoor.conifer(trunk[sel], crown[sel]), xy[sel]),
                            clearance=0.3, limit=_share(want, sel)))
    sel = kind == 1
    crown = np.column_stack([rng.uniform(2.0, 4.5, count), rng.uniform(1.8, 4.0, count)])
    out.append(placer.place(assemble(outdoor.broadleaf(trunk[sel], crown[sel]), xy[sel]),
                            clearance=0.3, limit=_share(want, sel)))
    sel = kind == 2
    radius = rng.uniform(0.6, 1.5, count)
    out.append(placer.place(assemble(outdoor.bush(radius[sel]), xy[sel]), clearance=0.2,
                            limit=_share(want, sel)))
    return out


def poles_and_signs(track: Track, placer: Placer, margin: float, density: float,
                    rng: np.random.Generator) -> list[Instances]:
    """Light poles, billboards facing the track and distance boards before the corners."""
    per_100m = density * track.length / 100.0
    out = []
    want = int(round(1.5 * per_100m))
    xy, heading, side = near_track(track, rng, 2 * want, margin + 2.0, margin + 6.0)
    height = rng.uniform(8.0, 12.0, int(xy.shape[0]))
    out.append(placer.place(assemble(outdoor.light_pole(height), xy, _facing(heading, side)),
                            clearance=0.5, limit=want))
    want = int(round(0.5 * per_100m))
    xy, heading, side = near_track(track, rng, 3 * want, margin + 2.0, margin + 25.0)
    k = int(xy.shape[0])
    size = np.column_stack([rng.uniform(4.0, 8.0, k), np.full(k, 0.2), rng.uniform(2.0, 3.0, k)])
    boards = assemble(outdoor.billboard(size, rng.uniform(1.5, 3.0, k)), xy,
                      _facing(heading, side) + rng.normal(0.0, 0.2, k))
    out.append(placer.place(boards, clearance=0.5, limit=want))
    out.append(_distance_boards(track, placer, margin, density, rng))
    return out


def _distance_boards(track: Track, placer: Placer, margin: float, density: float,
                     rng: np.random.Generator) -> Instances:
    """Boards 50, 100 and 150 m before the tight corners, on the corners' outside."""
    k = track.smoothed_curvature(CORNER_WINDOW)
    tight = np.abs(k) > 1.0 / CORNER_RADIUS
    entries = np.flatnonzero(tight & ~np.roll(tight, 1))
    entries = entries[rng.random(entries.size) < min(1.0, density)]
    s = track.s
    idx, side = [], []
    for e in entries:
        for back in (50.0, 100.0, 150.0):
            target = (s[e] - back) % track.length
            idx.append(int(np.argmin(np.abs(s - target))))
            side.append(-np.sign(k[e]))
    if not idx:
        return Instances.empty()
    idx_a, side_a = np.array(idx), np.array(side)
    xy = _beside(track, idx_a, side_a, np.full(idx_a.size, margin + 1.5))
    n = idx_a.size
    size = np.column_stack([np.full(n, 1.0), np.full(n, 0.1), np.full(n, 1.2)])
    boards = assemble(outdoor.billboard(size, np.full(n, 1.0)), xy,
                      track.heading[idx_a] + 0.5 * np.pi)
    return placer.place(boards, clearance=0.3)


def fence_posts(track: Track, placer: Placer, margin: float, density: float,
                rng: np.random.Generator) -> list[Instances]:
    """Catch-fence posts just beyond the margin on both sides, at irregular gaps.

    Barriers along a straight are smooth walls, degenerate for scan matching; real circuits
    line them with the posts of debris fences, whose uneven spacing gives a LiDAR odometry
    something to lock on to along the track.
    """
    if density <= 0:
        return []
    gaps = rng.uniform(*POST_SPACING, int(track.length / POST_SPACING[0] / density) + 1)
    out = []
    for side in (1.0, -1.0):
        at = np.cumsum(rng.permutation(gaps) / density)
        at = at[at < track.length]
        idx = np.minimum(np.searchsorted(track.s, at), track.s.size - 1)
        dist = margin + rng.uniform(0.3, 0.8, idx.size)
        xy = _beside(track, idx, np.full(idx.size, side), dist)
        posts = assemble(outdoor.fence_post(rng.uniform(3.0, 4.5, idx.size)), xy,
                         track.heading[idx])
        out.append(placer.place(posts, clearance=0.1))
    return out


def build_circuit(track: Track, placer: Placer, margin: float, density: float,
                  outer: BaseGeometry, rngs: list[np.random.Generator]) -> list[Instances]:
    """All objects of the circuit scenery; nothing at ``density`` 0."""
    if density <= 0:
        return []
    per_100m = density * track.length / 100.0
    out = grandstands(track, placer, margin, density, outer, rngs[0])
    out += fences(track, placer, margin, density, outer, rngs[1])
    out += buildings(track, placer, margin, int(round(1.2 * per_100m)), rngs[2])
    out += trees(track, placer, margin, int(round(12.0 * per_100m)), rngs[3])
    out += poles_and_signs(track, placer, margin, density, rngs[4])
    out += fence_posts(track, placer, margin, density, rngs[5])
    return [o for o in out if len(o)]
