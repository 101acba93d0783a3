"""Race events: the sessions of ``race.event`` (practice, qualifying, race) run one after the
other, driven each frame by the race metrics, with the stewards' penalties in the results
(docs/race-control.md, "Race formats").

The event reads what the metrics and the stewards already measure (laps, lap times, progress,
penalties) and adds what a competition needs on top: the session's clock and flag, the start
signal, who took the chequered flag, who retired, results tables and the final
classification. A new session puts the cars on their grid slots (placements, which the engine
applies in process and the ROS bridge sends as resets) and starts the metrics and the stewards
afresh, so lap times and penalties are per session. Its state is one ``EventState`` per frame,
which every face reads (``Frame.event``, ``/arsim/race``, the gym's ``info["event"]``).

Timing, in the metrics' own race time (the session's, from its start or a standing start's
lights out): a lap is the metrics' lap, timed at the interpolated crossing of the line. After a
rolling start the first crossing of the line after a full lap is the start: that lap (a
formation lap in a race, an out-lap in qualifying) is not counted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import yaml

from arsim_core.config.race_event import (
    NO_VERDICT,
    PRACTICE,
    QUALIFYING,
    RACE,
    ROLLING,
    STANDING,
    EventSettings,
    SessionSpec,
)
from arsim_core.config.stewards import DRIVE_THROUGH, TIME_PENALTY, WARNING, StewardSettings
from arsim_core.engine.race_metrics import LAPS, PROGRESS, RaceMetrics, UnknownCarError
from arsim_core.engine.referee import RULING, Event, Placement
from arsim_core.engine.state import CarState
from arsim_core.engine.stewards import Ruling, Stewards
from arsim_core.geometry import Pose2D

# Flags: the state of the session as a marshal would show it.
LIGHTS = 'lights'  # a standing start: the start signal's lights are on, cars hold their slots
FORMATION = 'formation'  # a rolling start: the formation lap, until the leader reaches the line
GREEN = 'green'
WHITE = 'white'  # the leader is on the race's last lap
CHEQUERED = 'chequered'  # cars take the flag at their next crossing of the line; cool-down
FLAGS = (LIGHTS, FORMATION, GREEN, WHITE, CHEQUERED)

# A car's status in a session.
RUNNING = 'running'
FINISHED = 'finished'  # took the chequered flag (in qualifying by laps: ran its laps)
DNF = 'dnf'  # retired: no progress for ``retire_after_s``, or its driver stopped
DSQ = 'dsq'  # disqualified by the stewards
STATUSES = (RUNNING, FINISHED, DNF, DSQ)

JUMP_START = 'jump_start'  # the rule a car breaks by leaving its slot before lights out
HOLD_TOLERANCE = 0.1  # car lengths a car may roll off its slot while the lights are on
STALL_GAIN = 0.5  # car lengths of progress that count as progress for retirement
STALL_CHECK_S = 0.25  # how often retirement is checked [s of session time]


class ResultRow(NamedTuple):
    """One car in a session's results. ``total_time_s``: in a race the time from the start
    to its last counted crossing of the line, penalties added; in practice and qualifying
    the sum of its timed laps. ``gap_s`` to the car in first place (race: total time, on the
    same lap; else best lap), None where the car is laps behind or has no time."""

    position: int
    car: str
    laps: int
    total_time_s: float | None
    best_lap_s: float | None
    gap_s: float | None
    laps_behind: int
    penalty_s: float
    warnings: int
    status: str
    grid: int  # the position it started the session from


class SessionResults(NamedTuple):
    """A finished session's results table."""

    name: str
    kind: str
    rows: tuple[ResultRow, ...]


