"""The Foxglove view's relay (``arsim_bridge.foxglove_relay``) in front of a real Foxglove SDK
server, on real ports with real clients: either subprotocol name gets the SDK's frames as they
are, and the relay's own bounds (Host, number of clients, client message size) hold."""

from __future__ import annotations

import base64
import gc
import http.client
import json
import os
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack

import foxglove
import pytest
from aiohttp import web
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from arsim_bridge.foxglove_relay import MAX_CLIENT_MESSAGE_BYTES, MAX_CLIENTS, FoxgloveRelay

MESSAGE_DATA = 1  # opcode of a binary message frame: subscription id, log time, payload
TIMEOUT_S = 20.0


class Logged:
    """The relay's log lines, as the node gets them."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def __call__(self, level: str, text: str) -> None:
        with self._lock:
            self.lines.append((level, text))

    def text(self) -> str:
        with self._lock:
            return '\n'.join(text for _, text in self.lines)


@pytest.fixture
def served() -> Iterator[tuple[FoxgloveRelay, foxglove.Channel, Logged]]:
    context = foxglove.Context()  # the test's own channels, not the process's
    server = foxglove.start_server(name='relay-test', host='127.0.0.1', port=0, context=context)
    channel = foxglove.Channel('/data', message_encoding='cdr', context=context,
                               schema=foxglove.Schema(name='test/msg/Data', encoding='ros2msg',
                                                      data=b'uint8[] data'))
    log = Logged()
    relay = FoxgloveRelay('127.0.0.1', 0, server.port, log)
    relay.start()
    try:
        yield relay, channel, log
    finally:
        relay.stop()
        server.stop()
        channel.close()


def _client(relay: FoxgloveRelay, *subprotocols: str) -> ClientConnection:
    return connect(relay.url, subprotocols=list(subprotocols), open_timeout=TIMEOUT_S)


def _op(client: ClientConnection, op: str) -> dict:
    """The next JSON message of ``op`` the client gets."""
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        message = client.recv(timeout=max(0.1, deadline - time.monotonic()))
        if isinstance(message, str) and json.loads(message).get('op') == op:
            return json.loads(message)


def _upgrade(relay: FoxgloveRelay, host: str, subprotocol: str = 'foxglove.sdk.v1') -> int:
    """The status of a WebSocket handshake with ``Host: host``."""
    connection = http.client.HTTPConnection('127.0.0.1', relay.port, timeout=TIMEOUT_S)
    try:
        connection.request('GET', '/', headers={
            'Host': host, 'Upgrade': 'websocket', 'Connection': 'Upgrade',
            'Sec-WebSocket-Key': base64.b64encode(os.urandom(16)).decode(),
            'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Protocol': subprotocol})
        return connection.getresponse().status
    finally:
        connection.close()


@pytest.mark.parametrize(('offered', 'chosen'), [
    (['foxglove.websocket.v1'], 'foxglove.websocket.v1'),
    (['foxglove.sdk.v1'], 'foxglove.sdk.v1'),
    (['foxglove.websocket.v1', 'foxglove.sdk.v1'], 'foxglove.sdk.v1')])
def test_either_subprotocol_gets_the_servers_frames_unchanged(served, offered, chosen) -> None:
    relay, channel, _ = served
    with _client(relay, *offered) as client:
        assert client.subprotocol == chosen
        assert _op(client, 'serverInfo')['name'] == 'relay-test'
        advertised = _op(client, 'advertise')['channels']
        assert [c['topic'] for c in advertised] == ['/data']
        client.send(json.dumps({'op': 'subscribe',  # relayed to the server: it answers
                                'subscriptions': [{'id': 7, 'channelId': advertised[0]['id']}]}))
        payload = bytes(range(256)) * 300  # bigger than a socket buffer's chunk
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:  # logged until the subscription has reached it
            channel.log(payload, log_time=123)
            try:
                message = client.recv(timeout=0.2)
            except TimeoutError:
                continue
            if isinstance(message, bytes) and message[0] == MESSAGE_DATA:
                break
        assert isinstance(message, bytes), message
        assert struct.unpack_from('<IQ', message, 1) == (7, 123)
        assert message[13:] == payload


def test_a_client_offering_neither_subprotocol_is_refused(served) -> None:
    relay, _, log = served
    with pytest.raises(InvalidStatus) as refused:
        _client(relay, 'foxglove.websocket.v2')
    assert refused.value.response.status_code == 400
    assert 'none of the subprotocols' in log.text()


def test_a_request_naming_another_server_is_refused(served) -> None:
    """A page whose name points at 127.0.0.1 (DNS rebinding) sends its own name in Host."""
    relay, _, log = served
    assert _upgrade(relay, f'attacker.example:{relay.port}') == 403
    assert _upgrade(relay, f'127.0.0.1:{relay.port + 1}') == 403  # another port
    assert "a request for host 'attacker.example" in log.text()
    assert _upgrade(relay, f'localhost:{relay.port}') == 101
    assert _upgrade(relay, f'127.0.0.1:{relay.port}', 'foxglove.websocket.v1') == 101


def test_a_plain_request_gets_a_short_answer(served) -> None:
    relay, _, _ = served
    connection = http.client.HTTPConnection('127.0.0.1', relay.port, timeout=TIMEOUT_S)
    connection.request('GET', '/')
    answer = connection.getresponse()
    assert answer.status == 200
    assert f'open {relay.url} in Foxglove' in answer.read().decode()
    connection.close()


def test_more_clients_than_the_limit_are_refused(served) -> None:
    relay, _, log = served
    with ExitStack() as stack:
        clients = [stack.enter_context(_client(relay, 'foxglove.sdk.v1'))
                   for _ in range(MAX_CLIENTS)]
        for client in clients:  # each relayed to the server
            _op(client, 'serverInfo')
        with pytest.raises(InvalidStatus) as refused:
            _client(relay, 'foxglove.websocket.v1')
        assert refused.value.response.status_code == 503
        assert f'{MAX_CLIENTS} are connected already' in log.text()
        clients.pop().close()
        deadline = time.monotonic() + TIMEOUT_S
        while True:  # the closed one's place is free once the relay has seen it go
            try:
                clients.append(stack.enter_context(_client(relay, 'foxglove.websocket.v1')))
                break
            except InvalidStatus:
                assert time.monotonic() < deadline, log.text()
                time.sleep(0.1)
        _op(clients[-1], 'serverInfo')


def test_a_client_message_over_the_limit_closes_it(served) -> None:
    relay, _, _ = served
    with _client(relay, 'foxglove.sdk.v1') as client:
        _op(client, 'serverInfo')
        client.send('x' * (MAX_CLIENT_MESSAGE_BYTES + 1))
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                client.recv(timeout=TIMEOUT_S)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009  # message too big
    with _client(relay, 'foxglove.sdk.v1') as client:  # and the relay serves on
        _op(client, 'serverInfo')


def test_stopping_closes_the_clients_promptly(served) -> None:
    relay, _, _ = served
    with ExitStack() as stack:
        clients = [stack.enter_context(_client(relay, name))
                   for name in ('foxglove.sdk.v1', 'foxglove.websocket.v1')]
        for client in clients:
            _op(client, 'serverInfo')
        started = time.monotonic()
        relay.stop()
        assert time.monotonic() - started < 3.0
        for client in clients:
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    client.recv(timeout=TIMEOUT_S)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001  # going away


def _sockets_alive() -> set[int]:
    """The server-side WebSockets alive in this process (cycles collected first), by type: a
    dead weak proxy raises ReferenceError when ``isinstance`` asks it for its class."""
    gc.collect()
    return {id(thing) for thing in gc.get_objects()
            if issubclass(type(thing), web.WebSocketResponse)}


def test_stopped_relays_hold_none_of_their_clients() -> None:
    """A relay stopped while clients were connected keeps nothing of them, even while the
    relay itself is still referenced (a node that stops it and goes on): a simulation that
    starts and stops views would otherwise keep every client it ever had. What a stop leaves
    depends on when the clients' handlers end against the loop's stop, so twenty relays."""
    context = foxglove.Context()
    server = foxglove.start_server(name='relay-test', host='127.0.0.1', port=0, context=context)
    before = _sockets_alive()
    stopped = []
    try:
        for _ in range(20):
            relay = FoxgloveRelay('127.0.0.1', 0, server.port, Logged())
            relay.start()
            stopped.append(relay)
            with ExitStack() as stack:
                clients = [stack.enter_context(_client(relay, name))
                           for name in ('foxglove.sdk.v1', 'foxglove.websocket.v1')]
                for client in clients:
                    _op(client, 'serverInfo')
                relay.stop()
                for client in clients:
                    with pytest.raises(ConnectionClosed):
                        while True:
                            client.recv(timeout=TIMEOUT_S)
        assert not _sockets_alive() - before, f'{len(stopped)} stopped relays hold clients'
    finally:
        server.stop()
