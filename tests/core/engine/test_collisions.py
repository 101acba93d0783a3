"""The grid-and-kernel collision path (``CollisionWorld.contacts_at``) against shapely.

``contacts_at`` replaces shapely polygons and the STR-tree in the per-frame hot path, so it has
to report exactly what ``contacts`` reports for the polygons ``footprint_polygon`` builds: on
real tracks, for cars touching a wall at distance 0, and with the kernels compiled or not.
"""

from __future__ import annotations

import functools
import json
import math
import os
import subprocess
import sys
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import shapely

import arsim_core
from arsim_core._jit import NUMBA_ENABLED, python_function
from arsim_core.engine.collisions import (
    BARRIER,
    MAX_GRID_CELLS,
    CollisionWorld,
    Contact,
    SegmentGrid,
    footprint_contacts,
    footprint_corners,
    footprint_polygon,
    orientation,
    quads_touch,
    segment_touches_quad,
)
from arsim_core.geometry import Footprint
from arsim_core.track import LABEL_BARRIER, LABEL_ROAD, Track, load_track, track_mesh

MAPS = Path(__file__).resolve().parents[3] / 'maps'
F1TENTH = (0.58, 0.31)
FULL_SCALE = (4.9, 1.9)
NAMES = ('a', 'b', 'c')
HALF = (0.5, 0.25)  # a footprint whose corners are exact binary fractions


def world_of(track: Track, cell_size: float | None = None) -> CollisionWorld:
    mesh = track_mesh(track)
    return CollisionWorld(mesh.vertices, mesh.triangles.astype(np.int64), mesh.labels, cell_size)


def wall_world(walls: Sequence[tuple[tuple[float, float], tuple[float, float]]]) -> CollisionWorld:
    """A world whose barriers are vertical walls standing on the given 2D segments."""
    vertices: list[tuple[float, float, float]] = []
    triangles: list[tuple[int, int, int]] = []
    for (ax, ay), (bx, by) in walls:
        k = len(vertices)
        vertices += [(ax, ay, 0.0), (bx, by, 0.0), (bx, by, 1.0), (ax, ay, 1.0)]
        triangles += [(k, k + 1, k + 2), (k, k + 2, k + 3)]
    return CollisionWorld(np.array(vertices, np.float32).reshape(-1, 3),
                          np.array(triangles, np.int64).reshape(-1, 3),
                          np.full(len(triangles), LABEL_BARRIER, np.uint8))


@functools.lru_cache(maxsize=4)
def segment_tree(world: CollisionWorld) -> shapely.STRtree:
    """Shapely's tree of the world's barrier segments, built once per world (thousands of
    frames query it; a world is its own key, by identity)."""
    return shapely.STRtree(shapely.linestrings(world.grid.segments.reshape(-1, 2, 2)))


def reference(world: CollisionWorld, poses: np.ndarray, half_extents: np.ndarray,
              car_to_car: bool, names: Sequence[str] = NAMES) -> list[Contact]:
    """What shapely's ``intersects`` says of the same footprints and the world's segments."""
    bodies = {name: footprint_polygon(tuple(pose), Footprint(2 * hl, 2 * hw, 1.0))
              for name, pose, (hl, hw) in zip(names[:len(poses)], poses.tolist(),
                                              half_extents.tolist(), strict=True)}
    hits = segment_tree(world).query(list(bodies.values()), predicate='intersects')
    found = [Contact(list(bodies)[i], BARRIER) for i in sorted(set(hits[0].tolist()))]
    if car_to_car:
        for i, name in enumerate(bodies):
            for other in list(bodies)[i + 1:]:
                if bodies[name].intersects(bodies[other]):
                    found += [Contact(name, other), Contact(other, name)]
    return found


def fast(world: CollisionWorld, poses: np.ndarray, half_extents: np.ndarray,
         car_to_car: bool, names: Sequence[str] = NAMES) -> list[Contact]:
    return world.contacts_at(list(names[:len(poses)]), poses, half_extents, car_to_car)


