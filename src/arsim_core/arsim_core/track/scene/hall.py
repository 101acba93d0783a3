"""An indoor hall around an F1TENTH-scale track: walls with doors, pillars and furniture.

Small cars race in gyms, labs and corridors. Their LiDAR odometry and SLAM lean on what
surrounds the track, so the hall gives them walls with recessed doors and pilasters, a grid
of pillars, shelves and clutter along the walls and tables, chairs and boxes on the floor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely

from arsim_core.errors import TrackError
from arsim_core.track.model import LABEL_SCENERY_STRUCTURE, Track
from arsim_core.track.scene import furniture
from arsim_core.track.scene.instances import Instances, assemble, boxes
from arsim_core.track.scene.placement import Placer
from arsim_core.track.scene.shapes import Part, cylinder, unit_box

MAX_SIZE = 400.0  # m, the longest hall side built
THICKNESS = 0.25  # m, wall thickness
RECESS = 0.06  # m, door leaf thickness at the outer face: the opening is a recess
FRAME = 0.08  # m, width of a door frame, standing out of the wall by FRAME_DEPTH
FRAME_DEPTH = 0.05

_STRUCTURE = unit_box(LABEL_SCENERY_STRUCTURE)


@dataclass(frozen=True)
class _Side:
    """One wall, seen from inside: its inner face runs from ``origin`` along ``direction``
    for ``length``; ``outward`` points out of the hall."""

    origin: np.ndarray
    direction: np.ndarray
    outward: np.ndarray
    length: float

    def to_world(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """World points (K, 2) at ``u`` along the wall and ``v`` outwards of its inner face."""
        return self.origin + np.outer(u, self.direction) + np.outer(v, self.outward)

    @property
    def yaw(self) -> float:
        """Heading of the wall; local +y of an object turned this way points into the hall."""
        return float(np.arctan2(self.direction[1], self.direction[0]))


def _sides(x0: float, y0: float, x1: float, y1: float) -> list[_Side]:
    """The four walls of the rectangle, walked counter-clockwise."""
    a = np.array
    return [_Side(a([x0, y0]), a([1.0, 0.0]), a([0.0, -1.0]), x1 - x0),
            _Side(a([x1, y0]), a([0.0, 1.0]), a([1.0, 0.0]), y1 - y0),
            _Side(a([x1, y1]), a([-1.0, 0.0]), a([0.0, 1.0]), x1 - x0),
            _Side(a([x0, y1]), a([0.0, -1.0]), a([-1.0, 0.0]), y1 - y0)]


def _doors(side: _Side, height: float, rng: np.random.Generator) -> np.ndarray:
    """Door openings of a wall as rows ``(u0, u1, door height)``, not overlapping."""
    rows: list[tuple[float, float, float]] = []
    for _ in range(int(rng.integers(1, 3)) if side.length > 6.0 else 0):
        roller = side.length > 12.0 and rng.random() < 0.35
        width = rng.uniform(3.0, 4.5) if roller else rng.uniform(0.9, 1.2)
        tall = min(3.0, height - 0.5) if roller else 2.1
        lo, hi = 1.5 + 0.5 * width, side.length - 1.5 - 0.5 * width
        if hi <= lo:
            continue
        mid = rng.uniform(lo, hi)
        u0, u1 = mid - 0.5 * width, mid + 0.5 * width
        if all(u1 + 1.0 < a or u0 - 1.0 > b for a, b, _ in rows):
            rows.append((u0, u1, tall))
    return np.array(sorted(rows), float).reshape(-1, 3)


def _wall_boxes(side: _Side, doors: np.ndarray, height: float) -> np.ndarray:
    """Boxes of one wall as rows ``(u0, u1, v0, v1, z0, z1)``: the wall between doors
    (reaching past the corners so they close), lintels, recessed leaves and frames."""
    t = THICKNESS
    edges = np.concatenate([[-t], doors[:, :2].ravel(), [side.length + t]]).reshape(-1, 2)
    rows = [(a, b, 0.0, t, 0.0, height) for a, b in edges if b > a]
    for u0, u1, tall in doors:
        rows += [(u0, u1, 0.0, t, tall, height),  # lintel
                 (u0, u1, t - RECESS, t, 0.0, tall),  # door leaf, set back
                 (u0 - FRAME, u0, -FRAME_DEPTH, 0.0, 0.0, tall + FRAME),
                 (u1, u1 + FRAME, -FRAME_DEPTH, 0.0, 0.0, tall + FRAME),
                 (u0 - FRAME, u1 + FRAME, -FRAME_DEPTH, 0.0, tall, tall + FRAME)]
    return np.array(rows, float)


def _pilasters(side: _Side, doors: np.ndarray, height: float,
               rng: np.random.Generator) -> np.ndarray:
    """Pilasters standing out of a wall every few metres, away from the doors."""
    step = rng.uniform(5.0, 8.0)
    u = np.arange(step, side.length - 1.0, step)
    for u0, u1, _ in doors:
        u = u[(u < u0 - FRAME - 0.5) | (u > u1 + FRAME + 0.5)]
    depth = 0.3
    return np.column_stack([u - 0.2, u + 0.2, np.full(u.size, -depth), np.zeros(u.size),
                            np.zeros(u.size), np.full(u.size, height)])


def _side_boxes(side: _Side, rows: np.ndarray, part: Part = _STRUCTURE) -> Instances:
    """Instances of ``part`` filling the boxes ``rows (u0, u1, v0, v1, z0, z1)`` of a wall."""
    u0, u1, v0, v1, z0, z1 = rows.T
    centres = side.to_world(0.5 * (u0 + u1), 0.5 * (v0 + v1))
    size = np.column_stack([u1 - u0, v1 - v0, z1 - z0])
    return boxes(part, centres, size, side.yaw, z0)


def _nonempty(parts: list[Instances]) -> list[Instances]:
    """The batches that hold any objects."""
    return [p for p in parts if len(p)]


def _floor(inner: tuple[float, float, float, float], outer: tuple[float, float, float, float]
           ) -> Instances:
    """The floor between the track's ground plane and the walls, as four thin slabs just
    below the ground plane, so the ground shows wherever both are."""
    (a0, b0, a1, b1), (x0, y0, x1, y1) = inner, outer
    rects = np.array([[x0, y0, x1, b0], [x0, b1, x1, y1], [x0, b0, a0, b1], [a1, b0, x1, b1]])
    centres = 0.5 * (rects[:, :2] + rects[:, 2:])
    size = np.column_stack([rects[:, 2] - rects[:, 0], rects[:, 3] - rects[:, 1],
                            np.full(4, 0.001)])
    return boxes(_STRUCTURE, centres, size, 0.0, -0.003)


def _along_walls(sides: list[_Side], count: int, rng: np.random.Generator) -> list[Instances]:
    """Shelves, cabinets, box stacks and bins with their backs to the walls."""
    lengths = np.array([s.length for s in sides])
    which = rng.choice(len(sides), size=count, p=lengths / lengths.sum())
    u = 0.5 + rng.random(count) * (lengths[which] - 1.0)
    kind = rng.choice(4, size=count, p=[0.35, 0.2, 0.3, 0.15])
    sizes = np.stack([
        np.column_stack([rng.uniform(1.0, 2.5, count), rng.uniform(0.4, 0.6, count),
                         rng.uniform(1.8, 2.4, count)]),  # shelf
        np.column_stack([rng.uniform(0.5, 1.2, count), rng.uniform(0.45, 0.6, count),
                         rng.uniform(1.0, 2.0, count)]),  # cabinet
        np.column_stack([rng.uniform(0.5, 1.2, count), rng.uniform(0.5, 1.0, count),
                         rng.uniform(0.6, 1.5, count)]),  # box stack
        np.repeat(rng.uniform(0.5, 0.8, count)[:, None], 3, axis=1) * [1.0, 1.0, 1.4],  # bin
    ])[kind, np.arange(count)]
    out = []
    for k, part in enumerate((furniture.shelf(), furniture.cabinet(), furniture.box_stack(),
                              furniture.bin_())):
        for s in range(len(sides)):
            sel = (kind == k) & (which == s)
            if not sel.any():
                continue
            side = sides[s]
            centres = side.to_world(u[sel], -(0.5 * sizes[sel, 1] + 0.03))
            out.append(boxes(part, centres, sizes[sel], side.yaw))
    return _nonempty(out)


def _on_floor(area: tuple[float, float, float, float], count: int,
              rng: np.random.Generator) -> tuple[Instances, list[Instances]]:
    """Tables and loose clutter (box stacks, tyre stacks, bins, cabinets) on the floor; the
    tables come separately so chairs can be set around the ones that fit."""
    x0, y0, x1, y1 = area
    xy = np.column_stack([rng.uniform(x0, x1, count), rng.uniform(y0, y1, count)])
    yaw = rng.choice([0.0, 0.5 * np.pi], count) + rng.normal(0.0, 0.15, count)
    kind = rng.choice(5, size=count, p=[0.3, 0.25, 0.2, 0.15, 0.1])
    sizes = np.stack([
        np.column_stack([rng.uniform(1.2, 2.0, count), rng.uniform(0.6, 0.9, count),
                         rng.uniform(0.72, 0.9, count)]),  # table
        np.column_stack([rng.uniform(0.5, 1.2, count), rng.uniform(0.5, 1.2, count),
                         rng.uniform(0.5, 1.6, count)]),  # box stack
        np.column_stack([np.full((count, 2), 0.62), rng.uniform(0.75, 1.05, count)]),  # tyres
        np.repeat(rng.uniform(0.5, 0.8, count)[:, None], 3, axis=1) * [1.0, 1.0, 1.4],  # bin
        np.column_stack([rng.uniform(1.2, 2.0, count), rng.uniform(0.6, 0.8, count),
                         rng.uniform(0.9, 1.1, count)]),  # workbench
    ])[kind, np.arange(count)]
    parts = (furniture.table(), furniture.box_stack(), furniture.tyre_stack(), furniture.bin_(),
             furniture.cabinet())
    made = [boxes(part, xy[kind == k], sizes[kind == k], yaw[kind == k])
            for k, part in enumerate(parts)]
    return made[0], _nonempty(made[1:])


def _chairs(tables: Instances, rng: np.random.Generator) -> Instances:
    """Two to four chairs around each table, their backs away from it."""
    if not len(tables):
        return tables
    v = tables.vertices
    centre = v[:, :, :2].mean(axis=1)
    # Table frame from its top's bounding corners: local x along the first edge.
    top = v[:, :8, :2]
    ex = top[:, 1] - top[:, 0]
    ey = top[:, 3] - top[:, 0]
    length, width = np.hypot(*ex.T), np.hypot(*ey.T)
    yaw = np.arctan2(ex[:, 1], ex[:, 0])
    ux, uy = ex / length[:, None], ey / width[:, None]
    spots = []
    for sx, sy in ((-0.25, 1), (0.25, 1), (-0.25, -1), (0.25, -1)):
        pos = centre + ux * (sx * length)[:, None] + uy * (sy * (0.5 * width + 0.35))[:, None]
        spots.append((pos, yaw if sy > 0 else yaw + np.pi))
    xy = np.concatenate([p for p, _ in spots])
    yaws = np.concatenate([a for _, a in spots])
    keep = rng.random(int(xy.shape[0])) < 0.7
    size = np.array([0.45, 0.45, 0.9])
    turn = rng.normal(0.0, 0.2, int(keep.sum()))
    return boxes(furniture.chair(), xy[keep], size, yaws[keep] + turn)


def _pillars(interior: tuple[float, float, float, float], height: float, density: float,
             rng: np.random.Generator) -> Instances:
    """A grid of pillars over the hall, square or round (one style per hall)."""
    x0, y0, x1, y1 = interior
    spacing = float(np.clip(rng.uniform(7.0, 10.0) / np.sqrt(density), 3.5, 40.0))
    nx, ny = int((x1 - x0) // spacing), int((y1 - y0) // spacing)
    xs = 0.5 * (x0 + x1) + (np.arange(nx + 1) - 0.5 * nx) * spacing
    ys = 0.5 * (y0 + y1) + (np.arange(ny + 1) - 0.5 * ny) * spacing
    gx, gy = np.meshgrid(xs, ys)
    xy = np.column_stack([gx.ravel(), gy.ravel()])
    if rng.random() < 0.5:
        side = rng.uniform(0.35, 0.6)
        return boxes(_STRUCTURE, xy, np.array([side, side, height]))
    radius = rng.uniform(0.18, 0.3)
    part = cylinder(radius, 0.0, height, LABEL_SCENERY_STRUCTURE, sides=12)
    return assemble([(part, (1.0, 1.0, 1.0), (0.0, 0.0, 0.0))], xy)


def build_hall(track: Track, placer: Placer, margin: float, density: float,
               rngs: list[np.random.Generator]) -> list[Instances]:
    """All objects of the hall around ``track``, placed clear of ``placer``'s keep-out."""
    xmin, ymin, xmax, ymax = track.bounds()
    if max(xmax - xmin, ymax - ymin) > MAX_SIZE:
        msg = (f'a hall fits tracks up to {MAX_SIZE:.0f} m across; {track.name!r} spans '
               f'{xmax - xmin:.0f} m x {ymax - ymin:.0f} m (use the circuit scenery for it)')
        raise TrackError(msg)
    rng = rngs[0]
    gap = margin + rng.uniform(2.5, 5.0)
    height = float(rng.uniform(3.0, 4.0))
    x0, y0, x1, y1 = xmin - gap, ymin - gap, xmax + gap, ymax + gap
    sides = _sides(x0, y0, x1, y1)
    doors = [_doors(side, height, rng) for side in sides]
    walls = [_side_boxes(side, _wall_boxes(side, d, height))
             for side, d in zip(sides, doors, strict=True)]
    out = [placer.place_all(w, 'hall walls') for w in walls]
    t = THICKNESS
    floor = _floor((xmin - margin - 0.01, ymin - margin - 0.01, xmax + margin + 0.01,
                    ymax + margin + 0.01), (x0 - t, y0 - t, x1 + t, y1 + t))
    if placer.clear_of_keep_out(floor.footprints()).all():
        out.append(floor)
    if density <= 0:
        return out
    rng_p, rng_w, rng_f = rngs[1], rngs[2], rngs[3]
    pil = [_side_boxes(side, _pilasters(side, d, height, rng_p))
           for side, d in zip(sides, doors, strict=True)]
    out += [placer.place_all(p, 'hall pilasters') for p in _nonempty(pil)]
    interior = (x0 + 1.5, y0 + 1.5, x1 - 1.5, y1 - 1.5)
    out.append(placer.place(_pillars(interior, height, density, rng_p), clearance=0.3))
    perimeter = 2.0 * ((x1 - x0) + (y1 - y0))
    for batch in _along_walls(sides, int(round(density * perimeter / 3.0)), rng_w):
        out.append(placer.place(batch, clearance=0.02))
    free = shapely.box(x0, y0, x1, y1).difference(placer.keep_out).area
    want = int(round(density * free / 25.0))
    tables, clutter = _on_floor((x0 + 0.8, y0 + 0.8, x1 - 0.8, y1 - 0.8), 3 * want, rng_f)
    tables = placer.place(tables, clearance=1.0, limit=max(want // 4, 1))
    out.append(tables)
    out.append(placer.place(_chairs(tables, rng_f), clearance=0.05))
    for batch in clutter:  # a third of the candidates are wanted
        out.append(placer.place(batch, clearance=0.4, limit=-(-len(batch) // 3)))
    return _nonempty(out)
