"""The web view's server, on a real port with real clients: it answers only requests that name
it in ``Host`` and WebSockets from its own page, serves a bounded number of pages, and refuses
commands out of range, too deep or too many without stopping, flooding the log or changing the
pacing."""

from __future__ import annotations

import http.client
import json
import math
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection, connect

from arsim_core import log_limit
from arsim_core.engine import Engine, InProcessRenderer
from arsim_core.engine.pacing import Pacing
from arsim_core.view.commands import MAX_COMMAND_DEPTH
from arsim_core.view.feed import ViewFeed
from arsim_core.view.web_server import MAX_PAGES, WebView

WAIT_S = 30.0  # for an answer: generous, a loaded machine is slow


class Log:
    """The view's log callable, keeping what it was called with."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def __call__(self, level: str, text: str) -> None:
        self.lines.append((level, text))


def _view(make_scenario, ring, host: str = '127.0.0.1') -> tuple[WebView, Log]:
    scenario = make_scenario(('ego',))
    engine = Engine(scenario, InProcessRenderer(), dynamics=False)
    engine.load_track(ring)
    log = Log()
    view = WebView(ViewFeed(scenario, engine, Pacing(1.0)), host, 0, log)
    view.start()
    return view, log


@pytest.fixture
def served(make_scenario, ring) -> Iterator[tuple[WebView, Log]]:
    view, log = _view(make_scenario, ring)
    yield view, log
    view.stop()


def _get(port: int, path: str, host: str, connect_to: str = '127.0.0.1') -> tuple[int, bytes]:
    connection = http.client.HTTPConnection(connect_to, port, timeout=WAIT_S)
    try:
        connection.request('GET', path, headers={'Host': host})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _refused_status(url: str, **options) -> int | None:
    """The HTTP status a WebSocket to ``url`` is refused with, None when it opens."""
    try:
        with connect(url, open_timeout=WAIT_S, **options):
            return None
    except InvalidStatus as exc:
        return exc.response.status_code


def _error(page: ClientConnection) -> str:
    """The next error message the page gets (hello, pacing and frames aside)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        message = json.loads(page.recv(timeout=deadline - time.monotonic()))
        if message['type'] == 'error':
            return message['message']
    pytest.fail('no error message came')


# --- Host and Origin ---------------------------------------------------------------------------
@pytest.mark.parametrize('path', ['/track.png', '/camera.jpg?key=ego/camera/rgb', '/',
                                  '/static/view.js'])
def test_a_request_for_another_host_is_refused(served, path):
    """DNS rebinding: a page of evil.example, its name pointed at 127.0.0.1, asks for the
    track or a camera with its own name in Host."""
    view, log = served
    status, body = _get(view.port, path, f'evil.example:{view.port}')
    assert status == 403
    assert b'evil.example' in body
    assert any('refused' in text and 'evil.example' in text for _, text in log.lines)


@pytest.mark.parametrize('host', ['127.0.0.1:{port}', 'localhost:{port}', '[::1]:{port}',
                                  'LocalHost:{port}'])
def test_the_names_of_a_loopback_server_are_answered(served, host):
    view, _ = served
    status, body = _get(view.port, '/track.png', host.format(port=view.port))
    assert status == 200 and body.startswith(b'\x89PNG')


@pytest.mark.parametrize('host', ['127.0.0.1', '127.0.0.1:1', 'localhost:{port}/x',
                                  'evil.example', '127.0.0.1:{port}@evil.example', ''])
def test_a_host_with_another_port_or_no_form_is_refused(served, host):
    view, _ = served
    assert _get(view.port, '/track.png', host.format(port=view.port))[0] == 403


