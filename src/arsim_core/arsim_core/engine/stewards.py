"""Race control: watches the race each frame, judges every car-to-car contact, every car
forced off the track and every excursion that gained time (the rules of
:mod:`arsim_core.engine.incidents`), keeps each car's record on the verdict ladder and reports
each verdict as a ``Ruling`` event, which the ROS bridge publishes on ``/arsim/events`` and
the Gymnasium environment returns in ``info["events"]`` (docs/race-control.md).

It reads the race metrics' projection of the cars (no projection of its own) and does nothing
in a frame where no car touched another, left or rejoined the track: one car on the track
costs one comparison of its off-track flag per frame. With several cars it keeps
``lookback_s`` of their positions along the track, a copy of one small array per frame.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from arsim_core.config.scenario import Scenario
from arsim_core.config.stewards import (
    DISQUALIFIED,
    DRIVE_THROUGH,
    NO_ACTION,
    TIME_PENALTY,
    WARNING,
    StewardSettings,
)
from arsim_core.engine import incidents
from arsim_core.engine.incidents import Along, Call, Contact, TrackEdges
from arsim_core.engine.race_metrics import LATERAL, OFF_TRACK, PROGRESS, SEGMENT, RaceMetrics, S
from arsim_core.engine.referee import COLLISION, RULING, Event
from arsim_core.engine.world import TrackWorld

XY = tuple[float, float]
_HISTORY_COLUMNS = 4  # S, LATERAL, SEGMENT, OFF_TRACK: the first columns of the metrics' rows


@dataclass(frozen=True)
class Ruling(Event):
    """A verdict (``arsim_msgs/SimEvent`` kind RULING on ROS): ``car`` is at fault (or, for
    no action, the first car involved), ``rule`` decided and ``penalty_s`` is what it adds to
    the car's race time. ``detail`` reads ``<verdict> (<rule>): <why>``."""

    rule: str = ''
    verdict: str = NO_ACTION
    penalty_s: float = 0.0

    def record(self, time_s: float) -> dict[str, Any]:
        """The ruling as plain values, as the race reports list it, given when it fell."""
        return {'time_s': round(time_s, 3), 'car': self.car, 'other': self.other,
                'rule': self.rule, 'verdict': self.verdict, 'penalty_s': self.penalty_s,
                'detail': self.detail}


@dataclass
class Record:
    """One car's standing with the stewards."""

    warnings: int = 0
    penalties: int = 0  # time penalties and drive-throughs
    penalty_s: float = 0.0  # added to the car's race time
    track_limits: int = 0  # track-limits offences so far
    disqualified: bool = False
    rulings: list[Ruling] = field(default_factory=list)


@dataclass
class _Excursion:
    """A car off the track: since when, where it left and how far it has driven since."""

    time: float
    s: float
    progress: float
    left: bool
    x: float
    y: float
    driven: float = 0.0


