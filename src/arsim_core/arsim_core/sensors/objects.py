"""3D ground truth: the cones of a track and the other cars, as boxes in a car's own frame.

The engine's objects sensors (``arsim_core.sensors.computed``) use these as rows of
``COLUMNS`` (float64 arrays, one row per box), so a frame carries them as any other array.

Cones are found in the track mesh itself (its cone-labelled triangles, grouped into the meshes
they form), so they are the cones every sensor sees, wherever the track came from. Cars are
their footprint boxes at their poses, as the other cars' sensors see them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from arsim_core import labels
from arsim_core.sensors.ground_truth import Labelled
from arsim_core.track.mesh import PLACED_CONE_SIZES

CONE_LABELS = labels.CONES
WELD_M = 1e-4  # vertices this close are one (meshes that repeat a vertex per triangle)
#: The columns of the boxes' rows, one row per box: centre [m], heading [rad], size along the
#: box's own axes [m], semantic label (``arsim_core.labels``) and id: a cone's number on its
#: track, a car's index in the scenario.
COLUMNS = ('x', 'y', 'z', 'yaw', 'length', 'width', 'height', 'label', 'id')
#: The columns of a track's placed cones' state rows (``arsim_core.engine.cones.ConeField``):
#: where each cone's base is, where its tip points when it lies (0 while it stands), 1.0 if it
#: lies, and its label. A cones sensor's rows have the same columns in the car's frame.
CONE_STATE_COLUMNS = ('x', 'y', 'yaw', 'down', 'label')


@dataclass(frozen=True)
class Box3D(Labelled):
    """An object's box: centre [m], size along its own axes [m] and heading [rad]."""

    x: float
    y: float
    z: float
    length: float
    width: float
    height: float
    yaw: float = 0.0
    id: str = ''  # the car's name, or the cone's number on its track


def track_cones(vertices: NDArray[np.floating], triangles: NDArray[np.integer],
                triangle_labels: NDArray[np.integer]) -> list[Box3D]:
    """Every cone of a track mesh, as the upright box around its triangles."""
    is_cone = np.isin(triangle_labels, CONE_LABELS)
    cone_triangles = np.asarray(triangles)[is_cone]
    if not len(cone_triangles):
        return []
    # Imported here, as scipy.interpolate in track.polylines: a process that loads no cones
    # (every process of most simulations) need not pay for scipy.sparse.
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    # Weld the vertices, then the cones are the connected groups of triangles.
    _, welded = np.unique(np.round(np.asarray(vertices) / WELD_M).astype(np.int64), axis=0,
                          return_inverse=True)
    corners = welded.reshape(-1)[cone_triangles]
    edges = np.concatenate([corners[:, [0, 1]], corners[:, [1, 2]]])
    count = int(welded.max()) + 1
    graph = coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(count, count))
    _, component = connected_components(graph, directed=False)
    groups = component[corners[:, 0]]
    cone_labels = np.asarray(triangle_labels)[is_cone]
    cones = []
    for index, group in enumerate(np.unique(groups)):
        members = groups == group
        points = np.asarray(vertices)[cone_triangles[members].reshape(-1)]
        low, high = points.min(axis=0), points.max(axis=0)
        (x, y, z), (length, width, height) = (low + high) / 2.0, high - low
        cones.append(Box3D(int(cone_labels[members][0]), float(x), float(y), float(z),
                           float(length), float(width), float(height), id=str(index)))
    return cones


def track_cone_rows(vertices: NDArray[np.floating], triangles: NDArray[np.integer],
                    triangle_labels: NDArray[np.integer]) -> NDArray[np.float64]:
    """``track_cones`` as rows of ``COLUMNS`` in the world frame; a cone's id is its number."""
    cones = track_cones(vertices, triangles, triangle_labels)
    rows = np.array([(c.x, c.y, c.z, c.yaw, c.length, c.width, c.height, c.label, int(c.id))
                     for c in cones], np.float64)
    return rows.reshape(-1, len(COLUMNS))


