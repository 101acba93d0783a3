"""A league spec (``arsim-race league SPEC.yaml``): the entries, the tracks, how many events
on each and the race every event runs (docs/race-control.md, "Leagues").

Checked whole when it loads, before any race runs: a mistake stops the league with the file,
line and key.
"""

from __future__ import annotations

import shlex
import string
from dataclasses import dataclass
from pathlib import Path

from arsim_core.config.drivers import NO_DRIVER, load_driver
from arsim_core.config.scenario import load_scenario
from arsim_core.errors import ArsimError
from arsim_core.league.ratings import RATING_MODELS
from arsim_core.track import load_track
from arsim_core.yaml_fields import Section, load_section

KEYS = ('name', 'description', 'scenario', 'profile', 'entries', 'tracks', 'events_per_track',
        'laps', 'seed', 'max_time_s', 'rating')
ENTRY_KEYS = ('name', 'driver', 'launch', 'profile')


#: What a ROS stack's ``launch`` command may name: its car and the car's topics.
LAUNCH_FIELDS = ('car', 'drive_topic', 'scan_topic', 'odom_topic')


@dataclass(frozen=True)
class Entry:
    """One competitor: a car named ``name`` with its ``driver`` (a zoo name or a Gym policy)
    or, for a ROS stack, the command that ``launch``es it, and its car ``profile`` (the
    league's when empty)."""

    name: str
    driver: str
    profile: str = ''
    launch: str = ''


@dataclass(frozen=True)
class LeagueSpec:
    source: Path
    name: str
    scenario: Path  # the base scenario every event's race is built on
    profile: str  # the cars' profile unless an entry names its own
    entries: tuple[Entry, ...]
    tracks: tuple[str, ...]  # names in maps/ or paths
    events_per_track: int
    laps: int
    seed: int
    max_time_s: float | None
    rating_model: str

    @property
    def over_ros(self) -> bool:
        """Whether an entry is a ROS stack, so every event runs on the ROS graph."""
        return any(entry.launch for entry in self.entries)

    @property
    def stacks(self) -> tuple[tuple[str, str], ...]:
        """Each ROS stack's car and launch command."""
        return tuple((entry.name, entry.launch) for entry in self.entries if entry.launch)


def load_league(path: str | Path, resources: Path) -> LeagueSpec:
    """The league at ``path``; ``resources`` holds config/ and maps/."""
    path = Path(path).resolve()
    root = load_section(path)
    root.reject_unknown(KEYS)
    scenario = resources / 'config' / 'sim.yaml'
    if root.has('scenario'):
        scenario = _beside(path, root.string('scenario'))
        if not scenario.is_file():
            root.fail(f'no scenario file at {scenario}', 'scenario')
    profile = root.string('profile', 'f1tenth')
    entries = _entries(root, profile)
    tracks = _tracks(root, path, resources)
    rating = root.section('rating', {})
    rating.reject_unknown({'model'})
    spec = LeagueSpec(
        source=path, name=root.string('name', path.stem), scenario=scenario, profile=profile,
        entries=entries, tracks=tracks,
        events_per_track=root.integer('events_per_track', 1, minimum=1),
        laps=root.integer('laps', minimum=1), seed=root.integer('seed', 0, minimum=0),
        max_time_s=root.number('max_time_s', minimum=0.0, exclusive_minimum=True)
        if root.has('max_time_s') else None,
        rating_model=rating.string('model', RATING_MODELS[0], choices=RATING_MODELS))
    try:  # every entry's car as an event loads it
        load_scenario(scenario, resources, event_overrides(spec, tracks[0], 0))
    except ArsimError as exc:
        root.fail(f'the entries do not make a race: {exc}', 'entries')
    return spec


def event_overrides(spec: LeagueSpec, track: str, shift: int) -> dict[str, object]:
    """The base scenario's keys an event replaces: its track, and the entries' cars on the
    grid in the league's order turned ``shift`` places (so each starts from each slot)."""
    count = len(spec.entries)
    order = [spec.entries[(k + shift) % count] for k in range(count)]
    return {'track': {'name': track},
            'cars': [{'name': entry.name, 'profile': entry.profile or spec.profile,
                      'driver': entry.driver} for entry in order]}


def _beside(spec: Path, reference: str) -> Path:
    """A path in the spec, relative to the spec's folder."""
    given = Path(reference).expanduser()
    return given if given.is_absolute() else (spec.parent / given).resolve()


def _entries(root: Section, profile: str) -> tuple[Entry, ...]:
    raw = root.raw('entries', what='a list of entries')
    if not isinstance(raw, list) or len(raw) < 2:
        root.fail(f'expected a list of at least two entries, got {raw!r:.60}', 'entries')
    entries: list[Entry] = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict):
            root.fail(f'expected a mapping with name and driver, got {item!r:.60}',
                      f'entries[{index}]')
        entry = root.child(item, f'entries[{index}]')
        entry.reject_unknown(ENTRY_KEYS)
        name = entry.string('name')
        if not name.isidentifier():
            entry.fail(f'expected a name of letters, digits and underscores, got {name!r}',
                       'name')
        if any(e.name == name for e in entries):
            entry.fail(f'duplicate entry name {name!r}', 'name')
        profile = entry.string('profile', '')
        if entry.has('launch'):
            if entry.has('driver'):
                entry.fail('an entry is a ROS stack (launch) or a driver, not both', 'driver')
            entries.append(Entry(name, NO_DRIVER, profile, _launch(entry)))
        else:
            entries.append(Entry(name, load_driver(entry, 'driver', None), profile))
    return tuple(entries)


def _launch(entry: Section) -> str:
    """A ROS stack's command: a program and its arguments, split as a shell would (never
    run by one), in which ``{car}``, ``{drive_topic}``, ``{scan_topic}`` and ``{odom_topic}``
    stand for its car and the car's topics."""
    command = entry.string('launch')
    try:
        fields = {name for _, name, _, _ in string.Formatter().parse(command) if name is not None}
        words = shlex.split(command)
    except ValueError as exc:
        entry.fail(f'expected a command line, got {command!r}: {exc}', 'launch')
    unknown = sorted(fields - set(LAUNCH_FIELDS))
    if unknown:
        entry.fail(f'unknown field(s) {unknown} in {command!r}; a command may name '
                   f'{", ".join("{" + f + "}" for f in LAUNCH_FIELDS)}', 'launch')
    if not words:
        entry.fail('expected a command that starts the stack, got nothing', 'launch')
    return command


def _tracks(root: Section, spec: Path, resources: Path) -> tuple[str, ...]:
    raw = root.raw('tracks', what='a list of tracks')
    if not isinstance(raw, list) or not raw or not all(isinstance(t, str) for t in raw):
        root.fail(f'expected a list of track names or paths, got {raw!r:.60}', 'tracks')
    tracks = []
    for index, name in enumerate(raw):
        beside = _beside(spec, name)
        reference = str(beside) if ('/' in name or beside.exists()) else name
        try:
            load_track(reference, resources / 'maps')
        except ArsimError as exc:
            root.fail(f'cannot load track {name!r}: {exc}', f'tracks[{index}]')
        tracks.append(reference)
    return tuple(tracks)
