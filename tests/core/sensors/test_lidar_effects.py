"""The LiDAR effects (``backend.lidar_effects`` through ``RangeModel.measure``): the compiled
kernel and its NumPy twin agree bit for bit; noise grows with range as documented; the
threshold drops dark far surfaces and keeps bright ones at the documented ranges; extinction
attenuates by exp(-2 sigma r); beam divergence mixes returns at edges only, and only within a
spot's reach; the draws are reproducible; the profile keys default on, turn off at 0, reach
the wire, and bad values name file, line and key."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scenes import packet_and_generic_worlds

from arsim_core.backend import lidar_effects, sweep
from arsim_core.backend.hits import Hits
from arsim_core.backend.lidar import INTENSITY_SCALE, Lidar2D, Lidar2DBatch, RangeModel
from arsim_core.backend.outputs import Context
from arsim_core.backend.scene import World
from arsim_core.backend.timeline import Timeline
from arsim_core.config.profile import load_profile
from arsim_core.config.sensors import (
    LIDAR2D_BEAM_DIVERGENCE,
    LIDAR3D_BEAM_DIVERGENCE,
    LIDAR_NOISE_PER_M,
)
from arsim_core.errors import ProtocolError
from arsim_core.geometry import Footprint
from arsim_core.labels import BARRIER, CAR, NONE, REFLECTIVITY, ROAD
from arsim_core.protocol import wire
from arsim_core.protocol.weather import CLEAR, Weather
from arsim_core.track import load_track

SCAN = {'type': 'lidar2d', 'position': [0.27, 0, 0.11], 'rate_hz': 40.0, 'beams': 1080,
        'fov_rad': 4.7, 'range_max': 30.0}
LIDAR = {'type': 'lidar3d', 'position': [0.1, 0, 0.3], 'rate_hz': 20.0, 'channels': 32,
         'columns': 1024, 'vertical_fov_rad': 0.58, 'range_min': 0.3, 'range_max': 120.0}


def model(seed: int = 3, **effects: float) -> RangeModel:
    return RangeModel(0.3, 120.0, 0.0, 0.0, np.random.default_rng(seed),
                      column_spacing=0.0061, row_spacing=np.full(31, 0.0187), **effects)


def flat(distance: float | np.ndarray, label: int = BARRIER, cosine: float = 1.0,
         shape: tuple[int, ...] = (32, 1024)) -> Hits:
    d = np.broadcast_to(np.asarray(distance, np.float32), shape).copy()
    return Hits(d, np.full(shape, label, np.uint8), np.full(shape, cosine, np.float32))


def random_scene(shape: tuple[int, ...]) -> Hits:
    """Blocks of surfaces at different ranges and incidences, with misses: many edges."""
    rng = np.random.default_rng(5)
    rows = shape[0] if len(shape) == 2 else 1
    blocks = rng.uniform(0.5, 90.0, (rows // 4 + 1, shape[-1] // 16 + 1))
    distance = np.repeat(np.repeat(blocks, 4, 0), 16, 1)[:rows, :shape[-1]]
    distance = (distance + rng.normal(0.0, 0.01, distance.shape)).astype(np.float32)
    distance[rng.random(distance.shape) < 0.05] = np.inf
    label = rng.choice(np.array([ROAD, CAR, BARRIER, 2], np.uint8), distance.shape)
    label[np.isinf(distance)] = NONE
    cosine = np.where(np.isinf(distance), 0.0, rng.uniform(0.05, 1.0, distance.shape))
    return Hits(distance.reshape(shape), label.reshape(shape),
                cosine.astype(np.float32).reshape(shape))


ALL_ON = {'noise_per_m': 0.001, 'detection_range': 40.0, 'beam_divergence': 0.0023,
          'extinction_per_m': 0.01}


@pytest.mark.parametrize('shape', [(32, 1024), (1080,)])
@pytest.mark.parametrize('effects', [
    {'noise_per_m': 0.001}, {'detection_range': 40.0}, {'beam_divergence': 0.0023},
    {'beam_divergence': 0.02}, {'extinction_per_m': 0.02}, ALL_ON])
def test_compiled_and_numpy_agree_bit_for_bit(monkeypatch: pytest.MonkeyPatch,
                                              shape: tuple[int, ...], effects: dict) -> None:
    hits = random_scene(shape)

    def measured() -> tuple[np.ndarray, ...]:
        m = RangeModel(0.3, 60.0, 0.02, 0.05, np.random.default_rng(11), column_spacing=0.0061,
                       row_spacing=np.full(31, 0.0187), **effects)
        r = m.measure(hits)
        assert r.label is not None
        return r.ranges, r.intensity, r.reflectivity, r.label

    compiled = measured()
    monkeypatch.setattr(sweep, 'ENABLED', False)
    expected = measured()
    for got, want in zip(compiled, expected, strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape == shape
        np.testing.assert_array_equal(got, want)
    ranges = compiled[0]
    assert np.isnan(ranges).any() and np.isposinf(ranges).any()


def test_noise_grows_with_range() -> None:
    for r in (5.0, 50.0):
        m = RangeModel(0.3, 120.0, 0.01, 0.0, np.random.default_rng(1), noise_per_m=0.002)
        ranges = m.measure(flat(r)).ranges
        assert np.std(ranges) == pytest.approx(0.01 + 0.002 * r, rel=0.03)
        assert np.mean(ranges) == pytest.approx(r, abs=0.003)


def test_the_threshold_drops_dark_far_surfaces_and_keeps_bright_ones() -> None:
    m = model(detection_range=40.0)
    # a 10 % target at normal incidence is seen to 40 m; road (0.12) to 40 sqrt(1.2), at a
    # grazing 0.1 to 40 sqrt(0.12)
    assert REFLECTIVITY[ROAD] == 0.12
    reach = 40.0 * math.sqrt(0.12 / 0.1)
    assert np.isfinite(m.measure(flat(reach * 0.98, ROAD)).ranges).all()
    assert np.isposinf(m.measure(flat(reach * 1.02, ROAD)).ranges).all()
    grazing = 40.0 * math.sqrt(0.12 * 0.1 / 0.1)
    assert np.isfinite(m.measure(flat(grazing * 0.98, ROAD, 0.1)).ranges).all()
    lost = m.measure(flat(grazing * 1.02, ROAD, 0.1))
    assert np.isposinf(lost.ranges).all()
    assert not lost.intensity.any() and not lost.reflectivity.any()
    assert lost.label is not None and (lost.label == NONE).all()
    # a barrier (0.6) at the same place stays
    assert np.isfinite(m.measure(flat(grazing * 1.02, BARRIER, 0.1)).ranges).all()
    # off: every hit within range_max returns
    assert np.isfinite(model().measure(flat(110.0, ROAD, 0.05)).ranges).all()


def test_extinction_attenuates_twice_the_path() -> None:
    clear = model(extinction_per_m=0.0, noise_per_m=1e-12).measure(flat(20.0))
    foggy = model(extinction_per_m=0.02).measure(flat(20.0))
    np.testing.assert_allclose(foggy.intensity, clear.intensity * math.exp(-2 * 0.02 * 20.0),
                               rtol=1e-6)
    assert clear.intensity[0, 0] == pytest.approx(
        INTENSITY_SCALE * REFLECTIVITY[BARRIER] / 400.0, rel=1e-6)
    # with the threshold, the fog shortens the reach: r^2 exp(2 sigma r) = 40^2 * 0.6 / 0.1
    m = model(extinction_per_m=0.02, detection_range=40.0)
    reach = 40.0 * math.sqrt(6.0)
    for _ in range(60):  # solve r^2 exp(2 sigma r) = reach^2
        reach = 40.0 * math.sqrt(6.0) * math.exp(-0.02 * reach)
    assert np.isfinite(m.measure(flat(reach * 0.99)).ranges).all()
    assert np.isposinf(m.measure(flat(reach * 1.01)).ranges).all()


def step(near: float, far: float, shape: tuple[int, int] = (32, 1024)) -> Hits:
    """Columns below 500 at ``near``, the others at ``far``, facing the sensor."""
    d = np.full(shape, far, np.float32)
    d[:, :500] = near
    return flat(d, shape=shape)


def test_close_surfaces_mix_into_ranges_between_them_at_the_edge_only() -> None:
    m = model(beam_divergence=0.0061)  # a spot as wide as the beam spacing
    ranges = m.measure(step(5.0, 5.3)).ranges
    between = (ranges > 5.0 + 1e-4) & (ranges < 5.3 - 1e-4)
    assert between[:, 499:501].mean() > 0.3  # the columns on either side of the edge
    assert not between[:, :499].any() and not between[:, 501:].any()
    np.testing.assert_array_equal(ranges[:, :499], np.float32(5.0))
    np.testing.assert_array_equal(ranges[:, 501:], np.float32(5.3))


def test_far_apart_surfaces_give_the_stronger_return_never_one_between() -> None:
    m = model(beam_divergence=0.0061)
    returns = m.measure(step(5.0, 20.0))
    ranges = returns.ranges
    assert set(np.unique(ranges)) == {np.float32(5.0), np.float32(20.0)}
    bled = ranges[:, 500] == 5.0  # the far side's first column returns the near surface
    assert 0.2 < bled.mean() < 0.8
    assert (ranges[:, 501:] == 20.0).all() and (ranges[:, :500] == 5.0).all()
    # a narrower spot reaches the edge less often
    narrow = model(beam_divergence=0.002).measure(step(5.0, 20.0)).ranges
    assert (narrow[:, 500] == 5.0).mean() < bled.mean()
    # a hit beside sky is an edge too: its spot loses power, and the sky beam gains a return
    sky = model(beam_divergence=0.0061).measure(step(5.0, np.inf)).ranges
    assert np.isfinite(sky[:, 500]).any() and np.isposinf(sky[:, 501:]).all()


def test_a_grazing_plane_is_no_edge() -> None:
    """Ranges along a plane seen at 85 degrees step by r tan(theta) Delta per beam: no
    mixing there."""
    m = model(beam_divergence=0.02)
    columns = np.arange(1024)
    d = (10.0 * (1.0 + 0.0061 * math.tan(math.radians(85.0))) ** (columns / 100.0))
    hits = flat(d.astype(np.float32), cosine=math.cos(math.radians(85.0)))
    np.testing.assert_array_equal(m.measure(hits).ranges, hits.distance)


def test_draws_are_reproducible_from_the_seed() -> None:
    hits = random_scene((32, 1024))
    a, b = (model(seed=9, **ALL_ON).measure(hits) for _ in range(2))
    np.testing.assert_array_equal(a.ranges, b.ranges)
    c = model(seed=10, **ALL_ON).measure(hits)
    assert not np.array_equal(a.ranges, c.ranges, equal_nan=True)


def test_profile_keys_default_on_and_turn_off_at_zero(write_profile) -> None:
    profile = load_profile(write_profile({'scan': SCAN, 'lidar': LIDAR}))
    scan, lidar = profile.sensor('scan'), profile.sensor('lidar')
    assert (scan.noise_per_m, scan.detection_range, scan.beam_divergence) == (
        LIDAR_NOISE_PER_M, 10.0, LIDAR2D_BEAM_DIVERGENCE)
    assert (lidar.noise_per_m, lidar.detection_range, lidar.beam_divergence) == (
        LIDAR_NOISE_PER_M, 40.0, LIDAR3D_BEAM_DIVERGENCE)
    off = {'noise_per_m': 0, 'detection_range': 0, 'beam_divergence': 0}
    profile = load_profile(write_profile({'scan': {**SCAN, **off}, 'lidar': {**LIDAR, **off}}))
    for name in ('scan', 'lidar'):
        spec = profile.sensor(name).to_wire()
        assert {k: spec[k] for k in off} == {k: 0.0 for k in off}
        assert not RangeModel.from_wire(spec, 1).effects
    on = profile.sensor('lidar').to_wire() | {'beam_divergence': 0.003}
    assert wire.sensor(on, 'ego') == 32 * 1024
    assert RangeModel.from_wire(on, 1).effects


@pytest.mark.parametrize(('sensor', 'key', 'value', 'expected'), [
    ('scan', 'noise_per_m', -0.001, 'expected a number in [0, 0.1]'),
    ('lidar', 'noise_per_m', 0.5, 'expected a number in [0, 0.1]'),
    ('lidar', 'detection_range', -1.0, 'expected a number >= 0'),
    ('scan', 'beam_divergence', 0.2, 'expected a number in [0, 0.1]'),
    ('lidar', 'beam_divergence', 'wide', 'expected a number'),
])
def test_bad_values_name_file_line_and_key(refused_sensor, sensor: str, key: str,
                                           value: object, expected: str) -> None:
    sensors = {'scan': dict(SCAN), 'lidar': dict(LIDAR)}
    sensors[sensor][key] = value
    refused_sensor(sensors, sensor, key, expected)


@pytest.mark.parametrize('key', ['noise_per_m', 'detection_range', 'beam_divergence'])
def test_the_wire_refuses_negative_effects(key: str) -> None:
    spec = {'name': 'scan', 'type': 'lidar2d', 'rate_hz': 40.0, 'mount': [0.0] * 6,
            'beams': 10, 'angle_min': -1.0, 'angle_increment': 0.1, 'range_min': 0.0,
            'range_max': 30.0, key: -1.0}
    with pytest.raises(ProtocolError, match=rf"key '{key}' must be a number in \[0"):
        wire.sensor(spec, 'ego')


def test_detection_signal_is_a_ten_percent_target() -> None:
    assert lidar_effects.detection_signal(0.0) == 0.0
    assert lidar_effects.detection_signal(20.0) == pytest.approx(1000.0 * 0.1 / 400.0)


# --- the 2D scan's paths, on the real arsim_ring ------------------------------------------
HOKUYO = {'name': 'scan', 'type': 'lidar2d', 'rate_hz': 40.0,
          'mount': [0.27, 0.0, 0.11, 0.0, 0.0, 0.0], 'beams': 1080, 'angle_min': -2.35,
          'angle_increment': 4.7 / 1079, 'range_min': 0.05, 'range_max': 30.0,
          'noise_std': 0.01, 'dropout': 0.01, 'noise_per_m': 0.001, 'detection_range': 4.0,
          'beam_divergence': 0.0086}


@pytest.fixture(scope='module')
def ring_worlds(repo_root) -> tuple[World, World, list[float], list[float]]:
    ring = load_track('arsim_ring', repo_root / 'maps')
    footprint = Footprint(0.58, 0.31, 0.2)
    fast, generic = packet_and_generic_worlds(ring, {'ego': footprint, 'rival': footprint})
    x, y, yaw = ring.start_pose
    ego = [float(x), float(y), 0.0, 0.0, 0.0, float(yaw)]
    rival = [float(x) + 2.0 * math.cos(yaw), float(y) + 2.0 * math.sin(yaw), 0.0, 0.0, 0.0,
             float(yaw) + 0.3]
    return fast, generic, ego, rival


def render_scans(world: World, poses: dict[str, list[float]], sensors: list[Lidar2D],
                 batch: bool = False, renders: int = 3,
                 threads: int = 1) -> list[list[np.ndarray]]:
    """``renders`` frames of ``sensors`` (ranges, intensities), one by one or as a batch (on
    ``threads`` of numba's threads)."""
    out = []
    for k in range(renders):
        time_ns = 1_000_000 * (k + 1)
        timeline = Timeline()
        timeline.add(time_ns, poses)
        ctx = Context(world, timeline, time_ns, lambda: None)
        if batch:
            ranges, intensity = Lidar2DBatch(sensors).scan(ctx, threads)
            assert intensity is not None
            out.append([*ranges, *intensity])
        else:
            frames = [{o.suffix: o.array for o in s.render(ctx).outputs} for s in sensors]
            out.append([f[''] for f in frames] + [f['/intensity'] for f in frames])
    return out


def on_packets(lidar: Lidar2D) -> Lidar2D:
    """``lidar`` cast on Embree's packets, not rasterised into the world's slice (whose
    ranges are within micrometres, not the same bits: test_lidar_plane)."""
    lidar.plane = False
    return lidar


def test_the_fused_2d_scan_has_the_bits_of_the_ray_by_ray_path(ring_worlds) -> None:
    fast, generic, ego, rival = ring_worlds
    poses = {'ego': ego, 'rival': rival}
    fused, plain = (render_scans(world, poses, [on_packets(Lidar2D.from_wire('ego', HOKUYO, 7))])
                    for world in (fast, generic))
    for a, b in zip(fused, plain, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)
    ranges = fused[0][0]
    assert np.isnan(ranges).any() and np.isposinf(ranges).any()  # dropout, the threshold
    assert np.isfinite(ranges).mean() > 0.3


def test_a_batch_of_scans_with_effects_has_the_bits_of_single_scans(ring_worlds) -> None:
    fast, _, ego, rival = ring_worlds
    poses = {'ego': ego, 'rival': rival}
    specs = [({**HOKUYO}, 'ego', 3), ({**HOKUYO, 'beam_divergence': 0.0, 'noise_per_m': 0.0,
                                       'detection_range': 0.0}, 'rival', 4)]

    def sensors() -> list[Lidar2D]:
        return [Lidar2D.from_wire(car, spec, seed) for spec, car, seed in specs]

    batched = render_scans(fast, poses, sensors(), batch=True)
    single = render_scans(fast, poses, sensors())
    for a, b in zip(batched, single, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize('threads', [1, 2])
def test_a_batch_whose_every_scan_has_effects_has_the_bits_of_single_scans(
        ring_worlds, threads: int) -> None:
    """Every row measured (the measured rows are the scan as they are), in one run or split
    between two threads."""
    fast, _, ego, rival = ring_worlds
    poses = {'ego': ego, 'rival': rival}
    specs = [(HOKUYO, 'ego', 3), (HOKUYO, 'rival', 4), ({**HOKUYO, 'name': 'rear'}, 'ego', 5)]

    def sensors() -> list[Lidar2D]:
        return [Lidar2D.from_wire(car, spec, seed) for spec, car, seed in specs]

    batched = render_scans(fast, poses, sensors(), batch=True, threads=threads)
    single = render_scans(fast, poses, sensors())
    for a, b in zip(batched, single, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)
    assert not np.array_equal(batched[0][0], batched[0][2])  # each sensor its own draws


def test_a_batch_in_fog_and_rain_has_the_bits_of_single_scans(ring_worlds) -> None:
    """The weather's echoes, dropout and spray come after the effects, from each sensor's own
    draws, in a batch as in its own scan."""
    fast, _, ego, rival = ring_worlds
    poses = {'ego': ego, 'rival': rival}
    fast.weather = Weather(fog_visibility_m=30.0, rain_rate_mm_h=20.0)
    try:
        batched = render_scans(fast, poses, [Lidar2D.from_wire('ego', HOKUYO, 3),
                                             Lidar2D.from_wire('rival', HOKUYO, 4)], batch=True)
        single = render_scans(fast, poses, [Lidar2D.from_wire('ego', HOKUYO, 3),
                                            Lidar2D.from_wire('rival', HOKUYO, 4)])
    finally:
        fast.weather = CLEAR
    for a, b in zip(batched, single, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)
    clear = render_scans(fast, poses, [Lidar2D.from_wire('ego', HOKUYO, 3)])
    assert not np.array_equal(clear[0][0], single[0][0])  # the weather changed the scan
