"""``view: foxglove``: the simulation's topics reach a client of the Foxglove WebSocket
protocol, each advertised with its ROS 2 schema, as CDR that decodes into the real message;
and a view that cannot start is reported while the simulation goes on."""

from __future__ import annotations

import json
import struct
import time
from collections import Counter

import pytest
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import LaserScan
from simharness import Simulation, free_port, taken_port
from tf2_msgs.msg import TFMessage
from websockets.sync.client import connect

MESSAGE_DATA = 1  # opcode of a binary message frame: subscription id, log time, payload
WANTED = ('/scan', '/tf', '/tf_static', '/map')
STATIC_FRAMES = {'ego_racecar/laser', 'ego_racecar/chassis'}  # sensor and description nodes'


def _view(port: int) -> dict:
    return {'simulation': {'wait_for_drivers': False}, 'view': {'kind': 'foxglove', 'port': port}}


@pytest.fixture(scope='module')
def served(module_simulation) -> tuple[Simulation, int]:
    """A simulation with the Foxglove view, shared by the tests that only connect to it; its
    port."""
    port = free_port()
    sim = module_simulation(settings=_view(port))
    assert sim.wait_for_log('ready; stepping', 90.0), sim.log
    assert sim.wait_for_log(f'ws://127.0.0.1:{port}', 30.0), sim.log
    return sim, port


def _channels(client, topics: tuple[str, ...], timeout_s: float) -> dict[str, dict]:
    """The advertised channels of ``topics``, by topic, as they come in."""
    found: dict[str, dict] = {}
    deadline = time.monotonic() + timeout_s
    while set(topics) - set(found) and time.monotonic() < deadline:
        message = client.recv(timeout=max(0.1, deadline - time.monotonic()))
        if isinstance(message, str):
            body = json.loads(message)
            if body.get('op') == 'advertise':
                found.update((c['topic'], c) for c in body['channels'] if c['topic'] in topics)
    return found


def _messages(client, until, timeout_s: float):
    """(subscription id, log time, payload) of each message data frame, until ``until()``."""
    deadline = time.monotonic() + timeout_s
    while not until() and time.monotonic() < deadline:
        message = client.recv(timeout=max(0.1, deadline - time.monotonic()))
        if isinstance(message, bytes) and message[0] == MESSAGE_DATA:
            subscription, log_time = struct.unpack_from('<IQ', message, 1)
            yield subscription, log_time, message[13:]


# The Foxglove WebSocket protocol's own name, which Lichtblick and older Foxglove Studio offer,
# and the Foxglove SDK's.
@pytest.mark.parametrize('subprotocol', ['foxglove.websocket.v1', 'foxglove.sdk.v1'])
def test_a_foxglove_client_receives_the_simulation(served, subprotocol: str) -> None:
    sim, port = served
    with connect(f'ws://127.0.0.1:{port}', subprotocols=[subprotocol]) as client:
        assert client.subprotocol == subprotocol
        channels = _channels(client, WANTED, 30.0)
        assert set(channels) == set(WANTED), (channels, sim.log)
        scan = channels['/scan']
        assert (scan['encoding'], scan['schemaName'], scan['schemaEncoding']) == \
            ('cdr', 'sensor_msgs/msg/LaserScan', 'ros2msg')
        assert 'MSG: std_msgs/Header' in scan['schema'], scan['schema']
        client.send(json.dumps({'op': 'subscribe', 'subscriptions': [
            {'id': 1, 'channelId': scan['id']},
            {'id': 2, 'channelId': channels['/tf_static']['id']}]}))
        got: dict[int, list[tuple[int, bytes]]] = {1: [], 2: []}
        static_frames: set[str] = set()  # each publisher's latched /tf_static, in any order
        for subscription, log_time, payload in _messages(
                client, lambda: len(got[1]) >= 3 and STATIC_FRAMES <= static_frames, 30.0):
            got[subscription].append((log_time, payload))
            if subscription == 2:
                static_frames.update(t.child_frame_id for t in deserialize_message(
                    payload, TFMessage).transforms)
    assert len(got[1]) >= 3, (len(got[1]), sim.log)
    assert STATIC_FRAMES <= static_frames, (static_frames, sim.log)  # latched: sent late too
    scans = [deserialize_message(payload, LaserScan) for _, payload in got[1]]
    assert {s.header.frame_id for s in scans} == {'ego_racecar/laser'}
    assert all(len(s.ranges) == 1080 for s in scans)
    stamps = [s.header.stamp.sec * 10**9 + s.header.stamp.nanosec for s in scans]
    assert stamps == sorted(stamps) and stamps[-1] > stamps[0]  # sim time moves on
    times = [log_time for log_time, _ in got[1]]
    assert abs(times[-1] - stamps[-1]) < 10**9  # logged at sim time, not wall time