def half_extents_of(size: tuple[float, float], count: int) -> np.ndarray:
    return np.tile([size[0] / 2.0, size[1] / 2.0], (count, 1))


def wall_points(track: Track, rng: np.random.Generator, count: int) -> np.ndarray:
    """Random points on the track's barrier polylines."""
    walls = [w for w in track.walls if len(w) > 1]
    lengths = np.array([len(w) - 1 for w in walls], dtype=float)
    chosen = rng.choice(len(walls), size=count, p=lengths / lengths.sum())
    points = np.empty((count, 2))
    for k, wall in enumerate(chosen):
        line = walls[wall]
        i = rng.integers(0, len(line) - 1)
        points[k] = line[i] + rng.uniform() * (line[i + 1] - line[i])
    return points


def random_frames(track: Track, rng: np.random.Generator, frames: int,
                  size: tuple[float, float]) -> np.ndarray:
    """(frames, 3, 3) poses: near a wall, near the centerline, and near the first car."""
    length = size[0]
    near_wall = wall_points(track, rng, frames) + rng.normal(0.0, 0.6 * length, (frames, 2))
    index = rng.integers(0, len(track.centerline), frames)
    widths = np.maximum(track.width_left[index], track.width_right[index])
    near_centre = track.centerline[index] + rng.uniform(-1.0, 1.0, (frames, 2)) * widths[:, None]
    near_first = near_wall + rng.uniform(-1.2, 1.2, (frames, 2)) * length
    positions = np.stack([near_wall, near_centre, near_first], axis=1)
    yaws = rng.uniform(-math.pi, math.pi, (frames, 3, 1))
    return np.concatenate([positions, yaws], axis=2)


def assert_matches_shapely(world: CollisionWorld, frames: np.ndarray,
                           size: tuple[float, float]) -> tuple[int, int]:
    """Compare every frame both with and without car-car contacts; count contacts found."""
    half = half_extents_of(size, frames.shape[1])
    barrier = cars = 0
    for poses in frames:
        with_cars = reference(world, poses, half, True)
        without_cars = [contact for contact in with_cars if contact.other == BARRIER]
        assert fast(world, poses, half, True) == with_cars, poses.tolist()
        assert fast(world, poses, half, False) == without_cars, poses.tolist()
        barrier += len(without_cars)
        cars += len(with_cars) - len(without_cars)
    return barrier, cars


@pytest.fixture(scope='module')
def ring() -> Track:
    return load_track('arsim_ring', MAPS)


@pytest.fixture(scope='module')
def ring_world(ring: Track) -> CollisionWorld:
    return world_of(ring)


@pytest.fixture(scope='module')
def spa(shared_tracks: Path) -> Track:
    path = shared_tracks / 'tum_racetrack_database' / 'Spa.csv'
    if not path.is_file():
        pytest.skip(f'{path} not found')
    return load_track(path, MAPS)


@pytest.mark.parametrize('size', [F1TENTH, FULL_SCALE], ids=['f1tenth', 'full_scale'])
def test_random_poses_on_the_ring_match_shapely(ring: Track, ring_world: CollisionWorld,
                                                size: tuple[float, float]) -> None:
    frames = random_frames(ring, np.random.default_rng(1), 1500, size)
    barrier, cars = assert_matches_shapely(ring_world, frames, size)
    assert 300 < barrier < 3 * 1500 - 300
    assert cars > 50


@pytest.mark.parametrize('size', [F1TENTH, FULL_SCALE], ids=['f1tenth', 'full_scale'])
def test_random_poses_on_spa_match_shapely(spa: Track, size: tuple[float, float]) -> None:
    frames = random_frames(spa, np.random.default_rng(2), 1500, size)
    barrier, cars = assert_matches_shapely(world_of(spa), frames, size)
    assert 300 < barrier < 3 * 1500 - 300
    assert cars > 50


