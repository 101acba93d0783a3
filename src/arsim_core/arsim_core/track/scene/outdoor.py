"""Outdoor objects as part lists for ``instances.assemble``: grandstands, buildings, trees,
poles and signs.

Each builder takes per-instance sizes (arrays of K values) and returns the parts with their
per-instance scales and offsets, so thousands of trees of different sizes are one numpy
operation. Objects facing the track are built with the track at local -y.
"""

from __future__ import annotations

import numpy as np

from arsim_core.track.model import (
    LABEL_SCENERY_OBJECT,
    LABEL_SCENERY_STRUCTURE,
    LABEL_SCENERY_VEGETATION,
)
from arsim_core.track.scene.instances import PartSpec
from arsim_core.track.scene.shapes import (
    Part,
    box,
    cone,
    cylinder,
    gable,
    icosphere,
    merge,
    unit_box,
)

STEPS = 8  # rows of a grandstand
SEATING_BLOCKS = 8  # blocks of seats along a grandstand, between aisles
AISLE = 1.5  # [m] width of a grandstand's aisles
GARAGE_WIDTH = (4.0, 7.0)  # [m] range of the widths of a pit building's garages
GARAGE_DEPTH = 6.0  # [m] from a pit building's front to its garages' back wall
GARAGE_HEIGHT = 4.5  # [m]
PILLAR = 0.6  # [m] width of the pillars between garages


def _zero(k: int) -> np.ndarray:
    return np.zeros((k, 3))


def _stack(*columns: np.ndarray | float, k: int) -> np.ndarray:
    """A (K, 3) array from three columns (arrays or scalars)."""
    return np.column_stack([np.broadcast_to(np.asarray(c, float), (k,)) for c in columns])


def _rows() -> Part:
    """Unit seat rows rising away from the track (local +y)."""
    return merge(*[box((-0.5, -0.5 + i / STEPS, 0.0), (0.5, 0.5, (i + 1) / STEPS),
                       LABEL_SCENERY_STRUCTURE) for i in range(STEPS)])


def _roof() -> Part:
    """A unit grandstand roof on five columns along the back."""
    columns = [box((x - 0.01, 0.44, 1.0), (x + 0.01, 0.5, 1.25), LABEL_SCENERY_STRUCTURE)
               for x in (-0.49, -0.25, 0.0, 0.25, 0.49)]
    return merge(*columns, box((-0.5, -0.3, 1.25), (0.5, 0.5, 1.28), LABEL_SCENERY_STRUCTURE))


def grandstand(size: np.ndarray, roof: bool, rng: np.random.Generator) -> list[PartSpec]:
    """Grandstands of ``size (K, 3)`` (length, depth, height; longer than their aisles):
    ``SEATING_BLOCKS`` blocks of seat rows of uneven length between aisles, each aisle a
    stairway at half the rows' height before a wall.

    The aisles matter beyond looks: a long face the same all along is one a scan-matching
    odometry cannot tell positions along from each other (docs/scenes.md).
    """
    k = size.shape[0]
    length, depth, height = size.T
    weights = rng.uniform(0.6, 1.4, (k, SEATING_BLOCKS))
    seats = ((length - (SEATING_BLOCKS - 1) * AISLE)[:, None] * weights
             / weights.sum(axis=1, keepdims=True))
    starts = -0.5 * length[:, None] + np.concatenate(
        [np.zeros((k, 1)), np.cumsum(seats[:, :-1] + AISLE, axis=1)], axis=1)
    rows, wall = _rows(), unit_box(LABEL_SCENERY_STRUCTURE)
    parts: list[PartSpec] = []
    for b in range(SEATING_BLOCKS):
        parts.append((rows, _stack(seats[:, b], depth, height, k=k),
                      _stack(starts[:, b] + 0.5 * seats[:, b], 0.0, 0.0, k=k)))
    for b in range(SEATING_BLOCKS - 1):
        at = starts[:, b] + seats[:, b] + 0.5 * AISLE
        parts.append((rows, _stack(AISLE, depth, 0.5 * height, k=k), _stack(at, 0.0, 0.0, k=k)))
        parts.append((wall, _stack(AISLE, 0.05 * depth, height, k=k),
                      _stack(at, 0.475 * depth, 0.0, k=k)))
    if roof:
        parts.append((_roof(), size, _zero(k)))
    return parts


def pit_building(length: float, width: float, height: float,
                 rng: np.random.Generator) -> list[PartSpec]:
    """A pit building facing local -y: garages of uneven width between pillars, some open
    to their back wall ``GARAGE_DEPTH`` in, some shut by doors, under an upper floor set back
    between the pillars; ``height`` at least ``GARAGE_HEIGHT``."""
    front, back, half = -0.5 * width, 0.5 * width, 0.5 * length
    widths = rng.uniform(*GARAGE_WIDTH, int(length / GARAGE_WIDTH[0]) + 1)
    edges = np.cumsum(widths)
    edges = edges[edges < length - GARAGE_WIDTH[0]] - half
    pillars = np.concatenate([[-half + 0.5 * PILLAR], edges, [half - 0.5 * PILLAR]])
    inner = front + GARAGE_DEPTH
    solids = [box((-half, inner, 0.0), (half, back, height), LABEL_SCENERY_STRUCTURE),
              box((-half, front + 1.0, GARAGE_HEIGHT), (half, inner, height),
                  LABEL_SCENERY_STRUCTURE)]
    solids += [box((x - 0.5 * PILLAR, front, 0.0), (x + 0.5 * PILLAR, inner, height),
                   LABEL_SCENERY_STRUCTURE) for x in pillars]
    shut = rng.random(pillars.size - 1) < 0.5
    solids += [box((x0 + 0.5 * PILLAR, front + 0.5, 0.0), (x1 - 0.5 * PILLAR, inner,
                                                          GARAGE_HEIGHT),
                   LABEL_SCENERY_STRUCTURE)
               for x0, x1 in zip(pillars[:-1][shut], pillars[1:][shut], strict=True)]
    return [(merge(*solids), (1.0, 1.0, 1.0), (0.0, 0.0, 0.0))]


