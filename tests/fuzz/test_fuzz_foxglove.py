"""Fuzzing the Foxglove view (``view: foxglove``) with a real Foxglove-protocol client: the view
runs as its own process, as the launcher starts it, on a DDS domain of its own (it advertises the
topics of its own node), and gets generated client messages (subscribe, unsubscribe, advertise,
unknown ops, wrong types, huge ids, garbage text, binary frames). Each must be answered, or dropped
with the connection, within HANG_S (5 s in the long run); the process must keep running, its memory
grow a bounded amount, and a new client still be served.
"""

from __future__ import annotations

import itertools
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from fuzzing import HANG_S, NO_SHRINK, REPO, fuzz, repeat, rss_kib, timeout_s
from hypothesis import given
from hypothesis import strategies as st
from simharness import LoggedProcess, allocate_domain, die_with_parent, free_port, ros_env
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

SUBPROTOCOLS = ['foxglove.sdk.v1', 'foxglove.websocket.v1']
OWN_TOPICS = {'/rosout', '/parameter_events'}  # what the view's own node publishes
PROBE_CHANNEL = 3_000_000_000  # channel ids from here on are never advertised
RSS_GROWTH_KIB = 64 * 1024
PROGRAM = 'import sys; from arsim_bridge.foxglove_node import main; sys.exit(main())'


class FoxgloveProcess:
    """The Foxglove view's node in a process of its own, serving on a free port."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        settings = yaml.safe_load((REPO / 'config' / 'sim.yaml').read_text())
        settings['view'] = {'kind': 'foxglove', 'port': self.port}
        settings_file = folder / 'foxglove.yaml'
        settings_file.write_text(yaml.safe_dump(settings))
        self.node = LoggedProcess(
            [sys.executable, '-c', PROGRAM, '--ros-args', '-p', f'settings_file:={settings_file}',
             '-p', f'resources_dir:={REPO}'], ros_env(allocate_domain()), folder / 'node.log',
            preexec_fn=die_with_parent)
        self.url = f'ws://127.0.0.1:{self.port}'

    def client(self) -> ClientConnection:
        return connect(self.url, subprotocols=SUBPROTOCOLS,  # type: ignore[arg-type]
                       open_timeout=HANG_S, max_size=None, proxy=None)

    def channels(self, client: ClientConnection, timeout_s: float) -> dict[str, int]:
        """The channels advertised to ``client`` (topic: id) once the view's own are in."""
        found: dict[str, int] = {}
        deadline = time.monotonic() + timeout_s
        while not OWN_TOPICS <= found.keys():
            message = client.recv(timeout=max(0.0, deadline - time.monotonic()))
            if isinstance(message, str):
                body = json.loads(message)
                if body.get('op') == 'advertise':
                    found.update((c['topic'], c['id']) for c in body['channels'])
        return found

    @property
    def alive(self) -> bool:
        return self.node.process.poll() is None


@pytest.fixture(scope='module')
def view(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FoxgloveProcess]:
    served = FoxgloveProcess(tmp_path_factory.mktemp('foxglove'))
    try:
        assert served.node.wait_for_log(f'ws://127.0.0.1:{served.port}', 60.0), served.node.log
        yield served
    finally:
        served.node.stop()


# --- messages ----------------------------------------------------------------------------------
ids = st.one_of(st.integers(0, 5), st.integers(0, 2 ** 32 - 1),
                st.sampled_from([-1, 2 ** 32, 2 ** 53 + 1, 2 ** 64, 10 ** 30, 1.5, float('nan'),
                                 float('inf')]),
                st.text(max_size=5), st.none(), st.booleans())
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.text(max_size=8), inner, max_size=4), max_leaves=12)
OPS = ['subscribe', 'unsubscribe', 'advertise', 'unadvertise', 'getParameters',
       'setParameters', 'subscribeParameterUpdates', 'unsubscribeParameterUpdates',
       'subscribeConnectionGraph', 'unsubscribeConnectionGraph', 'fetchAsset',
       'playbackControlRequest']


