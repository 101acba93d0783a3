"""Race control frame by frame on a constructed circular track: excursions judged on time
gained, cars forced off, contacts judged once, the verdict ladder, and no work for a car that
stays on the track."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arsim_core.config.stewards import (
    DISQUALIFIED,
    TIME_PENALTY,
    WARNING,
    StewardSettings,
    TrackLimitsSettings,
)
from arsim_core.engine.incidents import FORCING_OFF_TRACK, REAR_END, TRACK_LIMITS
from arsim_core.engine.race_metrics import RaceMetrics
from arsim_core.engine.referee import COLLISION, RULING, Event
from arsim_core.engine.stewards import Ruling, Stewards

RADIUS, HALF_WIDTH, POINTS = 20.0, 1.0, 1440
PERIOD = 0.025  # 40 Hz
LENGTH, WIDTH = 0.5, 0.3
DEFAULTS = StewardSettings()


class Circle:
    """Cars driven by hand round an anticlockwise circle: each frame says where each car is
    (angle [rad], radius [m]) and how fast it goes along the circle [m/s]."""

    def __init__(self, cars: tuple[str, ...], settings: StewardSettings = DEFAULTS) -> None:
        theta = np.linspace(0.0, 2.0 * math.pi, POINTS, endpoint=False)
        centerline = RADIUS * np.column_stack([np.cos(theta), np.sin(theta)])
        widths = np.full(POINTS, HALF_WIDTH)
        self.metrics = RaceMetrics(centerline, widths, widths, cars)
        self.stewards = Stewards(settings, self.metrics, widths, widths,
                                 [LENGTH] * len(cars), [WIDTH] * len(cars), PERIOD)
        self.cars = cars
        self.time = 0.0

    def frame(self, where: dict[str, tuple[float, float, float]],
              events: tuple[Event, ...] = ()) -> list[Ruling]:
        rows = np.zeros((len(where), 9))
        for k, (angle, radius, speed) in enumerate(where.values()):
            rows[k, :5] = (radius * math.cos(angle), radius * math.sin(angle),
                           angle + math.pi / 2.0, speed, 0.0)
        self.metrics.update(self.time, dict(zip(where, rows[:, :2].tolist(), strict=True)),
                            xy=rows[:, :2])
        rulings = self.stewards.observe(self.time, where, rows, events)
        self.time += PERIOD
        return rulings


def drive(circle: Circle, seconds: float, path, events_at=None) -> list[Ruling]:
    """``path(t)`` gives every car's (angle, radius, speed) at time t since the start."""
    rulings = []
    start = circle.time
    for k in range(round(seconds / PERIOD)):
        t = circle.time - start
        events = events_at(k) if events_at else ()
        rulings += circle.frame(path(t), events)
    return rulings


LANE = RADIUS - 0.5  # a line 0.5 m inside the centerline, on the track
CUT = 1.2  # [rad] of the circle a cut skips, on a straight chord between two points of LANE


def cutting(speed: float = 4.0, lane: float = LANE, start: float = 0.5):
    """One car round the circle at ``speed`` on ``lane``, from ``start`` s on a straight chord
    across ``CUT`` radians of the infield (a corner cut), then on round."""
    chord = 2.0 * lane * math.sin(CUT / 2.0)

    def path(t: float) -> dict[str, tuple[float, float, float]]:
        if t < start:
            return {'ego': (speed * t / lane, lane, speed)}
        if t > start + chord / speed:
            rest = t - start - chord / speed
            return {'ego': (speed * start / lane + CUT + speed * rest / lane, lane, speed)}
        a = speed * start / lane
        along = speed * (t - start) / chord  # 0..1 along the chord
        x0, y0 = lane * math.cos(a), lane * math.sin(a)
        x1, y1 = lane * math.cos(a + CUT), lane * math.sin(a + CUT)
        x, y = x0 + along * (x1 - x0), y0 + along * (y1 - y0)
        return {'ego': (math.atan2(y, x), math.hypot(x, y), speed)}
    return path


def expected_gain(speed: float = 4.0, lane: float = LANE) -> float:
    """What the cut saves on the inner edge between where the chord crosses it."""
    closest = lane * math.cos(CUT / 2.0)
    edge = RADIUS - HALF_WIDTH
    half = math.acos(closest / edge)
    return (edge * 2.0 * half - 2.0 * math.sqrt(edge**2 - closest**2)) / speed


