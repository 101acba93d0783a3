"""Multi-car geometry: starting grid, footprints and collisions against barriers and each other.

Footprints are rectangles centred on base_link; barriers come from the track mesh (triangles
labelled as barrier or cone), so collisions agree with what the sensors see.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import shapely

from arsim_core.config.profile import Footprint
from arsim_core.config.scenario import CarSpec
from arsim_core.errors import ConfigError

Pose2D = tuple[float, float, float]
OBSTACLE_LABELS = (1, 2, 3)  # barrier, blue cone, yellow cone
BARRIER = 'barrier'


def footprint_polygon(pose: Pose2D, footprint: Footprint) -> shapely.Polygon:
    x, y, yaw = pose
    c, s = math.cos(yaw), math.sin(yaw)
    hl, hw = footprint.length / 2.0, footprint.width / 2.0
    corners = [(hl, hw), (-hl, hw), (-hl, -hw), (hl, -hw)]
    return shapely.Polygon([(x + c * px - s * py, y + s * px + c * py) for px, py in corners])


def grid_slot(start: Pose2D, index: int, footprint: Footprint) -> Pose2D:
    """Start pose of the car at ``index``: the first on the start pose, the others in pairs
    side by side, one and a half car lengths per row behind it."""
    if index == 0:
        return start
    x, y, yaw = start
    back = (index + 1) // 2 * 1.5 * footprint.length
    side = (0.8 if index % 2 else -0.8) * footprint.width
    c, s = math.cos(yaw), math.sin(yaw)
    return x - back * c - side * s, y - back * s + side * c, yaw


def start_poses(cars: Sequence[CarSpec], track_start: Pose2D) -> dict[str, Pose2D]:
    """Every car's start pose: its own ``pose`` from the settings, or a grid slot."""
    return {car.name: car.pose or grid_slot(track_start, car.index, car.profile.footprint)
            for car in cars}


def check_start_poses(cars: Sequence[CarSpec], poses: Mapping[str, Pose2D],
                      source: str) -> None:
    """Refuse overlapping start poses, naming both cars."""
    bodies = [(car, footprint_polygon(poses[car.name], car.profile.footprint)) for car in cars]
    for i, (car, body) in enumerate(bodies):
        for other, other_body in bodies[:i]:
            if body.intersects(other_body):
                msg = (f'{source}: cars[{car.index}]: car {car.name!r} starts at '
                       f'{tuple(round(v, 3) for v in poses[car.name])}, overlapping car '
                       f'{other.name!r} at {tuple(round(v, 3) for v in poses[other.name])}; '
                       f'give one of them another pose')
                raise ConfigError(msg)


@dataclass(frozen=True)
class Contact:
    car: str
    other: str  # another car's name, or BARRIER


class CollisionWorld:
    """Barrier segments in an STR-tree; checks all footprints of one frame at once."""

    def __init__(self, vertices: np.ndarray, triangles: np.ndarray, labels: np.ndarray) -> None:
        obstacles = triangles[np.isin(labels, OBSTACLE_LABELS)]
        edges = np.concatenate([obstacles[:, [0, 1]], obstacles[:, [1, 2]],
                                obstacles[:, [2, 0]]])
        segments = vertices[edges][:, :, :2].astype(np.float64)
        lengths = np.linalg.norm(segments[:, 1] - segments[:, 0], axis=1)
        segments = np.unique(np.round(segments[lengths > 1e-6], 6), axis=0)
        self._segments = shapely.linestrings(segments)
        self._tree = shapely.STRtree(self._segments)

    def contacts(self, bodies: Mapping[str, shapely.Polygon],
                 car_to_car: bool) -> list[Contact]:
        found = []
        names = list(bodies)
        hits = self._tree.query(list(bodies.values()), predicate='intersects')
        for car_index in sorted(set(hits[0].tolist())):
            found.append(Contact(names[car_index], BARRIER))
        if car_to_car:
            for i, name in enumerate(names):
                for other in names[i + 1:]:
                    if bodies[name].intersects(bodies[other]):
                        found += [Contact(name, other), Contact(other, name)]
        return found