@st.composite
def client_message(draw: st.DrawFn) -> dict[str, Any]:
    """An op of the protocol (or not) with fields right, wrong or missing."""
    op = draw(st.sampled_from(OPS) | st.text(max_size=12))
    body: dict[str, Any] = {'op': op}
    if op == 'subscribe' or draw(st.booleans()):
        body['subscriptions'] = draw(st.lists(st.fixed_dictionaries(
            {'id': ids, 'channelId': ids}, optional={'extra': json_values}), max_size=6)
            | json_values)
    if op == 'unsubscribe' or draw(st.booleans()):
        body['subscriptionIds'] = draw(st.lists(ids, max_size=6) | json_values)
    if op == 'advertise' or draw(st.booleans()):
        body['channels'] = draw(st.lists(st.fixed_dictionaries(
            {'id': ids, 'topic': st.sampled_from(sorted(OWN_TOPICS)) | st.text(max_size=30),
             'encoding': st.sampled_from(['cdr', 'json', '']) | json_values,
             'schemaName': st.sampled_from(['std_msgs/msg/String', '../x', '']) | json_values},
            optional={'schema': st.text(max_size=50)}), max_size=4) | json_values)
    if op == 'unadvertise' or draw(st.booleans()):
        body['channelIds'] = draw(st.lists(ids, max_size=6) | json_values)
    for key in draw(st.lists(st.sampled_from(['parameterNames', 'parameters', 'id', 'uri',
                                              'requestId', 'playbackCommand']), max_size=3)):
        body[key] = draw(json_values | ids)
    return body


@st.composite
def binary_message(draw: st.DrawFn) -> bytes:
    """A binary frame: an opcode (client message data, service call, or any) and a payload."""
    opcode = draw(st.sampled_from([1, 2, 0, 255]) | st.integers(0, 255))
    channel = draw(st.integers(0, 2 ** 32 - 1) | st.integers(0, 5))
    return bytes([opcode]) + channel.to_bytes(4, 'little') + draw(st.binary(max_size=64))


messages = st.one_of(client_message().map(lambda m: json.dumps(m, allow_nan=True)),
                     json_values.map(lambda v: json.dumps(v, allow_nan=True)),
                     st.text(max_size=100), st.binary(max_size=64), binary_message(),
                     st.integers(1, 5000).map(lambda depth: '[' * depth + ']' * depth))
PROBES = itertools.count(PROBE_CHANNEL)


def exchange(client: ClientConnection, message: str | bytes) -> bool:
    """Send ``message``, then a probe (a subscription to a channel never advertised, which
    the server must refuse naming it); True once the probe's answer came, False if the server
    closed the connection instead."""
    probe = next(PROBES)
    try:
        client.send(message)
        client.send(json.dumps({'op': 'subscribe',
                                'subscriptions': [{'id': 1, 'channelId': probe}]}))
        deadline = time.monotonic() + HANG_S
        while True:
            reply = client.recv(timeout=max(0.0, deadline - time.monotonic()))
            if isinstance(reply, str) and str(probe) in reply:
                return True
    except ConnectionClosed:
        return False
    except TimeoutError:
        pytest.fail(f'no answer within {HANG_S} s to {message[:200]!r} (then the probe)')


RUN = fuzz(150, phases=NO_SHRINK, deadline=None)  # a process: timed by the reply timeout


@pytest.mark.timeout(timeout_s(15))
def test_generated_client_messages_never_stop_the_foxglove_view(view: FoxgloveProcess) -> None:
    with view.client() as client:
        view.channels(client, 30.0)  # the view has found its own topics
        assert exchange(client, '{"op": "warm-up"}')
    rss_before = rss_kib(view.node.process.pid)
    closed = 0

    @RUN
    @given(batch=st.lists(messages, min_size=1, max_size=4))
    def one(batch: list[str | bytes]) -> None:
        nonlocal closed
        with view.client() as client:  # a client of its own: a failure is the example's own
            for message in batch:
                if not exchange(client, message):
                    closed += 1
                    break
        assert view.alive, view.node.log[-3000:]

    repeat(one)
    with view.client() as client:  # a new client is served: advertised topics, subscriptions
        channels = view.channels(client, HANG_S)
        client.send(json.dumps({'op': 'subscribe', 'subscriptions': [
            {'id': 7, 'channelId': channels['/rosout']}]}))
        assert exchange(client, '{"op": "unsubscribe", "subscriptionIds": [7]}')
    growth = rss_kib(view.node.process.pid) - rss_before
    print(f'foxglove fuzz: {closed} connections closed by the server, RSS {growth:+} KiB')
    assert growth < RSS_GROWTH_KIB, f'the view grew by {growth} KiB'
    assert view.alive and 'Traceback' not in view.node.log, view.node.log[-3000:]
