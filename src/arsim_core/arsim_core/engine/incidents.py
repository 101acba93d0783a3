"""The incident rules of race control: pure functions from the cars' states along the track to
a call (the rule that decided, the verdict, the car at fault and why), docs/race-control.md.

Every rule sees the cars as the race metrics project them onto the centerline (``Along``):
arc length, lateral offset, speed along the track's direction, off track or not, and their
footprint. Gaps along the track are measured bumper to bumper and expressed in lengths of the
car concerned, lateral moves in its widths, so the thresholds (``StewardSettings``) fit every
scale of car. The stateful part (history, the verdict ladder, events) is
:mod:`arsim_core.engine.stewards`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from arsim_core.config.stewards import NO_ACTION, WARNING, StewardSettings
from arsim_core.track.polylines import arc_length, offset

REAR_END = 'rear_end'
SIDE_BY_SIDE = 'side_by_side'
DIVE_BOMB = 'dive_bomb'
UNSAFE_REJOIN = 'unsafe_rejoin'
FORCING_OFF_TRACK = 'forcing_off_track'
TRACK_LIMITS = 'track_limits'
REPEATED_OFFENCES = 'repeated_offences'


class Along(NamedTuple):
    """One car at one instant, along the track."""

    s: float  # arc length along the centerline [m]
    lateral: float  # offset left of the centerline [m]
    speed: float  # velocity along the centerline's direction [m/s]
    off_track: bool
    length: float  # footprint [m]
    width: float


class Call(NamedTuple):
    """What a rule decided: ``car`` is at fault (None: nobody) and gets ``verdict``."""

    rule: str
    verdict: str
    car: str | None
    why: str


class Contact(NamedTuple):
    """A contact between cars ``a`` and ``b``: each now, each ``lookback_s`` earlier (None
    where that is not known, just after a reset), and how long ago each was last off the track
    [s] (0 while off it, inf if not within the rejoin window)."""

    a: str
    b: str
    now_a: Along
    now_b: Along
    before_a: Along | None
    before_b: Along | None
    off_a: float
    off_b: float
    track_length: float


def wrapped(ds: float, length: float) -> float:
    """An arc-length difference the shorter way round a loop of ``length``."""
    return (ds + 0.5 * length) % length - 0.5 * length


def order(a: Along, b: Along, length: float) -> tuple[bool, float]:
    """Whether ``a`` is behind ``b`` along the track, and the clear gap between the front of
    the car behind and the back of the other [m] (negative: they overlap by that much)."""
    ahead = wrapped(b.s - a.s, length)  # > 0: b ahead of a
    return ahead >= 0.0, abs(ahead) - 0.5 * (a.length + b.length)


def overlap(a: Along, b: Along, length: float) -> float:
    """How much of the car behind is level with the other, in its lengths (0: nose to tail, 1
    and more: wholly alongside; negative: a clear gap)."""
    a_behind, gap = order(a, b, length)
    return -gap / (a.length if a_behind else b.length)


def toward(mover_now: Along, mover_before: Along, other_now: Along) -> float:
    """How far the mover went sideways towards ``other`` since before, in its widths."""
    side = math.copysign(1.0, other_now.lateral - mover_now.lateral)
    return side * (mover_now.lateral - mover_before.lateral) / mover_now.width


def unsafe_rejoin(c: Contact, settings: StewardSettings) -> Call | None:
    """The car off the track now or within the window, touching one that stayed on it, is at
    fault: it rejoined into the other's path. Both off (or both on): not this rule."""
    window = settings.unsafe_rejoin.window_s
    a_off, b_off = c.off_a <= window, c.off_b <= window
    if a_off == b_off:
        return None
    car, other, ago = (c.a, c.b, c.off_a) if a_off else (c.b, c.a, c.off_b)
    when = 'while still off the track' if ago == 0.0 else f'{ago:.2f} s after rejoining'
    return Call(UNSAFE_REJOIN, settings.unsafe_rejoin.verdict, car,
                f'{car} touched {other} {when}')


def rear_end(c: Contact, settings: StewardSettings) -> Call | None:
    """One car clearly behind (not alongside): it is at fault if it closed in fast enough."""
    if overlap(c.now_a, c.now_b, c.track_length) > settings.overlap:
        return None
    a_behind, gap = order(c.now_a, c.now_b, c.track_length)
    behind, ahead = (c.a, c.b) if a_behind else (c.b, c.a)
    back, front = (c.now_a, c.now_b) if a_behind else (c.now_b, c.now_a)
    closing = back.speed - front.speed
    rules = settings.rear_end
    why = f'{behind} ran into {ahead} from behind at {closing:.2f} m/s closing speed'
    if closing >= rules.penalty_speed:
        return Call(REAR_END, rules.verdict, behind, why)
    if closing >= rules.warning_speed:
        return Call(REAR_END, WARNING, behind, why)
    return Call(REAR_END, NO_ACTION, None, f'{why}: a light contact')


