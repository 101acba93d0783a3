"""What the web view shows of race control: the event's session and flag, a timing tower, the
stewards' incidents where they happened, and the results once the event is over.

The loop hands the board every frame only where there are stewards (:meth:`RaceBoard.watch`):
a new ruling is placed where its cars are in that very frame, which a snapshot taken a tenth
of a second later would miss. The rest (:meth:`RaceBoard.board`) is made at the feed's
snapshots, and only every ``period_s`` of wall time or when the flag, the session or the
incidents change: the tower changes a few times a second at most, and its rows cost the loop
nothing in the frames between. A simulation with neither an event nor stewards never asks for
a board.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from arsim_core.engine.race_event import EventState, ResultRow
from arsim_core.engine.race_metrics import CarRaceStatus
from arsim_core.engine.state import CarState
from arsim_core.engine.stewards import Record, Ruling, Stewards
from arsim_core.log_limit import clip

BOARD_PERIOD_S = 0.5  # the tower at 2 Hz of wall time: a timing screen, not an animation
MAX_INCIDENTS = 50  # the newest ones shown on the track; older ones drop off
MAX_DETAIL_CHARS = 160  # of a ruling's text on the page


class Incident(NamedTuple):
    """A ruling and where it was made: between its cars, or at the one car it names."""

    time_s: float
    x: float
    y: float
    session: str
    ruling: Ruling

    def to_json(self) -> dict[str, Any]:
        ruling = self.ruling
        return {'time': round(self.time_s, 2), 'x': round(self.x, 2), 'y': round(self.y, 2),
                'session': self.session, 'car': ruling.car, 'other': ruling.other,
                'rule': ruling.rule, 'verdict': ruling.verdict,
                'penalty_s': round(ruling.penalty_s, 2),
                'detail': clip(ruling.detail, MAX_DETAIL_CHARS)}


class RaceBoard:
    """The race control a view shows, kept from the loop's frames (one thread: the loop's)."""

    def __init__(self, period_s: float = BOARD_PERIOD_S) -> None:
        self.period_s = period_s
        self.incidents: deque[Incident] = deque(maxlen=MAX_INCIDENTS)
        self._seen: dict[str, tuple[Record, int]] = {}  # car -> its record, rulings seen
        self._added = 0  # incidents ever added: a change of the board
        self._key: tuple[Any, ...] | None = None
        self._due = 0.0
        self._session = ''

    def watch(self, time_ns: int, states: Mapping[str, CarState], stewards: Stewards) -> None:
        """A frame: place the rulings made since the last one. A record the stewards made
        afresh (a new session, a car restarted) starts its count again."""
        seen = self._seen
        for car, record in stewards.records.items():
            before = seen.get(car)
            count = len(record.rulings)
            if before is not None and before[0] is record and before[1] == count:
                continue
            start = before[1] if before is not None and before[0] is record else 0
            for ruling in record.rulings[start:]:
                self._place(time_ns * 1e-9, ruling, states)
            seen[car] = (record, count)

    def _place(self, time_s: float, ruling: Ruling, states: Mapping[str, CarState]) -> None:
        at = [states[name] for name in (ruling.car, ruling.other) if name in states]
        if not at:
            return
        x = sum(s.x for s in at) / len(at)
        y = sum(s.y for s in at) / len(at)
        self.incidents.append(Incident(time_s, x, y, self._session, ruling))
        self._added += 1

    def board(self, now: float, event: EventState | None,
              standings: Callable[[], Sequence[CarRaceStatus]]) -> dict[str, Any] | None:
        """The ``race`` message when one is due at wall time ``now``, else None
        (``standings``: the metrics' standings, asked for only then)."""
        if event is not None:
            self._session = event.session
            key: tuple[Any, ...] = (event.session_index, event.flag, event.lights,
                                    event.finished, self._added)
        else:
            key = (self._added,)
        if key == self._key and (now < self._due or event is None or event.finished):
            return None  # not due, or nothing in it can have changed
        self._key, self._due = key, now + self.period_s
        return {'type': 'race', 'event': None if event is None else _event(event),
                'tower': [] if event is None else tower(event.results, standings()),
                'incidents': [incident.to_json() for incident in self.incidents],
                'results': _results(event) if event is not None and event.finished else None}


def _event(event: EventState) -> dict[str, Any]:
    return {'session': event.session, 'kind': event.kind, 'session_index': event.session_index,
            'flag': event.flag, 'lights': event.lights, 'laps_remaining': event.laps_remaining,
            'time_remaining_s': _round(event.time_remaining_s),
            'session_time_s': _round(event.session_time_s), 'finished': event.finished}


def tower(rows: Sequence[ResultRow], standings: Sequence[CarRaceStatus]) -> list[dict[str, Any]]:
    """The timing tower: the session's results as they stand, with each car's last lap from
    the metrics and its interval to the car ahead (where both have a time on the same lap)."""
    last = {st.name: st.last_lap for st in standings}
    out: list[dict[str, Any]] = []
    ahead: ResultRow | None = None
    for row in rows:
        interval = None
        if ahead is not None and row.gap_s is not None and ahead.gap_s is not None:
            interval = row.gap_s - ahead.gap_s
        out.append({**_row(row), 'interval_s': _round(interval),
                    'last_lap_s': _round(last.get(row.car))})
        ahead = row
    return out


def _results(event: EventState) -> dict[str, Any]:
    return {'classification': [_row(row) for row in event.classification],
            'sessions': [{'name': s.name, 'kind': s.kind, 'rows': [_row(r) for r in s.rows]}
                         for s in event.sessions]}


def _row(row: ResultRow) -> dict[str, Any]:
    return {'position': row.position, 'car': row.car, 'laps': row.laps,
            'total_time_s': _round(row.total_time_s), 'best_lap_s': _round(row.best_lap_s),
            'gap_s': _round(row.gap_s), 'laps_behind': row.laps_behind,
            'penalty_s': _round(row.penalty_s), 'warnings': row.warnings,
            'status': row.status, 'grid': row.grid}


def _round(value: float | None) -> float | None:
    """Three decimals; None for no value (JSON has no NaN)."""
    return None if value is None or not math.isfinite(value) else round(value, 3)
