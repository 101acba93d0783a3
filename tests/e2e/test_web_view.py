"""``view: web``: the page, opened in headless Chromium, shows the track and a car that a
follow-the-gap driver moves, and its pause, play and step buttons stop, restart and step sim
time (checked on /clock); the screenshots in docs/view.md are taken here. A raw WebSocket client
then sends what a broken page might: the view answers with an error and the simulation runs on.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
from pathlib import Path

import pytest
from browser import available, headless_chromium, wait_for
from rosgraph_msgs.msg import Clock
from simharness import Probe, driver_process, free_port, stop_process, taken_port
from websockets.sync.client import connect

DRIVER = Path(__file__).resolve().parents[1] / 'drivers' / 'follow_the_gap.py'
DOCS_IMAGES = Path(__file__).resolve().parents[2] / 'docs' / 'images'
FRAME_S = 0.025  # the default scenario's 40 Hz


def _upgrade(port: int) -> bytes:
    """A WebSocket's opening request, as a page of the view sends it."""
    return (b'GET /ws HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n'
            b'Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n'
            b'Sec-WebSocket-Version: 13\r\n\r\n' % port)


def _settings(port: int, wait_for_drivers: bool = False) -> dict:
    return {'simulation': {'wait_for_drivers': wait_for_drivers},
            'view': {'kind': 'web', 'port': port}}


@pytest.fixture
def browser(tmp_path):
    if not available():
        pytest.skip('needs Debian\'s chromium and chromium-driver (tools/setup.sh --test '
                    'installs them when run as root)')
    with headless_chromium(tmp_path / 'chromium') as driver:
        yield driver


class ClockWatch:
    """The newest /clock of the simulation, as a subscriber in this process sees it."""

    def __init__(self, domain_id: int) -> None:
        self.probe = Probe(domain_id, 'web_view_clock')
        self.time_ns: int | None = None
        self.probe.node.create_subscription(Clock, '/clock', self._on_clock, 10)

    def _on_clock(self, msg: Clock) -> None:
        self.time_ns = msg.clock.sec * 10**9 + msg.clock.nanosec

    def after(self, wait_s: float) -> int | None:
        """The newest clock once ``wait_s`` have passed."""
        deadline = time.monotonic() + wait_s
        self.probe.spin_until(lambda: time.monotonic() > deadline, wait_s + 1.0)
        return self.time_ns


def _wait(browser, script: str, timeout_s: float = 30.0):
    try:
        return wait_for(browser, script, timeout_s)
    except TimeoutError as exc:
        pytest.fail(str(exc))


def _screenshot(browser, tmp_path: Path, name: str) -> None:
    """Into the test's folder; with ARSIM_UPDATE_DOCS=1 also into docs/images/ for view.md."""
    browser.save_screenshot(str(tmp_path / name))
    if os.environ.get('ARSIM_UPDATE_DOCS') == '1':
        DOCS_IMAGES.mkdir(exist_ok=True)
        shutil.copy(tmp_path / name, DOCS_IMAGES / name)


def test_the_page_shows_the_car_moving_and_its_buttons_pace_sim_time(simulation, browser,
                                                                     tmp_path) -> None:
    port = free_port()
    sim = simulation(settings=_settings(port, wait_for_drivers=True))  # the driver keeps up
    assert sim.wait_for_log(f'web view: open http://127.0.0.1:{port}/ in a browser', 90.0), \
        sim.log
    assert sim.wait_for_log('ready; stepping', 90.0), sim.log
    driver = driver_process(DRIVER, sim.domain_id)
    clock = ClockWatch(sim.domain_id)
    try:
        browser.get(f'http://127.0.0.1:{port}/')
        _wait(browser, 'window.arsimView.trackLoaded && window.arsimView.frames > 2')
        assert browser.execute_script('return window.arsimView.hello.track.name') == \
            'arsim_ring'
        # The track picture is drawn: the canvas holds the barriers' dark grey.
        dark = browser.execute_script("""
            const c = document.getElementById('track-layer');
            const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            let n = 0;
            for (let i = 0; i < data.length; i += 4) n += data[i] < 100 && data[i + 1] < 100;
            return n;""")
        assert dark > 500, dark
        start = browser.execute_script('return window.arsimView.frame.cars[0]')
        _wait(browser, f'Math.hypot(window.arsimView.frame.cars[0].x - {start["x"]}, '
                       f'window.arsimView.frame.cars[0].y - {start["y"]}) > 1.0', 60.0)
        assert browser.execute_script(
            'return Object.values(window.arsimView.frame.scans)[0].length') > 100
        _screenshot(browser, tmp_path, 'view-web.png')
        # /clock is not latched: the watch must hear it while it still runs.
        assert clock.probe.spin_until(lambda: clock.time_ns is not None, 30.0), sim.log

        browser.find_element('id', 'play-pause').click()
        _wait(browser, "document.getElementById('play-pause').textContent === 'Play'")
        paused_at = clock.after(0.5)
        assert paused_at is not None and clock.after(1.5) == paused_at  # sim time stands
        assert browser.find_element('id', 'rtf').text == 'paused'

        browser.find_element('id', 'step').click()
        stepped = clock.after(1.0)
        assert stepped == paused_at + round(FRAME_S * 1e9), (paused_at, stepped)

        browser.find_element('id', 'play-pause').click()
        _wait(browser, "document.getElementById('play-pause').textContent === 'Pause'")
        assert clock.after(1.0) > stepped + 10 * round(FRAME_S * 1e9)
    finally:
        clock.probe.close()
        stop_process(driver)
    assert sim.stop() == 0, sim.log