def building(size: np.ndarray, roof: np.ndarray, pitched: bool) -> list[PartSpec]:
    """Buildings of ``size (K, 3)``: a block with a pitched roof ``roof (K,)`` high, or a
    flat roof with a plant room on it."""
    k = size.shape[0]
    body = (unit_box(LABEL_SCENERY_STRUCTURE), size, _zero(k))
    if pitched:
        ridge = gable(-0.5, 0.5, -0.5, 0.5, 0.0, 1.0, LABEL_SCENERY_STRUCTURE)
        return [body, (ridge, _stack(size[:, 0] * 1.02, size[:, 1] * 1.04, roof, k=k),
                       _stack(0.0, 0.0, size[:, 2], k=k))]
    plant = unit_box(LABEL_SCENERY_STRUCTURE)
    return [body, (plant, _stack(size[:, 0] * 0.25, size[:, 1] * 0.3, roof, k=k),
                   _stack(size[:, 0] * 0.2, 0.0, size[:, 2], k=k))]


def conifer(trunk: np.ndarray, crown: np.ndarray) -> list[PartSpec]:
    """Fir trees: trunk ``(K, 2)`` (radius, height), crown cone ``(K, 2)`` (radius, height)."""
    k = trunk.shape[0]
    stem = cylinder(1.0, 0.0, 1.0, LABEL_SCENERY_VEGETATION, sides=6)
    top = cone(1.0, 0.0, 1.0, LABEL_SCENERY_VEGETATION, sides=8)
    return [(stem, _stack(trunk[:, 0], trunk[:, 0], trunk[:, 1], k=k), _zero(k)),
            (top, _stack(crown[:, 0], crown[:, 0], crown[:, 1], k=k),
             _stack(0.0, 0.0, 0.7 * trunk[:, 1], k=k))]


def broadleaf(trunk: np.ndarray, crown: np.ndarray) -> list[PartSpec]:
    """Round-crowned trees: trunk ``(K, 2)``, crown ``(K, 2)`` (radius, vertical radius)."""
    k = trunk.shape[0]
    stem = cylinder(1.0, 0.0, 1.0, LABEL_SCENERY_VEGETATION, sides=6)
    ball = icosphere(1.0, (0.0, 0.0, 0.0), LABEL_SCENERY_VEGETATION)
    return [(stem, _stack(trunk[:, 0], trunk[:, 0], trunk[:, 1], k=k), _zero(k)),
            (ball, _stack(crown[:, 0], crown[:, 0], crown[:, 1], k=k),
             _stack(0.0, 0.0, trunk[:, 1] + 0.6 * crown[:, 1], k=k))]


def bush(radius: np.ndarray) -> list[PartSpec]:
    """Bushes: flattened spheres sitting on the ground."""
    k = radius.shape[0]
    ball = icosphere(1.0, (0.0, 0.0, 0.0), LABEL_SCENERY_VEGETATION)
    return [(ball, _stack(radius, radius, 0.7 * radius, k=k), _stack(0.0, 0.0, 0.5 * radius,
                                                                       k=k))]


def light_pole(height: np.ndarray) -> list[PartSpec]:
    """Light poles with an arm and a lamp reaching towards the track (local -y)."""
    k = height.shape[0]
    pole = cylinder(0.12, 0.0, 1.0, LABEL_SCENERY_OBJECT, sides=8)
    arm = merge(box((-0.05, -1.5, 0.0), (0.05, 0.0, 0.1), LABEL_SCENERY_OBJECT),
                box((-0.2, -1.6, -0.15), (0.2, -1.1, 0.0), LABEL_SCENERY_OBJECT))
    return [(pole, _stack(1.0, 1.0, height, k=k), _zero(k)),
            (arm, (1.0, 1.0, 1.0), _stack(0.0, 0.0, height - 0.1, k=k))]


def billboard(size: np.ndarray, lift: np.ndarray) -> list[PartSpec]:
    """Boards of ``size (K, 3)`` (width, thickness, height) on two posts, ``lift (K,)`` above
    the ground; the board spans local x."""
    k = size.shape[0]
    block = unit_box(LABEL_SCENERY_OBJECT)
    w, t, h = size.T
    post = _stack(0.12, 0.12, lift + h, k=k)
    return [(block, size, _stack(0.0, 0.0, lift, k=k)),
            (block, post, _stack(-0.35 * w, 0.5 * t + 0.06, 0.0, k=k)),
            (block, post, _stack(0.35 * w, 0.5 * t + 0.06, 0.0, k=k))]


def fence_panel(length: np.ndarray, height: np.ndarray) -> list[PartSpec]:
    """Fence panels along local x with a post at their start."""
    k = length.shape[0]
    panel = unit_box(LABEL_SCENERY_OBJECT)
    return [(panel, _stack(length, 0.05, height, k=k), _zero(k)),
            (panel, _stack(0.1, 0.1, height + 0.15, k=k), _stack(-0.5 * length, 0.0, 0.0, k=k))]


def fence_post(height: np.ndarray) -> list[PartSpec]:
    """Catch-fence posts, 0.2 m square: the mesh between them is left out, as a LiDAR sees
    through most of it."""
    k = height.shape[0]
    return [(unit_box(LABEL_SCENERY_STRUCTURE), _stack(0.2, 0.2, height, k=k), _zero(k))]
