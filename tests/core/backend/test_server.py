"""The embedded backend over a real ZeroMQ socket: ranges against analytic distances, refusal of
bad requests without crashing."""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest
import zmq
from rawbackend import box_room
from simharness import free_port

from arsim_core.errors import BackendUnavailableError, ProtocolError
from arsim_core.protocol import framing
from arsim_core.protocol.client import BackendClient

LIDAR = {'name': 'scan', 'type': 'lidar2d', 'rate_hz': 40.0, 'mount': [0.5, 0, 0.2, 0, 0, 0],
         'beams': 360, 'angle_min': -math.pi, 'angle_increment': 2 * math.pi / 360,
         'range_min': 0.1, 'range_max': 30.0, 'noise_std': 0.0}


def initial_settings(client: BackendClient) -> framing.Message:
    vertices, triangles = box_room()
    return client.request(framing.INITIAL_SETTINGS, 0, 0,
                          {'cars': [{'id': 'ego', 'sensors': [LIDAR]}], 'track': {'name': 'box'}},
                          {'track_vertices': vertices, 'track_triangles': triangles})


def test_lidar_ranges_match_analytic_distances(backend: BackendClient) -> None:
    ready = initial_settings(backend)
    assert ready.topic == framing.READY
    assert ready.header['sensors'] == [{'car': 'ego', 'sensor': 'scan', 'type': 'lidar2d'}]
    x, y, yaw = 1.0, -2.0, 0.3
    reply = backend.request(framing.UPDATE, 1, 25_000_000,
                            {'cars': [{'id': 'ego', 'pose': [x, y, 0, 0, 0, yaw]}],
                             'render': [{'car': 'ego', 'sensor': 'scan'}]})
    assert (reply.step, reply.time_ns) == (1, 25_000_000)
    ranges = reply.arrays['ego/scan']
    assert ranges.shape == (360,) and ranges.dtype == np.float32
    ox, oy = x + 0.5 * math.cos(yaw), y + 0.5 * math.sin(yaw)
    angles = yaw + LIDAR['angle_min'] + LIDAR['angle_increment'] * np.arange(360)
    c, s = np.cos(angles), np.sin(angles)
    with np.errstate(divide='ignore'):
        tx = np.where(c > 0, (5 - ox) / c, (-5 - ox) / c)
        ty = np.where(s > 0, (5 - oy) / s, (-5 - oy) / s)
    expected = np.minimum(np.abs(tx), np.abs(ty))
    np.testing.assert_allclose(ranges, expected, atol=1e-3)


def test_out_of_range_returns_follow_rep117(backend: BackendClient) -> None:
    initial_settings(backend)
    reply = backend.request(framing.UPDATE, 1, 0, {
        'cars': [{'id': 'ego', 'pose': [100.0, 0, 0, 0, 0, 0]}],
        'render': [{'car': 'ego', 'sensor': 'scan'}]})
    ranges = reply.arrays['ego/scan']
    assert np.isposinf(ranges[180])  # facing away from the room: nothing within range_max


def test_bad_requests_get_an_error_reply_and_the_backend_lives_on(backend) -> None:
    with pytest.raises(ProtocolError, match='Update before InitialSettings'):
        backend.request(framing.UPDATE, 1, 0, {'cars': [], 'render': []})
    initial_settings(backend)
    with pytest.raises(ProtocolError, match='unknown car/sensor'):
        backend.request(framing.UPDATE, 2, 0, {'cars': [{'id': 'ego', 'pose': [0] * 6}],
                                                'render': [{'car': 'nobody', 'sensor': 'x'}]})
    with pytest.raises(ProtocolError, match="'pose' must be 6 numbers"):
        backend.request(framing.UPDATE, 3, 0, {'cars': [{'id': 'ego', 'pose': ['x'] * 6}],
                                                'render': []})
    with pytest.raises(ProtocolError, match='finite numbers only'):  # refused before sending
        backend.request(framing.UPDATE, 3, 0, {'cars': [{'id': 'ego', 'pose': [float('nan')]
                                                          * 6}], 'render': []})
    reply = backend.request(framing.UPDATE, 4, 0, {'cars': [{'id': 'ego', 'pose': [0] * 6}],
                                                    'render': []})
    assert reply.topic == framing.UPDATE


