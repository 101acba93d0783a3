"""A level 2D LiDAR takes the world's slice (``slice_scan``) instead of 3D rays: the same
ranges as the 3D caster within a millimetre on every shipped track and the shared F1TENTH and
TUM tracks, with scenery and without, with other cars in view; the same labels, intensities to
a small tolerance, the same noise and dropout draws; a tilted car or mount is cast in 3D; and
the geometry's corner cases (beams through shared endpoints, across the angle wrap-around,
along a wall, from a point on a wall) hit where the 3D caster hits."""

from __future__ import annotations

import itertools
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from arsim_core._jit import NUMBA_ENABLED
from arsim_core.backend import slice_scan
from arsim_core.backend.lidar import Lidar2D
from arsim_core.backend.outputs import Context
from arsim_core.backend.scene import World
from arsim_core.backend.timeline import Timeline
from arsim_core.config.scenario import SceneSettings
from arsim_core.engine import TrackWorld
from arsim_core.geometry import Footprint
from arsim_core.sensors import labels
from arsim_core.track import load_track

pytestmark = pytest.mark.skipif(not NUMBA_ENABLED, reason='the slice needs numba')

HOKUYO = {'name': 'scan', 'type': 'lidar2d', 'rate_hz': 40.0,
          'mount': [0.27, 0.0, 0.11, 0.0, 0.0, 0.0], 'beams': 1080, 'angle_min': -2.35,
          'angle_increment': 4.7 / 1079, 'range_min': 0.0, 'range_max': 30.0,
          'noise_std': 0.0, 'dropout': 0.0}
CAR = Footprint(0.58, 0.31, 0.2)
TIMES = itertools.count(1_000_000, 1_000_000)
REPO = Path(__file__).resolve().parents[3]
SHARED = REPO.parent / 'shared' / 'tracks'

# (source, scene kind): every shipped track bare, the shared ones bare and some with scenery
TRACKS = [('maps/' + name, 'none') for name in
          ('arsim_ring', 'fs_acceleration', 'fs_autocross', 'fs_skidpad', 'fs_trackdrive')]
TRACKS += [('maps/arsim_ring', 'hall'), ('maps/fs_autocross', 'circuit')]
TRACKS += [(f'f1tenth/{name}', 'none') for name in ('Monza', 'Silverstone', 'Spielberg')]
TRACKS += [('f1tenth/Spielberg', 'auto')]
TRACKS += [(f'tum/{name}', 'none') for name in ('Monza', 'Silverstone', 'Spa', 'Spielberg')]
TRACKS += [('tum/Spa', 'circuit')]


@pytest.fixture(autouse=True)
def slicing(monkeypatch) -> None:
    """Level scans take the slice, as with ARSIM_SCAN2D=slice."""
    monkeypatch.setattr(slice_scan, 'ENABLED', True)


def load(source: str):
    kind, name = source.split('/')
    if kind == 'maps':
        return load_track(name, REPO / 'maps')
    path = SHARED / 'f1tenth_racetracks' / name if kind == 'f1tenth' else \
        SHARED / 'tum_racetrack_database' / f'{name}.csv'
    if not path.exists():
        pytest.skip(f'{path} is not here')
    return load_track(path)


def world_of(vertices, triangles, triangle_labels) -> World:
    world = World(vertices, triangles, triangle_labels)
    world.set_cars({'ego': CAR, 'rival': CAR, 'third': CAR})
    return world


def render(world: World, lidar: Lidar2D, poses: dict) -> tuple[np.ndarray, np.ndarray]:
    time_ns = next(TIMES)
    timeline = Timeline()
    timeline.add(time_ns, poses)
    outputs = lidar.render(Context(world, timeline, time_ns, lambda: None)).outputs
    return outputs[0].array, outputs[1].array


def pair(spec: dict, seed: int = 1) -> tuple[Lidar2D, Lidar2D]:
    """The same sensor twice: on the slice, and forced onto the 3D caster."""
    fast, full = Lidar2D.from_wire('ego', spec, seed), Lidar2D.from_wire('ego', spec, seed)
    full.slicing = False
    return fast, full


