"""A race run in process, without ROS: the engine, the cars' drivers from the zoo (or users'
Gym policies), to the chequered flag (``arsim-race run``, each event of a league, the
``rtf_race_20cars`` benchmark).

The race is the engine's: a ``race.event`` of one race session (``race_session``: the lap
count, a standing or rolling start, retirement after ``retire_after_s`` without progress),
or the scenario's own event. Its flag, start signal, retirements, penalties and
classification are ``engine.race_event``'s, the same as in a ROS run or the gym. What is left
here is what only a race in process needs: each frame every car's ``driver``
(``cars[i].driver``) drives it from what ``drivers.Seen`` holds, and holds it on its slot
while the start's lights are on; a driver that fails (a policy that raises or answers
nonsense) has its car retired through ``RaceEvent.retire``; a car out of the race (retired,
disqualified) is parked off the track, as marshals would push it away, so it blocks nobody.
Cars start on the engine's grid (``engine.start_grid``). At ``max_time_s`` the race is
stopped and classified as it stands.

With an output folder the race writes its classification there (``classification.yaml``,
``engine.race_event.write_classification``) and, through a face that packs ROS messages (a
``ClipSink``), its incident clips into ``clips/`` (``race.clips.directory``).
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import numpy as np
import yaml

from arsim_core.config.race_event import RACE, STANDING, EventSettings, SessionSpec
from arsim_core.config.scenario import Scenario
from arsim_core.drivers.lines import RacingLine
from arsim_core.drivers.pilots import Pilot, Pilots, parking_spot
from arsim_core.engine import Engine, Frame, InProcessRenderer, Placement, Renderer, TrackWorld
from arsim_core.engine.race_event import (
    DNF,
    DSQ,
    LIGHTS,
    EventState,
    ResultRow,
    write_classification,
)
from arsim_core.engine.referee import COLLISION, RULING
from arsim_core.engine.stewards import Ruling
from arsim_core.errors import ConfigError
from arsim_core.log_limit import LogLimit
from arsim_core.track import Track
from arsim_core.track.polylines import closed_length

RETIRE_AFTER_S = 10.0  # a car without progress this long is retired
START_LIGHTS = 3  # a standing start's signal: lights, one per interval, out one after the last
LIGHT_INTERVAL_S = 0.5
#: A lap at a tenth of the cars' top speed: how long the race waits after the flag for the
#: last car to take it (the session ends sooner once every car has), and, with a minute
#: more per race, the default time limit.
SLOWEST_SHARE = 0.1
CLASSIFICATION_FILE = 'classification.yaml'
CLIPS_FOLDER = 'clips'


class ClipSink(Protocol):
    """What records a race's incident clips frame by frame: a face that packs ROS messages
    (``arsim_launch.race_clips``), as arsim_core packs none. The engine renders through its
    ``renderer``, which keeps what the clips need to describe the sensors."""

    @property
    def renderer(self) -> Renderer: ...

    def start(self, engine: Engine) -> None: ...

    def write(self, frame: Frame) -> None: ...

    def close(self) -> list[Path]: ...


#: Makes the clip sink of a scenario (None where it asks for no clips).
ClipsFactory = Callable[[Scenario], ClipSink | None]


class RacedCar(NamedTuple):
    """A car's line in the classification: the event's result row, its driver and why it
    left the race (empty if it did not)."""

    row: ResultRow
    driver: str
    why: str = ''

    @property
    def name(self) -> str:
        return self.row.car

    @property
    def status(self) -> str:
        return self.row.status

    def to_dict(self) -> dict[str, Any]:
        """The row's values (``time_s``: total race time with penalties), driver and why."""
        row = self.row
        return {'position': row.position, 'name': row.car, 'driver': self.driver,
                'status': row.status, 'laps': row.laps, 'time_s': row.total_time_s,
                'best_lap': row.best_lap_s, 'gap_s': row.gap_s,
                'laps_behind': row.laps_behind, 'penalty_s': row.penalty_s,
                'warnings': row.warnings, 'grid': row.grid, 'why': self.why}