class Stewards:
    """Race control over ``metrics``' cars (``lengths``/``widths`` of their footprints) at one
    frame every ``period_s``, with ``settings``' thresholds and penalties."""

    def __init__(self, settings: StewardSettings, metrics: RaceMetrics,
                 width_left: np.ndarray, width_right: np.ndarray,
                 lengths: Sequence[float], widths: Sequence[float], period_s: float) -> None:
        self.settings = settings
        self.metrics = metrics
        self.names = metrics.cars
        self._index = {name: i for i, name in enumerate(self.names)}
        self._lengths = list(map(float, lengths))
        self._widths = list(map(float, widths))
        self._rows = metrics.rows
        self._off = self._rows[:, OFF_TRACK]
        points, s = metrics.centerline
        step = np.roll(points, -1, axis=0) - points
        self._direction = step / np.maximum(np.hypot(step[:, 0], step[:, 1]), 1e-12)[:, None]
        self.edges = TrackEdges(points, s, np.asarray(width_left, np.float64),
                                np.asarray(width_right, np.float64), metrics.length)
        # ``lookback_s`` of every car's S, LATERAL, SEGMENT, OFF_TRACK, with several cars only
        frames = math.ceil(settings.lookback_s / period_s) + 2 if len(self.names) > 1 else 0
        self._history = np.zeros((frames, len(self.names), _HISTORY_COLUMNS))
        self._times = np.full(frames, -math.inf)
        self.reset()

    def reset(self) -> None:
        """A new race: every record and excursion cleared."""
        self.records = {name: Record() for name in self.names}
        self._excursions: dict[str, _Excursion] = {}
        self._last_off = dict.fromkeys(self.names, -math.inf)  # last frame seen off track
        self._valid_from = dict.fromkeys(self.names, -math.inf)
        self._times[:] = -math.inf
        self._next = 0
        self._time = 0.0
        self._off_key = b''  # the off-track flags as last seen, as bytes: compared each frame

    def void(self, cars: Iterable[str]) -> None:
        """``cars`` were put somewhere (a reset, a recovery): their excursions and their
        history until now are void. A collision response's small step back is not this."""
        after = math.nextafter(self._time, math.inf)
        for car in cars:
            self._excursions.pop(car, None)
            self._last_off[car] = -math.inf
            self._valid_from[car] = after

    def restart(self, car: str) -> None:
        """``car`` starts its race afresh (an episode of a vector environment)."""
        self.void((car,))
        self.records[car] = Record()

    def penalty_s(self, car: str) -> float:
        """Seconds of penalties ``car`` has collected."""
        return self.records[car].penalty_s

    # --- each frame -------------------------------------------------------------------------
    def observe(self, time_s: float, states: Mapping[str, object], rows: np.ndarray,
                events: Iterable[Event]) -> list[Ruling]:
        """Judge one frame, after the metrics took it: ``rows`` are the states' rows (x, y,
        yaw, vx, vy, ... in the order of ``states``), ``events`` the referee's."""
        self._time = time_s
        if len(self._times):
            self._history[self._next] = self._rows[:, :_HISTORY_COLUMNS]
            self._times[self._next] = time_s
            self._next = (self._next + 1) % len(self._times)
        rulings: list[Ruling] = []
        key = self._off.tobytes()
        if self._excursions or key != self._off_key:
            xy = self._positions(states, rows)
            self._drive(xy)
            if key != self._off_key:
                self._off_key = key
                rulings += self._transitions(time_s, xy, rows, states)
        for event in events:
            if event.kind == COLLISION and event.car < event.other \
                    and event.other in self._index:
                rulings += self._contact(time_s, event.car, event.other, rows, states)
        return rulings

    def _positions(self, states: Mapping[str, object], rows: np.ndarray) -> dict[str, XY]:
        return {name: (float(rows[k, 0]), float(rows[k, 1]))
                for k, name in enumerate(states)}

    def _drive(self, xy: Mapping[str, XY]) -> None:
        """Add each excursion's step since the last frame to the distance it has driven."""
        for car, trip in self._excursions.items():
            if car in xy:
                x, y = xy[car]
                trip.driven += math.hypot(x - trip.x, y - trip.y)
                trip.x, trip.y = x, y

    def _transitions(self, time_s: float, xy: Mapping[str, XY], rows: np.ndarray,
                     states: Mapping[str, object]) -> list[Ruling]:
        """Cars that left or rejoined the track in this frame."""
        rulings = []
        for i, name in enumerate(self.names):
            off = bool(self._off[i])
            trip = self._excursions.get(name)
            if off and trip is None and name in xy:
                row = self._rows[i]
                self._excursions[name] = _Excursion(time_s, float(row[S]), float(row[PROGRESS]),
                                                    bool(row[LATERAL] > 0.0), *xy[name])
                if len(self.names) > 1:
                    rulings += self._forced_off(name, rows, states)
            elif not off and trip is not None:
                del self._excursions[name]
                self._last_off[name] = self._previous_time(time_s)
                rulings += self._track_limits(name, trip, time_s)
            if off:
                self._last_off[name] = time_s
        return rulings

    def _previous_time(self, time_s: float) -> float:
        """The time of the frame before this one (the last a rejoining car was off)."""
        if len(self._times) > 1:
            return float(self._times[(self._next - 2) % len(self._times)])
        return time_s

    def _track_limits(self, car: str, trip: _Excursion, time_s: float) -> list[Ruling]:
        row = self._rows[self._index[car]]
        edge = self.edges.distance(trip.left, trip.s, trip.progress, float(row[S]),
                                   float(row[PROGRESS]))
        duration = time_s - trip.time
        gain = incidents.time_gained(edge, trip.driven, duration)
        record = self.records[car]
        call = incidents.track_limits(gain, duration, record.track_limits, self.settings)
        if call is None:
            return []
        record.track_limits += 1
        return self._rule(call._replace(car=car, why=f'{car} {call.why}'), car, '')

    def _forced_off(self, victim: str, rows: np.ndarray,
                    states: Mapping[str, object]) -> list[Ruling]:
        now = self._along_now(rows, states)
        before = self._along_before()
        call = incidents.forcing_off_track(victim, now, before, self.metrics.length,
                                           self.settings)
        return [] if call is None or call.car is None else self._rule(call, call.car, victim)

    def _contact(self, time_s: float, a: str, b: str, rows: np.ndarray,
                 states: Mapping[str, object]) -> list[Ruling]:
        now = self._along_now(rows, states)
        before = self._along_before()
        window = self.settings.unsafe_rejoin.window_s
        off = {car: 0.0 if self._off[self._index[car]] else time_s - self._last_off[car]
               for car in (a, b)}
        contact = Contact(a, b, now[a], now[b], before.get(a), before.get(b),
                          off[a] if off[a] <= window else math.inf,
                          off[b] if off[b] <= window else math.inf, self.metrics.length)
        call = incidents.judge_contact(contact, self.settings)
        car = call.car if call.car is not None else a
        return self._rule(call, car, b if car == a else a)

    def _along_now(self, rows: np.ndarray, states: Mapping[str, object]) -> dict[str, Along]:
        """Every car along the track in this frame, its speed from its state's velocity."""
        speeds = dict.fromkeys(self.names, 0.0)
        for k, name in enumerate(states):
            yaw, vx, vy = (float(v) for v in rows[k, 2:5])
            segment = int(self._rows[self._index[name], SEGMENT])
            tx, ty = self._direction[max(segment, 0)]
            speeds[name] = (vx * math.cos(yaw) - vy * math.sin(yaw)) * tx \
                + (vx * math.sin(yaw) + vy * math.cos(yaw)) * ty
        return {name: self._along(self._rows[i], speeds[name], i)
                for i, name in enumerate(self.names)}

    def _along_before(self) -> dict[str, Along | None]:
        """Every car ``lookback_s`` ago (the nearest frame kept), None where its history since
        a placement is shorter or the frame is gone."""
        target = self._time - self.settings.lookback_s
        times = self._times
        if not len(times):
            return {}
        k = int(np.argmin(np.abs(times - target)))
        when = float(times[k])
        return {name: self._along(self._history[k, i], 0.0, i)
                if math.isfinite(when) and when >= self._valid_from[name]
                and when < self._time else None
                for i, name in enumerate(self.names)}

    def _along(self, row: np.ndarray, speed: float, i: int) -> Along:
        return Along(float(row[S]), float(row[LATERAL]), speed, bool(row[OFF_TRACK]),
                     self._lengths[i], self._widths[i])

    # --- the verdict ladder -----------------------------------------------------------------
    def _rule(self, call: Call, car: str, other: str) -> list[Ruling]:
        """The ruling of ``call`` on ``car`` (with ``other`` involved), entered on its record,
        and its disqualification if this was one penalty too many."""
        record = self.records[car]
        settings = self.settings
        seconds = {TIME_PENALTY: settings.time_penalty_s,
                   DRIVE_THROUGH: settings.drive_through_s}.get(call.verdict, 0.0)
        penalty = f' +{seconds:g} s' if call.verdict in (TIME_PENALTY, DRIVE_THROUGH) else ''
        ruling = Ruling(car, RULING, f'{call.verdict}{penalty} ({call.rule}): {call.why}',
                        other, call.rule, call.verdict, seconds)
        rulings = [ruling]
        if call.verdict == WARNING:
            record.warnings += 1
        elif penalty:
            record.penalties += 1
            record.penalty_s += seconds
            if settings.disqualify_after and record.penalties >= settings.disqualify_after \
                    and not record.disqualified:
                record.disqualified = True
                rulings.append(Ruling(
                    car, RULING, f'{DISQUALIFIED} ({incidents.REPEATED_OFFENCES}): {car} '
                                 f'collected {record.penalties} penalties', other,
                    incidents.REPEATED_OFFENCES, DISQUALIFIED))
        record.rulings.extend(rulings)
        return rulings


def race_control(scenario: Scenario, metrics: RaceMetrics | None,
                 world: TrackWorld) -> Stewards | None:
    """The stewards of ``scenario`` on ``world``, or None where there are none: switched off
    (``race.stewards.enabled``) or a track without a centerline (no metrics to read)."""
    settings = scenario.race.stewards
    if metrics is None or not settings.enabled or world.width_left is None \
            or world.width_right is None:
        return None
    return Stewards(settings, metrics, world.width_left, world.width_right,
                    [car.profile.footprint.length for car in scenario.cars],
                    [car.profile.footprint.width for car in scenario.cars],
                    scenario.frame_period_ns * 1e-9)