@pytest.mark.parametrize('cell_size', [0.02, 0.1, 3.0, 100.0])
def test_any_cell_size_gives_the_same_contacts(ring: Track, cell_size: float) -> None:
    world = world_of(ring, cell_size)
    barrier, _ = assert_matches_shapely(world, random_frames(ring, np.random.default_rng(3), 300,
                                                             F1TENTH), F1TENTH)
    assert barrier > 50


def test_too_fine_a_grid_is_coarsened(ring: Track) -> None:
    world = world_of(ring, 1e-4)
    grid = world.grid
    assert grid.cell_size > 1e-4
    assert grid.shape[0] * grid.shape[1] <= MAX_GRID_CELLS
    assert grid.cell_start.nbytes <= 4 * (MAX_GRID_CELLS + 1)
    assert_matches_shapely(world, random_frames(ring, np.random.default_rng(4), 100, F1TENTH),
                           F1TENTH)


@pytest.mark.parametrize('track', ['ring', 'spa'])
def test_default_grid_is_small(track: str, request: pytest.FixtureRequest) -> None:
    grid = world_of(request.getfixturevalue(track)).grid
    assert grid.cell_start.nbytes + grid.cell_segments.nbytes + grid.segments.nbytes < 4e6
    assert len(grid.cell_segments) < 4 * len(grid.segments)


def test_grid_files_each_segment_once_in_each_cell_it_meets(ring_world: CollisionWorld) -> None:
    grid = ring_world.grid
    assert (grid.segments[:, 0] <= grid.segments[:, 2]).all()
    assert len(np.unique(grid.segments, axis=0)) == len(grid.segments)
    x0, y0, inverse, nx, ny = grid.frame
    for index in range(0, len(grid.segments), 37):
        ax, ay, bx, by = grid.segments[index]
        columns = np.clip(np.floor((np.array([ax, bx]) - x0) * inverse), 0, nx - 1).astype(int)
        rows = np.clip(np.floor((np.sort([ay, by]) - y0) * inverse), 0, ny - 1).astype(int)
        for row in range(rows[0], rows[1] + 1):
            for column in range(columns[0], columns[1] + 1):
                cell = int(row * nx + column)
                members = grid.cell_segments[grid.cell_start[cell]:grid.cell_start[cell + 1]]
                assert (members == index).sum() == 1


@pytest.mark.parametrize('size', [F1TENTH, FULL_SCALE], ids=['f1tenth', 'full_scale'])
def test_footprint_edge_along_a_real_wall_matches_shapely(ring_world: CollisionWorld,
                                                          size: tuple[float, float]) -> None:
    """A footprint edge laid on a wall segment, then moved off it by a few float steps: the
    corners are almost collinear with the segment, so only exact predicates agree with GEOS."""
    rng = np.random.default_rng(5)
    half = half_extents_of(size, 1)
    hl, hw = half[0]
    segments = ring_world.grid.segments
    outcomes = set()
    for index in rng.choice(len(segments), 150, replace=False):
        ax, ay, bx, by = segments[index]
        yaw = math.atan2(by - ay, bx - ax)
        normal = np.array([-math.sin(yaw), math.cos(yaw)])
        middle = np.array([(ax + bx) / 2.0, (ay + by) / 2.0])
        for side in (1.0, -1.0):
            for shift in (0.0, 1e-16, -1e-16, 1e-15, -1e-15, 1e-13, -1e-13, 1e-9, -1e-9):
                for along in (0.0, hl):
                    centre = middle + side * (hw + shift) * normal + along * (
                        np.array([bx - ax, by - ay]) / math.hypot(bx - ax, by - ay))
                    poses = np.array([[centre[0], centre[1], yaw]])
                    expected = reference(ring_world, poses, half, False)
                    assert fast(ring_world, poses, half, False) == expected, poses.tolist()
                    outcomes.add(bool(expected))
    assert outcomes == {True, False}