def random_poses(track, rng: np.random.Generator, count: int) -> list[dict]:
    """Poses on the track, turned a little, each with two cars a few metres ahead."""
    line = track.centerline
    out = []
    for _ in range(count):
        i = int(rng.integers(len(line)))
        dx, dy = line[(i + 1) % len(line)] - line[i]
        heading = math.atan2(dy, dx)
        x, y = line[i] + rng.uniform(-0.3, 0.3, 2)
        yaw = heading + rng.uniform(-0.6, 0.6)
        poses = {'ego': [float(x), float(y), 0.0, 0.0, 0.0, float(yaw)]}
        for name, (ahead, side) in (('rival', (2.5, 0.3)), ('third', (5.0, -0.4))):
            poses[name] = [float(x + ahead * math.cos(heading) - side * math.sin(heading)),
                           float(y + ahead * math.sin(heading) + side * math.cos(heading)),
                           0.0, 0.0, 0.0, float(heading + rng.uniform(-0.3, 0.3))]
        out.append(poses)
    return out


def assert_close(fast: tuple[np.ndarray, np.ndarray], full: tuple[np.ndarray, np.ndarray],
                 what: str) -> None:
    (ranges, intensity), (ranges3, intensity3) = fast, full
    np.testing.assert_array_equal(np.isnan(ranges), np.isnan(ranges3), err_msg=what)
    np.testing.assert_array_equal(np.isposinf(ranges), np.isposinf(ranges3), err_msg=what)
    np.testing.assert_array_equal(np.isneginf(ranges), np.isneginf(ranges3), err_msg=what)
    finite = np.isfinite(ranges3)
    np.testing.assert_allclose(ranges[finite], ranges3[finite], rtol=0, atol=1e-3,
                               err_msg=what)
    np.testing.assert_allclose(intensity, intensity3, rtol=2e-3, atol=1e-3, err_msg=what)


def hits_of(world: World, lidar: Lidar2D, poses: dict):
    """What each beam hits (distance, label, cosine) on the slice and in 3D."""
    pose = np.array(poses['ego'], np.float64)
    frame = lidar._frame
    obstacles = world.obstacles('ego', poses, next(TIMES))
    plane = slice_scan.plane(world, pose[2] + lidar.mount_position[2])
    distance = np.empty(frame.beams, np.float32)
    label = np.empty(frame.beams, np.uint8)
    cosine = np.empty(frame.beams, np.float32)
    frames = obstacles.frames if obstacles is not None else np.empty((0, 16))
    assert slice_scan.sensor_hits(plane.segments, plane.labels, plane.grid, plane.start,
                                  plane.items, pose, frame.mount, frame.local,
                                  lidar._planar_step, lidar.model.range_max, frames,
                                  distance, label, cosine)
    origin, directions = world.track.raycaster.rays(pose, frame.mount, frame.local,
                                                    frame.beams)
    return (distance, label, cosine), world.cast(origin[None, :], directions,
                                                 lidar.model.range_max, obstacles)


@pytest.mark.parametrize(('source', 'scene'), TRACKS, ids=[f'{s}-{k}' for s, k in TRACKS])
def test_the_slice_sees_what_the_3d_caster_sees(source: str, scene: str) -> None:
    track = load(source)
    request = TrackWorld.from_track(track, SceneSettings(kind=scene)).track_request()
    world = world_of(request.vertices, request.triangles, request.labels)
    fast, full = pair(HOKUYO)
    rng = np.random.default_rng(abs(hash((source, scene))) % 2**32)
    cars_seen = 0
    for poses in random_poses(track, rng, 4):
        assert fast._plane(world, poses['ego']) is not None
        assert_close(render(world, fast, poses), render(world, full, poses), source)
        (distance, label, cosine), hits = hits_of(world, fast, poses)
        np.testing.assert_array_equal(label, hits.label)
        finite = np.isfinite(hits.distance)
        np.testing.assert_array_equal(np.isfinite(distance), finite)
        np.testing.assert_allclose(distance[finite], hits.distance[finite], atol=1e-3)
        np.testing.assert_allclose(cosine, hits.cosine, atol=1e-4)
        cars_seen += int(np.sum(label == labels.CAR))
    assert cars_seen > 0  # the other cars were in view


