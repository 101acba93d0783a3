"""A level 2D LiDAR is rasterised into the world's slice at its height (``plane_scan``) and
must measure what the 3D caster (Embree's packets) does: the same returns, ranges within 1 mm
(in fact micrometres) and the same intensities, on every shipped track with its scenery and on
real F1TENTH and TUM tracks, from random poses with other cars in view; noise, dropout and
the LiDAR effects drawn alike; turned, upside-down and full-turn scanners; and a tilted car or
mount back on the packets."""

from __future__ import annotations

import dataclasses
import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from scenes import HEIGHT, room

from arsim_core.backend.embree import EmbreeUnavailableError, runtime
from arsim_core.backend.lidar import Lidar2D
from arsim_core.backend.outputs import Context
from arsim_core.backend.plane_scan import PlaneSlice, rasterise, slice_mesh
from arsim_core.backend.scene import World
from arsim_core.backend.timeline import Timeline
from arsim_core.config.scenario import SceneSettings
from arsim_core.engine.world import TrackWorld
from arsim_core.geometry import Footprint
from arsim_core.track import Track, load_track

# The F1TENTH Hokuyo of config/cars/f1tenth.yaml, ideal: 1080 beams over 270 degrees.
HOKUYO = {'name': 'scan', 'type': 'lidar2d', 'rate_hz': 40.0,
          'mount': [0.27, 0.0, 0.11, 0.0, 0.0, 0.0], 'beams': 1080, 'angle_min': -2.35,
          'angle_increment': 4.7 / 1079, 'range_min': 0.0, 'range_max': 30.0,
          'noise_std': 0.0, 'dropout': 0.0}
CAR = Footprint(0.58, 0.31, 0.2)
SHIPPED = ('arsim_ring', 'arsim_ring_1_14', 'arsim_ring_1_5', 'arsim_ring_full_scale',
           'fs_acceleration', 'fs_autocross', 'fs_skidpad', 'fs_trackdrive')
REAL = ('f1tenth_racetracks/Spielberg', 'f1tenth_racetracks/Silverstone',
        'tum_racetrack_database/Monza.csv', 'tum_racetrack_database/Spa.csv')
TIMES = itertools.count(1_000_000, 1_000_000)  # a fresh frame per render: boxes are per frame
TOLERANCE = 1e-3  # [m], what the slice may differ from the 3D caster by


@pytest.fixture(autouse=True)
def packets() -> None:
    """The slice replaces Embree's packets, so it is compared where they run."""
    try:
        runtime()
    except EmbreeUnavailableError as why:
        pytest.skip(f'no Embree packets here: {why}')


def world_of(track: Track) -> World:
    """The world the embedded backend gets: the track, its placed cones and its scenery."""
    request = TrackWorld.from_track(track, SceneSettings()).track_request()
    world = World(request.vertices, request.triangles, request.labels)
    world.set_cars({'ego': CAR, 'rival': CAR, 'third': CAR})
    return world


def render(world: World, poses: dict[str, list[float]], spec: dict, plane: bool,
           seed: int = 7, threads: int = 1) -> tuple[np.ndarray, np.ndarray]:
    lidar = Lidar2D.from_wire('ego', spec, seed)
    lidar.plane, lidar.threads = plane, threads
    time_ns = next(TIMES)
    timeline = Timeline()
    timeline.add(time_ns, poses)
    outputs = lidar.render(Context(world, timeline, time_ns, lambda: None)).outputs
    return outputs[0].array, outputs[1].array