def test_segment_end_exactly_on_a_footprint_edge_of_a_real_wall(
        ring_world: CollisionWorld) -> None:
    """Axis-aligned footprints whose edge passes exactly through a segment's end point."""
    hl, hw = F1TENTH[0] / 2.0, F1TENTH[1] / 2.0
    half = half_extents_of(F1TENTH, 1)
    touching = 0
    for ax, ay in ring_world.grid.segments[::11, :2]:
        x = ax - hl
        while x + hl < ax:
            x = math.nextafter(x, math.inf)
        while x + hl > ax:
            x = math.nextafter(x, -math.inf)
        if x + hl != ax:
            continue
        on_edge = np.array([[x, ay, 0.0]])
        front_left = footprint_polygon((x, ay, 0.0), Footprint(*F1TENTH, 1.0)).exterior.coords[0]
        assert front_left[0] == ax
        assert fast(ring_world, on_edge, half, False) == [Contact('a', BARRIER)]
        assert reference(ring_world, on_edge, half, False) == [Contact('a', BARRIER)]
        touching += 1
        beside = np.array([[math.nextafter(x, -math.inf), ay, 0.0], [x, ay + hw, 0.0],
                           [x, math.nextafter(ay + hw, math.inf), 0.0]])
        for pose in beside:
            poses = pose[None, :]
            assert fast(ring_world, poses, half, False) == reference(ring_world, poses, half,
                                                                     False)
    assert touching > 100


def below(value: float) -> float:
    """The float just below ``value``."""
    return math.nextafter(value, -math.inf)


def test_exact_touching_in_a_plain_world() -> None:
    """Footprints at distance 0 from a wall, and one float step away (corners of the footprint
    with half extents 0.5, 0.25 are exact sums at yaw 0)."""
    world = wall_world([((1.0, -2.0), (1.0, 2.0)),
                        ((-3.0, 0.25), (-2.0, 0.25)),
                        ((5.5, 0.25), (6.5, 1.25))])   # on the line y = x - 5.25
    half = np.array([HALF])
    cases = {
        (0.5, 0.0, 0.0): True,                  # front edge along the wall x = 1
        (below(1.0) - 0.5, 0.0, 0.0): False,    # front edge one step short of it
        (0.5, 2.25, 0.0): True,                 # front-right corner on the wall's end (1, 2)
        (0.5, math.nextafter(2.25, 3.0), 0.0): False,
        (-2.5, 0.0, 0.0): True,                 # left edge along the wall y = 0.25
        (-2.5, below(0.25) - 0.25, 0.0): False,
        (-2.5, 0.5, 0.0): True,                 # right edge along it
        (5.0, 0.0, 0.0): True,                  # front-left corner on the end point (5.5, 0.25)
        (below(5.5) - 0.5, 0.0, 0.0): False,
        (5.5, 1.0, 0.0): True,                  # front-right corner (6, 0.75) mid-wall
        (below(6.0) - 0.5, 1.0, 0.0): False,
    }
    for pose, touches in cases.items():
        poses = np.array([pose])
        expected = [Contact('a', BARRIER)] if touches else []
        assert fast(world, poses, half, True) == expected, pose
        assert reference(world, poses, half, True) == expected, pose


def test_segment_inside_a_footprint() -> None:
    world = wall_world([((-0.1, 0.0), (0.1, 0.05))])
    half = np.array([HALF])
    for pose in ((0.0, 0.0, 0.0), (0.05, -0.05, 1.0), (0.0, 0.0, math.pi)):
        poses = np.array([pose])
        assert fast(world, poses, half, False) == [Contact('a', BARRIER)]
        assert reference(world, poses, half, False) == [Contact('a', BARRIER)]
    quad = np.array([1.0, 1.0, -1.0, 1.0, -1.0, -1.0, 1.0, -1.0])
    assert segment_touches_quad(quad, -0.5, 0.1, 0.5, -0.2)
    assert segment_touches_quad(quad, 0.0, 0.0, 0.0, 0.0)
    assert segment_touches_quad(quad, 2.0, 0.0, 0.0, 2.0)   # through the corner (1, 1)
    assert not segment_touches_quad(quad, 2.5, 0.0, 0.0, 2.5)


