"""Hostile requests to the embedded backend process over a real socket: each one gets an Error
reply, the process lives on and still serves a whole valid session."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
from collections.abc import Iterator

import numpy as np
import pytest
import zmq
from rawbackend import (
    LIDAR,
    SETTINGS,
    UPDATE,
    RawBackend,
    frames_of,
    header_text,
    raw_header,
    track_arrays,
)
from simharness import free_port

from arsim_core.backend import server
from arsim_core.protocol import framing


@pytest.fixture(scope='module')
def raw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawBackend]:
    """One backend process for the module (each start costs a second of imports), with a
    1 MiB request limit so the size tests stay small."""
    backend = RawBackend(tmp_path_factory.mktemp('backend') / 'backend.log',
                         '--max-request-mib', '1')
    yield backend
    assert backend.close() == 0, backend.log


def settings_with(**changes) -> dict:
    return {**SETTINGS, **changes}


def lidar_with(**changes) -> dict:
    return settings_with(cars=[{'id': 'ego', 'sensors': [{**LIDAR, **changes}]}])


def track_frames(header: dict, **arrays: np.ndarray) -> list[bytes]:
    return frames_of(framing.TRACK, header, {**track_arrays(), **arrays})


def test_a_valid_session_is_served(raw: RawBackend) -> None:
    raw.check_session()


# --- crashes found by reading the decoder and the backend: each used to end the process ------
def test_frame_bytes_not_a_multiple_of_the_item_size(raw: RawBackend) -> None:
    frames = track_frames({'track': {'name': 'box'}})
    frames[2] = frames[2][:-1]  # track_vertices, float32: one byte short
    header = json.loads(frames[1])
    header['frames'][0]['shape'] = [(len(frames[2]) // 12), 3]
    frames[1] = json.dumps(header).encode()
    assert 'declares shape' in raw.refused(frames)
    raw.check_session()


@pytest.mark.parametrize('shape', [[2 ** 32, 2 ** 32], [2 ** 64], [2 ** 62, 2 ** 62, 0, 2 ** 62],
                                   [True, 3], [-1, 3], [1] * 40, '12'])
def test_shapes_that_overflow_or_are_not_shapes(raw: RawBackend, shape: object) -> None:
    header = header_text(track={'name': 'x'}, frames=[
        {'name': 'track_vertices', 'dtype': 'uint8', 'shape': shape}])
    error = raw.refused(raw_header('Track', header, b''))
    assert 'shape' in error
    raw.check_session()


def test_deeply_nested_json(raw: RawBackend) -> None:
    """200,000 levels used to raise RecursionError inside json; 40 parse, but no walk over the
    header may recurse that deep either."""
    deep = header_text()[:-1] + ', "x": ' + '[' * 200_000 + ']' * 200_000 + '}'
    assert 'nests deeper' in raw.refused(raw_header('Update', deep))
    deep = header_text()[:-1] + ', "cars": ' + '[' * 40 + ']' * 40 + '}'
    assert 'nests deeper' in raw.refused(raw_header('Update', deep))
    raw.check_session()


def with_raw_value(frames: list[bytes], key: str, text: str) -> list[bytes]:
    """``frames`` with the header's value of ``key`` (a placeholder string) replaced by
    ``text``, which may be no valid JSON at all."""
    header = frames[1].decode()
    assert f'"{key}":"@"' in header
    return [frames[0], header.replace(f'"{key}":"@"', f'"{key}":{text}').encode(), *frames[2:]]


@pytest.mark.parametrize('value', ['Infinity', '-Infinity', 'NaN', '1e999', '"40"', '2.5e7',
                                   '-1', 'true', '9' * 5000])
def test_frame_period_that_is_no_integer(raw: RawBackend, value: str) -> None:
    """Infinity used to reach int() (OverflowError); 5000 digits exceed what Python's int()
    takes from text (ValueError inside json)."""
    frames = frames_of(framing.INITIAL_SETTINGS, settings_with(frame_period_ns='@'),
                       track_arrays())
    error = raw.refused(with_raw_value(frames, 'frame_period_ns', value))
    assert 'frame_period_ns' in error or 'JSON' in error
    raw.check_session()


@pytest.mark.parametrize('track', ['box', 7, ['box'], None, {'name': 7}])
def test_track_that_is_no_object(raw: RawBackend, track: object) -> None:
    assert '"track"' in raw.refused(track_frames({'track': track}))
    assert '"track"' in raw.refused(frames_of(framing.INITIAL_SETTINGS,
                                              settings_with(track=track), track_arrays()))
    raw.check_session()


@pytest.mark.parametrize('triangles', [[[0, 1, -5]], [[0, 1, 2], [-2147483648, 0, 1]],
                                       [[0, 1, 16]], [[0, 1, 2 ** 31 - 1]]])
def test_triangle_indices_out_of_range_in_a_signed_dtype(raw: RawBackend,
                                                          triangles: list) -> None:
    """Only the largest index used to be checked: negative ones reached Embree's buffer."""
    bad = np.array(triangles, np.int32)
    assert 'index a vertex that does not exist' in raw.refused(
        track_frames({'track': {'name': 'x'}}, track_triangles=bad,
                     track_labels=np.zeros(len(bad), np.uint8)))
    raw.check_session()


