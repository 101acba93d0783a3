"""The shape cameras draw for another car: a body, a cabin, four wheels and a rear wing, built
in the unit box of ``raster`` (x, y in [-1, 1], z in [0, 1]) and scaled to each car's
footprint, which therefore still bounds it. The wheels stand where the car's description puts
them (``Footprint.wheels``: its axles, wheel radius and width), else at a generic place. A box
reads as a crate to a detector; this reads as a car at any scale, from F1TENTH to full size.
LiDAR keeps the box.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from arsim_core.backend.materials import CAR_PAINT, TYRE, WINDOW, WING
from arsim_core.geometry import Footprint

Mesh = tuple[np.ndarray, np.ndarray, np.ndarray]  # vertices, triangles, material per triangle

# Side views (x, z) of the convex parts, counter-clockwise, extruded across y.
_BODY = ((-1.0, 0.14), (0.78, 0.14), (1.0, 0.2), (1.0, 0.3), (0.5, 0.46), (-1.0, 0.6))
_CABIN = ((-0.65, 0.5), (0.3, 0.45), (0.0, 0.78), (-0.45, 0.8))
# A thin pane just in front of the cabin's sloping front (a hair proud of it, so the two never
# fight for a pixel).
_WINDSCREEN = ((0.27, 0.47), (0.31, 0.47), (0.02, 0.79), (-0.01, 0.77))
# Where the wheels stand without a description: axles, radius along x and z, inner face.
_WHEEL_X, _WHEEL_RADIUS, _WHEEL_INNER_Y = (-0.64, 0.64), (0.2, 0.25), 0.64


def wheel_layout(footprint: Footprint | None) -> tuple[tuple[float, float], tuple[float, float],
                                                      float]:
    """The wheels in the unit box of ``footprint``: the two axles' x, the radius along x and
    z, and the y of the wheels' inner faces (their outer faces are the box's sides). Wheels
    larger than the box allows are shrunk into it."""
    if footprint is None or footprint.wheels is None:
        return _WHEEL_X, _WHEEL_RADIUS, _WHEEL_INNER_Y
    wheels = footprint.wheels
    half_length, half_width = footprint.length / 2.0, footprint.width / 2.0
    rz = min(wheels.radius / footprint.height, 0.5)
    rx = min(wheels.radius / half_length, 0.5)
    axles = tuple(min(max(x / half_length, -1.0 + rx), 1.0 - rx)
                  for x in (wheels.rear_x, wheels.front_x))
    inner = 1.0 - min(wheels.width / half_width, 0.45)
    return (axles[0], axles[1]), (rx, rz), inner


def car_mesh(footprint: Footprint | None = None) -> Mesh:
    """The car in the unit box, the rear (x = -1) a flat panel as the box's was, its wheels
    where ``footprint.wheels`` has them."""
    axles, radius, inner = wheel_layout(footprint)
    body = inner - 0.02  # the body reaches the wheels' inner faces, a hair short of them
    parts = [_prism(_BODY, -body, body, CAR_PAINT),
             _prism(_CABIN, -0.77 * body, 0.77 * body, CAR_PAINT),
             _prism(_WINDSCREEN, -0.68 * body, 0.68 * body, WINDOW)]
    for x in axles:
        for y0, y1 in ((-1.0, -inner), (inner, 1.0)):
            parts.append(_prism(_ellipse(x, radius[1], *radius), y0, y1, TYRE))
    parts.append(_box((-1.0, -0.92, 0.92), (-0.84, 0.92, 0.97), WING))  # rear wing
    for y in (-0.3, 0.3):
        parts.append(_box((-0.94, y - 0.03, 0.55), (-0.9, y + 0.03, 0.92), WING))  # its struts
    parts.append(_box((0.7, -0.9, 0.1), (1.0, 0.9, 0.14), WING))  # front splitter
    return _join(parts)


def _ellipse(x: float, z: float, rx: float, rz: float, sides: int = 12
             ) -> tuple[tuple[float, float], ...]:
    angles = np.linspace(0.0, 2.0 * np.pi, sides, endpoint=False)
    return tuple((x + rx * float(np.cos(a)), z + rz * float(np.sin(a))) for a in angles)


def _prism(outline: Sequence[tuple[float, float]], y0: float, y1: float,
           material: int) -> Mesh:
    """A convex side view (x, z) extruded from y0 to y1: two caps and the sides."""
    count = len(outline)
    xz = np.array(outline, np.float64)
    near = np.column_stack([xz[:, 0], np.full(count, y0), xz[:, 1]])
    far = np.column_stack([xz[:, 0], np.full(count, y1), xz[:, 1]])
    vertices = np.vstack([near, far])
    fan = np.array([[0, k, k + 1] for k in range(1, count - 1)])
    ring = np.arange(count)
    following = (ring + 1) % count
    sides = np.vstack([np.column_stack([ring, following, following + count]),
                       np.column_stack([ring, following + count, ring + count])])
    triangles = np.vstack([fan[:, ::-1], fan + count, sides])
    return vertices, triangles, np.full(len(triangles), material, np.uint8)


def _box(low: Sequence[float], high: Sequence[float], material: int) -> Mesh:
    (x0, y0, z0), (x1, y1, z1) = low, high
    return _prism(((x0, z0), (x1, z0), (x1, z1), (x0, z1)), y0, y1, material)


def _join(parts: Sequence[Mesh]) -> Mesh:
    vertices, triangles, materials = [], [], []
    offset = 0
    for part_vertices, part_triangles, part_materials in parts:
        vertices.append(part_vertices)
        triangles.append(part_triangles + offset)
        materials.append(part_materials)
        offset += len(part_vertices)
    return (np.vstack(vertices).astype(np.float32), np.vstack(triangles).astype(np.uint32),
            np.concatenate(materials))