class EventState(NamedTuple):
    """The event at one frame. ``laps_remaining`` is -1 where the session is not run to a
    lap count (yet: a race's time limit sets one when it runs out), ``time_remaining_s`` NaN
    where it has no time limit. ``results`` is the current session's table as it stands,
    ``sessions`` those of the finished sessions and ``classification`` the event's final one
    (the last race's results, else the last session's) once ``finished``."""

    session_index: int  # of the current session in ``race.event``
    session: str
    kind: str
    flag: str
    lights: int  # lights on (a standing start's signal), 0 otherwise
    laps_remaining: int
    time_remaining_s: float
    session_time_s: float
    results: tuple[ResultRow, ...]
    sessions: tuple[SessionResults, ...]
    classification: tuple[ResultRow, ...]
    finished: bool

    def to_dict(self) -> dict[str, Any]:
        """Plain values (for YAML or JSON): the state with every table as a list of rows."""
        def rows(table: Sequence[ResultRow]) -> list[dict[str, Any]]:
            return [row._asdict() for row in table]
        out = self._asdict()
        out['results'] = rows(self.results)
        out['sessions'] = [{'name': s.name, 'kind': s.kind, 'results': rows(s.rows)}
                           for s in self.sessions]
        out['classification'] = rows(self.classification)
        return out


class EventNews(NamedTuple):
    """What a frame of the event asks of the engine: events to report (rulings), cars to
    place, and whether the race clock starts again now (a new session, lights out)."""

    events: tuple[Event, ...] = ()
    placements: tuple[Placement, ...] = ()
    restart: bool = False


class _Entry:
    """A car's session: its grid slot, status and what the results need that the metrics
    do not keep."""

    __slots__ = ('best_progress', 'frozen', 'grid', 'index', 'jumped', 'name', 'own_penalty_s',
                 'own_warnings', 'since', 'slot', 'status')

    def __init__(self, name: str, index: int, grid: int, slot: Pose2D) -> None:
        self.name, self.index, self.grid, self.slot = name, index, grid, slot
        self.status = RUNNING
        self.frozen: int | None = None  # the metrics' laps when it took the flag or retired
        self.best_progress = -math.inf
        self.since = 0.0  # session time of its last progress
        self.jumped = False
        self.own_penalty_s = 0.0  # the event's own verdicts (a jump start)
        self.own_warnings = 0