@pytest.mark.parametrize('value', [np.nan, np.inf, -np.inf, 1e300, 2e6])
def test_vertices_not_finite_or_far_away(raw: RawBackend, value: float) -> None:
    vertices = track_arrays()['track_vertices'].astype(np.float64)
    vertices[3, 1] = value
    assert 'track_vertices must be finite' in raw.refused(
        track_frames({'track': {'name': 'x'}}, track_vertices=vertices))
    raw.check_session()


@pytest.mark.parametrize(('arrays', 'message'), [
    ({'track_triangles': np.zeros((16, 3), np.float32)}, 'integer dtype'),
    ({'track_vertices': np.zeros((16, 3), np.int32)}, 'float32 or float64'),
    ({'track_labels': np.full(8, 256, np.int32)}, 'label 0..255'),
    ({'track_labels': np.full(8, -1, np.int8)}, 'label 0..255'),
    ({'track_labels': np.zeros(7, np.uint8)}, 'one integer label'),
    ({'track_vertices': np.zeros((4, 2), np.float32)}, 'shape'),
])
def test_track_frames_of_the_wrong_kind(raw: RawBackend, arrays: dict, message: str) -> None:
    assert message in raw.refused(track_frames({'track': {'name': 'x'}}, **arrays))
    raw.check_session()


@pytest.mark.parametrize(('changes', 'message'), [
    ({'beams': 10 ** 12}, "'beams' must be an integer"),
    ({'beams': '360'}, "'beams' must be an integer"),
    ({'beams': 1.5}, "'beams' must be an integer"),
    ({'range_max': 'inf'}, "'range_max' must be a number"),
    ({'range_max': 10 ** 400}, "'range_max' must be a number"),
    ({'dropout': 2.0}, "'dropout' must be a number in [0, 1]"),
    ({'rate_hz': 0}, "'rate_hz'"),
    ({'rate_hz': 1e-300}, "'rate_hz'"),
    ({'mount': [0, 0, 0]}, "'mount' must be 6 numbers"),
    ({'mount': 'front'}, "'mount' must be 6 numbers"),
    ({'name': {'a': 1}}, "'name' must be a string"),
    ({'type': 'sonar'}, 'not supported'),
])
def test_sensor_descriptions_out_of_range(raw: RawBackend, changes: dict, message: str) -> None:
    error = raw.refused(frames_of(framing.INITIAL_SETTINGS, lidar_with(**changes),
                                  track_arrays()))
    assert message in error
    raw.check_session()


@pytest.mark.parametrize(('spec', 'message'), [
    ({'type': 'camera', 'width': 100_000, 'height': 10}, "'width'"),
    ({'type': 'camera', 'width': 8192, 'height': 8192}, 'rays or pixels per render'),
    ({'type': 'camera', 'fov': 4.0}, "'fov'"),
    ({'type': 'camera', 'outputs': 'rgb'}, 'outputs'),
    ({'type': 'camera', 'near': 5.0, 'far': 1.0}, "'far'"),
    ({'type': 'lidar3d', 'channels': 4096, 'columns': 8192}, 'rays or pixels per render'),
    ({'type': 'lidar3d', 'channels': 2, 'elevations': [0.1]}, "'elevations'"),
])
def test_cameras_and_3d_lidars_out_of_range(raw: RawBackend, spec: dict, message: str) -> None:
    camera = {'name': 'cam', 'rate_hz': 20.0, 'mount': [0] * 6, 'width': 64, 'height': 48,
              'fov': 1.5, 'near': 0.1, 'far': 50.0, 'outputs': ['rgb']}
    lidar3d = {'name': 'l3', 'rate_hz': 10.0, 'mount': [0] * 6, 'channels': 2, 'columns': 64,
               'azimuth_start': 0.0, 'azimuth_increment': -0.1, 'elevations': [0.0, 0.1],
               'range_min': 0.1, 'range_max': 50.0}
    base = camera if spec['type'] == 'camera' else lidar3d
    header = settings_with(cars=[{'id': 'ego', 'sensors': [{**base, **spec}]}])
    assert message in raw.refused(frames_of(framing.INITIAL_SETTINGS, header, track_arrays()))
    raw.check_session()