def test_one_car_on_the_track_gives_no_ruling_and_keeps_no_history():
    circle = Circle(('ego',))
    assert circle.stewards._history.shape[0] == 0
    assert drive(circle, 8.0, cutting(start=100.0)) == []  # round on its lane, no cut
    assert circle.metrics.status('ego').time_off_track == 0.0
    assert circle.stewards.records['ego'].rulings == []


def test_cutting_the_inside_gains_time_warned_twice_then_penalised():
    circle = Circle(('ego',))
    rulings = []
    for _ in range(4):
        rulings += drive(circle, 7.0, cutting())
    assert [r.rule for r in rulings] == [TRACK_LIMITS] * 4
    assert [r.verdict for r in rulings] == [WARNING, WARNING, TIME_PENALTY, TIME_PENALTY]
    assert all(r.kind == RULING and r.car == 'ego' for r in rulings)
    gained = float(rulings[0].detail.split('gained ')[1].split(' s')[0])
    assert gained == pytest.approx(expected_gain(), abs=0.02)  # about 0.28 s
    assert rulings[2].detail.startswith('time_penalty +5 s (track_limits): ego gained')
    assert circle.stewards.penalty_s('ego') == 10.0


def test_running_wide_loses_time_and_is_not_penalised():
    circle = Circle(('ego',))

    def wide(t: float) -> dict[str, tuple[float, float, float]]:
        out = 1.6 * math.sin(math.pi * min(t, 2.0) / 2.0)  # out to 0.6 m beyond the edge
        return {'ego': (4.0 * t / RADIUS, RADIUS + out, 4.0)}

    assert drive(circle, 3.0, wide) == []
    assert circle.metrics.status('ego').time_off_track > 1.0


def test_a_placement_voids_the_excursion():
    circle = Circle(('ego',))
    path = cutting()
    drive(circle, 3.0, path)  # off the track, half-way across the cut
    assert circle.metrics.status('ego').off_track
    circle.stewards.void(['ego'])
    assert drive(circle, 5.0, lambda t: path(t + 3.0)) == []


def test_the_ladder_disqualifies_after_repeated_penalties():
    rules = StewardSettings(disqualify_after=2, track_limits=TrackLimitsSettings(warnings=0))
    circle = Circle(('ego',), rules)
    rulings = drive(circle, 7.0, cutting()) + drive(circle, 7.0, cutting())
    assert [r.verdict for r in rulings] == [TIME_PENALTY, TIME_PENALTY, DISQUALIFIED]
    assert rulings[-1].rule == 'repeated_offences'
    assert circle.stewards.records['ego'].disqualified
    circle.stewards.restart('ego')
    assert not circle.stewards.records['ego'].disqualified


def test_a_car_moving_over_forces_the_car_alongside_off_the_track():
    circle = Circle(('atk', 'vic'))
    speed = 4.0

    def path(t: float) -> dict[str, tuple[float, float, float]]:
        angle = speed * t / RADIUS
        # both level; from 0.5 s atk (inside) moves outwards 0.8 m over 0.5 s, vic with it
        move = min(max(t - 0.5, 0.0) / 0.5, 1.0) * 0.8
        return {'atk': (angle, RADIUS - 0.5 + move, speed),
                'vic': (angle, RADIUS + 0.4 + move, speed)}

    rulings = drive(circle, 1.5, path)
    assert [(r.rule, r.verdict, r.car, r.other) for r in rulings] == [
        (FORCING_OFF_TRACK, TIME_PENALTY, 'atk', 'vic')]


def test_a_contact_reported_both_ways_is_judged_once():
    circle = Circle(('a', 'b'))

    def path(t: float) -> dict[str, tuple[float, float, float]]:
        return {'a': (4.0 * t / RADIUS, RADIUS, 4.0),
                'b': ((4.0 * t + LENGTH) / RADIUS, RADIUS, 1.0)}

    both = (Event('a', COLLISION, 'a touched b', 'b'), Event('b', COLLISION, 'b touched a', 'a'))
    rulings = drive(circle, 1.2, path, lambda k: both if k == 45 else ())
    assert [(r.rule, r.verdict, r.car, r.other) for r in rulings] == [
        (REAR_END, TIME_PENALTY, 'a', 'b')]
    assert '3.00 m/s closing speed' in rulings[0].detail


def test_barrier_contacts_are_not_incidents():
    circle = Circle(('a', 'b'))
    wall = (Event('a', COLLISION, 'a touched a barrier', 'barrier'),)
    assert drive(circle, 0.5, lambda t: {'a': (0.0, RADIUS, 0.0), 'b': (1.0, RADIUS, 0.0)},
                 lambda k: wall) == []