def placed_cone_rows(state_rows: NDArray[np.floating]) -> NDArray[np.float64]:
    """The boxes of a track's placed cones from their state rows
    (``CONE_STATE_COLUMNS``), as rows of ``COLUMNS`` in the world frame:
    upright where they stand, along the ground (their tip along their yaw) where they lie; a
    cone's id is its number on the track."""
    state = np.asarray(state_rows, np.float64).reshape(-1, len(CONE_STATE_COLUMNS))
    sizes = np.array([PLACED_CONE_SIZES[int(label)] for label in state[:, 4]],
                     np.float64).reshape(-1, 2)
    radius, height = sizes[:, 0], sizes[:, 1]
    down = state[:, 3] != 0.0
    rows = np.empty((len(state), len(COLUMNS)))
    rows[:, 0:2] = state[:, 0:2]
    rows[:, 2] = np.where(down, radius, height / 2.0)
    rows[:, 3] = state[:, 2]
    rows[:, 4] = np.where(down, height, 2.0 * radius)
    rows[:, 5] = 2.0 * radius
    rows[:, 6] = np.where(down, 2.0 * radius, height)
    rows[:, 7] = state[:, 4]
    rows[:, 8] = np.arange(len(state))
    return rows


def car_rows(poses: NDArray[np.floating], sizes: NDArray[np.floating],
             ids: NDArray[np.integer]) -> NDArray[np.float64]:
    """Cars' footprint boxes as rows of ``COLUMNS`` in the world frame: ``poses`` (n, 3) x,
    y, yaw of their base_link, ``sizes`` (n, 3) their footprints' length, width and height
    (the box stands on the ground), ``ids`` their numbers (the cars' index in the scenario)."""
    poses, sizes = np.asarray(poses, np.float64), np.asarray(sizes, np.float64)
    rows = np.empty((len(poses), len(COLUMNS)))
    rows[:, 0:2] = poses[:, 0:2]
    rows[:, 2] = sizes[:, 2] / 2.0
    rows[:, 3] = poses[:, 2]
    rows[:, 4:7] = sizes
    rows[:, 7] = labels.CAR
    rows[:, 8] = ids
    return rows


def _near_in_pose_frame(pose: tuple[float, float, float], world: NDArray[np.float64],
                        yaw_column: int, range_m: float) -> NDArray[np.float64]:
    """The rows of ``world`` (x and y first, a yaw in ``yaw_column``, world frame) whose x, y
    lie within ``range_m`` of ``pose`` (x, y, yaw), moved into that pose's frame (as
    ``geometry.relative_pose`` puts them); the other columns copied as they are."""
    x, y, yaw = pose
    c, s = math.cos(yaw), math.sin(yaw)
    dx, dy = world[:, 0] - x, world[:, 1] - y
    near = np.hypot(dx, dy) <= range_m
    seen = world[near]  # a copy: boolean indexing
    seen[:, 0] = c * dx[near] + s * dy[near]
    seen[:, 1] = -s * dx[near] + c * dy[near]
    turn = seen[:, yaw_column] - yaw
    seen[:, yaw_column] = np.arctan2(np.sin(turn), np.cos(turn))
    return seen


def seen_from(pose: tuple[float, float, float], rows: NDArray[np.floating],
              range_m: float) -> NDArray[np.float64]:
    """The boxes of ``rows`` (``COLUMNS``, world frame) whose centre is within ``range_m`` of
    ``pose`` (x, y, yaw), in that pose's frame."""
    return _near_in_pose_frame(pose, np.asarray(rows, np.float64), 3, range_m)


def cones_seen_from(pose: tuple[float, float, float], state_rows: NDArray[np.floating],
                    range_m: float) -> NDArray[np.float64]:
    """The placed cones' state rows (``CONE_STATE_COLUMNS``, world frame) whose base is within
    ``range_m`` of ``pose`` (x, y, yaw), in that pose's frame: EUFS sim's ground-truth cones.
    A standing cone has no heading: its yaw stays 0."""
    world = np.asarray(state_rows, np.float64).reshape(-1, len(CONE_STATE_COLUMNS))
    local = _near_in_pose_frame(pose, world, 2, range_m)
    local[:, 2] = np.where(local[:, 3] != 0.0, local[:, 2], 0.0)
    return local
