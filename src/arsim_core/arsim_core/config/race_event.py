"""A race event's format (``race.event`` in a scenario): the sessions it runs one after the
other (practice, qualifying, race), how each starts and ends, and where its final
classification is written (docs/race-control.md, "Race formats").

Everything is checked against the scenario's cars when the scenario loads, so an event that
cannot run (qualifying with one car, a grid position no car can take, a lap count of 0) stops
the start with the file, line and key, instead of going wrong halfway through a race.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from arsim_core.config.stewards import DRIVE_THROUGH, TIME_PENALTY, WARNING
from arsim_core.yaml_fields import Section

PRACTICE = 'practice'
QUALIFYING = 'qualifying'
RACE = 'race'
SESSION_KINDS = (PRACTICE, QUALIFYING, RACE)
ROLLING = 'rolling'
STANDING = 'standing'
STARTS = (ROLLING, STANDING)
GRID_QUALIFYING = 'qualifying'  # the race grid in the order of the last qualifying before it
GRID_SCENARIO = 'scenario'  # in the order of the scenario's cars
NO_VERDICT = 'none'
JUMP_START_VERDICTS = (NO_VERDICT, WARNING, TIME_PENALTY, DRIVE_THROUGH)
MAX_LIGHTS = 10

_COMMON = {'kind', 'name', 'cool_down_s'}
_KEYS = {
    PRACTICE: _COMMON | {'duration_s'},
    QUALIFYING: _COMMON | {'duration_s', 'laps', 'start'},
    RACE: _COMMON | {'duration_s', 'laps', 'start', 'grid', 'lights', 'light_interval_s',
                     'jump_start'},
}


@dataclass(frozen=True)
class SessionSpec:
    """One session. It ends ``cool_down_s`` after its chequered flag; the flag falls when
    ``duration_s`` is up (practice, qualifying), when the leader completes ``laps`` (race),
    when every car has run its ``laps`` (qualifying), or, for a race with a time limit, one
    final lap after the time is up. ``grid`` holds every car's start position (1 first),
    None for the last qualifying's order."""

    kind: str
    name: str
    duration_s: float | None = None
    laps: int | None = None
    start: str = ROLLING
    grid: Mapping[str, int] | None = None
    lights: int = 5  # a standing race start: the lights come on one per light_interval_s
    light_interval_s: float = 1.0  # and go out one interval after the last
    jump_start: str = TIME_PENALTY  # the verdict for a car that leaves its slot before that
    cool_down_s: float = 10.0


@dataclass(frozen=True)
class EventSettings:
    """The sessions in order; a car whose progress along the track has not grown for
    ``retire_after_s`` is retired (DNF) for the rest of its session. The final
    classification goes to ``classification_file`` (else, where a run records, into its
    recording directory)."""

    sessions: tuple[SessionSpec, ...]
    retire_after_s: float = 20.0
    classification_file: Path | None = None


def load_race_event(race: Section, cars: Sequence[str]) -> EventSettings | None:
    """``race.event`` checked against the scenario's ``cars``: a list of sessions, or a
    mapping with ``sessions`` and the event's own keys; None where there is no event."""
    if not race.has('event'):
        return None
    raw = race.raw('event')
    if isinstance(raw, list):
        event = race.child({'sessions': raw}, race.key_path('event'))
        items_key = 'event'
        listed = race
    else:
        event = race.section('event')
        event.reject_unknown({'sessions', 'retire_after_s', 'classification_file'})
        items_key = 'sessions'
        listed = event
    entries = listed.raw(items_key, what='a list of sessions')
    if not isinstance(entries, list) or not entries:
        listed.fail(f'expected a non-empty list of sessions, each a mapping with kind one of '
                    f'{list(SESSION_KINDS)}, got {entries!r:.80}', items_key)
    sessions: list[SessionSpec] = []
    for index, entry in enumerate(entries):
        section = listed.child(entry, f'{listed.key_path(items_key)}[{index}]')
        sessions.append(_session(section, cars, sessions))
    retire = event.number('retire_after_s', 20.0, minimum=0.0, exclusive_minimum=True)
    classification = None
    if event.has('classification_file'):
        classification = Path(event.string('classification_file')).expanduser()
        if not classification.is_absolute():
            classification = Path(event.source).parent / classification
    return EventSettings(tuple(sessions), retire, classification)