def test_noise_and_dropout_are_the_3d_paths_draws() -> None:
    track = load('maps/arsim_ring')
    request = TrackWorld.from_track(track).track_request()
    world = world_of(request.vertices, request.triangles, request.labels)
    spec = {**HOKUYO, 'noise_std': 0.02, 'dropout': 0.1, 'range_min': 0.1}
    fast, full = pair(spec, seed=11)
    poses = random_poses(track, np.random.default_rng(5), 1)[0]
    for _ in range(3):  # the generators stay in step
        got, expected = render(world, fast, poses), render(world, full, poses)
        assert_close(got, expected, 'noisy')
        assert 0.05 < np.isnan(got[0]).mean() < 0.15
    assert fast.model.rng.random() == full.model.rng.random()


@pytest.mark.parametrize('tilt', ['car', 'mount'])
def test_a_tilted_plane_is_cast_in_3d(tilt: str) -> None:
    track = load('maps/arsim_ring')
    request = TrackWorld.from_track(track).track_request()
    world = world_of(request.vertices, request.triangles, request.labels)
    poses = random_poses(track, np.random.default_rng(2), 1)[0]
    spec = dict(HOKUYO)
    if tilt == 'car':
        poses['ego'][3:5] = [0.02, -0.01]
    else:
        spec['mount'] = [0.27, 0.0, 0.11, 0.0, 0.03, 0.2]
    fast, full = pair(spec)
    assert fast._plane(world, poses['ego']) is None
    for got, expected in zip(render(world, fast, poses), render(world, full, poses),
                             strict=True):
        np.testing.assert_array_equal(got, expected)


def quad_mesh(walls: list[tuple[float, float, float, float]]) -> tuple[np.ndarray, ...]:
    """Walls 1 m high from (x0, y0) to (x1, y1), each cut into 1 m quads of two triangles:
    joints every metre, the diagonals cut by any plane between."""
    vertices, triangles = [], []
    for x0, y0, x1, y1 in walls:
        pieces = max(1, round(math.hypot(x1 - x0, y1 - y0)))
        for k in range(pieces):
            a = (x0 + (x1 - x0) * k / pieces, y0 + (y1 - y0) * k / pieces)
            b = (x0 + (x1 - x0) * (k + 1) / pieces, y0 + (y1 - y0) * (k + 1) / pieces)
            base = len(vertices)
            vertices += [(*a, 0.0), (*b, 0.0), (*b, 1.0), (*a, 1.0)]
            triangles += [(base, base + 1, base + 2), (base, base + 2, base + 3)]
    vertices_array = np.array(vertices, np.float32)
    triangles_array = np.array(triangles, np.uint32)
    return vertices_array, triangles_array, np.full(len(triangles), labels.BARRIER, np.uint8)


# A 10 m room round the origin, a thin wall on the x axis ahead (seen edge-on from the
# origin) and one across the y axis at x = -1 (the sensor put on it below).
ROOM = [(-5, -5, 5, -5), (5, -5, 5, 5), (5, 5, -5, 5), (-5, 5, -5, -5), (1, 0, 3, 0),
        (-1, -2, -1, 2)]
FULL_CIRCLE = {**HOKUYO, 'mount': [0.0, 0.0, 0.5, 0.0, 0.0, 0.0], 'beams': 360,
               'angle_min': -math.pi, 'angle_increment': 2 * math.pi / 360}


@pytest.mark.parametrize(('where', 'spec'), [
    ((0.0, 0.0, 0.0), FULL_CIRCLE),  # beams along the thin wall, through joints at 0 and 45°
    ((2.0, 1.0, 0.3), FULL_CIRCLE),  # the wall x = -5 across the angle wrap-around
    ((-1.0, 0.0, 0.0), FULL_CIRCLE),  # the sensor on the wall x = -1
    ((0.0, 0.0, math.pi / 2), {**HOKUYO, 'mount': [0.0, 0.0, 0.5, 0.0, 0.0, 0.0]}),
    ((0.5, -0.5, 0.0), {**FULL_CIRCLE, 'angle_increment': -2 * math.pi / 360}),  # clockwise
])
def test_corner_cases_hit_where_the_3d_caster_hits(where, spec) -> None:
    world = world_of(*quad_mesh(ROOM))
    x, y, yaw = where
    poses = {'ego': [x, y, 0.0, 0.0, 0.0, yaw]}
    fast, full = pair(spec)
    got, expected = render(world, fast, poses), render(world, full, poses)
    assert_close(got, expected, str(where))
    assert np.all(np.isfinite(got[0]))  # a closed room: no beam leaks out
    if where == (0.0, 0.0, 0.0):
        beams = np.asarray(fast.local_directions)
        ahead = int(np.argmin(np.abs(np.arctan2(beams[:, 1], beams[:, 0]))))
        assert got[0][ahead] == pytest.approx(5.0, abs=1e-6)  # along the thin wall: past it