def dive_bomb(c: Contact, settings: StewardSettings) -> Call | None:
    """Alongside now, but one car was more than ``dive_bomb.gap`` of its lengths behind the
    other ``lookback_s`` ago: it lunged from too far back and is at fault."""
    if c.before_a is None or c.before_b is None:
        return None
    a_behind, gap = order(c.before_a, c.before_b, c.track_length)
    car, other, back = (c.a, c.b, c.before_a) if a_behind else (c.b, c.a, c.before_b)
    lengths = gap / back.length
    if lengths <= settings.dive_bomb.gap:
        return None
    return Call(DIVE_BOMB, settings.dive_bomb.verdict, car,
                f'{car} was {lengths:.2f} car lengths behind {other} {settings.lookback_s:g} s '
                f'before the contact')


def side_by_side(c: Contact, settings: StewardSettings) -> Call:
    """Alongside: the car that moved sideways into the other (by more than ``lateral_move``
    of its width within ``lookback_s``, the other not) is at fault; else a racing incident."""
    limit = settings.side_by_side.lateral_move
    if c.before_a is None or c.before_b is None:
        return Call(SIDE_BY_SIDE, NO_ACTION, None,
                    f'{c.a} and {c.b} touched side by side: a racing incident')
    move_a = toward(c.now_a, c.before_a, c.now_b)
    move_b = toward(c.now_b, c.before_b, c.now_a)
    moves = f'({c.a} moved {move_a:.2f}, {c.b} {move_b:.2f} car widths towards the other)'
    if (move_a > limit) != (move_b > limit):
        car, other = (c.a, c.b) if move_a > limit else (c.b, c.a)
        return Call(SIDE_BY_SIDE, settings.side_by_side.verdict, car,
                    f'{car} moved into {other} side by side {moves}')
    return Call(SIDE_BY_SIDE, NO_ACTION, None,
                f'{c.a} and {c.b} touched side by side: a racing incident {moves}')


def judge_contact(c: Contact, settings: StewardSettings) -> Call:
    """A contact's call: the first rule that decides, in this order (a car rejoining is at
    fault whoever hit whom; a car clearly behind is judged on its closing speed; alongside, a
    lunge from far back comes before who moved over)."""
    for rule in (unsafe_rejoin, rear_end, dive_bomb):
        call = rule(c, settings)
        if call is not None:
            return call
    return side_by_side(c, settings)


def forcing_off_track(victim: str, now: dict[str, Along], before: dict[str, Along | None],
                      track_length: float, settings: StewardSettings) -> Call | None:
    """``victim`` just left the track: a car alongside it, on its inner side, that moved more
    than ``forcing_off_track.lateral_move`` of its width towards it within ``lookback_s`` while
    staying on the track forced it off and is at fault."""
    gone = now[victim]
    for car, here in now.items():
        was = before.get(car)
        if car == victim or here.off_track or was is None:
            continue
        inside = (gone.lateral - here.lateral) * gone.lateral > 0.0  # victim nearer its edge
        if not inside or overlap(here, gone, track_length) <= settings.overlap:
            continue
        move = toward(here, was, gone)
        if move > settings.forcing_off_track.lateral_move:
            return Call(FORCING_OFF_TRACK, settings.forcing_off_track.verdict, car,
                        f'{car} moved {move:.2f} car widths towards {victim} alongside and '
                        f'forced it off the track')
    return None


def track_limits(gain_s: float, duration_s: float, warned: int,
                 settings: StewardSettings) -> Call | None:
    """An excursion off the track that lasted longer than ``min_time_s`` and gained more than
    ``min_gain_s``: a warning for each of the first ``warnings`` offences (``warned`` so far),
    then ``track_limits.verdict``. The car is filled in by the caller."""
    rules = settings.track_limits
    if duration_s <= rules.min_time_s or gain_s <= rules.min_gain_s:
        return None
    verdict = WARNING if warned < rules.warnings else rules.verdict
    return Call(TRACK_LIMITS, verdict, None,
                f'gained {gain_s:.2f} s off the track for {duration_s:.2f} s')


def time_gained(edge_m: float, driven_m: float, duration_s: float) -> float:
    """Seconds an excursion gained: the distance it saved on driving along the track edge it
    left, at the excursion's mean speed (0 for a car that did not move)."""
    if driven_m <= 0.0 or duration_s <= 0.0:
        return 0.0
    return (edge_m - driven_m) * duration_s / driven_m


class TrackEdges:
    """Arc length along each track edge as a function of the centerline's arc length: what
    driving along an edge from one point of the track to another covers."""

    def __init__(self, centerline: np.ndarray, s: np.ndarray, width_left: np.ndarray,
                 width_right: np.ndarray, length: float) -> None:
        self.length = length
        self._s = np.append(s, length)
        self._edges = []
        for edge in (offset(centerline, width_left), offset(centerline, -width_right)):
            arc = arc_length(edge)
            total = arc[-1] + float(np.hypot(*(edge[0] - edge[-1])))
            self._edges.append((np.append(arc, total), total))

    def distance(self, left: bool, s0: float, progress0: float, s1: float,
                 progress1: float) -> float:
        """Along the left (else right) edge from centerline arc length ``s0`` to ``s1``, where
        the unwrapped progress went from ``progress0`` to ``progress1`` (laps counted)."""
        arc, total = self._edges[0 if left else 1]
        e0, e1 = np.interp([s0, s1], self._s, arc)
        laps = round(((progress1 - progress0) - (s1 - s0)) / self.length)
        return float(e1 - e0) + laps * total
