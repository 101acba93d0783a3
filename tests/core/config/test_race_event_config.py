"""``race.event`` in a scenario file: the sessions as written, and every impossible event
refused at load with the file, the line and the key, and what is allowed there."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from arsim_core.config.race_event import (
    PRACTICE,
    QUALIFYING,
    RACE,
    ROLLING,
    STANDING,
    classification_path,
)
from arsim_core.config.scenario import Scenario, load_scenario
from arsim_core.errors import ConfigError

CARS = ('ego', 'car2', 'car3')


def scenario_file(folder: Path, event: Any, cars: tuple[str, ...] = CARS) -> Path:
    """A scenario file with ``event`` as its ``race.event``, each key on a line of its own."""
    document = {'simulation': {'frame_rate_hz': 40.0}, 'track': {'name': 'arsim_ring'},
                'race': {'event': event},
                'cars': [{'name': car, 'profile': 'f1tenth'} for car in cars]}
    path = folder / 'event.yaml'
    path.write_text(yaml.safe_dump(document, sort_keys=False, default_flow_style=False))
    return path


def load(folder: Path, repo_root: Path, event: Any,
         cars: tuple[str, ...] = CARS) -> Scenario:
    return load_scenario(scenario_file(folder, event, cars), repo_root)


def line_of(path: Path, text: str, after: str = '') -> int:
    """The 1-based line of the first ``text`` after the first ``after`` in ``path``."""
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if after in line) if after else 0
    return next(i for i, line in enumerate(lines) if i >= start and text in line) + 1


def refused(folder: Path, repo_root: Path, event: Any, cars: tuple[str, ...] = CARS) -> str:
    with pytest.raises(ConfigError) as caught:
        load(folder, repo_root, event, cars)
    return str(caught.value)


def test_an_event_of_three_sessions_loads_as_written(tmp_path, repo_root):
    event = {'retire_after_s': 5.0, 'classification_file': 'out/classification.yaml',
             'sessions': [
                 {'kind': 'practice', 'duration_s': 60.0},
                 {'kind': 'qualifying', 'laps': 2, 'start': 'standing'},
                 {'kind': 'race', 'duration_s': 300.0, 'lights': 3, 'light_interval_s': 0.5,
                  'jump_start': 'drive_through', 'cool_down_s': 4.0}]}
    settings = load(tmp_path, repo_root, event).race.event
    assert settings is not None
    practice, qualifying, race = settings.sessions
    assert (practice.kind, practice.duration_s, practice.laps) == (PRACTICE, 60.0, None)
    assert (qualifying.kind, qualifying.laps, qualifying.start) == (QUALIFYING, 2, STANDING)
    assert (race.kind, race.duration_s, race.laps, race.start) == (RACE, 300.0, None, STANDING)
    assert race.grid is None  # the qualifying's order, known once it has run
    assert (race.lights, race.light_interval_s, race.jump_start, race.cool_down_s) == (
        3, 0.5, 'drive_through', 4.0)
    assert settings.retire_after_s == 5.0
    assert settings.classification_file == tmp_path / 'out' / 'classification.yaml'
    assert classification_path(settings, Path('/elsewhere')) == settings.classification_file


def test_a_list_of_sessions_is_an_event_too_and_a_race_grid_may_be_given(tmp_path, repo_root):
    event = [{'kind': 'race', 'laps': 3, 'start': 'rolling',
              'grid': {'ego': 3, 'car2': 1, 'car3': 2}}]
    settings = load(tmp_path, repo_root, event).race.event
    assert settings is not None
    [race] = settings.sessions
    assert (race.start, race.laps, dict(race.grid or {})) == (
        ROLLING, 3, {'ego': 3, 'car2': 1, 'car3': 2})
    assert classification_path(settings, None) is None
    assert classification_path(settings, Path('bags/run')) == Path(
        'bags/run/classification.yaml')


def test_no_event_is_none(make_scenario):
    assert make_scenario().race.event is None


def test_qualifying_with_one_car_is_refused_at_its_line(tmp_path, repo_root):
    event = {'sessions': [{'kind': 'practice', 'duration_s': 10.0},
                          {'kind': 'qualifying', 'duration_s': 60.0}]}
    message = refused(tmp_path, repo_root, event, cars=('ego',))
    path = tmp_path / 'event.yaml'
    line = line_of(path, 'kind: qualifying')
    assert message.startswith(f'{path}:{line}: race.event.sessions[1].kind: qualifying sets '
                              f'a grid and needs at least 2 cars; the scenario has 1'), message


def test_a_grid_position_that_does_not_exist_is_refused(tmp_path, repo_root):
    event = [{'kind': 'race', 'laps': 3, 'grid': {'ego': 1, 'car2': 2, 'car3': 4}}]
    message = refused(tmp_path, repo_root, event)
    path = tmp_path / 'event.yaml'
    line = line_of(path, 'car3: 4')
    assert message == (f'{path}:{line}: race.event[0].grid.car3: grid position 4 does not '
                       f'exist: 3 cars take positions 1 to 3')


@pytest.mark.parametrize(('grid', 'key', 'what'), [
    ({'ego': 1, 'car2': 1, 'car3': 2}, 'grid.car2', "grid position 1 is taken by 'ego'"),
    ({'ego': 1, 'car2': 2}, 'grid.car3', 'missing; every car needs a grid position'),
    ({'ego': 1, 'car2': 2, 'car3': 3, 'car9': 4}, 'grid.car9',
     'unknown key, expected one of: car2, car3, ego'),
    ({'ego': 0, 'car2': 1, 'car3': 2}, 'grid.ego', 'expected an integer >= 1, got 0'),
    ('pole', 'grid', "expected 'qualifying', 'scenario' or a mapping"),
    ('qualifying', 'grid', 'grid: qualifying needs a qualifying session before this race'),
], ids=['taken', 'missing', 'unknown_car', 'zero', 'word', 'no_qualifying'])
def test_every_impossible_grid_names_its_key(tmp_path, repo_root, grid, key, what):
    message = refused(tmp_path, repo_root, [{'kind': 'race', 'laps': 3, 'grid': grid}])
    assert re.match(rf'{re.escape(str(tmp_path))}/event\.yaml:\d+: race\.event\[0\]\.'
                    rf'{re.escape(key)}: {re.escape(what)}', message), message


@pytest.mark.parametrize(('session', 'key', 'what'), [
    ({'kind': 'race', 'laps': 0}, 'laps', 'expected an integer >= 1, got 0'),
    ({'kind': 'qualifying', 'laps': 0}, 'laps', 'expected an integer >= 1, got 0'),
    ({'kind': 'practice', 'duration_s': -5.0}, 'duration_s', 'expected a number > 0, got -5.0'),
    ({'kind': 'race', 'duration_s': 0}, 'duration_s', 'expected a number > 0, got 0'),
    ({'kind': 'practice'}, 'duration_s', 'missing, expected a number > 0'),
    ({'kind': 'race', 'laps': 3, 'duration_s': 60.0}, 'laps',
     'expected exactly one of laps (a lap count >= 1) and duration_s (a time limit and then '
     'a final lap [s] > 0), got both'),
    ({'kind': 'qualifying'}, 'kind', 'expected exactly one of laps'),
    ({'kind': 'practice', 'duration_s': 10.0, 'laps': 3}, 'laps',
     'unknown key, expected one of: cool_down_s, duration_s, kind, name'),
    ({'kind': 'race', 'laps': 3, 'safety_car': True}, 'safety_car', 'unknown key'),
    ({'kind': 'sprint', 'laps': 3}, 'kind',
     "expected one of ['practice', 'qualifying', 'race'], got 'sprint'"),
    ({'kind': 'race', 'laps': 3, 'start': 'rolling', 'lights': 5}, 'lights',
     "only a standing start has a start signal, and start is 'rolling'"),
    ({'kind': 'race', 'laps': 3, 'lights': 11}, 'lights', 'expected an integer from 1 to 10'),
    ({'kind': 'race', 'laps': 3, 'jump_start': 'fine'}, 'jump_start',
     "expected one of ['drive_through', 'none', 'time_penalty', 'warning']"),
    ({'kind': 'race', 'laps': 3, 'cool_down_s': -1}, 'cool_down_s',
     'expected a number >= 0, got -1'),
], ids=['race_0_laps', 'qualifying_0_laps', 'negative_duration', 'zero_limit',
        'practice_without_duration', 'laps_and_duration', 'no_limit', 'practice_laps',
        'unknown_key', 'unknown_kind', 'lights_rolling', 'too_many_lights', 'bad_verdict',
        'negative_cool_down'])
def test_every_impossible_session_names_its_line_and_key(tmp_path, repo_root, session, key,
                                                         what):
    message = refused(tmp_path, repo_root, {'sessions': [session]})
    path = tmp_path / 'event.yaml'
    assert re.match(rf'{re.escape(str(path))}:\d+: race\.event\.sessions\[0\]\.{key}: '
                    rf'{re.escape(what)}', message), message
    line = int(message.split(':')[1])
    written = path.read_text().splitlines()[line - 1].strip()
    # the key's own line, or the session's first where the key is missing
    expected = f'{key}:' if key in session else '- kind:'
    assert written.startswith(expected) or written.startswith(f'- {expected}'), (line, written)


@pytest.mark.parametrize(('event', 'where', 'what'), [
    ({'sessions': []}, 'race.event.sessions', 'expected a non-empty list of sessions'),
    ({'sessions': [{'kind': 'race', 'laps': 1}], 'retire_after_s': 0},
     'race.event.retire_after_s', 'expected a number > 0, got 0'),
    ({'sessions': [{'kind': 'race', 'laps': 1}], 'pit_lane': True}, 'race.event.pit_lane',
     'unknown key, expected one of: classification_file, retire_after_s, sessions'),
    ({'sessions': [{'kind': 'practice', 'duration_s': 1.0},
                   {'kind': 'practice', 'duration_s': 1.0}]},
     'race.event.sessions[1].kind', "another session is already called 'practice'"),
], ids=['empty', 'retire_zero', 'unknown_event_key', 'same_name'])
def test_a_bad_event_names_its_key(tmp_path, repo_root, event, where, what):
    message = refused(tmp_path, repo_root, event)
    assert re.match(rf'{re.escape(str(tmp_path))}/event\.yaml:\d+: {re.escape(where)}: '
                    rf'{re.escape(what)}', message), message