@pytest.mark.parametrize(('header', 'message'), [
    ({'cars': [{'id': 'ego', 'pose': [1e7, 0, 0, 0, 0, 0]}], 'render': []}, "'pose'"),
    ({'cars': [{'id': 7, 'pose': [0] * 6}], 'render': []}, "'id' must be a string"),
    ({'cars': {'ego': [0] * 6}, 'render': []}, "'cars' must be a list"),
    ({'cars': [], 'render': [{'car': 'ego'}]}, "'sensor' must be a string"),
    ({'cars': [], 'render': 'all'}, "'render' must be a list"),
])
def test_updates_of_the_wrong_shape(raw: RawBackend, header: dict, message: str) -> None:
    raw.check_session()
    assert message in raw.refused(frames_of(framing.UPDATE, header, step=2))
    raw.check_session()


def test_a_car_left_out_of_an_earlier_update(raw: RawBackend) -> None:
    """Found by the fuzz test: a 3D LiDAR interpolates its car's pose over the last frames,
    and a frame without that car raised KeyError."""
    lidar3d = {'name': 'l3', 'type': 'lidar3d', 'rate_hz': 40.0, 'mount': [0] * 6,
               'channels': 2, 'columns': 32, 'azimuth_start': 0.0, 'azimuth_increment': -0.2,
               'elevations': [0.0, -0.1], 'range_min': 0.1, 'range_max': 50.0}
    header = settings_with(cars=[{'id': 'ego', 'sensors': [lidar3d]}, {'id': 'opp'}])
    assert raw.ask(frames_of(framing.INITIAL_SETTINGS, header, track_arrays())).topic == 'Ready'
    opp = {'id': 'opp', 'pose': [2.0, 0, 0, 0, 0, 0]}
    ego = {'id': 'ego', 'pose': [0.0, 0, 0, 0, 0, 0]}
    for step, cars in ((1, [ego, opp]), (2, [opp]), (3, [ego, opp])):
        render = [{'car': 'ego', 'sensor': 'l3'}] if step == 3 else []
        reply = raw.ask(frames_of(framing.UPDATE, {'cars': cars, 'render': render}, step=step,
                                  time_ns=step * 25_000_000))
        assert reply.topic == framing.UPDATE, reply.header
    assert reply.arrays['ego/l3'].shape == (2, 32)
    raw.check_session()


@pytest.mark.parametrize('frames', [
    [b'Update', b'{"protocol": 1, "step": 1e400, "time_ns": 0}'],
    [b'Update', b'{"protocol": 1, "step": 0, "time_ns": 9223372036854775808}'],
    [b'Update', b'{"protocol": true, "step": 0, "time_ns": 0}'],
    [b'Update', b'\xff\xfe\x00'],
    [b'Update', b'[1, 2]'],
    [b'\xff' * 10_000, b'{}'],
    [b'Update'],
    [b'Update', header_text(frames=[{'name': 'a', 'dtype': 'uint8', 'shape': [1]}] * 2).encode(),
     b'x', b'y'],
    [b'Update', header_text(frames=[{'name': 'a', 'dtype': 'object', 'shape': [1]}]).encode(),
     b'x'],
    [b'Update', header_text(frames=[{'dtype': 'uint8', 'shape': [1]}]).encode(), b'x'],
])
def test_headers_and_frames_that_break_the_protocol(raw: RawBackend, frames: list) -> None:
    raw.refused(frames)
    raw.check_session()


def test_an_empty_message_is_answered(raw: RawBackend) -> None:
    raw.refused([b''])
    raw.check_session()


