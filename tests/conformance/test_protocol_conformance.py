"""Protocol v1 conformance (docs/protocol.md), run against every backend: the embedded one and
the C# console host. The same bytes go to each; replies are checked against the spec and,
where the world makes it possible, against distances computed by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from conftest import FRAME_NS, HALF, camera, cloud, room, scan, settings, start, update
from rawbackend import RawBackend, frames_of, header_text, raw_header

from arsim_core import protocol

ROOM = room()


def configure(backend: RawBackend, sensors: list[dict]) -> protocol.Message:
    ready = backend.ask(frames_of(protocol.INITIAL_SETTINGS, settings(sensors), ROOM))
    assert ready.topic == protocol.READY, ready.header
    return ready


def step(backend: RawBackend, number: int, render: list[str], **poses) -> protocol.Message:
    reply = backend.ask(frames_of(protocol.UPDATE, update(render, **poses), step=number,
                                  time_ns=number * FRAME_NS))
    assert reply.topic == protocol.UPDATE, reply.header
    return reply


def still_serving(backend: RawBackend) -> None:
    """After a refusal, a good Update is answered as usual."""
    assert backend.alive
    reply = step(backend, 1, ['scan'])
    assert reply.arrays['ego/scan'].shape == (4,)


def test_ready_lists_every_rendered_sensor_and_the_track(backend: RawBackend) -> None:
    sensors = [scan(), cloud(), camera(), {'name': 'imu', 'type': 'imu', 'rate_hz': 100.0}]
    ready = configure(backend, sensors)
    assert ready.header['track'] == 'room'
    assert isinstance(ready.header['backend'], str) and ready.header['backend']
    listed = {(s['car'], s['sensor'], s['type']) for s in ready.header['sensors']}
    assert listed == {('ego', 'scan', 'lidar2d'), ('ego', 'cloud', 'lidar3d'),
                      ('ego', 'cam', 'camera')}, 'computed sensors are not listed'


def test_a_scan_measures_hand_computed_distances_and_rep117_values(backend: RawBackend) -> None:
    configure(backend, [scan(), scan('near', range_min=2.3)])
    reply = step(backend, 1, ['scan', 'near'])
    ranges = reply.arrays['ego/scan']
    # From (0.5, 0, 0.2): the y walls 5 m to either side, the opponent's box (x from 2.75)
    # 2.25 m ahead, nothing behind (the room is open there; the own car is not seen).
    np.testing.assert_allclose(ranges[:3], [HALF, 2.25, HALF], atol=1e-3)
    assert ranges[3] == np.inf
    assert reply.arrays['ego/near'][1] == -np.inf, 'a return closer than range_min'
    intensity = reply.arrays['ego/scan/intensity']
    assert intensity.dtype == np.float32 and intensity[3] == 0.0 and intensity[0] > 0.0


def test_update_echoes_step_and_time(backend: RawBackend) -> None:
    configure(backend, [scan()])
    for number, time_ns in ((1, FRAME_NS), (2, 2 * FRAME_NS), (7, (1 << 62) + 25)):
        reply = backend.ask(frames_of(protocol.UPDATE, update(['scan']), step=number,
                                      time_ns=time_ns))
        assert (reply.topic, reply.step, reply.time_ns) == (protocol.UPDATE, number, time_ns)
        assert reply.header['frames'][0]['stamp_ns'] == time_ns


def test_a_track_switch_answers_ready_and_changes_what_is_seen(backend: RawBackend) -> None:
    configure(backend, [scan()])
    moved = dict(ROOM)
    moved['track_vertices'] = ROOM['track_vertices'] * np.float32(2.0)
    ready = backend.ask(frames_of(protocol.TRACK, {'track': {'name': 'big room'}}, moved,
                                  step=4, time_ns=4 * FRAME_NS))
    assert (ready.topic, ready.header['track'], ready.step) == (protocol.READY, 'big room', 4)
    ranges = step(backend, 5, ['scan']).arrays['ego/scan']
    assert ranges[0] == pytest.approx(2 * HALF, abs=1e-3)
    assert ranges[2] == pytest.approx(2 * HALF, abs=1e-3)


def test_a_spinning_lidar_sends_its_revolution(backend: RawBackend) -> None:
    configure(backend, [cloud()])
    step(backend, 1, ['cloud'], opponent_x=30.0)
    reply = step(backend, 2, ['cloud'], opponent_x=30.0)
    arrays, described = reply.arrays, protocol.frame_meta(reply)
    expected = {'ego/cloud': ('float32', 'ranges'), 'ego/cloud/intensity': ('float32', 'intensity'),
                'ego/cloud/reflectivity': ('uint16', 'reflectivity'),
                'ego/cloud/labels': ('uint8', 'labels')}
    assert set(arrays) == set(expected)
    for name, (dtype, encoding) in expected.items():
        assert arrays[name].dtype == np.dtype(dtype) and arrays[name].shape == (2, 4), name
        meta = described[name]
        assert (meta['car'], meta['sensor'], meta['type'], meta['encoding']) == (
            'ego', 'cloud', 'lidar3d', encoding)
        assert meta['stamp_ns'] == 0, 'a revolution is stamped with its start'
    ranges = arrays['ego/cloud']
    # Columns +x, +y, -x, -y; ring 1 is 0.1 rad up. The opponent is out of the room.
    np.testing.assert_allclose(ranges[0], [HALF, HALF, np.inf, HALF], atol=1e-3)
    np.testing.assert_allclose(ranges[1, [0, 1, 3]], HALF / math.cos(0.1), atol=1e-3)
    assert list(arrays['ego/cloud/labels'][0]) == [1, 1, 255, 1]
    assert arrays['ego/cloud/reflectivity'][0, 0] == 60


def test_other_cars_are_seen_with_their_class_and_the_own_car_is_not(
        backend: RawBackend) -> None:
    configure(backend, [cloud()])
    step(backend, 1, ['cloud'])
    reply = step(backend, 2, ['cloud'])
    ranges, labels = reply.arrays['ego/cloud'], reply.arrays['ego/cloud/labels']
    assert ranges[0, 0] == pytest.approx(2.75, abs=1e-3), 'the near face of the opponent'
    assert labels[0, 0] == 5
    assert ranges[0, 2] == np.inf, 'towards -x through the own box: nothing'


def test_a_camera_sees_the_wall_at_its_centre(backend: RawBackend) -> None:
    configure(backend, [camera()])
    reply = step(backend, 1, ['cam'])
    described = protocol.frame_meta(reply)
    rgb, depth = reply.arrays['ego/cam/rgb'], reply.arrays['ego/cam/depth']
    semantic = reply.arrays['ego/cam/semantic']
    assert rgb.shape == (21, 33, 3) and rgb.dtype == np.uint8
    assert depth.shape == (21, 33) and depth.dtype == np.float32
    assert semantic.shape == (21, 33) and semantic.dtype == np.uint8
    assert [described[f'ego/cam/{o}']['encoding'] for o in ('rgb', 'depth', 'semantic')] == [
        'rgb8', '32FC1', 'mono8']
    assert depth[10, 16] == pytest.approx(HALF, abs=0.01)
    assert semantic[10, 16] == 1
    assert semantic[0, 16] == 255 and depth[0, 16] == np.inf, 'the sky over the wall'


def test_another_protocol_version_is_refused_naming_both(backend: RawBackend) -> None:
    configure(backend, [scan()])
    frames = frames_of(protocol.UPDATE, update(['scan']), step=1, time_ns=FRAME_NS)
    header = json.loads(frames[1])
    header['protocol'] = 2
    error = backend.refused([frames[0], json.dumps(header).encode()])
    assert 'peer speaks arsim protocol version 2, this side speaks version 1' in error
    still_serving(backend)


MALFORMED = {
    'unknown topic': (raw_header('Hello', header_text()), 'unknown protocol topic'),
    'header not JSON': (raw_header('Update', '{"protocol": 1,'), 'not valid JSON'),
    'header an array': (raw_header('Update', '[1, 2]'), 'must be a JSON object'),
    'NaN in the header': (raw_header('Update', header_text().replace(
        '"frames"', '"x": NaN, "frames"')), 'JSON'),
    'frame count': (raw_header('Track', header_text(frames=[
        {'name': 'a', 'dtype': 'uint8', 'shape': [1]}])), 'binary frames'),
    'byte count': (raw_header('Track', header_text(frames=[
        {'name': 'a', 'dtype': 'float32', 'shape': [3]}]), b'\0' * 8), 'carries 8 bytes'),
    'dtype': (raw_header('Track', header_text(frames=[
        {'name': 'a', 'dtype': 'complex64', 'shape': [1]}]), b'\0' * 8), 'dtype'),
    'duplicate names': (raw_header('Track', header_text(frames=[
        {'name': 'a', 'dtype': 'uint8', 'shape': [1]}] * 2), b'\0', b'\0'), "named 'a'"),
    'triangle index': (frames_of(protocol.TRACK, {'track': {'name': 'x'}}, {
        **ROOM, 'track_triangles': ROOM['track_triangles'] + np.uint32(100)}),
        'index a vertex that does not exist'),
    'short pose': (frames_of(protocol.UPDATE, {
        'cars': [{'id': 'ego', 'pose': [0, 0, 0, 0, 0]}], 'render': []}), "'pose' must be 6"),
    'unknown sensor': (frames_of(protocol.UPDATE, update(['radar'])), 'unknown car/sensor'),
}


@pytest.mark.parametrize('case', list(MALFORMED))
def test_a_malformed_request_gets_error_and_the_backend_serves_on(
        backend: RawBackend, case: str) -> None:
    configure(backend, [scan()])
    frames, reason = MALFORMED[case]
    assert reason in backend.refused(frames)
    still_serving(backend)


@pytest.mark.parametrize('kind', ['embedded', 'csharp-host'])
def test_an_update_before_initial_settings_is_refused(kind: str, tmp_path: Path) -> None:
    backend = start(kind, tmp_path)
    try:
        assert 'Update before InitialSettings' in backend.refused(
            frames_of(protocol.UPDATE, update(['scan'])))
        configure(backend, [scan()])
        still_serving(backend)
    finally:
        backend.close()


def test_both_backends_measure_the_same_cloud_within_a_centimetre(
        backends: dict[str, RawBackend]) -> None:
    """A denser cloud from a tilted, turned car, the opponent in view: every range agrees."""
    sensor = cloud(channels=8, columns=90, elevations=list(np.linspace(-0.25, 0.25, 8)))
    ego = [-1.0, 0.7, 0.05, 0.02, -0.03, 0.4]
    clouds = {}
    for kind, backend in backends.items():
        configure(backend, [sensor, scan()])
        step(backend, 1, ['cloud'], ego=ego)
        reply = step(backend, 2, ['cloud', 'scan'], ego=ego)
        clouds[kind] = (reply.arrays['ego/cloud'], reply.arrays['ego/scan'],
                        reply.arrays['ego/cloud/labels'])
    (embedded, embedded_scan, embedded_labels), (host, host_scan, host_labels) = (
        clouds['embedded'], clouds['csharp-host'])
    assert np.isfinite(embedded).sum() > 400
    np.testing.assert_array_equal(np.isinf(embedded), np.isinf(host))
    np.testing.assert_allclose(host, embedded, atol=0.01)
    np.testing.assert_allclose(host_scan, embedded_scan, atol=0.01)
    agree = np.mean(embedded_labels == host_labels)
    assert agree > 0.99, f'labels agree on {agree:.1%} of the returns'
