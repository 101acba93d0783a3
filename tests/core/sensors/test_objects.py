"""3D ground truth: cones found in a track mesh as the cones it was built with, and boxes of
cones and cars seen from a car, in its frame."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arsim_core import labels
from arsim_core.sensors.objects import (
    COLUMNS,
    car_rows,
    placed_cone_rows,
    seen_from,
    track_cones,
)
from arsim_core.track import load_track, track_mesh
from arsim_core.track.mesh import PLACED_CONE_SIZES


def test_the_cones_of_a_track_mesh_are_the_cones_it_was_built_with(repo_root) -> None:
    track = load_track(repo_root / 'maps' / 'arsim_ring')
    mesh = track_mesh(track, cones=True)
    cones = track_cones(mesh.vertices, mesh.triangles, mesh.labels)
    # The builder makes each cone of 14 triangles (8 sides and a 6-triangle base).
    for label, name in ((labels.CONE_BLUE, 'blue_cone'), (labels.CONE_YELLOW, 'yellow_cone')):
        built = int((mesh.labels == label).sum()) // 14
        assert built > 5 and sum(c.name == name for c in cones) == built
    for cone in cones:  # small upright boxes standing on the ground
        assert 0.05 < cone.length < 0.5 and cone.length == pytest.approx(cone.width, rel=0.1)
        assert cone.z == pytest.approx(cone.height / 2.0, abs=1e-6) and cone.yaw == 0.0
    assert len({c.id for c in cones}) == len(cones)


def test_cones_stay_apart_even_when_a_mesh_repeats_its_vertices_per_triangle() -> None:
    # Two tetrahedra a metre apart, every triangle with vertices of its own.
    tetra = np.array([[0, 0, 0], [0.2, 0, 0], [0, 0.2, 0], [0.1, 0.1, 0.3]])
    faces = np.array([[0, 1, 2], [0, 1, 3], [1, 2, 3], [0, 2, 3]])
    vertices, triangles = [], []
    for offset in ((0.0, 0.0, 0.0), (1.0, 0.0, 0.0)):
        for face in faces:
            triangles.append(list(range(len(vertices), len(vertices) + 3)))
            vertices.extend(tetra[face] + offset)
    cones = track_cones(np.array(vertices), np.array(triangles),
                        np.full(len(triangles), labels.CONE_YELLOW))
    assert [(round(c.x, 3), round(c.length, 3)) for c in cones] == [(0.1, 0.2), (1.1, 0.2)]
    assert {c.name for c in cones} == {'yellow_cone'}


def test_boxes_are_seen_in_the_cars_frame_within_its_range() -> None:
    cones = np.array([[3.0, 5.0, 0.15, 0.0, 0.2, 0.2, 0.3, labels.CONE_BLUE, 0],  # ahead
                      [1.0, -4.0, 0.15, 0.0, 0.2, 0.2, 0.3, labels.CONE_BLUE, 1]])  # behind
    other = car_rows(np.array([[1.0, 6.0, math.pi]]), np.array([[0.5, 0.3, 0.2]]),
                     np.array([1]))
    seen = seen_from((1.0, 2.0, math.pi / 2), np.concatenate([cones, other]), range_m=5.0)
    assert seen.shape == (2, len(COLUMNS))
    assert seen[:, [0, 1, 3, 7, 8]] == pytest.approx(np.array([
        [3.0, -2.0, -math.pi / 2, labels.CONE_BLUE, 0],
        [4.0, 0.0, math.pi / 2, labels.CAR, 1]]))
    assert seen[1, 2] == pytest.approx(0.1)  # the car's box stands on the ground
    assert seen_from((0.0, 0.0, 0.0), cones, range_m=1.0).shape == (0, len(COLUMNS))


def test_placed_cones_stand_upright_or_lie_along_their_tip() -> None:
    radius, height = PLACED_CONE_SIZES[labels.CONE_ORANGE]
    state = np.array([[1.0, 2.0, 0.0, 0.0, labels.CONE_ORANGE],  # standing
                      [3.0, 4.0, 0.7, 1.0, labels.CONE_ORANGE]])  # lying, tip at yaw 0.7
    rows = placed_cone_rows(state)
    assert rows == pytest.approx(np.array([
        [1.0, 2.0, height / 2, 0.0, 2 * radius, 2 * radius, height, labels.CONE_ORANGE, 0],
        [3.0, 4.0, radius, 0.7, height, 2 * radius, 2 * radius, labels.CONE_ORANGE, 1]]))
    assert placed_cone_rows(np.zeros((0, 5))).shape == (0, len(COLUMNS))