def test_a_server_bound_to_every_interface_answers_to_the_address_it_was_reached_at(
        make_scenario, ring):
    view, _ = _view(make_scenario, ring, host='0.0.0.0')
    try:
        assert _get(view.port, '/track.png', f'127.0.0.1:{view.port}')[0] == 200
        assert _get(view.port, '/track.png', f'localhost:{view.port}')[0] == 200
        assert _get(view.port, '/track.png', f'{socket.gethostname()}:{view.port}')[0] == 200
        assert _get(view.port, '/track.png', f'evil.example:{view.port}')[0] == 403
    finally:
        view.stop()


def test_a_websocket_from_a_page_of_another_site_is_refused(served):
    view, log = served
    url = f'ws://127.0.0.1:{view.port}/ws'
    assert _refused_status(url, origin='http://evil.example') == 403
    assert _refused_status(url, origin=f'http://evil.example:{view.port}') == 403
    assert _refused_status(url, origin=f'https://127.0.0.1:{view.port}') == 403
    assert _refused_status(url, origin='null') == 403
    assert any('evil.example' in text for _, text in log.lines)


def test_a_websocket_that_names_another_host_is_refused(served):
    view, _ = served
    with socket.create_connection(('127.0.0.1', view.port), timeout=WAIT_S) as raw:
        raw.sendall(b'GET /ws HTTP/1.1\r\nHost: evil.example:%d\r\nUpgrade: websocket\r\n'
                    b'Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n'
                    b'Sec-WebSocket-Version: 13\r\n\r\n' % view.port)
        assert raw.recv(12) == b'HTTP/1.1 403'


@pytest.mark.parametrize('origin', ['http://127.0.0.1:{port}', 'http://localhost:{port}', None])
def test_the_pages_own_origin_and_a_script_without_one_are_served(served, origin):
    view, _ = served
    options = {} if origin is None else {'origin': origin.format(port=view.port)}
    with connect(f'ws://127.0.0.1:{view.port}/ws', open_timeout=WAIT_S, **options) as page:
        types = set()
        while not {'hello', 'pacing'} <= types:
            types.add(json.loads(page.recv(timeout=WAIT_S))['type'])


def test_pages_beyond_the_most_are_refused_until_one_closes(served):
    view, _ = served
    url = f'ws://127.0.0.1:{view.port}/ws'
    with ExitStack() as pages:
        for _ in range(MAX_PAGES - 1):
            pages.enter_context(connect(url, open_timeout=WAIT_S))
        with connect(url, open_timeout=WAIT_S):
            assert _refused_status(url) == 503
        deadline = time.monotonic() + WAIT_S
        while (status := _refused_status(url)) == 503 and time.monotonic() < deadline:
            time.sleep(0.05)  # the server hears of the close a moment later
        assert status is None


# --- commands ----------------------------------------------------------------------------------
@pytest.mark.parametrize('value', [1e-300, 1e300, math.nan, math.inf, 'fast', True, None,
                                   10**4000, 0.001, 1000.0])
def test_a_real_time_factor_out_of_range_is_answered_and_changes_nothing(served, value):
    view, _ = served
    before = view.feed.pacing.status()
    with connect(f'ws://127.0.0.1:{view.port}/ws', open_timeout=WAIT_S) as page:
        page.send(json.dumps({'op': 'set_real_time_factor', 'value': value}))
        assert 'real-time factor' in _error(page)
    assert view.feed.pacing.status() == before


def test_a_real_time_factor_in_range_is_taken(served):
    view, _ = served
    with connect(f'ws://127.0.0.1:{view.port}/ws', open_timeout=WAIT_S) as page:
        page.send(json.dumps({'op': 'set_real_time_factor', 'value': 0.5}))
        page.send('{"op": "marker"}')
        assert 'marker' in _error(page)  # the command before it is done
    assert view.feed.pacing.status().real_time_factor == 0.5


@pytest.mark.parametrize('command', ['[' * 2000 + ']' * 2000,
                                     '{"op": ' + '[' * 2000 + ']' * 2000 + '}',
                                     '{"op": "step", "frames": ' + '{"a":' * 600 + '1' + '}' * 600
                                     + '}'])