def test_segments_inside_a_footprint_on_the_ring(ring_world: CollisionWorld) -> None:
    """A full-scale car over the ring's short segments holds whole segments inside."""
    half = half_extents_of(FULL_SCALE, 1)
    for ax, ay, bx, by in ring_world.grid.segments[::97]:
        poses = np.array([[(ax + bx) / 2.0, (ay + by) / 2.0, math.atan2(by - ay, bx - ax)]])
        assert fast(ring_world, poses, half, False) == [Contact('a', BARRIER)]
        assert reference(ring_world, poses, half, False) == [Contact('a', BARRIER)]


CAR_PAIRS = {
    'touching end to end': ((1.0, 0.0, 0.0), True),
    'a float step apart': ((math.nextafter(1.0, 2.0), 0.0, 0.0), False),
    'touching side by side': ((0.3, 0.5, 0.0), True),
    'touching corner to corner': ((1.0, 0.5, 0.0), True),
    'overlapping': ((0.6, 0.1, 0.3), True),
    'same pose': ((0.0, 0.0, 0.0), True),
    'rotated corner poking in': ((0.0, 0.75, math.pi / 4), True),
    'rotated corner just clear': ((0.0, 0.81, math.pi / 4), False),
    'crossed': ((0.0, 0.0, math.pi / 2), True),
    'disjoint': ((3.0, -2.0, 1.0), False),
}


@pytest.mark.parametrize('name', list(CAR_PAIRS))
def test_car_pairs(name: str) -> None:
    world = wall_world([])
    pose, touches = CAR_PAIRS[name]
    poses = np.array([(0.0, 0.0, 0.0), pose])
    half = np.array([HALF, HALF])
    expected = [Contact('a', 'b'), Contact('b', 'a')] if touches else []
    assert fast(world, poses, half, True) == expected
    assert reference(world, poses, half, True) == expected
    assert fast(world, poses, half, False) == []


def test_parallel_rotated_cars_with_overlapping_bounding_boxes() -> None:
    """Diagonal cars side by side: their bounding boxes overlap, only a gap separates them."""
    world = wall_world([])
    half = np.array([HALF, HALF])
    across = np.array([math.cos(-math.pi / 4), math.sin(-math.pi / 4)])
    for gap, touches in ((0.05, False), (-0.05, True)):
        b = (2 * HALF[1] + gap) * across
        poses = np.array([(0.0, 0.0, math.pi / 4), (b[0], b[1], math.pi / 4)])
        expected = [Contact('a', 'b'), Contact('b', 'a')] if touches else []
        assert fast(world, poses, half, True) == expected
        assert reference(world, poses, half, True) == expected


def test_random_car_pairs_match_shapely() -> None:
    world = wall_world([])
    rng = np.random.default_rng(6)
    found = 0
    for _ in range(3000):
        size = (F1TENTH, FULL_SCALE)[rng.integers(0, 2)]
        half = np.array([[size[0] / 2, size[1] / 2], [rng.uniform(0.05, 1.0) * size[0] / 2,
                                                      rng.uniform(0.05, 1.0) * size[1] / 2]])
        poses = np.column_stack([rng.normal(0.0, 0.7 * size[0], (2, 2)),
                                 rng.uniform(-math.pi, math.pi, 2)])
        expected = reference(world, poses, half, True)
        assert fast(world, poses, half, True) == expected, poses.tolist()
        found += bool(expected)
    assert 300 < found < 2700


def test_barrier_and_car_contacts_in_order() -> None:
    world = wall_world([((1.0, -2.0), (1.0, 2.0))])
    names = ('w', 'x', 'y', 'z')
    poses = np.array([(3.0, 5.0, 0.0),      # alone
                      (0.6, 0.0, 0.2),      # on the wall, overlapping z
                      (1.2, -1.5, 0.0),     # on the wall, touching nothing else
                      (0.0, 0.3, 0.0)])     # overlapping x
    half = np.array([HALF] * 4)
    expected = [Contact('x', BARRIER), Contact('y', BARRIER), Contact('x', 'z'),
                Contact('z', 'x')]
    assert fast(world, poses, half, True, names) == expected
    assert reference(world, poses, half, True, names) == expected
    assert fast(world, poses, half, False, names) == expected[:2]