@dataclass
class RaceResult:
    """A race run to its end: the classification (winner first; as it stood if the time
    limit stopped the race), every ruling, the files written and the race's size and
    speed."""

    track: str
    laps: int | None
    cars: list[RacedCar]
    finished: bool = False  # the event ran to its end (else the time limit stopped it)
    incidents: list[dict[str, Any]] = field(default_factory=list)
    collisions: int = 0
    sim_s: float = 0.0
    wall_s: float = 0.0
    frames: int = 0
    classification_file: Path | None = None
    clips: list[Path] = field(default_factory=list)

    @property
    def real_time_factor(self) -> float:
        return self.sim_s / self.wall_s if self.wall_s > 0.0 else math.inf

    def to_dict(self) -> dict[str, Any]:
        return {'track': self.track, 'laps': self.laps, 'finished': self.finished,
                'classification': [car.to_dict() for car in self.cars],
                'incidents': self.incidents, 'collisions': self.collisions,
                'sim_s': self.sim_s, 'wall_s': self.wall_s, 'frames': self.frames,
                'classification_file': None if self.classification_file is None
                else str(self.classification_file),
                'clips': [str(path) for path in self.clips]}

    @classmethod
    def from_classification(cls, path: Path, track: str, drivers: Mapping[str, str]
                            ) -> RaceResult:
        """The result of a race run elsewhere (on the ROS graph) from the classification it
        wrote (``write_classification``): each car with its driver (why a car left is not in
        the file, only its status)."""
        document = yaml.safe_load(path.read_text(encoding='utf-8'))
        rows = document['classification'] if document['finished'] else \
            document['current']['results']
        cars = [RacedCar(ResultRow(**row), drivers[row['car']]) for row in rows]
        return cls(track, None, cars, finished=bool(document['finished']),
                   incidents=list(document.get('incidents', [])), classification_file=path)

    def table(self) -> str:
        """The classification as plain text."""
        lines = [f'{"Pos":>3}  {"Car":<12} {"Driver":<16} {"Laps":>4} {"Time":>9} '
                 f'{"Pen.":>5}  Status']
        for car in self.cars:
            row = car.row
            when = '-' if row.total_time_s is None else f'{row.total_time_s:.3f}'
            why = f' ({car.why})' if car.why else ''
            lines.append(f'{row.position:>3}  {row.car:<12} {car.driver:<16} {row.laps:>4} '
                         f'{when:>9} {row.penalty_s:>5g}  {row.status}{why}')
        return '\n'.join(lines)


def slowest_lap_s(scenario: Scenario, track: Track) -> float:
    """A lap of ``track`` at ``SLOWEST_SHARE`` of the slowest car's top speed [s]."""
    slowest = SLOWEST_SHARE * min(c.profile.vehicle.params.longitudinal.max_speed
                                  for c in scenario.cars)
    return closed_length(np.asarray(track.centerline, np.float64)) / slowest


def race_session_keys(laps: int, cool_down_s: float) -> dict[str, Any]:
    """``race_session``'s event (a standing start, the grid in the cars' order) as the keys
    of a scenario's ``race.event``, for a race run elsewhere (on the ROS graph)."""
    return {'retire_after_s': RETIRE_AFTER_S, 'sessions': [
        {'kind': RACE, 'laps': laps, 'start': STANDING, 'lights': START_LIGHTS,
         'light_interval_s': LIGHT_INTERVAL_S, 'cool_down_s': cool_down_s}]}


def race_session(cars: Sequence[str], laps: int, start: str = STANDING,
                 retire_after_s: float = RETIRE_AFTER_S,
                 cool_down_s: float = 10.0) -> EventSettings:
    """An event of one race of ``cars`` over ``laps`` from ``start`` (a standing start's
    signal: ``START_LIGHTS`` lights), on the grid in their order."""
    grid = {car: position for position, car in enumerate(cars, start=1)}
    session = SessionSpec(RACE, RACE, laps=laps, start=start, grid=grid,
                          lights=START_LIGHTS, light_interval_s=LIGHT_INTERVAL_S,
                          cool_down_s=cool_down_s)
    return EventSettings((session,), retire_after_s)