class RaceEvent:
    """The sessions of ``settings`` over ``metrics``' cars (``lengths``: their footprints'
    lengths), with ``stewards`` (None: switched off) and their ``penalties`` (what a time
    penalty and a drive-through cost). ``slots``: the grid's poses, first place first."""

    def __init__(self, settings: EventSettings, metrics: RaceMetrics, stewards: Stewards | None,
                 penalties: StewardSettings, slots: Sequence[Pose2D],
                 lengths: Sequence[float]) -> None:
        self.settings = settings
        self.metrics = metrics
        self.stewards = stewards
        self.penalties = penalties
        self.names = metrics.cars
        self.slots = tuple(slots)
        self._lengths = np.asarray(lengths, np.float64)
        self._rows = metrics.rows
        self.reset()

    def reset(self) -> None:
        """Back to before the first session, which starts with the next frame."""
        self._index = -1
        self._spec = self.settings.sessions[0]
        self._entries: dict[str, _Entry] = {}
        self._flag = GREEN
        self._time = 0.0
        self._t0 = 0.0  # session time of the start (a rolling race: the leader's crossing)
        self._offset = 0  # laps not counted: 1 after a rolling start
        self._flag_time = math.inf
        self._laps_at_flag: dict[str, int] = {}
        self._target: int | None = None  # a race's lap count (a time limit sets it at the end)
        self._laps_key = b''  # every car's laps as last seen
        self._next_check = 0.0
        self._dirty = True
        self._table: tuple[ResultRow, ...] = ()
        self._done: list[SessionResults] = []
        self._classification: tuple[ResultRow, ...] = ()
        self.finished = False
        self._state: EventState | None = None

    @property
    def spec(self) -> SessionSpec:
        """The current session (the first before the event starts)."""
        return self._spec

    # --- each frame -------------------------------------------------------------------------
    def update(self, time_s: float, states: Mapping[str, CarState],
               ruled: bool = False) -> EventNews | None:
        """One frame at race time ``time_s`` (the metrics' time), after the metrics and the
        stewards took it; ``ruled``: the stewards ruled in it (the results change)."""
        self._state = None
        if self.finished:
            return None
        if self._index < 0:
            news = self._begin(0, time_s, states)
            if news.restart:
                return news
        if ruled:
            self._dirty = True
            self._disqualify()
        self._time = time_s
        flag = self._flag
        if flag == LIGHTS:
            return self._lights(time_s, states)
        key = self._rows[:, LAPS].tobytes()
        if key != self._laps_key:
            self._laps_key = key
            self._dirty = True
            self._laps_changed(time_s)
        if time_s >= self._next_check:
            self._next_check = time_s + STALL_CHECK_S
            self._check_progress(time_s)
            if self._flag != CHEQUERED and all(
                    e.status != RUNNING for e in self._entries.values()):
                self._chequered(time_s)  # nobody left to race: the session is over
        spec = self._spec
        if self._flag in (GREEN, WHITE) and spec.duration_s is not None \
                and time_s - self._t0 >= spec.duration_s:
            self._time_up(time_s)
        if self._flag == CHEQUERED and (time_s >= self._flag_time + spec.cool_down_s or all(
                e.status != RUNNING for e in self._entries.values())):
            return self._end_session(time_s, states)
        return None

    def retire(self, car: str, why: str = 'retired') -> None:
        """Retire ``car`` from the current session (DNF): its driver stopped, say. The reason
        is for the caller's log; the results show the status."""
        del why
        if car not in self.names:
            msg = f'unknown car {car!r}; the event has {", ".join(map(repr, self.names))}'
            raise UnknownCarError(msg)
        entry = self._entries.get(car)
        if entry is not None and entry.status == RUNNING:
            self._state = None
            self._retire(entry)

    @property
    def state(self) -> EventState:
        """The event at the latest frame (made once per frame, when first asked for)."""
        if self._state is None:
            self._state = self._make_state()
        return self._state

    # --- sessions ---------------------------------------------------------------------------
    def _begin(self, index: int, time_s: float, states: Mapping[str, CarState]) -> EventNews:
        """Start session ``index``: the cars onto its grid, the clock and the records afresh
        (the first session, on a grid in the scenario's order, where they already stand)."""
        self._index = index
        spec = self._spec = self.settings.sessions[index]
        order = self._grid_order(spec)
        placed = index > 0 or order != list(self.names)
        placements: tuple[Placement, ...] = ()
        if placed:
            placements = tuple(Placement(car, self.slots[k], 0.0) for k, car in enumerate(order))
            self.metrics.reset({p.car: p.pose for p in placements})
            if self.stewards is not None:
                self.stewards.reset()
            time_s = 0.0
        slots = {p.car: p.pose for p in placements} if placed else \
            {name: states[name].pose if name in states else self.slots[k]
             for k, name in enumerate(self.names)}
        rows = {name: i for i, name in enumerate(self.names)}
        self._entries = {car: _Entry(car, rows[car], k + 1, slots[car])
                         for k, car in enumerate(order)}
        self._offset = 1 if spec.start == ROLLING and spec.kind != PRACTICE else 0
        self._flag = _first_flag(spec)
        self._t0 = 0.0
        self._flag_time = math.inf
        self._laps_at_flag = {}
        self._target = spec.laps if spec.kind == RACE else None
        self._laps_key = b''
        self._dirty = True
        self._table = ()
        self._time = time_s
        self._restart_stall(time_s)
        return EventNews((), placements, placed)

    def _grid_order(self, spec: SessionSpec) -> list[str]:
        """The cars from first to last place on the session's grid."""
        if spec.kind != RACE:
            return list(self.names)
        if spec.grid is not None:
            grid = spec.grid
            return sorted(self.names, key=lambda car: grid[car])
        qualifying = next(s for s in reversed(self._done) if s.kind == QUALIFYING)
        return [row.car for row in qualifying.rows]

    def _end_session(self, time_s: float, states: Mapping[str, CarState]) -> EventNews | None:
        """The session is over: its results kept, the next one started (or the event ends)."""
        for entry in self._entries.values():
            if entry.status == RUNNING:
                entry.frozen = int(self._rows[entry.index, LAPS])
        self._dirty = True
        results = SessionResults(self._spec.name, self._spec.kind, self._results())
        self._done.append(results)
        if self._index + 1 < len(self.settings.sessions):
            return self._begin(self._index + 1, time_s, states)
        races = [s for s in self._done if s.kind == RACE]
        self._classification = (races or self._done)[-1].rows
        self.finished = True
        return None

    # --- the start --------------------------------------------------------------------------
    def _lights(self, time_s: float, states: Mapping[str, CarState]) -> EventNews | None:
        """A standing start: every car held on its slot (put back if it rolls off, a jump
        start), the lights coming on one per interval and going out one interval after the
        last; then the race clock starts."""
        spec = self._spec
        if time_s >= (spec.lights + 1) * spec.light_interval_s - 1e-9:
            poses = {name: states[name].pose for name in self.names if name in states}
            self.metrics.reset(poses)
            if self.stewards is not None:
                self.stewards.reset()
            self._flag = GREEN
            self._t0 = 0.0
            self._time = 0.0
            self._laps_key = b''
            self._dirty = True
            self._restart_stall(0.0)
            return EventNews(restart=True)
        events: list[Event] = []
        placements = []
        for entry in self._entries.values():
            state = states.get(entry.name)
            if state is None:
                continue
            x, y, _ = entry.slot
            if math.hypot(state.x - x, state.y - y) > HOLD_TOLERANCE * self._lengths[
                    entry.index]:
                placements.append(Placement(entry.name, entry.slot, 0.0))
                if not entry.jumped:
                    entry.jumped = True
                    events.extend(self._jump_start(entry))
        if placements or events:
            return EventNews(tuple(events), tuple(placements))
        return None

    def _jump_start(self, entry: _Entry) -> list[Event]:
        """The verdict on a car that left its slot before lights out, as a steward's ruling."""
        verdict = self._spec.jump_start
        if verdict == NO_VERDICT:
            return []
        seconds = {TIME_PENALTY: self.penalties.time_penalty_s,
                   DRIVE_THROUGH: self.penalties.drive_through_s}.get(verdict, 0.0)
        if verdict == WARNING:
            entry.own_warnings += 1
        entry.own_penalty_s += seconds
        self._dirty = True
        added = f' +{seconds:g} s' if verdict != WARNING else ''
        return [Ruling(entry.name, RULING, f'{verdict}{added} ({JUMP_START}): {entry.name} '
                                           f'left its grid slot before the lights went out',
                       '', JUMP_START, verdict, seconds)]

    # --- laps, flags and retirements --------------------------------------------------------
    def _race_laps(self, entry: _Entry) -> int:
        laps = entry.frozen if entry.frozen is not None else int(self._rows[entry.index, LAPS])
        return max(laps - self._offset, 0)

    def _laps_changed(self, time_s: float) -> None:
        """Someone crossed the line: the start of a rolling race, the white and chequered
        flags, and the cars that took the flag (or ran their qualifying laps)."""
        spec = self._spec
        running = [e for e in self._entries.values() if e.status == RUNNING]
        if self._flag == FORMATION:
            crossed = [e for e in running if self._rows[e.index, LAPS] >= 1]
            if not crossed:
                return
            statuses = self.metrics.statuses([e.name for e in crossed])
            self._t0 = float(min(statuses[e.name].lap_times[0] for e in crossed))
            self._flag = GREEN
        if self._flag == CHEQUERED:
            for entry in running:
                if self._race_laps(entry) > self._laps_at_flag.get(entry.name, 0):
                    self._finish(entry)
            return
        if spec.kind == QUALIFYING and spec.laps is not None:
            for entry in running:
                if self._race_laps(entry) >= spec.laps:
                    self._finish(entry)
            if all(e.status != RUNNING for e in self._entries.values()):
                self._chequered(time_s)
            return
        if spec.kind != RACE or self._target is None:
            return
        leader = max((self._race_laps(e) for e in self._entries.values()), default=0)
        if leader >= self._target:
            self._chequered(time_s)
            for entry in running:
                if self._race_laps(entry) >= self._target:
                    self._finish(entry)
        elif leader == self._target - 1:
            self._flag = WHITE

    def _time_up(self, time_s: float) -> None:
        """The session's time is up: practice and qualifying show the chequered flag, a race
        runs the leader's lap in progress and then one final lap."""
        if self._spec.kind != RACE:
            self._chequered(time_s)
        elif self._target is None:
            leader = max(self._race_laps(e) for e in self._entries.values())
            self._target = leader + 2
            self._dirty = True

    def _chequered(self, time_s: float) -> None:
        self._flag = CHEQUERED
        self._flag_time = time_s
        self._laps_at_flag = {e.name: self._race_laps(e) for e in self._entries.values()}
        self._dirty = True

    def _finish(self, entry: _Entry) -> None:
        entry.status = FINISHED
        entry.frozen = int(self._rows[entry.index, LAPS])
        self._dirty = True

    def _restart_stall(self, time_s: float) -> None:
        self._next_check = time_s + STALL_CHECK_S
        for entry in self._entries.values():
            entry.best_progress = -math.inf
            entry.since = time_s

    def _check_progress(self, time_s: float) -> None:
        """Retire the running cars whose progress has not grown for ``retire_after_s`` (also
        after the chequered flag: a car stuck short of the line will not take it)."""
        progress = self._rows[:, PROGRESS].tolist()
        limit = self.settings.retire_after_s
        for entry in self._entries.values():
            if entry.status != RUNNING:
                continue
            now = progress[entry.index]
            if entry.best_progress == -math.inf:  # the first look since the start
                entry.best_progress = now
            elif now > entry.best_progress + STALL_GAIN * self._lengths[entry.index]:
                entry.best_progress = now
                entry.since = time_s
            elif time_s - entry.since >= limit:
                self._retire(entry)

    def _retire(self, entry: _Entry, status: str = DNF) -> None:
        entry.status = status
        entry.frozen = int(self._rows[entry.index, LAPS])
        self._dirty = True

    def _disqualify(self) -> None:
        """The running cars the stewards have just disqualified are out of the session."""
        if self.stewards is None:
            return
        records = self.stewards.records
        for entry in self._entries.values():
            if entry.status == RUNNING and records[entry.name].disqualified:
                self._retire(entry, DSQ)

    # --- results ----------------------------------------------------------------------------
    def _results(self) -> tuple[ResultRow, ...]:
        """The current session's table, remade only when something in it changed."""
        if not self._dirty:
            return self._table
        self._dirty = False
        spec = self._spec
        entries = list(self._entries.values())
        statuses = self.metrics.statuses([e.name for e in entries])
        lines = []
        for entry in entries:
            laps = self._race_laps(entry)
            if spec.kind == QUALIFYING and spec.laps is not None:
                laps = min(laps, spec.laps)
            all_laps = [float(t) for t in statuses[entry.name].lap_times]
            timed = all_laps[self._offset:self._offset + laps]
            penalty, warnings, disqualified = self._record(entry)
            if spec.kind == RACE:
                total = sum(all_laps[:self._offset + laps]) - self._t0 + penalty \
                    if laps else None
            else:
                total = sum(timed) if timed else None
            status = DSQ if disqualified else entry.status
            lines.append((entry, laps, total, min(timed) if timed else None, penalty,
                          warnings, status))
        if spec.kind == RACE:
            lines.sort(key=lambda line: (line[6] == DSQ, -line[1], _or_inf(line[2]),
                                         line[0].grid))
        else:
            lines.sort(key=lambda line: (line[6] == DSQ, line[3] is None, _or_inf(line[3]),
                                         -line[1], line[0].grid))
        first = lines[0] if lines else None
        table = []
        for position, (entry, laps, total, best, penalty, warnings, status) in enumerate(
                lines, start=1):
            gap, behind = None, 0
            if first is not None and spec.kind == RACE:
                behind = first[1] - laps
                if behind == 0 and total is not None and first[2] is not None:
                    gap = total - first[2]
            elif first is not None and best is not None and first[3] is not None:
                gap = best - first[3]
            table.append(ResultRow(position, entry.name, laps, total, best, gap, behind,
                                   penalty, warnings, status, entry.grid))
        self._table = tuple(table)
        return self._table

    def _record(self, entry: _Entry) -> tuple[float, int, bool]:
        """Penalty seconds, warnings and disqualification of ``entry`` in this session."""
        penalty, warnings = entry.own_penalty_s, entry.own_warnings
        if self.stewards is None:
            return penalty, warnings, False
        record = self.stewards.records[entry.name]
        return penalty + record.penalty_s, warnings + record.warnings, record.disqualified

    def _make_state(self) -> EventState:
        spec = self.spec
        if self._index < 0:  # before the first frame: the flag its start will show
            return EventState(0, spec.name, spec.kind, _first_flag(spec), 0, -1, math.nan, 0.0,
                              (), (), (), False)
        elapsed = self._time - self._t0
        flag = self._flag
        lights = 0
        if flag == LIGHTS:
            lights = min(int(self._time / spec.light_interval_s + 1e-9), spec.lights)
            elapsed = 0.0
        elif flag == FORMATION:
            elapsed = 0.0
        remaining = math.nan
        if spec.duration_s is not None:
            remaining = max(spec.duration_s - elapsed, 0.0)
        laps_remaining = -1
        if self._target is not None:
            leader = max(self._race_laps(e) for e in self._entries.values())
            laps_remaining = max(self._target - leader, 0)
        elif spec.kind == QUALIFYING and spec.laps is not None:
            laps_remaining = max((max(spec.laps - self._race_laps(e), 0)
                                  for e in self._entries.values() if e.status == RUNNING),
                                 default=0)
        return EventState(self._index, spec.name, spec.kind, flag, lights, laps_remaining,
                          remaining, elapsed, self._results(), tuple(self._done),
                          self._classification, self.finished)