def test_a_peer_of_another_version_is_refused(backend: BackendClient) -> None:
    socket = zmq.Context.instance().socket(zmq.REQ)
    socket.connect(backend.address)
    socket.send_multipart([b'Update', b'{"protocol": 2, "step": 1, "time_ns": 0}'])
    assert socket.poll(5000)
    reply = framing.decode(socket.recv_multipart())
    socket.close(linger=0)
    assert reply.topic == framing.ERROR
    assert 'version 2' in reply.header['error']


def test_a_silent_backend_is_reported_with_its_address() -> None:
    address = f'tcp://127.0.0.1:{free_port()}'
    client = BackendClient(address, timeout_s=0.3)
    with pytest.raises(BackendUnavailableError, match=address):
        client.request(framing.UPDATE, 1, 0)
    client.close()


def _wait_until_interrupted(client: BackendClient, interrupt: Callable[[], None]) -> float:
    """Seconds a request to a silent backend (``client``) waits until ``interrupt``, run in
    another thread 0.3 s on, ends it with KeyboardInterrupt."""
    other = threading.Timer(0.3, interrupt)
    try:
        started = time.monotonic()
        other.start()
        with pytest.raises(KeyboardInterrupt):
            client.request(framing.UPDATE, 1, 0)
        return time.monotonic() - started
    finally:
        other.cancel()
        other.join()
        client.close()


def test_a_stop_signal_taken_by_another_thread_cuts_a_wait_for_the_backend_short() -> None:
    """Any thread of a process may take its SIGINT or SIGTERM, and Python runs the handler in
    the main thread only once that is back in the interpreter. A bridge waiting on a stopped
    backend in one long poll held a Ctrl-C for the whole timeout (5 s), and its launcher
    killed it."""
    def signal_this_thread() -> None:
        signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)

    client = BackendClient(f'tcp://127.0.0.1:{free_port()}', timeout_s=20.0)
    previous = signal.signal(signal.SIGUSR1, signal.default_int_handler)
    try:
        waited = _wait_until_interrupted(client, signal_this_thread)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert waited < 5.0, f'the stop waited {waited:.1f} s for the backend\'s timeout'


def test_a_stop_request_whose_interrupt_was_lost_still_ends_a_wait_for_the_backend() -> None:
    # Python drops a KeyboardInterrupt raised inside a __del__ method: the request stays noted
    # (arsim_bridge.stopping) and the wait must look at it.
    requested = threading.Event()
    client = BackendClient(f'tcp://127.0.0.1:{free_port()}', timeout_s=20.0,
                           stop_requested=requested.is_set)
    waited = _wait_until_interrupted(client, requested.set)
    assert waited < 5.0, f'the stop waited {waited:.1f} s for the backend\'s timeout'


def test_a_request_sent_ahead_is_answered_once_and_in_order(backend: BackendClient) -> None:
    initial_settings(backend)
    with pytest.raises(ProtocolError, match='no request awaits'):
        backend.receive()
    update = {'cars': [{'id': 'ego', 'pose': [0, 0, 0, 0, 0, 0]}],
              'render': [{'car': 'ego', 'sensor': 'scan'}]}
    backend.send(framing.UPDATE, 1, 25_000_000, update)
    with pytest.raises(ProtocolError, match='awaits its reply'):
        backend.send(framing.UPDATE, 2, 50_000_000, update)
    reply = backend.receive()
    assert (reply.step, reply.time_ns) == (1, 25_000_000)
    assert reply.arrays['ego/scan'].shape == (360,)
    assert backend.request(framing.UPDATE, 2, 50_000_000, update).step == 2