def run_race(scenario: Scenario, track: Track, laps: int | None = None, *,
             start: str = STANDING, seed: int = 0, max_time_s: float | None = None,
             retire_after_s: float = RETIRE_AFTER_S, out: Path | None = None,
             clips: ClipsFactory | None = None,
             on_frame: Callable[[Frame], None] | None = None) -> RaceResult:
    """Race the cars of ``scenario`` on ``track``: ``laps`` from ``start`` (None: the
    scenario's own ``race.event``, else one lap); the classification and clips into ``out``
    (see the module)."""
    started = time.monotonic()
    missing = [f'cars[{car.index}] ({car.name})' for car in scenario.cars if not car.driver]
    if missing:
        msg = (f'{scenario.source}: {", ".join(missing)}: no driver; give each car a '
               f'driver: a zoo name or a Gym policy (docs/race-control.md, "The driver zoo")')
        raise ConfigError(msg)
    if track.centerline is None:
        msg = f'{track.source}: a race needs a track with a centerline'
        raise ConfigError(msg)
    lap_s = slowest_lap_s(scenario, track)
    event = scenario.race.event
    if laps is not None or event is None:
        laps = 1 if laps is None else laps
        if laps < 1:
            msg = f'{scenario.source}: laps: expected a whole number >= 1, got {laps}'
            raise ConfigError(msg)
        event = race_session([car.name for car in scenario.cars], laps, start, retire_after_s,
                             cool_down_s=lap_s)
    if max_time_s is None:
        max_time_s = sum(_session_budget(spec, lap_s) for spec in event.sessions)
    race = dataclasses.replace(scenario.race, event=event)
    if out is not None:
        race = dataclasses.replace(race, clips=dataclasses.replace(
            race.clips, directory=out / CLIPS_FOLDER))
    scenario = dataclasses.replace(scenario, race=race)
    sink = clips(scenario) if clips is not None else None
    engine = Engine(scenario, sink.renderer if sink is not None else InProcessRenderer(),
                    seed=seed)
    try:
        engine.load_track(TrackWorld.from_track(track, scenario.track.scene))
        if sink is not None:
            sink.start(engine)
        result = _race(engine, scenario, track, max_time_s, sink, on_frame)
    finally:
        written = sink.close() if sink is not None else []
        engine.close()
    result.laps = next((s.laps for s in reversed(event.sessions) if s.kind == RACE), None)
    result.clips = written
    path = out / CLASSIFICATION_FILE if out is not None else event.classification_file
    if path is not None and engine.event is not None:
        result.classification_file = write_classification(engine.event.state, path,
                                                           result.incidents)
    result.wall_s = time.monotonic() - started
    return result


def _session_budget(spec: SessionSpec, lap_s: float) -> float:
    """Sim time a session may take at most: its lights, its laps (or time) and a lap more
    after the flag, at the slowest pace, and a minute."""
    lights = (spec.lights + 1) * spec.light_interval_s if spec.start == STANDING else 0.0
    running = spec.duration_s if spec.duration_s is not None else (spec.laps or 1) * lap_s
    return 60.0 + lights + running + lap_s


