"""Fuzzing the web view's WebSocket (``view: web``) with a real client in this process: generated
text and binary messages (JSON of any shape and depth, valid ops with wrong values, NaN and huge
numbers as text, nested arrays, garbage). Each must be answered, or dropped with the connection,
within HANG_S (5 s in the long run) while the server keeps serving; afterwards a valid command still
works, the pacing is in its documented range, the log lines the messages caused were rate-limited,
the server holds nothing of the pages that have gone, and the memory Python holds grew a bounded
amount. Handshakes from another site's page (a foreign ``Origin`` or ``Host``) are refused.
"""

from __future__ import annotations

import gc
import itertools
import json
import logging
import socket
import time
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web
from fuzzing import HANG_S, REPO, fuzz, repeat, rss_kib, timeout_s
from hypothesis import given
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.sync.client import ClientConnection, connect

from arsim_core.config.scenario import load_scenario
from arsim_core.engine import Engine, InProcessRenderer, TrackWorld
from arsim_core.engine.pacing import MAX_RTF, MAX_STEPS, MIN_RTF, Pacing
from arsim_core.track import load_track
from arsim_core.view.commands import CommandRate
from arsim_core.view.feed import ViewFeed
from arsim_core.view.web_server import MAX_COMMAND_BYTES, WebView

OPS = ['play', 'pause', 'step', 'set_real_time_factor']
LOG_BURST = 10  # arsim_core.log_limit's defaults: a burst of 10, then one a second
# What Python holds after the run, against before it: the server's state, the client's and what
# Hypothesis keeps between runs (its run's own data is gone by then). Not the process's RSS: what
# Hypothesis holds while it runs grows with the run's inputs (44 MiB of Python objects at 1,000),
# and what glibc's allocator gets back from that and from a client thread per page it keeps,
# fragmented, so a long run's RSS rose by 200 to 330 MiB with no page left in the server.
HELD_GROWTH_KIB = 16 * 1024
PAGE_TYPES = (web.WebSocketResponse, CommandRate)  # one of each per page the server serves


class View:
    """A WebView of the default scenario on a free loopback port, and what it logged."""

    def __init__(self) -> None:
        scenario = load_scenario(REPO / 'config' / 'sim.yaml', REPO)
        engine = Engine(scenario, InProcessRenderer(), dynamics=False)
        engine.load_track(TrackWorld.from_track(load_track('arsim_ring', REPO / 'maps')))
        self.pacing = Pacing(1.0)
        self.lines: list[tuple[str, str]] = []
        self.server = WebView(ViewFeed(scenario, engine, self.pacing), '127.0.0.1', 0,
                              lambda level, text: self.lines.append((level, text)))
        self.server.start()
        self.origin = f'http://127.0.0.1:{self.server.port}'
        self.ws_url = f'ws://127.0.0.1:{self.server.port}/ws'
        self.uncaught = Uncaught()
        # Pages other servers in this process left (another test's): not this server's to drop.
        # By type, as ``live`` counts them.
        self.others = {id(thing): thing for thing in gc.get_objects()
                       if issubclass(type(thing), PAGE_TYPES)}


class Uncaught(logging.Handler):
    """What aiohttp and asyncio log of exceptions a handler let through (a request or a
    WebSocket handler that died): each is a failure of the view, even if the page only saw
    its connection drop."""

    LOGGERS = ('aiohttp.server', 'aiohttp.web', 'aiohttp.websocket', 'asyncio')

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []
        for name in self.LOGGERS:
            logging.getLogger(name).addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def take(self) -> list[str]:
        """The exceptions logged since the last call, each as its message and last line."""
        records, self.records = self.records, []
        return [f'{r.getMessage()}: {r.exc_info[1]!r}' if r.exc_info else r.getMessage()
                for r in records]

    def close(self) -> None:
        for name in self.LOGGERS:
            logging.getLogger(name).removeHandler(self)
        super().close()


def page(view: View, origin: str | None = None) -> ClientConnection:
    """A page's WebSocket connection, with the view's own Origin unless told another."""
    return connect(view.ws_url, origin=origin or view.origin,  # type: ignore[arg-type]
                   open_timeout=HANG_S, max_size=None, proxy=None)


def exchange(client: ClientConnection, message: str | bytes) -> list[dict[str, Any]] | None:
    """Send ``message``, then a probe (an unknown op, which must come back as an error that
    names it): the messages the server sent until it answered the probe, which shows it has
    dealt with what came before; None if it closed the connection instead."""
    probe = f'fuzz-probe-{next(PROBES)}'
    received: list[dict[str, Any]] = []
    deadline = time.monotonic() + HANG_S
    try:
        client.send(message)
        client.send(json.dumps({'op': probe}))
        while True:
            body = json.loads(client.recv(timeout=max(0.0, deadline - time.monotonic())))
            received.append(body)
            if body.get('type') == 'error' and probe in body.get('message', ''):
                return received
    except ConnectionClosed:
        return None
    except TimeoutError:
        pytest.fail(f'no answer within {HANG_S} s to {message[:200]!r} (then the probe); '
                    f'received {received}')