def test_a_misbehaving_client_costs_bounded_replays_and_log_lines(served) -> None:
    """A client that subscribes to a latched topic over and over, as a bare request or after
    an unsubscribe, gets its messages about once, not once per request; and a flood of bad
    requests is logged at a bounded rate: requests are outside input."""
    sim, port = served
    with connect(f'ws://127.0.0.1:{port}', subprotocols=['foxglove.sdk.v1']) as client:
        for _ in range(100):  # each answered with a status; a client that reads none is let go
            client.send('{"op": "subscribe", "subscriptions": [{"id": "x"')
    with connect(f'ws://127.0.0.1:{port}', subprotocols=['foxglove.sdk.v1']) as client:
        channels = _channels(client, ('/scan', '/tf_static'), 30.0)
        assert set(channels) == {'/scan', '/tf_static'}, (channels, sim.log)
        static, scan = channels['/tf_static']['id'], channels['/scan']['id']
        for number in range(1, 101):  # the same channel asked for again and again
            client.send(json.dumps({'op': 'subscribe',
                                    'subscriptions': [{'id': number, 'channelId': static}]}))
            if number < 100:
                client.send(json.dumps({'op': 'unsubscribe', 'subscriptionIds': [number]}))
        client.send(json.dumps({'op': 'subscribe',
                                'subscriptions': [{'id': 1000, 'channelId': scan}]}))
        copies: Counter[bytes] = Counter()
        scans = 0
        started = time.monotonic()

        def enough() -> bool:  # many replay periods after the last request
            return scans >= 40 and time.monotonic() - started > 3.0

        for subscription, _, payload in _messages(client, enough, 60.0):
            if subscription < 1000:
                copies[payload] += 1
            else:
                scans += 1
    assert scans >= 40, (scans, sim.log)
    frames = {t.child_frame_id for data in copies
              for t in deserialize_message(data, TFMessage).transforms}
    assert STATIC_FRAMES <= frames, (frames, sim.log)
    assert max(copies.values()) <= 2, copies.values()  # as it was published, and as replayed
    bad = sim.log.count('Invalid message from')
    assert 1 <= bad <= 20, (bad, sim.log)  # a burst, then one a second, each counting the rest


@pytest.mark.parametrize(('one_process', 'reported'), [
    (False, 'foxglove_view exited with code 1; the simulation goes on'),
    (True, 'the simulation goes on without foxglove_view')])
def test_a_view_that_cannot_start_leaves_the_simulation_running(simulation, one_process: bool,
                                                                reported: str) -> None:
    with taken_port() as port:
        settings = _view(port)
        settings['simulation']['one_process'] = one_process
        sim = simulation(settings=settings)
        assert sim.wait_for_log('ready; stepping', 90.0), sim.log
        assert sim.wait_for_log(reported, 60.0), sim.log
        assert f'cannot serve Foxglove on 127.0.0.1:{port}' in sim.log
        time.sleep(1.0)
        assert sim.process.poll() is None, sim.log
