"""Indoor objects of unit size, stamped out at any size: shelves, tables, chairs, boxes.

Each object spans x, y in [-0.5, 0.5] and z in [0, 1], so ``scale = (length, depth, height)``
gives its size; local +y is its front (towards the room for things against a wall). They are
a few boxes each rather than single blocks, so a LiDAR sees legs, boards and gaps.
"""

from __future__ import annotations

from arsim_core.track.model import LABEL_SCENERY_OBJECT
from arsim_core.track.scene.shapes import Part, box, cylinder, merge, unit_box

_L = LABEL_SCENERY_OBJECT


def _legs(top: float, leg: float) -> list[Part]:
    """Four legs in the corners, from the floor to ``top``."""
    a, b = -0.5, -0.5 + leg
    c, d = 0.5 - leg, 0.5
    return [box((x0, y0, 0.0), (x1, y1, top), _L)
            for x0, x1 in ((a, b), (c, d)) for y0, y1 in ((a, b), (c, d))]


def shelf() -> Part:
    """Open shelving: two sides, a back and four boards."""
    sides = [box((-0.5, -0.5, 0.0), (-0.47, 0.5, 1.0), _L),
             box((0.47, -0.5, 0.0), (0.5, 0.5, 1.0), _L)]
    back = box((-0.47, -0.5, 0.0), (0.47, -0.47, 1.0), _L)
    boards = [box((-0.47, -0.47, z), (0.47, 0.5, z + 0.03), _L) for z in (0.02, 0.33, 0.64, 0.95)]
    return merge(*sides, back, *boards)


def cabinet() -> Part:
    """A closed cabinet or locker."""
    return unit_box(_L)


def box_stack() -> Part:
    """Three boxes stacked unevenly."""
    return merge(box((-0.5, -0.5, 0.0), (0.5, 0.5, 0.4), _L),
                 box((-0.45, -0.4, 0.4), (0.4, 0.45, 0.75), _L),
                 box((-0.3, -0.3, 0.75), (0.3, 0.25, 1.0), _L))


def bin_() -> Part:
    """A round bin or barrel."""
    return cylinder(0.5, 0.0, 1.0, _L, sides=10)


def tyre_stack() -> Part:
    """Four tyres on top of each other, every other one slightly narrower."""
    return merge(*(cylinder(0.5 if i % 2 == 0 else 0.46, 0.25 * i, 0.25 * (i + 1), _L,
                            sides=10) for i in range(4)))


def table() -> Part:
    """A table: a top on four legs."""
    return merge(box((-0.5, -0.5, 0.94), (0.5, 0.5, 1.0), _L), *_legs(0.94, 0.05))


def chair() -> Part:
    """A chair: seat and legs, its back at local +y."""
    return merge(box((-0.5, -0.5, 0.5), (0.5, 0.5, 0.56), _L),
                 box((-0.5, 0.4, 0.56), (0.5, 0.5, 1.0), _L), *_legs(0.5, 0.1))