PROBES = itertools.count()


@pytest.fixture(scope='module')
def view() -> Iterator[View]:
    served = View()
    yield served
    served.server.stop()
    served.uncaught.close()


# --- messages ----------------------------------------------------------------------------------
special_numbers = st.sampled_from([0, -1, 1, 2, MAX_STEPS, MAX_STEPS + 1, 2 ** 31, 2 ** 63,
                                   -(2 ** 63), 10 ** 30, 10 ** 400, 1e308, -1e308, 5e-324,
                                   0.5, -0.0, float('nan'), float('inf'), float('-inf')])
scalars = st.one_of(st.none(), st.booleans(), st.integers(), special_numbers,
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
                    st.sampled_from(OPS))
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(
        st.sampled_from(['op', 'frames', 'value']) | st.text(max_size=8), inner, max_size=5),
    max_leaves=20)
commands = st.fixed_dictionaries(
    {'op': st.sampled_from(OPS) | json_values},
    optional={'frames': special_numbers | json_values, 'value': special_numbers | json_values,
              'extra': json_values})
number_texts = st.sampled_from(['NaN', '-NaN', 'Infinity', '-Infinity', '1e999', '-1e999',
                                '1e-999', '9' * 4000, '-0', '0.0000', '1.5', '10000', '10001',
                                '1E400', 'true', 'null', '"2"', '[1]', '{}', '0x10', '1_000'])


@st.composite
def numbers_as_text(draw: st.DrawFn) -> str:
    """A valid op whose number is written as JSON text no encoder writes (NaN, 1e999)."""
    op, key = draw(st.sampled_from([('step', 'frames'), ('set_real_time_factor', 'value')]))
    return f'{{"op": "{op}", "{key}": {draw(number_texts)}}}'


