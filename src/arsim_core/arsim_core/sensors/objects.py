"""3D ground truth: the cones of a track and the other cars, as boxes in a car's own frame.

Cones are found in the track mesh itself (its cone-labelled triangles, grouped into the meshes
they form), so they are the cones every sensor sees, wherever the track came from. Cars are
their footprint boxes at their poses, as the other cars' sensors see them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from arsim_core import labels
from arsim_core.geometry import Footprint, relative_pose
from arsim_core.sensors.ground_truth import Labelled
from arsim_core.track.mesh import PLACED_CONE_SIZES

CONE_LABELS = labels.CONES
WELD_M = 1e-4  # vertices this close are one (meshes that repeat a vertex per triangle)


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


def placed_cone_boxes(rows: NDArray[np.floating]) -> list[Box3D]:
    """The boxes of a track's placed cones from their state rows
    (``arsim_core.engine.cones.STATE_COLUMNS``): upright where they stand, along the ground
    where they lie; a cone's id is its number on the track."""
    boxes = []
    for index, (x, y, yaw, down, label) in enumerate(np.asarray(rows).tolist()):
        radius, height = PLACED_CONE_SIZES[int(label)]
        if down:
            size, z = (height, 2.0 * radius, 2.0 * radius), radius
        else:
            size, z = (2.0 * radius, 2.0 * radius, height), height / 2.0
        boxes.append(Box3D(int(label), x, y, z, *size, yaw, id=str(index)))
    return boxes


def car_box(name: str, footprint: Footprint, pose: tuple[float, float, float],
            z: float = 0.0) -> Box3D:
    """A car's footprint box at ``pose`` (x, y, yaw of base_link), from ``z`` up."""
    return Box3D(labels.CAR, pose[0], pose[1], z + footprint.height / 2.0, footprint.length,
                 footprint.width, footprint.height, pose[2], name)


def seen_from(pose: tuple[float, float, float], boxes: Iterable[Box3D],
              range_m: float) -> list[Box3D]:
    """``boxes`` within ``range_m`` of ``pose`` (x, y, yaw), in that pose's frame."""
    near = []
    for box in boxes:
        x, y, yaw = relative_pose(pose, (box.x, box.y, box.yaw))
        if math.hypot(x, y) <= range_m:
            near.append(replace(box, x=x, y=y, yaw=yaw))
    return near


def cars_around(car: str, poses: Mapping[str, tuple[float, float, float]],
                footprints: Mapping[str, Footprint]) -> list[Box3D]:
    """The boxes of every car but ``car``."""
    return [car_box(name, footprints[name], pose) for name, pose in poses.items()
            if name != car]
