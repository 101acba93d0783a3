"""The web page's race control, in headless Chromium over a real server and a real engine: a
one-lap race of two cars on arsim_ring from a standing start, in which ego runs into the back
of the other car at speed (test_race_control.rear_end). The page shows the session, the flag
and the start lights, a timing tower in the event's order with ego's time penalty, a marker
on the track where the stewards ruled with the ruling in its title, and the final
classification once the event is over (docs/view.md, "Race control")."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from browser import available, headless_chromium, wait_for

from arsim_core.config.stewards import TIME_PENALTY
from arsim_core.engine import Engine, TrackWorld
from arsim_core.engine.incidents import REAR_END
from arsim_core.engine.pacing import Pacing
from arsim_core.engine.race_event import LIGHTS, WHITE, EventState
from arsim_core.policies import PurePursuit
from arsim_core.protocol import framing
from arsim_core.view.feed import ViewFeed
from arsim_core.view.web_server import WebView
from arsim_gym.core import lane

OPP = 'opp1'
EVENT = {'sessions': [{'kind': 'race', 'start': 'standing', 'lights': 2,
                       'light_interval_s': 0.25, 'laps': 1, 'cool_down_s': 8.0}]}
SPEEDS = {'ego': 0.75, OPP: 0.9}  # after the incident: the other car pulls away
DOCS_IMAGES = Path(__file__).resolve().parents[3] / 'docs' / 'images'
NO_SENSORS = framing.decode(framing.encode(framing.UPDATE, 1, 0, {}, {}, {}))


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    if not available():
        pytest.skip('needs Debian\'s chromium and chromium-driver (tools/setup.sh --test '
                    'installs them when run as root)')
    with headless_chromium(tmp_path / 'chromium') as driver:
        yield driver


@pytest.fixture
def bare_profile(repo_root: Path, tmp_path: Path) -> str:
    """The F1TENTH profile without sensors: nothing to render, the race runs in a moment."""
    profile = yaml.safe_load((repo_root / 'config' / 'cars' / 'f1tenth.yaml').read_text())
    profile.pop('Sensors', None)
    path = tmp_path / 'f1tenth_bare.yaml'
    path.write_text(yaml.safe_dump(profile))
    return str(path)


class Race:
    """The engine, and the view's feed offered every frame (the bridge's loop, in process)."""

    def __init__(self, engine: Engine, feed: ViewFeed) -> None:
        self.engine, self.feed = engine, feed

    def step(self, drive: dict[str, tuple[float, float]]) -> EventState:
        for car, (speed, steer) in drive.items():
            self.engine.drive(car, speed, steer)
        frame = self.engine.advance()
        self.feed.offer(frame.time_ns, frame.states, NO_SENSORS)
        assert frame.event is not None
        return frame.event

    def settle(self, drive: dict[str, tuple[float, float]]) -> EventState:
        """A few frames a little apart in wall time, so the feed publishes what they show."""
        for _ in range(4):
            event = self.step(drive)
            time.sleep(0.06)
        return event


def _page(browser: Any, script: str, timeout_s: float = 30.0) -> Any:
    try:
        return wait_for(browser, script, timeout_s)
    except TimeoutError as exc:
        pytest.fail(str(exc))


def _screenshot(browser: Any, tmp_path: Path, name: str) -> None:
    """The page as it is; into docs/images with ARSIM_UPDATE_DOCS=1."""
    browser.save_screenshot(str(tmp_path / name))
    if os.environ.get('ARSIM_UPDATE_DOCS'):
        shutil.copy(tmp_path / name, DOCS_IMAGES / name)


def _tower(browser: Any, table: str = 'tower') -> list[list[str]]:
    return browser.execute_script(
        f"return [...document.querySelectorAll('#{table} tbody tr')]"
        ".map((row) => [...row.cells].map((cell) => cell.textContent));")


def test_the_page_shows_the_flag_the_tower_the_incident_and_the_results(
        make_scenario, ring: TrackWorld, bare_profile: str, browser: Any,
        tmp_path: Path) -> None:
    scenario = make_scenario(cars=('ego', OPP), profile=bare_profile, race={'event': EVENT})
    engine = Engine(scenario)
    engine.load_track(ring)
    feed = ViewFeed(scenario, engine, Pacing(1.0), period_s=0.02, flat_out_period_s=0.02,
                    board_period_s=0.05)
    view = WebView(feed, '127.0.0.1', 0, lambda level, text: None)
    url = view.start()
    try:
        start = engine.start_poses['ego']
        ahead = (start[0] + 2.0 * np.cos(start[2]), start[1] + 2.0 * np.sin(start[2]), start[2])
        engine.reset({'ego': start, OPP: ahead})  # ego 2 m behind, in the same lane
        race = Race(engine, feed)
        held = {'ego': (0.0, 0.0), OPP: (0.0, 0.0)}
        browser.get(url)
        _page(browser, 'window.arsimView.hello')
        while race.step(held).lights < 1:  # the first light comes on after 0.25 s
            pass
        assert race.settle(held).flag == LIGHTS
        _page(browser, "document.getElementById('flag').textContent === 'lights'"
                       " && document.getElementById('lights').textContent.includes('●')")
        assert 'race' in browser.find_element('id', 'session-name').text

        event = race.step(held)
        for _ in range(200):  # lights out, then the rear-end: 5 m/s against 1 m/s
            if event.flag != LIGHTS and engine.stewards is not None \
                    and engine.stewards.records['ego'].rulings:
                break
            event = race.step(held if event.flag == LIGHTS else
                              {'ego': (5.0, 0.0), OPP: (1.0, 0.0)})
        assert engine.stewards is not None
        [ruling] = engine.stewards.records['ego'].rulings
        assert (ruling.rule, ruling.verdict) == (REAR_END, TIME_PENALTY)

        event = race.settle({'ego': (0.0, 0.0), OPP: (1.0, 0.0)})  # ego lets it go
        assert event.flag == WHITE  # a one-lap race: its last lap from the start
        order = [row.car for row in event.results]
        _page(browser, "window.arsimView.markers.length === 1"
                       " && document.getElementById('flag').textContent === 'white'")
        marker = browser.execute_script('return window.arsimView.markers[0];')
        assert f'{REAR_END}: {TIME_PENALTY}' in marker['title'] and 'ego / opp1' in marker['title']
        ego = engine.states['ego']
        incident = browser.execute_script('return window.arsimView.race.incidents[0];')
        assert abs(incident['x'] - ego.x) < 2.0 and abs(incident['y'] - ego.y) < 2.0
        _page(browser, "[...document.querySelectorAll('#tower tbody tr')]"
                       ".some((row) => row.cells[7].textContent.includes('+5 s'))")
        rows = _tower(browser)
        assert [row[1] for row in rows] == order
        penalties = {row[1]: row[7] for row in rows}
        assert penalties['ego'].startswith('+5 s') and penalties[OPP] == ''
        assert browser.find_element('id', 'standings').is_displayed() is False

        drivers = {name: PurePursuit(lane(np.asarray(ring.centerline)[:, :2],
                                          engine.states[name].pose),
                                     wheelbase=0.33, max_steering=0.4, max_speed=7.0,
                                     speed_scale=SPEEDS[name]) for name in engine.names}
        for _ in range(40 * 60):  # to the flag and through the cool-down
            if event.finished:
                break
            event = race.step({name: driver.act(engine.states[name])[::-1]
                               for name, driver in drivers.items()})
        assert event.finished, event
        race.settle(held)
        _page(browser, "!document.getElementById('results').hidden")
        classification = _tower(browser, 'classification')
        assert [row[1] for row in classification] == [row.car for row in event.classification]
        final = {row[1]: row for row in classification}
        assert final['ego'][6].startswith('+5 s')
        assert browser.find_element('id', 'remaining').text == 'event over'
        sent = browser.execute_script('return JSON.stringify(window.arsimView.race);')
        assert len(sent) < 16_000, 'the race message stays small'
        assert json.loads(sent)['results']['classification'][0]['position'] == 1
        _screenshot(browser, tmp_path, 'view-race.png')
    finally:
        view.stop()
        engine.close()


def _rear_end(engine: Engine, feed: ViewFeed, frames: int = 120) -> None:
    """ego into the back of the other car at 5 m/s against 1 m/s, every frame offered."""
    start = engine.start_poses['ego']
    ahead = (start[0] + 2.0 * np.cos(start[2]), start[1] + 2.0 * np.sin(start[2]), start[2])
    engine.reset({'ego': start, OPP: ahead})
    for _ in range(frames):
        engine.drive('ego', 5.0, 0.0)
        engine.drive(OPP, 1.0, 0.0)
        frame = engine.advance()
        feed.offer(frame.time_ns, frame.states, NO_SENSORS)


def test_without_an_event_the_race_message_carries_the_incidents_alone(
        make_scenario, ring: TrackWorld, bare_profile: str) -> None:
    scenario = make_scenario(cars=('ego', OPP), profile=bare_profile)
    engine = Engine(scenario)
    engine.load_track(ring)
    feed = ViewFeed(scenario, engine, Pacing(1.0), period_s=0.0, flat_out_period_s=0.0)
    try:
        _rear_end(engine, feed)
        assert engine.stewards is not None
        rulings = engine.stewards.records['ego'].rulings
        assert rulings and rulings[0].rule == REAR_END
        race = feed.race()
        assert race is not None
        assert race.data['event'] is None and race.data['tower'] == []
        assert race.data['results'] is None
        incidents = race.data['incidents']
        assert [i['detail'] for i in incidents] == [r.detail for r in rulings]  # once each
        first = incidents[0]
        assert (first['car'], first['other'], first['verdict']) == ('ego', OPP, TIME_PENALTY)
        version = race.version
        engine.stewards.reset()  # a new race: fresh records, no incident counted twice
        _rear_end(engine, feed, frames=1)
        assert feed.race() is not None and feed.race().version == version  # type: ignore[union-attr]
    finally:
        engine.close()


def test_without_race_control_there_is_no_race_message(
        make_scenario, ring: TrackWorld, bare_profile: str) -> None:
    scenario = make_scenario(cars=('ego', OPP), profile=bare_profile,
                             race={'stewards': {'enabled': False}})
    engine = Engine(scenario)
    engine.load_track(ring)
    feed = ViewFeed(scenario, engine, Pacing(1.0), period_s=0.0, flat_out_period_s=0.0)
    try:
        _rear_end(engine, feed)
        assert engine.stewards is None and engine.event is None
        assert feed.latest() is not None and feed.race() is None
    finally:
        engine.close()
