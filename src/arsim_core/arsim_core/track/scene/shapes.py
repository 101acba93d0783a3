"""Unit solids the scenery is made of: boxes, prisms, cylinders, cones and spheres.

Every solid is closed and wound outwards, so a ray caster that culls back faces still sees it
from outside. Solids are built once in local coordinates and then stamped out for all
instances of an object at once (``instances.assemble``), which keeps scenery building a
handful of numpy operations however many objects there are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Part:
    """A closed triangle mesh in local coordinates with one label per triangle."""

    vertices: np.ndarray  # (V, 3)
    triangles: np.ndarray  # (T, 3), indices into vertices
    labels: np.ndarray  # (T,) uint8


def merge(*parts: Part) -> Part:
    """One part of several, so a composite object is stamped out in one go."""
    verts, tris, labs, count = [], [], [], 0
    for part in parts:
        verts.append(part.vertices)
        tris.append(part.triangles + count)
        labs.append(part.labels)
        count += part.vertices.shape[0]
    return Part(np.concatenate(verts), np.concatenate(tris), np.concatenate(labs))


def extrude(polygon: np.ndarray, z0: float, z1: float, label: int) -> Part:
    """A vertical prism over a convex counter-clockwise polygon (P, 2) from ``z0`` to ``z1``."""
    poly = np.asarray(polygon, float)
    p = poly.shape[0]
    verts = np.concatenate([np.column_stack([poly, np.full(p, z0)]),
                            np.column_stack([poly, np.full(p, z1)])])
    i = np.arange(p)
    j = (i + 1) % p
    sides = np.concatenate([np.stack([i, j, p + j], 1), np.stack([i, p + j, p + i], 1)])
    fan = np.arange(1, p - 1)
    top = np.stack([np.full(p - 2, p), p + fan, p + fan + 1], 1)
    bottom = np.stack([np.zeros(p - 2, int), fan + 1, fan], 1)
    tris = np.concatenate([sides, top, bottom])
    return Part(verts, tris, np.full(tris.shape[0], label, np.uint8))


def box(lo: tuple[float, float, float], hi: tuple[float, float, float], label: int) -> Part:
    """An axis-aligned box between corners ``lo`` and ``hi``."""
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    rect = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
    return extrude(rect, z0, z1, label)


def unit_box(label: int) -> Part:
    """A box of size 1 centred on the z axis, standing on z = 0: scale it to any box."""
    return box((-0.5, -0.5, 0.0), (0.5, 0.5, 1.0), label)


def regular_polygon(radius: float, sides: int, centre: tuple[float, float] = (0.0, 0.0)
                    ) -> np.ndarray:
    """Corners of a polygon circumscribed about a circle, so the solid is never thinner."""
    ang = np.linspace(0.0, 2.0 * np.pi, sides, endpoint=False) + np.pi / sides
    r = radius / np.cos(np.pi / sides)
    return np.column_stack([centre[0] + r * np.cos(ang), centre[1] + r * np.sin(ang)])


def cylinder(radius: float, z0: float, z1: float, label: int, sides: int = 8,
             centre: tuple[float, float] = (0.0, 0.0)) -> Part:
    """An upright closed cylinder (a prism of ``sides`` faces)."""
    return extrude(regular_polygon(radius, sides, centre), z0, z1, label)


def cone(radius: float, z0: float, z1: float, label: int, sides: int = 8) -> Part:
    """An upright closed cone, its base at ``z0`` and its tip at ``z1``."""
    base = regular_polygon(radius, sides)
    verts = np.concatenate([np.column_stack([base, np.full(sides, z0)]), [[0.0, 0.0, z1]]])
    k = np.arange(sides)
    side = np.stack([k, (k + 1) % sides, np.full(sides, sides)], 1)
    fan = np.arange(1, sides - 1)
    cap = np.stack([np.zeros(sides - 2, int), fan + 1, fan], 1)
    tris = np.concatenate([side, cap])
    return Part(verts, tris, np.full(tris.shape[0], label, np.uint8))


def icosphere(radius: float, centre: tuple[float, float, float], label: int,
              subdivisions: int = 1) -> Part:
    """A sphere from a subdivided icosahedron (42 vertices at one subdivision)."""
    t = (1.0 + 5.0 ** 0.5) / 2.0
    verts = np.array([[-1, t, 0], [1, t, 0], [-1, -t, 0], [1, -t, 0], [0, -1, t], [0, 1, t],
                      [0, -1, -t], [0, 1, -t], [t, 0, -1], [t, 0, 1], [-t, 0, -1], [-t, 0, 1]],
                     float)
    tris = np.array([[0, 11, 5], [0, 5, 1], [0, 1, 7], [0, 7, 10], [0, 10, 11], [1, 5, 9],
                     [5, 11, 4], [11, 10, 2], [10, 7, 6], [7, 1, 8], [3, 9, 4], [3, 4, 2],
                     [3, 2, 6], [3, 6, 8], [3, 8, 9], [4, 9, 5], [2, 4, 11], [6, 2, 10],
                     [8, 6, 7], [9, 8, 1]])
    verts /= np.linalg.norm(verts, axis=1)[:, None]
    for _ in range(subdivisions):
        edges = np.sort(np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]]), 1)
        unique, inverse = np.unique(edges, axis=0, return_inverse=True)
        mids = verts[unique[:, 0]] + verts[unique[:, 1]]
        mids /= np.linalg.norm(mids, axis=1)[:, None]
        m = inverse.reshape(3, -1) + verts.shape[0]
        a, b, c = tris.T
        tris = np.concatenate([np.stack([a, m[0], m[2]], 1), np.stack([b, m[1], m[0]], 1),
                               np.stack([c, m[2], m[1]], 1), np.stack([m[0], m[1], m[2]], 1)])
        verts = np.concatenate([verts, mids])
    # Circumscribe: the flat faces reach out to ``radius`` at their centres at least.
    inner = np.linalg.norm(verts[tris].mean(axis=1), axis=1).min()
    verts = verts * (radius / inner) + np.asarray(centre, float)
    return Part(verts, tris, np.full(tris.shape[0], label, np.uint8))


def gable(x0: float, x1: float, y0: float, y1: float, z0: float, z1: float,
          label: int) -> Part:
    """A pitched roof: a triangular prism along x, its ridge at ``z1`` above mid-y."""
    # Extrude the triangle profile (y, z) along x by cycling the axes (an even permutation,
    # so the winding stays outward).
    profile = np.array([[y0, z0], [y1, z0], [0.5 * (y0 + y1), z1]])
    part = extrude(profile, x0, x1, label)
    return Part(part.vertices[:, [2, 0, 1]], part.triangles, part.labels)
