"""The 2D LiDAR's compiled scan on Embree packets (``EmbreePacketRaycaster.scanner``, with
``plane`` off: test_lidar_plane compares the slice with it) gives the very bits of the NumPy
path that the other ray casters take, on the real arsim_ring track:
rotated and tilted cars, turned and tilted mounts, noise and dropout (the same draws in the same
order), the REP-117 limits, other cars in view and out of it, and two threads."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scenes import packet_and_generic_worlds

from arsim_core.backend.lidar import Lidar2D, sensor_rays
from arsim_core.backend.outputs import Context
from arsim_core.backend.raycast_embreex import EmbreeRaycaster
from arsim_core.backend.scene import World
from arsim_core.backend.timeline import Timeline
from arsim_core.geometry import Footprint
from arsim_core.track import Track, load_track, track_mesh

# The F1TENTH Hokuyo of config/cars/f1tenth.yaml: 1080 beams over 270 degrees.
HOKUYO = {'name': 'scan', 'type': 'lidar2d', 'rate_hz': 40.0,
          'mount': [0.27, 0.0, 0.11, 0.0, 0.0, 0.0], 'beams': 1080, 'angle_min': -2.35,
          'angle_increment': 4.7 / 1079, 'range_min': 0.0, 'range_max': 30.0,
          'noise_std': 0.0, 'dropout': 0.0}
CAR = Footprint(0.58, 0.31, 0.2)
CARS = {'ego': CAR, 'rival': CAR, 'third': CAR}
# A fresh frame time per render: World caches the other cars' boxes per frame time.
TIMES = itertools.count(1_000_000, 1_000_000)


@pytest.fixture(scope='module')
def ring(repo_root) -> Track:
    return load_track('arsim_ring', repo_root / 'maps')


@pytest.fixture(scope='module')
def worlds(ring: Track) -> tuple[World, World]:
    """The ring on the compiled scan and on the generic path, with the cars of CARS."""
    return packet_and_generic_worlds(ring, CARS)


def scan(world: World, poses: dict[str, list[float]], spec: dict | None = None, seed: int = 7,
         threads: int = 1, renders: int = 1) -> list[dict[str, np.ndarray]]:
    """``renders`` scans of a fresh Lidar2D on car ego (the frames by suffix)."""
    lidar = Lidar2D.from_wire('ego', spec or HOKUYO, seed)
    lidar.threads = threads
    lidar.plane = False
    out = []
    for _ in range(renders):
        time_ns = next(TIMES)
        timeline = Timeline()
        timeline.add(time_ns, poses)
        result = lidar.render(Context(world, timeline, time_ns, lambda: None))
        assert result.stamp_ns == time_ns
        out.append({o.suffix: o.array for o in result.outputs})
    return out


def assert_same(fast: dict[str, np.ndarray], generic: dict[str, np.ndarray]) -> None:
    assert set(fast) == set(generic) == {'', '/intensity'}
    for suffix, array in fast.items():
        assert array.dtype == generic[suffix].dtype == np.float32
        assert array.shape == generic[suffix].shape == (1080,)
        np.testing.assert_array_equal(array, generic[suffix], err_msg=suffix)


def ego_pose(ring: Track, fraction: float = 0.0, turn: float = 0.0, z: float = 0.0,
             roll: float = 0.0, pitch: float = 0.0) -> list[float]:
    """A pose on the centerline ``fraction`` of the way round from the start, heading along
    the track and turned by ``turn``."""
    if fraction == 0.0:
        x, y, yaw = ring.start_pose
    else:
        line = ring.centerline
        i = int(fraction * len(line))
        x, y = line[i]
        dx, dy = line[(i + 1) % len(line)] - line[i]
        yaw = math.atan2(dy, dx)
    return [float(x), float(y), z, roll, pitch, float(yaw) + turn]


def ahead(pose: list[float], distance: float, side: float = 0.0) -> list[float]:
    x, y, _, _, _, yaw = pose
    return [x + distance * math.cos(yaw) - side * math.sin(yaw),
            y + distance * math.sin(yaw) + side * math.cos(yaw), 0.0, 0.0, 0.0, yaw + 0.3]


CASES = {
    'start': ({}, {}),
    'turned car': ({'turn': 2.5}, {}),
    'elsewhere, reversed': ({'fraction': 0.37, 'turn': math.pi}, {}),
    'turned mount': ({'fraction': 0.6}, {'mount': [0.27, 0.05, 0.11, 0.0, 0.0, 0.7]}),
    'tilted car': ({'fraction': 0.8, 'z': 0.01, 'roll': 0.02, 'pitch': -0.03}, {}),
    'mount pitched down': ({'fraction': 0.2}, {'mount': [0.27, 0.0, 0.11, 0.01, 0.06, 0.0]}),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_the_scan_has_the_bits_of_the_generic_path(worlds, ring, case: str) -> None:
    pose_args, spec_change = CASES[case]
    spec = {**HOKUYO, **spec_change}
    poses = {'ego': ego_pose(ring, **pose_args)}
    fast, generic = (scan(world, poses, spec)[0] for world in worlds)
    assert_same(fast, generic)
    ranges = fast['']
    assert np.isfinite(ranges).mean() > 0.9  # walls all round, a real scan
    assert np.all(fast['/intensity'][np.isfinite(ranges)] > 0.0)
    if case == 'mount pitched down':  # beams ahead meet the road in front of the car
        assert np.nanmin(ranges) < 2.5 and np.ptp(ranges[np.isfinite(ranges)]) > 1.0


def test_noise_and_dropout_are_drawn_in_the_same_order(worlds, ring) -> None:
    """Same seed, same draws: equal bits scan after scan (so the generator ends each scan in
    the same state), and the configured statistics."""
    spec = {**HOKUYO, 'noise_std': 0.02, 'dropout': 0.1, 'range_min': 0.1}
    poses = {'ego': ego_pose(ring, 0.1, turn=0.4)}
    fast, generic = (scan(world, poses, spec, seed=11, renders=3) for world in worlds)
    for a, b in zip(fast, generic, strict=True):
        for suffix in ('', '/intensity'):
            np.testing.assert_array_equal(a[suffix], b[suffix], err_msg=suffix)
    assert not np.array_equal(fast[0][''], fast[1][''], equal_nan=True)  # fresh draws
    clean = scan(worlds[0], poses)[0]['']
    for frame in fast:
        ranges, intensity = frame[''], frame['/intensity']
        dropped = np.isnan(ranges)
        assert 0.07 < dropped.mean() < 0.13
        assert np.all(intensity[dropped] == 0.0)
        kept = ~dropped & np.isfinite(clean)
        error = ranges[kept] - clean[kept]
        assert abs(error.mean()) < 0.004 and 0.017 < error.std() < 0.023


def test_range_limits_follow_rep117(worlds, ring) -> None:
    """-inf below range_min, +inf beyond range_max: hits beyond it are not cast at all, and
    noise pushes some of those just inside it out."""
    spec = {**HOKUYO, 'range_min': 1.6, 'range_max': 3.0}
    poses = {'ego': ego_pose(ring, 0.3, turn=0.2)}
    fast, generic = (scan(world, poses, spec)[0] for world in worlds)
    assert_same(fast, generic)
    ranges = fast['']
    clean = scan(worlds[0], poses)[0]['']
    assert np.all(np.isneginf(ranges[clean < 1.6])) and np.any(clean < 1.6)
    assert np.all(np.isposinf(ranges[clean > 3.0])) and np.any(clean > 3.0)
    inside = (clean >= 1.6) & (clean <= 3.0)
    np.testing.assert_array_equal(ranges[inside], clean[inside])
    noisy = {**spec, 'noise_std': 0.1}
    fast, generic = (scan(world, poses, noisy, seed=5)[0] for world in worlds)
    assert_same(fast, generic)
    ranges = fast['']
    edge = (clean > 2.7) & (clean <= 3.0)
    assert np.isposinf(ranges[edge]).any() and np.isfinite(ranges[edge]).sum() > 10
    assert np.all(np.isinf(ranges) | ((ranges >= 1.6) & (ranges <= 3.0)))


def test_other_cars_in_view_and_out_of_it(worlds, ring) -> None:
    """A rival ahead and a car beside are seen (and nearer than the walls behind them); a car
    on the far side of the ring is not; the fast path agrees with the generic one on each."""
    ego = ego_pose(ring, 0.15, turn=0.1)
    alone = scan(worlds[0], {'ego': ego})[0]['']
    cases = {'in view': {'ego': ego, 'rival': ahead(ego, 1.5), 'third': ahead(ego, -0.2, 0.7)},
             'far away': {'ego': ego, 'rival': ego_pose(ring, 0.65)}}
    for name, poses in cases.items():
        fast, generic = (scan(world, poses)[0] for world in worlds)
        assert_same(fast, generic)
        changed = fast[''] != alone
        if name == 'in view':
            assert changed.sum() > 40, name
            assert np.all(fast[''][changed] < alone[changed])
        else:
            assert not changed.any(), name


def test_two_threads_scan_alike(worlds, ring) -> None:
    spec = {**HOKUYO, 'noise_std': 0.01, 'dropout': 0.05}
    ego = ego_pose(ring, 0.45, turn=-0.3)
    poses = {'ego': ego, 'rival': ahead(ego, 2.0, 0.2)}
    one = scan(worlds[0], poses, spec, seed=3, renders=2)
    two = scan(worlds[0], poses, spec, seed=3, threads=2, renders=2)
    for a, b in zip(one, two, strict=True):
        for suffix in ('', '/intensity'):
            np.testing.assert_array_equal(a[suffix], b[suffix], err_msg=suffix)


def test_the_scan_agrees_with_single_ray_embree(ring, worlds) -> None:
    """An independent ray caster (embreex, one ray at a time, incidence from a normal table)
    measures the same walls."""
    pytest.importorskip('embreex')
    mesh = track_mesh(ring)
    single = World(mesh.vertices, mesh.triangles, mesh.labels, factory=EmbreeRaycaster)
    for fraction in (0.0, 0.5):
        poses = {'ego': ego_pose(ring, fraction, turn=0.3)}
        fast, other = scan(worlds[0], poses)[0], scan(single, poses)[0]
        np.testing.assert_array_equal(np.isfinite(fast['']), np.isfinite(other['']))
        np.testing.assert_allclose(fast[''], other[''], atol=1e-4)
        np.testing.assert_allclose(fast['/intensity'], other['/intensity'], rtol=1e-4,
                                   atol=1e-4)


def test_both_paths_aim_the_same_rays(worlds, ring) -> None:
    """The generic path's NumPy rays and the compiled ones (along which other cars are cast)
    are the same float64 bits, for a tilted car with a turned and tilted mount; a read-only,
    strided pose renders as a fresh one does."""
    spec = {**HOKUYO, 'mount': [0.27, -0.04, 0.11, 0.02, -0.05, 0.4]}
    lidar = Lidar2D.from_wire('ego', spec, 1)
    pose = np.array(ego_pose(ring, 0.7, turn=1.1, z=0.02, roll=0.03, pitch=-0.02))
    origin, directions = sensor_rays(pose, lidar.mount_position, lidar.mount_rotation,
                                     lidar.local_directions)
    mount = np.concatenate([lidar.mount_position, lidar.mount_rotation.reshape(9)])
    local = np.ascontiguousarray(lidar.local_directions.T)
    compiled = worlds[0].track.raycaster.rays(pose, mount, local, 1080)
    np.testing.assert_array_equal(compiled[0], origin)
    np.testing.assert_array_equal(compiled[1], directions)
    np.testing.assert_allclose(np.linalg.norm(directions, axis=1), 1.0, atol=1e-12)
    strided = np.repeat(pose, 2)[::2]
    strided.flags.writeable = False
    assert not strided.flags.c_contiguous or not strided.flags.writeable
    a, b = (scan(worlds[0], {'ego': p}, spec)[0] for p in (pose.tolist(), strided))
    assert_same(a, b)