def _frames(client, count: int, timeout_s: float = 30.0) -> list[dict]:
    """The next ``count`` frame messages, and any error replies among the messages before."""
    got: list[dict] = []
    deadline = time.monotonic() + timeout_s
    while sum(m['type'] == 'frame' for m in got) < count and time.monotonic() < deadline:
        got.append(json.loads(client.recv(timeout=max(0.1, deadline - time.monotonic()))))
    return got


def test_bad_commands_and_vanishing_pages_leave_the_simulation_running(simulation) -> None:
    port = free_port()
    sim = simulation(settings=_settings(port))
    assert sim.wait_for_log('ready; stepping', 90.0), sim.log
    url = f'ws://127.0.0.1:{port}/ws'
    with connect(url) as first, connect(url) as second:  # a second viewer is welcome
        assert any(m['type'] == 'hello' for m in _frames(first, 2))
        for bad in ('not json', '[1, 2]', json.dumps({'op': 'explode'}),
                    json.dumps({'op': 'step', 'frames': -3}),
                    json.dumps({'op': 'set_real_time_factor', 'value': 'fast'}),
                    *(json.dumps({'op': 'set_real_time_factor', 'value': value})
                      for value in (1e-300, 1e300, float('nan')))):
            first.send(bad)
        first.send(b'\x00\x01')
        errors = [m['message'] for m in _frames(first, 5) if m['type'] == 'error']
        assert len(errors) == 9, errors
        assert sum('expected a real-time factor' in e for e in errors) == 4, errors
        assert any('unknown command' in e for e in errors), errors
        assert any('binary' in e.lower() or 'BINARY' in e for e in errors), errors
        before = [m['time'] for m in _frames(second, 1) if m['type'] == 'frame'][-1]
        later = [m['time'] for m in _frames(second, 5) if m['type'] == 'frame'][-1]
        assert later > before, (before, later)
    # Both pages went away mid-stream; a page that drops its connection without a close:
    raw = socket.create_connection(('127.0.0.1', port))
    raw.sendall(_upgrade(port))
    raw.close()
    with connect(url) as third:
        assert [m for m in _frames(third, 2) if m['type'] == 'frame']
    assert sim.process.poll() is None, sim.log
    assert sim.stop() == 0, sim.log


def test_a_page_that_stopped_answering_does_not_hold_up_stopping(simulation) -> None:
    """A page whose network went away (a laptop closed) never answers the close: stopping
    waits for it a moment, not until the launcher loses patience and kills the bridge."""
    port = free_port()
    sim = simulation(settings=_settings(port))
    assert sim.wait_for_log('ready; stepping', 90.0), sim.log
    with socket.create_connection(('127.0.0.1', port)) as silent:  # never reads again
        silent.sendall(_upgrade(port))
        assert silent.recv(12) == b'HTTP/1.1 101'
        time.sleep(1.0)  # frames pile up unread
        assert sim.stop() == 0, sim.log
    assert 'still running after' not in sim.log, sim.log


def test_a_port_in_use_is_reported_and_the_simulation_runs_on(simulation) -> None:
    with taken_port() as port:
        sim = simulation(settings=_settings(port))
        assert sim.wait_for_log('ready; stepping', 90.0), sim.log
        assert f'cannot serve the web page on 127.0.0.1:{port}' in sim.log, sim.log
        assert 'the simulation goes on without the view' in sim.log
        time.sleep(1.0)
        assert sim.process.poll() is None, sim.log
    assert sim.stop() == 0, sim.log


def test_a_page_on_a_simulation_held_for_its_driver_says_how_to_start_it(simulation, browser):
    port = free_port()
    sim = simulation(settings={'simulation': {'start_on_first_command': True},
                               'view': {'kind': 'web', 'port': port}})
    assert sim.wait_for_log('holding sim time at 0', 90.0), sim.log
    browser.get(f'http://127.0.0.1:{port}/')
    _wait(browser, 'window.arsimView.trackLoaded && window.arsimView.frames > 0')
    message = _wait(browser, "document.getElementById('message').textContent")
    assert 'autopilot:=follow_the_gap' in message and 'first command' in message, message
