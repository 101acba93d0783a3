"""Several cars' 2D scans rendered in one compiled call (``Lidar2DBatch``, which the embedded
backend uses whenever a frame asks for two or more) give the very bits each scan gives alone:
with noise and dropout on some sensors, other cars in view, and over two threads; and scans
without intensities have the ranges of those with them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arsim_core.backend.embree import EmbreeUnavailableError, runtime
from arsim_core.backend.server import EmbeddedBackend
from arsim_core.engine import TrackWorld
from arsim_core.geometry import Footprint
from arsim_core.protocol.messages import CarSettings, InitialSettings, in_process
from arsim_core.track import load_track

HOKUYO = {'name': 'scan', 'type': 'lidar2d', 'rate_hz': 40.0,
          'mount': [0.27, 0.0, 0.11, 0.0, 0.0, 0.0], 'beams': 1080, 'angle_min': -2.35,
          'angle_increment': 4.7 / 1079, 'range_min': 0.1, 'range_max': 30.0,
          'noise_std': 0.0, 'dropout': 0.0}
NOISY = {**HOKUYO, 'noise_std': 0.02, 'dropout': 0.05}
TURNED = {**HOKUYO, 'mount': [0.1, 0.05, 0.2, 0.0, 0.0, 0.3]}


def backend(world: TrackWorld, visible: bool, threads: int = 1,
            scan_intensity: bool = True) -> EmbeddedBackend:
    cars = tuple(CarSettings(f'car{i}', Footprint(0.58, 0.31, 0.2), (spec,))
                 for i, spec in enumerate((HOKUYO, NOISY, TURNED, HOKUYO)))
    settings = InitialSettings(track=world.track_request(), cars=cars, seed=11,
                               frame_period_ns=25_000_000, cars_visible=visible)
    made = EmbeddedBackend(threads, scan_intensity)
    made.apply(InitialSettings.from_wire(in_process(settings)))  # checked as over the socket
    return made


def poses(world: TrackWorld, frame: int) -> dict[str, list[float]]:
    """Four cars close together near the start, moving a little every frame."""
    x, y, yaw = world.start_pose
    out = {}
    for i in range(4):
        ahead = 0.8 * i + 0.05 * frame
        side = 0.25 if i % 2 else -0.25
        out[f'car{i}'] = [x + ahead * math.cos(yaw) - side * math.sin(yaw),
                          y + ahead * math.sin(yaw) + side * math.cos(yaw), 0.0, 0.0, 0.0,
                          yaw + 0.02 * i]
    return out


@pytest.fixture(scope='module')
def world(repo_root) -> TrackWorld:
    return TrackWorld.from_track(load_track('arsim_ring', repo_root / 'maps'))


def needs_packets() -> None:
    """The batch is a compiled call over Embree's packets: without them (no embreex, or numba
    turned off) scans go one by one and there is no batch to compare."""
    try:
        runtime()
    except EmbreeUnavailableError as why:
        pytest.skip(f'no Embree packets here: {why}')


@pytest.mark.parametrize('visible', [False, True])
@pytest.mark.parametrize('threads', [1, 2])
def test_a_batch_of_scans_has_the_bits_of_single_scans(world, visible: bool,
                                                       threads: int) -> None:
    needs_packets()
    together, alone = backend(world, visible, threads), backend(world, visible)
    keys = [(f'car{i}', 'scan') for i in range(4)]
    for frame in range(5):
        time_ns = (frame + 1) * 25_000_000
        batched = together.render(time_ns, poses(world, frame), keys)
        assert together._plans[tuple(keys)].batch is not None, 'four scans take the batch'
        for (sensor, result), key in zip(batched, keys, strict=True):
            single = alone.render(time_ns, poses(world, frame), [key])[0][1]
            assert (sensor.car, sensor.name) == key and result.stamp_ns == single.stamp_ns
            for mine, theirs in zip(result.outputs, single.outputs, strict=True):
                assert mine.suffix == theirs.suffix
                np.testing.assert_array_equal(mine.array, theirs.array)
        ranges = batched[1][1].outputs[0].array
        assert np.isnan(ranges).any()  # the noisy sensor's dropout reached the batch
    if visible:  # car1 sits beside car0, so one of car0's beams must end on it
        assert not np.array_equal(batched[0][1].outputs[0].array,
                                  backend(world, False).render(
                                      time_ns, poses(world, 4), keys[:1])[0][1].outputs[0].array)


@pytest.mark.parametrize('visible', [False, True])
@pytest.mark.parametrize('threads', [1, 2])
def test_scans_without_intensity_have_the_same_ranges(world, visible: bool,
                                                      threads: int) -> None:
    keys = [(f'car{i}', 'scan') for i in range(4)]
    full = backend(world, visible)
    # each sensor draws its own noise: the batch, and the noisy scan alone, in step with full
    ranges_only = [(backend(world, visible, threads, False), asked)
                   for asked in (keys, keys[1:2])]
    for frame in range(3):
        time_ns = (frame + 1) * 25_000_000
        expected = full.render_frames(time_ns, poses(world, frame), keys)
        for made, asked in ranges_only:
            got = made.render_frames(time_ns, poses(world, frame), asked)
            assert sorted(got) == [f'{car}/{sensor}' for car, sensor in asked]
            for name, ranges in got.items():
                np.testing.assert_array_equal(ranges, expected[name])
                assert f'{name}/intensity' in expected


def test_a_tilted_car_in_view_of_a_batch_is_cast_as_in_single_scans(world) -> None:
    """A pitched car (whose own scan is not asked for, so the batch's scans stay level) cuts
    no rectangle at the beams' height: every batched scan casts it in 3D, as its own does."""
    needs_packets()
    together, alone = backend(world, True), backend(world, True)
    keys = [(f'car{i}', 'scan') for i in range(3)]
    for frame in range(3):
        time_ns = (frame + 1) * 25_000_000
        at = poses(world, frame)
        at['car3'][4] = 0.05
        batched = together.render(time_ns, at, keys)
        assert together._plans[tuple(keys)].batch is not None, 'three level scans batched'
        for (_, result), key in zip(batched, keys, strict=True):
            single = alone.render(time_ns, at, [key])[0][1]
            for mine, theirs in zip(result.outputs, single.outputs, strict=True):
                np.testing.assert_array_equal(mine.array, theirs.array)
    hidden = backend(world, False).render(time_ns, at, keys[2:])[0][1].outputs[0].array
    assert not np.array_equal(batched[2][1].outputs[0].array, hidden)  # car3 was in view