def test_cars_alone_on_the_slice_match_their_boxes() -> None:
    """Other cars turned every way, near and far, one straddling the beams' wrap-around."""
    world = world_of(*quad_mesh([(-20, -20, 20, -20), (20, -20, 20, 20), (20, 20, -20, 20),
                                 (-20, 20, -20, -20)]))
    fast, full = pair({**FULL_CIRCLE, 'mount': [0.0, 0.0, 0.11, 0.0, 0.0, 0.0]})
    rng = np.random.default_rng(9)
    for _ in range(5):
        poses = {'ego': [0.0, 0.0, 0.0, 0.0, 0.0, float(rng.uniform(-3, 3))],
                 'rival': [-1.2, 0.0, 0.0, 0.0, 0.0, float(rng.uniform(-3, 3))],
                 'third': [*rng.uniform(-6, 6, 2).tolist(), 0.0, 0.0, 0.0,
                           float(rng.uniform(-3, 3))]}
        assert_close(render(world, fast, poses), render(world, full, poses), str(poses))
        (_, label, _), hits = hits_of(world, fast, poses)
        np.testing.assert_array_equal(label, hits.label)
        assert np.sum(label == labels.CAR) > 10
    poses['ego'][2] = 0.1  # the plane above the cars' boxes
    assert_close(render(world, fast, poses), render(world, full, poses), 'above')
    assert not np.any(hits_of(world, fast, poses)[0][1] == labels.CAR)


def test_a_batch_with_level_and_tilted_cars_is_each_ones_scan() -> None:
    """``Lidar2DBatch``: the level cars' scans on the slice, the tilted one's in 3D, each with
    its own draws, as each renders alone."""
    from arsim_core.backend.server import EmbeddedBackend
    from arsim_core.messages import CarSettings, InitialSettings, in_process

    world = TrackWorld.from_track(load('maps/arsim_ring'))
    noisy = {**HOKUYO, 'noise_std': 0.02, 'dropout': 0.05}

    def backend() -> EmbeddedBackend:
        cars = tuple(CarSettings(f'car{i}', CAR, (spec,))
                     for i, spec in enumerate((HOKUYO, noisy, noisy, HOKUYO)))
        made = EmbeddedBackend(1, True)
        made.apply(InitialSettings.from_wire(in_process(InitialSettings(
            track=world.track_request(), cars=cars, seed=3, frame_period_ns=25_000_000))))
        return made

    together, alone = backend(), backend()
    keys = [(f'car{i}', 'scan') for i in range(4)]
    x, y, yaw = world.start_pose
    for frame in range(3):
        poses = {f'car{i}': [x + 0.8 * i * math.cos(yaw), y + 0.8 * i * math.sin(yaw), 0.0,
                             0.0, 0.03 if i == 2 else 0.0, yaw] for i in range(4)}
        time_ns = (frame + 1) * 25_000_000
        for (_, result), key in zip(together.render(time_ns, poses, keys), keys, strict=True):
            single = alone.render(time_ns, poses, [key])[0][1]
            for mine, theirs in zip(result.outputs, single.outputs, strict=True):
                np.testing.assert_array_equal(mine.array, theirs.array)


def test_the_switch_turns_the_slice_on() -> None:
    code = 'from arsim_core.backend import slice_scan; print(slice_scan.ENABLED)'
    env = {**os.environ, 'ARSIM_SCAN2D': '3d'}
    for value, expected in (('3d', 'False'), ('slice', 'True'), ('', 'False')):
        env['ARSIM_SCAN2D'] = value
        run = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True,
                             text=True, timeout=120, check=True)
        assert run.stdout.strip() == expected, value
    env['ARSIM_SCAN2D'] = 'fast'
    run = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True,
                         text=True, timeout=120, check=False)
    assert run.returncode != 0 and "ARSIM_SCAN2D='fast'" in run.stderr