def _session(section: Section, cars: Sequence[str],
             before: Sequence[SessionSpec]) -> SessionSpec:
    kind = section.string('kind', choices=SESSION_KINDS)
    section.reject_unknown(_KEYS[kind])
    name = section.string('name', kind)
    if any(s.name == name for s in before):
        section.fail(f'another session is already called {name!r}; give each a name of its '
                     'own', 'name' if section.has('name') else 'kind')
    if kind == QUALIFYING and len(cars) < 2:
        section.fail(f'qualifying sets a grid and needs at least 2 cars; the scenario has '
                     f'{len(cars)} ({", ".join(cars)}): use practice to time one car', 'kind')
    cool_down = section.number('cool_down_s', 10.0, minimum=0.0)
    if kind == PRACTICE:
        return SessionSpec(kind, name, duration_s=_duration(section, required=True),
                           cool_down_s=cool_down)
    duration, laps = _limit(section, kind)
    start = section.string('start', ROLLING if kind == QUALIFYING else STANDING,
                           choices=STARTS)
    if kind == QUALIFYING:
        return SessionSpec(kind, name, duration, laps, start, cool_down_s=cool_down)
    lights = section.integer('lights', 5, minimum=1)
    if lights > MAX_LIGHTS:
        section.fail(f'expected an integer from 1 to {MAX_LIGHTS}, got {lights}', 'lights')
    for key in ('lights', 'light_interval_s', 'jump_start'):
        if start == ROLLING and section.has(key):
            section.fail(f'only a standing start has a start signal, and start is {start!r}; '
                         f'remove {key} or use start: standing', key)
    return SessionSpec(
        kind, name, duration, laps, start, grid=_grid(section, cars, before), lights=lights,
        light_interval_s=section.number('light_interval_s', 1.0, minimum=0.0,
                                        exclusive_minimum=True, maximum=10.0),
        jump_start=section.string('jump_start', TIME_PENALTY, choices=JUMP_START_VERDICTS),
        cool_down_s=cool_down)


def _duration(section: Section, required: bool = False) -> float | None:
    if not required and not section.has('duration_s'):
        return None
    return section.number('duration_s', minimum=0.0, exclusive_minimum=True)


def _limit(section: Section, kind: str) -> tuple[float | None, int | None]:
    """Exactly one of ``duration_s`` (a time window, or a race's time limit) and ``laps``."""
    if section.has('duration_s') == section.has('laps'):
        what = 'a time window' if kind == QUALIFYING else 'a time limit and then a final lap'
        section.fail(f'expected exactly one of laps (a lap count >= 1) and duration_s '
                     f'({what} [s] > 0), got {"both" if section.has("laps") else "neither"}',
                     'laps' if section.has('laps') else 'kind')
    if section.has('laps'):
        return None, section.integer('laps', minimum=1)
    return _duration(section), None


def _grid(section: Section, cars: Sequence[str],
          before: Sequence[SessionSpec]) -> Mapping[str, int] | None:
    """The race's grid: ``scenario`` (the cars' order), ``qualifying`` (None: the order of
    the last qualifying before the race) or a mapping of every car to its position."""
    raw = section.raw('grid', GRID_QUALIFYING if any(s.kind == QUALIFYING for s in before)
                      else GRID_SCENARIO)
    if raw == GRID_SCENARIO:
        return {car: position for position, car in enumerate(cars, start=1)}
    if raw == GRID_QUALIFYING:
        if not any(s.kind == QUALIFYING for s in before):
            section.fail('grid: qualifying needs a qualifying session before this race; '
                         f'expected {GRID_SCENARIO!r} or a mapping of each car to its grid '
                         'position', 'grid')
        return None
    if not isinstance(raw, Mapping):
        section.fail(f'expected {GRID_QUALIFYING!r}, {GRID_SCENARIO!r} or a mapping of each '
                     f'car to its grid position (1 to {len(cars)}), got {raw!r:.80}', 'grid')
    grid = section.section('grid')
    grid.reject_unknown(set(cars))
    positions: dict[str, int] = {}
    for car in cars:
        if not grid.has(car):
            grid.fail(f'missing; every car needs a grid position ({", ".join(cars)})', car)
        position = grid.integer(car, minimum=1)
        if position > len(cars):
            grid.fail(f'grid position {position} does not exist: {len(cars)} cars take '
                      f'positions 1 to {len(cars)}', car)
        taken = next((other for other, p in positions.items() if p == position), None)
        if taken is not None:
            grid.fail(f'grid position {position} is taken by {taken!r}; each position '
                      f'takes one car', car)
        positions[car] = position
    return positions



def classification_path(event: EventSettings, recording: Path | None) -> Path | None:
    """Where a run writes the event's classification: ``classification_file``, else
    ``classification.yaml`` in the recording directory; None where the run writes nothing."""
    if event.classification_file is not None:
        return event.classification_file
    return None if recording is None else recording / 'classification.yaml'
