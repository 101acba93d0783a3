"""The backend ray-casts the track mesh; rays must never leak and must match the 2D walls."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from track_lap_driver import drive_lap

from arsim_core.backend.embree import EmbreePacketRaycaster, EmbreeUnavailableError
from arsim_core.track import LABEL_BARRIER, load_track, track_mesh


@pytest.fixture(scope='module')
def ring(maps_dir):
    return load_track('arsim_ring', maps_dir)


def _walls_2d_distance(walls, origins, dirs):
    """Exact distance along 2D rays to the nearest wall segment (inf when none is hit)."""
    a = np.concatenate([w[:-1] for w in walls])
    b = np.concatenate([w[1:] for w in walls])
    e = b - a
    best = np.full(origins.shape[0], np.inf)
    for k in range(origins.shape[0]):
        d = dirs[k]
        denom = d[0] * e[:, 1] - d[1] * e[:, 0]
        w = a - origins[k]
        with np.errstate(divide='ignore', invalid='ignore'):
            t = (w[:, 0] * e[:, 1] - w[:, 1] * e[:, 0]) / denom
            u = (w[:, 0] * d[1] - w[:, 1] * d[0]) / denom
        ok = (np.abs(denom) > 1e-12) & (t > 0) & (u >= 0) & (u <= 1)
        if ok.any():
            best[k] = t[ok].min()
    return best


@pytest.mark.parametrize('profile', ['wall', 'beam', 'pipe'])
@pytest.mark.parametrize('height', [0.05, 0.15, 0.25, 0.299])
def test_horizontal_rays_never_leak(ring, ray_caster, profile, height):
    mesh = track_mesh(ring, profile=profile)
    caster = ray_caster(mesh.vertices, mesh.triangles)
    rng = np.random.default_rng(7)
    idx = rng.choice(len(ring.centerline), 150, replace=False)
    side = rng.uniform(-0.8, 0.8, idx.size)
    normals = np.stack([-np.sin(ring.heading[idx]), np.cos(ring.heading[idx])], axis=1)
    base = ring.centerline[idx] + normals * side[:, None]
    ang = np.linspace(0, 2 * np.pi, 720, endpoint=False)
    origins = np.repeat(np.column_stack([base, np.full(idx.size, height)]), ang.size, axis=0)
    dirs = np.tile(np.column_stack([np.cos(ang), np.sin(ang), np.zeros(ang.size)]), (idx.size, 1))
    dist, prim = caster.cast(origins, dirs)
    assert np.all(prim >= 0), f'{np.count_nonzero(prim < 0)} rays escaped the track'
    assert np.all(mesh.labels[prim] == LABEL_BARRIER)
    assert dist.max() < 30.0


def test_ray_distances_match_walls(ring, ray_caster):
    mesh = track_mesh(ring)
    caster = ray_caster(mesh.vertices, mesh.triangles)
    rng = np.random.default_rng(3)
    idx = rng.choice(len(ring.centerline), 40, replace=False)
    ang = rng.uniform(0, 2 * np.pi, idx.size)
    dirs = np.column_stack([np.cos(ang), np.sin(ang)])
    origins = ring.centerline[idx]
    dist, _ = caster.cast(
        np.column_stack([origins, np.full(idx.size, 0.1)]),
        np.column_stack([dirs, np.zeros(idx.size)]),
    )
    expected = _walls_2d_distance(ring.walls, origins, dirs)
    np.testing.assert_allclose(dist, expected, atol=2e-3)


@pytest.mark.parametrize('speeds', [(3.0, 3.0), (3.0, 5.0), (5.0, 5.0)])
def test_follow_the_gap_laps_default_track(ring, ray_caster, speeds):
    result = drive_lap(ring, ray_caster, speed_range=speeds, laps=1.0, max_time=45.0)
    assert not result.crashed, f'touched a wall at {result.pose}'
    assert result.progress >= ring.length
    assert result.min_clearance > 0.2


@pytest.mark.parametrize('name', ['Monza', 'Spielberg'])
def test_map_track_mesh_does_not_leak(shared_tracks, ray_caster, name):
    track = load_track(shared_tracks / 'f1tenth_racetracks' / name)
    mesh = track_mesh(track)
    caster = ray_caster(mesh.vertices, mesh.triangles)
    idx = np.arange(0, len(track.centerline), 7)
    ang = np.linspace(0, 2 * np.pi, 360, endpoint=False)
    for height in (0.05, 0.2):
        origins = np.repeat(
            np.column_stack([track.centerline[idx], np.full(idx.size, height)]), ang.size, axis=0
        )
        dirs = np.tile(
            np.column_stack([np.cos(ang), np.sin(ang), np.zeros(ang.size)]), (idx.size, 1)
        )
        dist, prim = caster.cast(origins, dirs)
        assert np.all(prim >= 0), f'{np.count_nonzero(prim < 0)} rays escaped'
        assert np.all(mesh.labels[prim] == LABEL_BARRIER)



def test_packet_caster_hits_what_single_rays_hit(ring, ray_caster):
    """A 64 x 1024 LiDAR revolution from eleven places around the ring: Embree's packet caster
    (the backend's default) returns the very distances single-ray Embree does, grazing wall
    edges included."""
    mesh = track_mesh(ring)
    try:
        packets = EmbreePacketRaycaster(mesh.vertices, mesh.triangles)
    except EmbreeUnavailableError as exc:
        pytest.skip(f'Embree packets unavailable: {exc}')
    single = ray_caster(mesh.vertices, mesh.triangles)
    azimuth = np.linspace(0.0, 2 * np.pi, 1024, endpoint=False)
    elevation = np.linspace(-0.29, 0.29, 64)[:, None]
    directions = np.stack([np.cos(elevation) * np.cos(azimuth),
                           np.cos(elevation) * np.sin(azimuth),
                           np.sin(elevation) + 0 * azimuth], axis=-1).reshape(-1, 3)
    for x, y in ring.centerline[::len(ring.centerline) // 10]:
        origin = np.array([[x, y, 0.3]])
        expected, _ = single.cast(np.repeat(origin, len(directions), axis=0), directions)
        distance = packets.cast(origin, directions)[0]
        np.testing.assert_allclose(distance, expected, atol=1e-4)


# Embree's instruction sets, the CPU flags each needs, and the packet width it traces natively.
ISAS = {'sse4.2': ({'sse4_2'}, 4), 'avx2': ({'avx2'}, 8),
        'avx512': ({'avx512f', 'avx512dq', 'avx512cd', 'avx512bw', 'avx512vl'}, 16)}
# The packet tests that run again under every instruction set the CPU has: the 3D caster against
# single rays, and the compiled 2D scans against the NumPy path.
PACKET_TESTS = (
    'tests/core/track/test_track_raycast.py::test_packet_caster_hits_what_single_rays_hit',
    'tests/core/sensors/test_lidar_scan.py', 'tests/core/sensors/test_lidar_batch.py')


def _cpu_flags() -> set[str]:
    text = Path('/proc/cpuinfo').read_text() if Path('/proc/cpuinfo').is_file() else ''
    return next((set(line.split(':', 1)[1].split()) for line in text.splitlines()
                 if line.startswith('flags')), set())


@pytest.mark.parametrize('isa', list(ISAS))
def test_packets_hit_what_single_rays_hit_under_every_instruction_set(repo_root, isa):
    """Embree emulates packets wider than the CPU's vectors, and its emulated 16-wide packets
    missed walls on AVX2 that single rays hit: every machine class must cast the same hits.
    The packet tests run again with Embree told to use ``isa`` (the native one ran already),
    and the caster must pick the packet width that is native there."""
    needs, width = ISAS[isa]
    flags = _cpu_flags()
    if not needs <= flags:
        pytest.skip(f'this CPU has no {isa}')
    native = max(w for n, w in ISAS.values() if n <= flags)
    if width == native or os.environ.get('ARSIM_EMBREE_CONFIG'):
        pytest.skip(f'{isa} is what this process runs on already')
    env = {**os.environ, 'ARSIM_EMBREE_CONFIG': f'isa={isa}'}
    chosen = subprocess.run(
        [sys.executable, '-c', 'from arsim_core.backend.embree import runtime; '
                               'print(runtime().width)'],
        env=env, capture_output=True, text=True, timeout=300, check=True)
    assert chosen.stdout.split()[-1] == str(width), chosen.stdout + chosen.stderr
    run = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
                          *PACKET_TESTS], cwd=repo_root, env=env, capture_output=True,
                         text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


def _closed_box(half: float = 2.0) -> tuple[np.ndarray, np.ndarray]:
    """The six faces of a cube around the origin: every ray from the origin hits one."""
    vertices, triangles = [], []
    for axis in range(3):
        for side in (-half, half):
            u, w = (axis + 1) % 3, (axis + 2) % 3
            k = len(vertices)
            for a, b in ((-3, -3), (3, -3), (3, 3), (-3, 3)):
                corner = [0.0, 0.0, 0.0]
                corner[axis], corner[u], corner[w] = side, a, b
                vertices.append(corner)
            triangles += [(k, k + 1, k + 2), (k, k + 2, k + 3)]
    return np.array(vertices, np.float32), np.array(triangles, np.uint32)


@pytest.mark.parametrize('tiny', [-5.3e-24, -1e-30, 5.3e-24])
@pytest.mark.parametrize(('axis', 'other'), [(0, 1), (1, 0), (2, 0)])
def test_a_tiny_direction_component_does_not_lose_the_packet(tiny, axis, other):
    """A rotation by an exact quarter turn in float32 leaves components of about -5e-24;
    Embree takes anything below 1e-18 as +1e-18, so such a ray in a packet of ordinary ones
    once made several of the packet's rays miss a closed box around them."""
    try:
        packets = EmbreePacketRaycaster(*_closed_box())
    except EmbreeUnavailableError as exc:
        pytest.skip(f'Embree packets unavailable: {exc}')
    odd = np.zeros(3)
    odd[axis], odd[other] = 1.0, tiny
    ordinary = [[np.cos(a), np.sin(a), 0.1] for a in np.linspace(0.0, 6.0, 15)]
    directions = np.array([*ordinary, odd])
    directions /= np.linalg.norm(directions, axis=1)[:, None]
    distance = packets.cast(np.zeros((1, 3)), directions)[0]
    assert np.isfinite(distance).all(), f'{np.isinf(distance).sum()} of 16 rays missed the box'