def _first_flag(spec: SessionSpec) -> str:
    """The flag a session starts under: a race's start signal or formation lap, else green."""
    if spec.kind != RACE:
        return GREEN
    return LIGHTS if spec.start == STANDING else FORMATION


def _or_inf(value: float | None) -> float:
    return math.inf if value is None else value


def race_event(settings: EventSettings | None, metrics: RaceMetrics | None,
               stewards: Stewards | None, penalties: StewardSettings,
               slots: Sequence[Pose2D], lengths: Sequence[float]) -> RaceEvent | None:
    """The event of ``race.event``, or None where there is none or no metrics to drive it
    (a track without a centerline)."""
    if settings is None or metrics is None:
        return None
    return RaceEvent(settings, metrics, stewards, penalties, slots, lengths)


def results_table(rows: Sequence[ResultRow]) -> str:
    """A results table as plain text, for the log when a session or the event ends."""
    header = ('Pos', 'Car', 'Laps', 'Time', 'Best lap', 'Gap', 'Penalty', 'Status')
    lines = [header]
    for row in rows:
        gap = f'+{row.laps_behind} lap{"s" * (row.laps_behind > 1)}' if row.laps_behind \
            else _seconds(row.gap_s)
        lines.append((str(row.position), row.car, str(row.laps), _seconds(row.total_time_s),
                      _seconds(row.best_lap_s), gap, f'{row.penalty_s:g}', row.status.upper()))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return '\n'.join('  '.join(cell.ljust(w) if i in (1, 7) else cell.rjust(w)
                               for i, (cell, w) in enumerate(zip(line, widths, strict=True)))
                     .rstrip() for line in lines)


def write_classification(state: EventState, path: str | Path,
                         incidents: Sequence[Mapping[str, Any]] = ()) -> Path:
    """The event's final classification, every session's results and the stewards'
    ``incidents`` (``Ruling.record``) as YAML at ``path`` (written whole, then moved into
    place, so a reader never sees half a file)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    document = state.to_dict()
    document = {'finished': document['finished'],
                'classification': document['classification'],
                'sessions': document['sessions'],
                'current': {key: document[key] for key in (
                    'session', 'kind', 'flag', 'session_time_s', 'results')},
                'incidents': [dict(incident) for incident in incidents]}
    staged = target.with_name(f'.{target.name}.tmp')
    staged.write_text(yaml.safe_dump(document, sort_keys=False), encoding='utf-8')
    staged.replace(target)
    return target


def _seconds(value: float | None) -> str:
    return '-' if value is None else f'{value:.3f}'