def test_empty_world() -> None:
    mesh_free = CollisionWorld(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.int64),
                               np.zeros(0, np.uint8))
    road_only = CollisionWorld(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32),
                               np.array([[0, 1, 2]], np.int64), np.array([LABEL_ROAD], np.uint8))
    for world in (mesh_free, road_only):
        assert len(world.grid.segments) == 0
        half = np.array([HALF, HALF])
        poses = np.array([(0.0, 0.0, 0.0), (0.5, 0.0, 0.5)])
        assert fast(world, poses, half, True) == [Contact('a', 'b'), Contact('b', 'a')]
        assert fast(world, poses[:1], half[:1], True) == []
        assert world.contacts_at([], np.zeros((0, 3)), np.zeros((0, 2)), True) == []


def test_mismatched_arguments_are_refused(ring_world: CollisionWorld) -> None:
    with pytest.raises(ValueError, match='half_extents'):
        ring_world.contacts_at(['a', 'b'], np.zeros((2, 3)), np.ones((1, 2)), True)
    with pytest.raises(ValueError, match='cell_size'):
        SegmentGrid(np.zeros((0, 4)), cell_size=0.0)


def exact_orientation(a: tuple[float, float], b: tuple[float, float],
                      c: tuple[float, float]) -> int:
    ax, ay, bx, by, cx, cy = (Fraction(v) for v in (*a, *b, *c))
    det = (ax - cx) * (by - cy) - (ay - cy) * (bx - cx)
    return (det > 0) - (det < 0)


def test_orientation_is_exact_compiled_and_in_python() -> None:
    """Nearly collinear points, where the plain float determinant often has the wrong sign:
    Kettner et al.'s grid of points a few float steps from (0.5, 0.5), near the line through
    (12, 12) and (24, 24) or (17.3, 17.3), in every rotation of the triple, and random
    near-collinear ones."""
    step = 2.0 ** -53
    triples = []
    for q, r in (((12.0, 12.0), (24.0, 24.0)), ((12.0, 12.0), (17.3, 17.3))):
        for i in range(32):
            for j in range(32):
                p = (0.5 + i * step, 0.5 + j * step)
                triples += [(p, q, r), (q, r, p), (r, p, q)]
    rng = np.random.default_rng(7)
    for _ in range(1000):
        a = rng.uniform(-2000.0, 2000.0, 2)
        b = a + rng.normal(0.0, 10.0 ** rng.uniform(-3, 3), 2)
        c = a + rng.choice([0.0, 1.0, 0.5, rng.uniform(-2.0, 3.0)]) * (b - a)
        c = c + rng.integers(-2, 3, 2) * np.spacing(c)
        triples.append((tuple(a.tolist()), tuple(b.tolist()), tuple(c.tolist())))
    implementations = {orientation, python_function(orientation)}
    float_zero = float_flipped = 0
    signs = set()
    for points in triples:
        expected = exact_orientation(*points)
        (ax, ay), (bx, by), (cx, cy) = points
        naive = (ax - cx) * (by - cy) - (ay - cy) * (bx - cx)
        if naive == 0.0:
            float_zero += expected != 0
        else:
            float_flipped += (naive > 0) != (expected > 0)
        signs.add(expected)
        for implementation in implementations:
            assert implementation(ax, ay, bx, by, cx, cy) == expected, points
    assert float_zero > 100
    assert float_flipped > 100
    assert signs == {-1, 0, 1}