def test_requests_over_the_size_limit(raw: RawBackend) -> None:
    """Frames that together exceed the limit get an Error; a single frame over the limit makes
    ZeroMQ drop the connection (ZMQ_MAXMSGSIZE) before the backend sees it."""
    half = b'\0' * (600 << 10)
    error = raw.refused([b'Track', header_text().encode(), half, half])
    assert 'larger than 1048576 bytes' in error
    assert 'more than 64 frames' in raw.refused([b'Update', b'{}'] + [b''] * 100)
    assert raw.exchange([b'Track', header_text().encode(), b'\0' * (2 << 20)],
                        timeout_ms=1000) is None
    assert raw.alive
    raw.check_session()


# --- the last resort ------------------------------------------------------------------------
class _Failing(server.EmbeddedBackend):
    """A backend with a bug: any Update fails with an exception no check foresaw."""

    def _update(self, message: framing.Message) -> list:
        raise RuntimeError('a bug in a sensor')


@contextlib.contextmanager
def _failing_backend() -> Iterator[tuple[zmq.Socket[bytes], threading.Thread]]:
    """A REQ socket connected to a _Failing backend served in a thread, stopped afterwards."""
    address = f'tcp://127.0.0.1:{free_port()}'
    stop = threading.Event()
    serving = threading.Thread(target=server.serve, args=(address,),
                               kwargs={'backend': _Failing(), 'stop': stop}, daemon=True)
    serving.start()
    socket = zmq.Context.instance().socket(zmq.REQ)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(address)
    try:
        yield socket, serving
    finally:
        socket.close()
        stop.set()
        serving.join(10)


def test_an_unexpected_exception_becomes_an_error_reply(caplog: pytest.LogCaptureFixture
                                                        ) -> None:
    with _failing_backend() as (socket, serving):
        for step in (1, 2):
            socket.send_multipart(frames_of(framing.UPDATE, UPDATE, step=step))
            assert socket.poll(10_000)
            reply = framing.decode(socket.recv_multipart())
            assert reply.topic == framing.ERROR and reply.step == step
            assert 'RuntimeError: a bug in a sensor' in reply.header['error']
        socket.send_multipart(frames_of(framing.INITIAL_SETTINGS, SETTINGS, track_arrays()))
        assert socket.poll(30_000)
        assert framing.decode(socket.recv_multipart()).topic == framing.READY
        assert serving.is_alive()
    assert 'Traceback' in caplog.text and 'a bug in a sensor' in caplog.text


@pytest.mark.parametrize(('address', 'message'), [
    ('tcp://0.0.0.0:5555', 'allow_remote'),
    ('tcp://*:5555', 'allow_remote'),
    ('tcp://127.0.0.1:99999', 'port between 1 and 65535'),
    ('tcp:/127.0.0.1:5555', 'expected tcp://'),
    ('ipc:///no/such/folder/backend', 'does not exist'),
])
def test_a_backend_started_by_hand_refuses_bad_addresses(address: str, message: str) -> None:
    done = subprocess.run([sys.executable, '-m', 'arsim_core.backend.server', '--address',
                           address], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert message in done.stderr and '--address' in done.stderr
    assert 'Traceback' not in done.stderr


# --- the log: what a peer's requests can write to it is bounded --------------------------------
def test_a_flood_of_malformed_requests_leaves_a_bounded_log(tmp_path) -> None:
    """10,000 malformed requests used to write a line each to the backend's log."""
    flooded = RawBackend(tmp_path / 'backend.log', '--max-request-mib', '1')
    try:
        flooded.check_session()
        before = flooded.log.count('\n')
        kinds = [raw_header('Update', b'[1, 2]'), [b'\xff' * 5000, b'{}'],
                 [b'Update', b'{}'] + [b''] * 100]
        for i in range(10_000):
            assert flooded.exchange(kinds[i % len(kinds)]) is not None, f'no reply to {i}'
        assert flooded.alive
        flooded.check_session(step=2)
    finally:
        assert flooded.close() == 0, flooded.log
    lines = flooded.log.splitlines()
    assert len(lines) - before < 100, '\n'.join(lines[-20:])
    assert 'similar lines suppressed' in flooded.log
    assert max(map(len, lines)) < 1000


def test_tracebacks_of_the_last_resort_are_rate_limited(caplog: pytest.LogCaptureFixture
                                                        ) -> None:
    with _failing_backend() as (socket, _):
        for step in range(500):
            socket.send_multipart(frames_of(framing.UPDATE, UPDATE, step=step))
            assert socket.poll(10_000)
            assert framing.decode(socket.recv_multipart()).topic == framing.ERROR
    assert 1 <= caplog.text.count('Traceback') < 20
    assert len([r for r in caplog.records if r.name == 'arsim.backend']) < 40