def test_a_deeply_nested_command_is_answered_and_the_server_goes_on(served, command):
    view, _ = served
    url = f'ws://127.0.0.1:{view.port}/ws'
    with connect(url, open_timeout=WAIT_S) as page:
        page.send(command)
        assert f'at most {MAX_COMMAND_DEPTH} levels' in _error(page)
        page.send('{"op": "pause"}')
        page.send('{"op": "marker"}')
        assert 'marker' in _error(page)  # the same page is still served
    assert view.feed.pacing.status().paused
    with connect(url, open_timeout=WAIT_S) as page:
        assert json.loads(page.recv(timeout=WAIT_S))['type'] in ('hello', 'pacing')


def test_brackets_in_strings_are_no_nesting(served):
    view, _ = served
    with connect(f'ws://127.0.0.1:{view.port}/ws', open_timeout=WAIT_S) as page:
        page.send(json.dumps({'op': '[{' * 1000 + '\\"'}))
        assert 'unknown command' in _error(page)


def test_what_a_refused_command_logs_and_answers_is_clipped(served):
    view, log = served
    with connect(f'ws://127.0.0.1:{view.port}/ws', open_timeout=WAIT_S) as page:
        page.send(json.dumps({'op': 'x' * 4000}))
        reply = _error(page)
        page.send(json.dumps({'op': 'set_real_time_factor', 'value': 'y' * 4000}))
        reply_rtf = _error(page)
    assert 'unknown command' in reply and len(reply) < 500
    assert 'real-time factor' in reply_rtf and len(reply_rtf) < 500
    lines = [text for _, text in log.lines if 'xxx' in text or 'yyy' in text]
    assert len(lines) == 2 and all(len(text) < 500 for text in lines), lines


def test_a_flood_of_bad_commands_logs_a_bounded_number_of_lines(served):
    view, log = served
    started = time.monotonic()
    with connect(f'ws://127.0.0.1:{view.port}/ws', open_timeout=WAIT_S) as page:
        for k in range(10_000):
            page.send(f'not json {k}')
        # The page's commands are carried out in order: once a marker is answered, the flood
        # is through. Markers sent while the page is still over its rate are dropped.
        deadline = time.monotonic() + WAIT_S
        replies: list[str] = []
        while not any('marker' in reply for reply in replies):
            assert time.monotonic() < deadline, replies[-5:]
            page.send('{"op": "marker"}')
            try:
                while True:
                    message = json.loads(page.recv(timeout=0.2))
                    if message['type'] == 'error':
                        replies.append(message['message'])
            except TimeoutError:
                pass
    elapsed = time.monotonic() - started
    assert any('commands a second' in reply for reply in replies), replies[:50]
    most = log_limit.BURST + elapsed / log_limit.PERIOD_S + 1
    assert 0 < len(log.lines) <= most, (len(log.lines), most)
    assert len(replies) < 1000  # the excess is dropped, not answered


def test_a_page_that_leaves_while_let_in_is_forgotten_without_a_traceback(served, caplog):
    """A socket closed (reset) right after its opening request: the server finds the page
    gone while it answers, which is no error of the server's."""
    view, _ = served
    request = (b'GET /ws HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n'
               b'Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n'
               b'Sec-WebSocket-Version: 13\r\n\r\n' % view.port)
    for _ in range(50):
        raw = socket.create_connection(('127.0.0.1', view.port), timeout=WAIT_S)
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b'\x01\x00\x00\x00\x00\x00\x00\x00')
        raw.sendall(request)
        raw.close()  # a reset, at once
    with connect(f'ws://127.0.0.1:{view.port}/ws', open_timeout=WAIT_S) as page:
        page.recv(timeout=WAIT_S)  # still serving
    assert not [r for r in caplog.records if r.name.startswith('aiohttp')], caplog.text[:2000]