def assert_alike(sliced: tuple[np.ndarray, np.ndarray],
                 cast: tuple[np.ndarray, np.ndarray]) -> None:
    """The same returns (and NaN, +-inf), ranges within TOLERANCE, intensities within 0.01 %."""
    (ranges, intensity), (want, want_intensity) = sliced, cast
    for special in (np.isnan, np.isposinf, np.isneginf):
        np.testing.assert_array_equal(special(ranges), special(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(ranges[finite], want[finite], rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(intensity, want_intensity, rtol=1e-4, atol=1e-6)


def random_poses(track: Track, rng: np.random.Generator,
                 count: int) -> list[dict[str, list[float]]]:
    """``count`` level poses on the track, turned at random, with a rival ahead and a car
    beside, both in view."""
    out = []
    for i in rng.choice(len(track.centerline), count, replace=False):
        x, y = (float(v) for v in track.centerline[i])
        yaw = float(track.heading[i] + rng.uniform(-0.6, 0.6))
        ego = [x, y, 0.0, 0.0, 0.0, yaw]
        out.append({'ego': ego, 'rival': beside(ego, rng.uniform(0.8, 3.0), 0.0),
                    'third': beside(ego, rng.uniform(-0.5, 0.5), 0.6)})
    return out


def beside(pose: list[float], ahead: float, side: float) -> list[float]:
    x, y, _, _, _, yaw = pose
    return [x + ahead * math.cos(yaw) - side * math.sin(yaw),
            y + ahead * math.sin(yaw) + side * math.cos(yaw), 0.0, 0.0, 0.0, yaw + 0.4]


def track_named(name: str, repo_root: Path, shared_tracks: Path | None = None) -> Track:
    """A shipped track by name or, under ``shared_tracks``, a real one: an F1TENTH map folder
    (loaded by its name from the folder above) or a TUM centerline file."""
    if shared_tracks is None:
        return load_track(name, repo_root / 'maps')
    path = shared_tracks / name
    if not path.exists():
        pytest.skip(f'{path} not found')
    if path.is_dir():
        return load_track(path.name, path.parent)
    return load_track(path, repo_root / 'maps')


@pytest.mark.parametrize('name', SHIPPED)
def test_the_slice_measures_what_the_3d_caster_does_on_shipped_tracks(repo_root: Path,
                                                                      name: str) -> None:
    compare_on(track_named(name, repo_root), seed=len(name))


@pytest.mark.parametrize('name', REAL)
def test_the_slice_measures_what_the_3d_caster_does_on_real_tracks(
        repo_root: Path, shared_tracks: Path, name: str) -> None:
    compare_on(track_named(name, repo_root, shared_tracks), seed=len(name))


def compare_on(track: Track, seed: int) -> None:
    world = world_of(track)
    rng = np.random.default_rng(seed)
    seen_cars = 0
    for poses in random_poses(track, rng, 12):
        sliced = render(world, poses, HOKUYO, plane=True)
        cast = render(world, poses, HOKUYO, plane=False)
        assert_alike(sliced, cast)
        alone = render(world, {'ego': poses['ego']}, HOKUYO, plane=True)[0]
        seen_cars += int(np.sum(sliced[0] < alone[0] - 0.01))
    assert world.track._planes, 'the scans took the slice'
    assert seen_cars > 100, 'the other cars were in view'


def test_noise_dropout_and_the_lidar_effects_are_drawn_alike(repo_root: Path) -> None:
    track = track_named('arsim_ring', repo_root)
    world = world_of(track)
    specs = [{**HOKUYO, 'noise_std': 0.01, 'dropout': 0.05, 'range_min': 0.3,
              'range_max': 8.0},
             {**HOKUYO, 'noise_std': 0.01, 'dropout': 0.05, 'noise_per_m': 0.001,
              'detection_range': 12.0, 'beam_divergence': 0.003}]
    for spec, poses in itertools.product(specs, random_poses(track,
                                                             np.random.default_rng(3), 4)):
        sliced = render(world, poses, spec, plane=True, seed=5)
        cast = render(world, poses, spec, plane=False, seed=5)
        assert_alike(sliced, cast)
        assert np.isnan(sliced[0]).any()  # the dropout reached the slice's scan


SCANNERS = {
    'turned mount': {'mount': [0.1, 0.05, 0.2, 0.0, 0.0, 2.0]},
    'upside down': {'mount': [0.2, 0.0, 0.15, math.pi, 0.0, 0.3]},
    'clockwise beams': {'angle_min': 2.0, 'angle_increment': -4.7 / 1079},
    'more than a turn': {'beams': 1600, 'angle_min': -3.0, 'angle_increment': 0.0045},
    'one beam': {'beams': 1, 'angle_min': 0.3},
}


@pytest.mark.parametrize('case', sorted(SCANNERS))
def test_any_level_scanner_takes_the_slice(repo_root: Path, case: str) -> None:
    track = track_named('arsim_ring', repo_root)
    world = world_of(track)
    spec = {**HOKUYO, **SCANNERS[case]}
    for poses in random_poses(track, np.random.default_rng(11), 4):
        assert_alike(render(world, poses, spec, plane=True),
                     render(world, poses, spec, plane=False))
    assert world.track._planes, 'the scans took the slice'


def test_two_threads_scan_the_slice_alike(repo_root: Path) -> None:
    track = track_named('arsim_ring', repo_root)
    world = world_of(track)
    for poses in random_poses(track, np.random.default_rng(2), 3):
        one, two = (render(world, poses, HOKUYO, plane=True, threads=t) for t in (1, 2))
        for a, b in zip(one, two, strict=True):
            np.testing.assert_array_equal(a, b)


def test_a_scanner_inside_another_cars_box_sees_its_far_sides(repo_root: Path) -> None:
    """Overlapping cars (collisions off): from inside a box a beam leaves it through any side,
    where from outside only the sides facing the scanner can be hit first."""
    track = track_named('arsim_ring', repo_root)
    world = world_of(track)
    x, y, yaw = track.start_pose
    ego = [float(x), float(y), 0.0, 0.0, 0.0, float(yaw)]
    # the rival's box round the ego's scanner (0.27 m ahead of it), the third car beyond
    poses = {'ego': ego, 'rival': beside(ego, 0.27, 0.0), 'third': beside(ego, 2.0, 0.0)}
    sliced = render(world, poses, HOKUYO, plane=True)
    assert_alike(sliced, render(world, poses, HOKUYO, plane=False))
    inside = float(np.hypot(CAR.length, CAR.width)) / 2.0
    assert np.isfinite(sliced[0]).all() and (sliced[0] <= inside).all()


@pytest.mark.parametrize('tilt', ['car rolled', 'car pitched', 'mount pitched'])
def test_tilted_beams_stay_on_the_packets(repo_root: Path, tilt: str) -> None:
    """Beams that are not horizontal do not lie in one slice: the 3D caster, bit for bit."""
    track = track_named('arsim_ring', repo_root)
    world = world_of(track)
    poses = random_poses(track, np.random.default_rng(4), 1)[0]
    spec = dict(HOKUYO)
    if tilt == 'mount pitched':
        spec['mount'] = [0.27, 0.0, 0.11, 0.0, 0.05, 0.0]
    else:
        poses['ego'][3 if tilt == 'car rolled' else 4] = 0.03
    for a, b in zip(render(world, poses, spec, plane=True),
                    render(world, poses, spec, plane=False), strict=True):
        np.testing.assert_array_equal(a, b)
    assert not world.track._planes


def test_the_slice_of_a_room_is_its_four_walls_without_gaps() -> None:
    """Each wall's two triangles cut to one segment, the floor (below) and the ceiling
    of none; the walls meet at the very corner points, so beams aimed at the corners hit."""
    vertices, triangles, labels = room()
    plane = slice_mesh(vertices, triangles, HEIGHT / 2, labels)
    assert len(plane.segments) == 4
    ends = np.round(plane.segments.reshape(-1, 2), 12)
    corners, uses = np.unique(ends, axis=0, return_counts=True)
    assert len(corners) == 4 and np.all(uses == 2)
    np.testing.assert_allclose(np.abs(plane.normals).sum(axis=1), 1.0)
    world = World(vertices, triangles, labels)
    world.set_cars({})
    corner_beams = {**HOKUYO, 'beams': 4, 'angle_min': math.pi / 4,
                    'angle_increment': math.pi / 2, 'mount': [0.0, 0.0, HEIGHT / 2, 0, 0, 0]}
    ranges, _ = render(world, {'ego': [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]}, corner_beams, True)
    np.testing.assert_allclose(ranges, math.hypot(5.0, 5.0), rtol=1e-6)


def scan_of(plane: PlaneSlice, x: float, y: float, yaw: float,
            every: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A 1080-beam scan over 270 degrees rasterised into ``plane`` from (x, y) turned ``yaw``:
    depth, triangle and cosine; ``every``: testing every segment, as if none were on a loop."""
    angles = HOKUYO['angle_min'] + HOKUYO['angle_increment'] * np.arange(1080) + yaw
    arrays = plane.arrays()
    if every:
        arrays = (*arrays[:5], np.full_like(plane.loops, -1), *arrays[6:])
    out = np.empty(1080), np.empty(1080, np.int32), np.empty(1080)
    rasterise(arrays, x, y, float(angles[0]), HOKUYO['angle_increment'], 1080, 0,
              np.cos(angles).astype(np.float32).astype(np.float64),
              np.sin(angles).astype(np.float32).astype(np.float64), 30.0, *out)
    return out


@pytest.mark.parametrize('name', ['arsim_ring', 'fs_trackdrive', *REAL[:2]])
def test_a_scan_skips_only_segments_no_beam_can_meet_first(repo_root: Path, name: str,
                                                          request: pytest.FixtureRequest) -> None:
    """Skipping each loop's segments that face the wrong way for a first crossing gives the
    scan that tests every segment, bit for bit: from anywhere in the track's bounds, on the
    track, inside barriers and beyond them."""
    shared = request.getfixturevalue('shared_tracks') if '/' in name else None
    scene = TrackWorld.from_track(track_named(name, repo_root, shared),
                                  SceneSettings()).track_request()
    plane = slice_mesh(scene.vertices, scene.triangles, HOKUYO['mount'][2], scene.labels)
    assert (plane.loops >= 0).any()  # some segments are skippable
    low, high = plane.cells[:, :2].min(axis=0), plane.cells[:, 2:].max(axis=0)
    rng = np.random.default_rng(len(name))
    for (x, y), yaw in zip(rng.uniform(low, high, (60, 2)), rng.uniform(-math.pi, math.pi, 60),
                           strict=True):
        for skipped, tested in zip(scan_of(plane, x, y, yaw), scan_of(plane, x, y, yaw, True),
                                   strict=True):
            np.testing.assert_array_equal(skipped, tested)


def one_cell(plane: PlaneSlice) -> PlaneSlice:
    """``plane`` with every segment in one cell round them all: a scan tests every segment
    (but those its loops hide) and skips no cell."""
    cells = np.array([[*plane.cells[:, :2].min(axis=0), *plane.cells[:, 2:].max(axis=0)]])
    return dataclasses.replace(plane, cells=cells,
                               starts=np.array([0, len(plane.segments)], np.int64))


@pytest.mark.parametrize('name', ['arsim_ring', REAL[0]])
def test_skipping_cells_and_ending_early_keep_every_range(repo_root: Path, name: str,
                                                          request: pytest.FixtureRequest) -> None:
    """A scan skips cells whose beams are all closed and ends once the cells left lie beyond
    every beam's range: the ranges of a scan of every cell, bit for bit (which segment a beam
    meets at a shared end point may differ with the order), from poses on the track and
    anywhere in its bounds."""
    shared = request.getfixturevalue('shared_tracks') if '/' in name else None
    track = track_named(name, repo_root, shared)
    scene = TrackWorld.from_track(track, SceneSettings()).track_request()
    plane = slice_mesh(scene.vertices, scene.triangles, HOKUYO['mount'][2], scene.labels)
    whole = one_cell(plane)
    rng = np.random.default_rng(5)
    low, high = plane.cells[:, :2].min(axis=0), plane.cells[:, 2:].max(axis=0)
    points = [*(track.centerline[i] for i in rng.choice(len(track.centerline), 40)),
              *rng.uniform(low, high, (20, 2))]
    for (x, y), yaw in zip(points, rng.uniform(-math.pi, math.pi, len(points)), strict=True):
        depth, _, _ = scan_of(plane, float(x), float(y), float(yaw))
        np.testing.assert_array_equal(depth, scan_of(whole, float(x), float(y), float(yaw))[0])


def test_the_room_is_one_loop_and_an_open_room_none() -> None:
    """The four walls close one loop, whose segments a scan may skip, from inside the room
    and from outside it alike; without one wall nothing closes and every segment is tested."""
    vertices, triangles, labels = room()
    plane = slice_mesh(vertices, triangles, HEIGHT / 2, labels)
    assert plane.loops.tolist() == [0, 0, 0, 0] and len(plane.front) == 1
    walls = triangles[:-2]  # the last two are the ground
    open_room = slice_mesh(vertices, walls[2:], HEIGHT / 2)  # the first wall gone
    assert len(open_room.segments) == 3 and (open_room.loops == -1).all()
    for x, y in ((0.0, 0.0), (3.0, -1.0), (12.0, 4.0)):
        for skipped, tested in zip(scan_of(plane, x, y, 0.3), scan_of(plane, x, y, 0.3, True),
                                   strict=True):
            np.testing.assert_array_equal(skipped, tested)
    inside = scan_of(plane, 0.0, 0.0, 0.0)[0]
    assert np.isfinite(inside).all() and (inside < 30.0).all()  # walls all round


def test_a_two_sided_room_is_a_loop_seen_from_either_side() -> None:
    """Walls given from both sides (each triangle twice, its corners the other way round) are
    kept once by the world, and close a loop like the one-sided room's: from inside the room
    and from outside it, a scan that skips is a scan that tests every segment."""
    vertices, triangles, labels = room()
    walls, wall_labels = triangles[:-2], labels[:-2]
    world = World(vertices, np.concatenate([walls, walls[:, ::-1]]),
                  np.concatenate([wall_labels] * 2))
    plane = world.track.plane(HEIGHT / 2)
    assert len(plane.segments) == 4 and plane.loops.tolist() == [0, 0, 0, 0]
    for x, y in ((0.0, 0.0), (3.0, -1.0), (12.0, 4.0), (-7.0, 30.0)):
        for skipped, tested in zip(scan_of(plane, x, y, 0.3), scan_of(plane, x, y, 0.3, True),
                                   strict=True):
            np.testing.assert_array_equal(skipped, tested)


def test_a_vertex_on_the_plane_cuts_from_it() -> None:
    """A triangle with a corner at the slice's height is cut from that corner to the
    opposite edge; one lying in the plane, or touching it at a point, is not cut."""
    vertices = np.array([[0, 0, 1], [2, 0, 0], [2, 0, 2],   # corner on the plane
                         [0, 1, 1], [1, 1, 1], [0, 2, 1],   # in the plane
                         [5, 5, 1], [6, 5, 2], [5, 6, 3]],  # touching it at a corner
                        np.float32)
    plane = slice_mesh(vertices, np.arange(9, dtype=np.uint32).reshape(3, 3), 1.0)
    assert len(plane.segments) == 1
    np.testing.assert_allclose(sorted(plane.segments[0].reshape(2, 2).tolist()), [[0, 0], [2, 0]])
    np.testing.assert_allclose(np.abs(plane.normals[0]), [0.0, 1.0])
    assert plane.triangles.tolist() == [0]


def test_beams_not_evenly_turned_stay_on_the_packets(repo_root: Path) -> None:
    """The slice finds a segment's beams by their headings, so it needs them evenly turned:
    beams given one by one, or all one way, are cast on the packets."""
    track = track_named('arsim_ring', repo_root)
    world = world_of(track)
    poses = random_poses(track, np.random.default_rng(6), 1)[0]
    for headings in (np.array([0.0, 0.1, 0.3, 0.35, 1.0]), np.zeros(4)):
        lidars = []
        for plane in (True, False):
            lidar = Lidar2D.from_wire('ego', HOKUYO, 7)
            lidar.local_directions = np.column_stack(
                [np.cos(headings), np.sin(headings), np.zeros(len(headings))])
            lidar.plane = plane
            lidars.append(lidar)
        time_ns = next(TIMES)
        timeline = Timeline()
        timeline.add(time_ns, poses)
        context = Context(world, timeline, time_ns, lambda: None)
        sliced, cast = (lidar.render(context).outputs[0].array for lidar in lidars)
        np.testing.assert_array_equal(sliced, cast)
        assert np.isfinite(cast).all()
    assert not world.track._planes