def test_quads_touch_in_python_and_compiled() -> None:
    square = np.array([1.0, 1.0, -1.0, 1.0, -1.0, -1.0, 1.0, -1.0])
    for implementation in {quads_touch, python_function(quads_touch)}:
        assert implementation(square, square + np.tile([2.0, 0.0], 4))
        assert not implementation(square, square + np.tile([math.nextafter(2.0, 3.0), 0.0], 4))
        diamond = np.array([1.0, 0.0, 0.0, 1.0, -1.0, 0.0, 0.0, -1.0])
        assert implementation(square, diamond + np.tile([2.0, 0.0], 4))
        assert not implementation(square, diamond + np.tile([2.0, 2.0], 4))


def test_corners_are_those_of_footprint_polygon() -> None:
    """Bit for bit, compiled and in Python: the exact tests then see shapely's very points."""
    rng = np.random.default_rng(10)
    quad = np.empty(8)
    for implementation in {footprint_corners, python_function(footprint_corners)}:
        for _ in range(2000):
            x, y = rng.uniform(-2000.0, 2000.0, 2)
            yaw = rng.uniform(-10.0, 10.0)
            length, width = rng.uniform(0.1, 5.0, 2)
            implementation(x, y, yaw, length / 2.0, width / 2.0, quad)
            polygon = footprint_polygon((x, y, yaw), Footprint(length, width, 1.0))
            assert quad.tolist() == [v for corner in polygon.exterior.coords[:4] for v in corner]


def test_python_kernel_matches_compiled(ring: Track, ring_world: CollisionWorld) -> None:
    if not NUMBA_ENABLED:
        pytest.skip('numba is not in use')
    compiled = footprint_contacts
    plain = python_function(footprint_contacts)
    assert plain is not compiled
    grid = ring_world.grid
    arrays = (grid.segments, grid.cell_start, grid.cell_segments, grid.frame)
    frames = random_frames(ring, np.random.default_rng(8), 300, F1TENTH)
    half = half_extents_of(F1TENTH, 3)
    found = 0
    for poses in frames:
        codes = compiled(poses, half, True, *arrays)
        assert plain(poses, half, True, *arrays).tolist() == codes.tolist()
        found += len(codes)
    assert found > 50


PURE_PYTHON_SCRIPT = '''
import json, sys
import numpy as np
from arsim_core._jit import NUMBA_ENABLED
from arsim_core.engine.collisions import CollisionWorld, footprint_contacts
from arsim_core.track import load_track, track_mesh
from pathlib import Path
mesh = track_mesh(load_track('arsim_ring', Path(sys.argv[1])))
world = CollisionWorld(mesh.vertices, mesh.triangles.astype(np.int64), mesh.labels)
data = json.loads(sys.stdin.read())
found = [[[c.car, c.other] for c in world.contacts_at(['a', 'b', 'c'], np.array(poses),
                                                     np.array(data['half']), True)]
         for poses in data['frames']]
print(json.dumps({'numba': NUMBA_ENABLED, 'compiled': hasattr(footprint_contacts, 'py_func'),
                  'found': found}))
'''


def test_without_numba_the_same_contacts(ring: Track, ring_world: CollisionWorld) -> None:
    """The whole path as plain Python (``ARSIM_NUMBA=0``) in a fresh interpreter."""
    frames = random_frames(ring, np.random.default_rng(9), 150, F1TENTH)
    half = half_extents_of(F1TENTH, 3)
    package_root = Path(arsim_core.__file__).resolve().parents[1]
    env = dict(os.environ, ARSIM_NUMBA='0', PYTHONPATH=os.pathsep.join(
        [str(package_root), os.environ.get('PYTHONPATH', '')]))
    done = subprocess.run([sys.executable, '-c', PURE_PYTHON_SCRIPT, str(MAPS)], env=env,
                          input=json.dumps({'frames': frames.tolist(), 'half': half.tolist()}),
                          capture_output=True, text=True, check=True, timeout=300)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result['numba'] is False
    assert result['compiled'] is False
    expected = [[[c.car, c.other] for c in fast(ring_world, poses, half, True)]
                for poses in frames]
    assert result['found'] == expected
    assert sum(map(len, expected)) > 50