def _race(engine: Engine, scenario: Scenario, track: Track, max_time_s: float,
          sink: ClipSink | None, on_frame: Callable[[Frame], None] | None) -> RaceResult:
    metrics, event = engine.metrics, engine.event
    assert metrics is not None and event is not None  # a centerline, and race.event
    names = list(engine.names)
    period_s = engine.period_ns * 1e-9
    pilots = Pilots(scenario.cars, drivers_of(scenario), RacingLine.of(track), metrics,
                    track.width_left, track.width_right, period_s)
    cars, by_name = pilots.pilots, pilots.by_name
    frame = engine.reset()
    _start_drivers(engine, pilots, frame)
    result = RaceResult(track.name, None, [])
    bounds = track.bounds()
    park = (bounds[2], bounds[3])
    refused = LogLimit()
    results: tuple[ResultRow, ...] = ()
    regrid = -1  # the frame in which the cars stand on a new session's grid
    last_step = math.ceil(max_time_s / period_s)
    while frame.step < last_step:
        state = frame.event
        assert state is not None
        if frame.step == regrid:
            _start_drivers(engine, pilots, frame)
            for car in cars:
                car.racing, car.why = not car.failed, car.why if car.failed else ''
                if car.failed:
                    event.retire(car.name, car.why)
                    _park(engine, car, park)
        held = state.flag == LIGHTS or frame.step < regrid
        if held:  # the start signal: the cars stand on their slots until the lights go out
            for car in cars:
                if car.racing:
                    engine.drive(car.name, 0.0, 0.0)
        else:
            commands, failed = pilots.act(frame.states, engine.planar_states()[:, 3])
            for car in failed:
                event.retire(car.name, car.why)
                _park(engine, car, park)
            for command in commands:
                name = command.pilot.name
                problem = engine.drive(name, command.speed, command.steering)
                line_ = problem and refused.admit(f'{name}: ignoring drive command ({problem})')
                if line_:
                    print(line_, file=sys.stderr, flush=True)
        frame = engine.advance()
        pilots.take_scans(frame.sensors)
        _count(frame, result)
        if sink is not None:
            sink.write(frame)
        if on_frame is not None:
            on_frame(frame)
        if len(frame.judgement.placements) == len(names) and \
                {p.car for p in frame.judgement.placements} == set(names):
            regrid = frame.step + 1  # a new session: the cars go onto its grid next frame
        state = frame.event
        assert state is not None
        if state.results is not results:
            results = state.results
            _park_the_out(engine, by_name, results, park, event.settings.retire_after_s)
        if state.finished:
            break
    final = event.state
    result.finished = final.finished
    result.cars = _classified(final, by_name)
    result.sim_s = frame.time_ns * 1e-9
    result.frames = frame.step
    return result


def _start_drivers(engine: Engine, pilots: Pilots, frame: Frame) -> None:
    """Each driver from where its car stands, with the car's first scan."""
    pilots.start(frame.states, engine.planar_states()[:, 3])
    pilots.take_scans(frame.sensors)


def _count(frame: Frame, result: RaceResult) -> None:
    """The frame's contacts and rulings into the result."""
    for event in frame.judgement.events:
        if event.kind == COLLISION and event.car < event.other:
            result.collisions += 1
        if event.kind == RULING and isinstance(event, Ruling):
            result.incidents.append(event.record(frame.time_ns * 1e-9))


def _park_the_out(engine: Engine, cars: Mapping[str, Pilot], rows: tuple[ResultRow, ...],
                  park: tuple[float, float], retire_after_s: float) -> None:
    """Park every car the event has just retired or disqualified, saying why."""
    for row in rows:
        car = cars[row.car]
        if car.racing and row.status in (DNF, DSQ):
            car.why = car.why or ('disqualified by the stewards' if row.status == DSQ else
                                  f'no progress for {retire_after_s:g} s')
            _park(engine, car, park)


def _park(engine: Engine, car: Pilot, bounds: tuple[float, float]) -> None:
    """Take ``car`` off the track, at rest (``drivers.pilots.parking_spot`` beyond the
    track's upper ``bounds``); its race record stays."""
    car.racing = False
    engine.drive(car.name, 0.0, 0.0)
    spot = parking_spot(*bounds, engine.names.index(car.name))
    engine.place([Placement(car.name, spot, 0.0)])


def _classified(state: EventState, cars: Mapping[str, Pilot]) -> list[RacedCar]:
    """The event's classification (its current results where the time limit stopped it),
    with each car's driver and why it left the race."""
    rows = state.classification if state.finished else state.results
    return [RacedCar(row, cars[row.car].driver_name, cars[row.car].why) for row in rows]


def drivers_of(scenario: Scenario) -> Mapping[str, str]:
    """Each car's driver, by car."""
    return {car.name: car.driver for car in scenario.cars}