@st.composite
def nested(draw: st.DrawFn) -> str:
    """Arrays and objects nested up to past the command size limit, closed or not."""
    depth = draw(st.integers(1, MAX_COMMAND_BYTES) | st.sampled_from([100, 1000, 2000, 4000]))
    opener, closer = draw(st.sampled_from([('[', ']'), ('{"op":', '}'), ('{"value":[', ']}')]))
    inner = draw(st.sampled_from(['1', 'NaN', '"pause"', '']))
    return opener * depth + inner + closer * draw(st.sampled_from([depth, 0, depth // 2]))


messages = st.one_of(
    commands.map(lambda c: json.dumps(c, allow_nan=True)),
    json_values.map(lambda v: json.dumps(v, allow_nan=True)),
    numbers_as_text(), nested(),
    st.text(max_size=200), st.binary(max_size=200),
    st.sampled_from(['', ' ', 'null', '[]', '{}', '{"op": null}', '\ufeff{"op": "pause"}',
                     '{"op": "pause"', '{"op": "step", "frames": 1, "frames": NaN}',
                     'x' * (MAX_COMMAND_BYTES + 1)]))


def live(kind: type, others: dict[int, object]) -> int:
    """How many objects of ``kind`` are alive (cycles collected first), ``others`` aside. By
    their type: ``isinstance`` asks a weak proxy for its class, which raises ReferenceError once
    the proxy's object is gone (another test may leave such a proxy in the process)."""
    gc.collect()
    return sum(1 for thing in gc.get_objects()
               if issubclass(type(thing), kind) and id(thing) not in others)


def assert_pages_forgotten(view: View) -> None:
    """Once every page has closed, the server keeps no socket or state of one: what a page
    leaves behind grows with the pages, which a long run adds up to a leak. The server ends a
    page's handler after the client closed, so this waits for that."""
    deadline = time.monotonic() + 10 * HANG_S
    while (alive := {kind.__name__: live(kind, view.others)
                     for kind in PAGE_TYPES}) != dict.fromkeys(
            alive, 0):
        assert time.monotonic() < deadline, f'the server still holds closed pages: {alive}'
        time.sleep(0.1)


def held_kib() -> int:
    """What Python holds [KiB] of what it allocated since tracemalloc started (garbage
    collected first)."""
    gc.collect()
    return tracemalloc.get_traced_memory()[0] // 1024


def check_pacing(view: View) -> None:
    """The pacing is in its documented range whatever the page sent."""
    status = view.pacing.status()
    assert isinstance(status.paused, bool)
    rtf = status.real_time_factor
    assert isinstance(rtf, float) and (rtf == 0.0 or MIN_RTF <= rtf <= MAX_RTF), status
    assert isinstance(status.pending_steps, int) and status.pending_steps >= 0, status


# --- the tests ---------------------------------------------------------------------------------
RUN = fuzz(300)


@pytest.mark.timeout(timeout_s(15))
def test_generated_commands_never_stop_the_web_view(view: View,
                                                    request: pytest.FixtureRequest) -> None:
    with page(view) as client:
        assert exchange(client, '{"op": "warm-up"}') is not None
    assert_pages_forgotten(view)
    tracemalloc.start()
    request.addfinalizer(tracemalloc.stop)  # also when the run fails: it slows what follows
    held_before = held_kib()
    rss_before, lines_before, started = rss_kib(), len(view.lines), time.monotonic()
    closed = 0

    @RUN
    @given(messages=st.lists(messages, min_size=1, max_size=3))
    def one(messages: list[str | bytes]) -> None:
        nonlocal closed
        with page(view) as client:  # a page of its own: a failure is the example's own
            for message in messages:
                if exchange(client, message) is None:
                    closed += 1
                    break
        uncaught = view.uncaught.take()
        assert not uncaught, f'the server failed on the page\'s messages: {uncaught}'
        check_pacing(view)

    repeat(one)
    # The server still serves: a valid command changes the pacing, and the page hears of it.
    with page(view) as client:
        replies = exchange(client, json.dumps({'op': 'pause'})) or []
        assert replies and replies[0]['type'] == 'pacing', replies
        assert replies[1]['type'] == 'hello' and replies[1]['track']['name'] == 'arsim_ring'
        for command in ({'op': 'set_real_time_factor', 'value': 2.0}, {'op': 'play'}):
            replies = exchange(client, json.dumps(command))
            assert replies is not None and replies[-1]['type'] == 'error', replies
        status = view.pacing.status()
        assert (status.paused, status.real_time_factor) == (False, 2.0), status
        wanted = {'type': 'pacing', 'paused': False, 'real_time_factor': 2.0}
        deadline = time.monotonic() + HANG_S
        while wanted not in replies:  # the page hears of the change
            replies.append(json.loads(client.recv(timeout=max(0.0, deadline -
                                                                   time.monotonic()))))
    elapsed = time.monotonic() - started
    logged = len(view.lines) - lines_before
    assert logged <= 2 * LOG_BURST + 2 * elapsed, (
        f'{logged} log lines in {elapsed:.0f} s from one page\'s commands: not rate-limited; '
        f'the last: {view.lines[-1]}')
    assert_pages_forgotten(view)
    held, peak_kib = held_kib() - held_before, tracemalloc.get_traced_memory()[1] // 1024
    print(f'web fuzz: {closed} connections closed by the server, {logged} log lines, '
          f'Python holds {held:+} KiB (peak {peak_kib} KiB), RSS {rss_kib() - rss_before:+} KiB')
    assert held < HELD_GROWTH_KIB, f'Python holds {held} KiB more than before the run'


hostile_hosts = st.one_of(
    st.from_regex(r'[a-z][a-z0-9-]{0,15}\.(com|net|example|internal)', fullmatch=True),
    st.tuples(*[st.integers(0, 255)] * 4).map(lambda ip: '.'.join(map(str, ip))).filter(
        lambda ip: not ip.startswith('127.')),
    st.sampled_from(['127.0.0.1.evil.com', 'localhost.evil.com', 'evil.com', '0.0.0.0',
                     '[::ffff:7f00:1]', '127.0.0.1@evil.com', 'null']))


@pytest.mark.timeout(timeout_s(10))
def test_a_foreign_origin_or_host_is_refused(view: View) -> None:
    """The handshake with another site's Origin, or a Host the server is not, never opens a
    socket; the view's own page still connects."""

    @fuzz(60)
    @given(host=hostile_hosts, port=st.integers(1, 65535), which=st.sampled_from(
        ['origin', 'host', 'both']), scheme=st.sampled_from(['http', 'https']))
    def one(host: str, port: int, which: str, scheme: str) -> None:
        ours = f'127.0.0.1:{view.server.port}'
        origin = f'{scheme}://{host}:{port}' if which != 'host' else view.origin
        header = f'{host}:{port}' if which != 'origin' else ours
        request = (f'GET /ws HTTP/1.1\r\nHost: {header}\r\nOrigin: {origin}\r\n'
                   'Upgrade: websocket\r\nConnection: Upgrade\r\n'
                   'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n'
                   'Sec-WebSocket-Version: 13\r\n\r\n').encode()
        with socket.create_connection(('127.0.0.1', view.server.port), HANG_S) as raw:
            raw.sendall(request)
            status = raw.recv(4096).split(b'\r\n', 1)[0]
        assert b' 101 ' not in status, f'a handshake with {which} {host}:{port} was accepted'
        assert status.startswith(b'HTTP/1.1 4'), status

    repeat(one)
    with page(view) as client:
        assert json.loads(client.recv(timeout=HANG_S))['type'] in ('pacing', 'hello')
    with pytest.raises(InvalidHandshake), page(view, 'http://evil.example'):
        pass
