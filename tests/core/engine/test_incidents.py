"""The incident rules on constructed situations: two cars along a 100 m track, each given by
where it is along the centerline, its lateral offset and speed, now and a second earlier
(docs/race-control.md draws each one)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arsim_core.config.stewards import (
    DRIVE_THROUGH,
    NO_ACTION,
    TIME_PENALTY,
    WARNING,
    RearEndSettings,
    StewardSettings,
)
from arsim_core.engine.incidents import (
    DIVE_BOMB,
    FORCING_OFF_TRACK,
    REAR_END,
    SIDE_BY_SIDE,
    TRACK_LIMITS,
    UNSAFE_REJOIN,
    Along,
    Contact,
    TrackEdges,
    forcing_off_track,
    judge_contact,
    overlap,
    time_gained,
    track_limits,
)

L = 100.0  # track length [m]
LENGTH, WIDTH = 0.5, 0.3  # footprint [m]
RULES = StewardSettings()


def car(s: float, lateral: float = 0.0, speed: float = 3.0, off: bool = False) -> Along:
    return Along(s % L, lateral, speed, off, LENGTH, WIDTH)


def contact(now_a: Along, now_b: Along, before_a: Along | None = None,
            before_b: Along | None = None, off_a: float = math.inf,
            off_b: float = math.inf) -> Contact:
    return Contact('a', 'b', now_a, now_b, before_a, before_b, off_a, off_b, L)


# --- rear-end ---------------------------------------------------------------------------------
@pytest.mark.parametrize(('closing', 'verdict', 'fault'), [
    (3.0, TIME_PENALTY, 'a'),   # above penalty_speed 1.5 m/s
    (1.0, WARNING, 'a'),        # between warning_speed 0.5 and penalty_speed
    (0.2, NO_ACTION, None),     # a nudge
    (-1.0, NO_ACTION, None),    # the car ahead backed into it
])
def test_a_rear_end_blames_the_car_behind_by_closing_speed(closing, verdict, fault):
    # nose to tail: the centres one car length apart
    call = judge_contact(contact(car(10.0, speed=1.0 + closing), car(10.5, speed=1.0),
                                 car(7.0), car(7.5)), RULES)
    assert (call.rule, call.verdict, call.car) == (REAR_END, verdict, fault)


def test_a_rear_end_is_judged_the_same_with_the_cars_named_the_other_way():
    call = judge_contact(contact(car(10.5, speed=1.0), car(10.0, speed=4.0)), RULES)
    assert (call.rule, call.verdict, call.car) == (REAR_END, TIME_PENALTY, 'b')


def test_a_rear_end_across_the_start_line_still_finds_the_car_behind():
    call = judge_contact(contact(car(99.8, speed=4.0), car(0.3, speed=1.0)), RULES)
    assert (call.rule, call.car) == (REAR_END, 'a')


def test_rear_end_thresholds_come_from_the_settings():
    lenient = StewardSettings(rear_end=RearEndSettings(warning_speed=2.0, penalty_speed=5.0,
                                                       verdict=DRIVE_THROUGH))
    slow = contact(car(10.0, speed=4.0), car(10.5, speed=1.0))  # 3 m/s closing
    assert judge_contact(slow, lenient).verdict == WARNING
    fast = contact(car(10.0, speed=7.0), car(10.5, speed=1.0))
    assert judge_contact(fast, lenient).verdict == DRIVE_THROUGH


def test_overlap_is_in_lengths_of_the_car_behind():
    assert overlap(car(10.0), car(10.5), L) == pytest.approx(0.0)  # nose to tail
    assert overlap(car(10.0), car(10.0), L) == pytest.approx(1.0)  # level
    assert overlap(car(10.0), car(11.0), L) == pytest.approx(-1.0)  # a car length clear


def test_just_alongside_is_side_by_side_and_just_behind_a_rear_end():
    # the ambiguous edge: the car behind a third of its length level (overlap 0.3 limit)
    behind_more = contact(car(10.0, speed=4.0), car(10.5 - 0.29 * LENGTH, speed=1.0),
                          car(9.0), car(9.5))
    level_more = contact(car(10.0, speed=4.0), car(10.5 - 0.31 * LENGTH, speed=1.0),
                         car(9.0), car(9.5 - 0.31 * LENGTH))
    assert judge_contact(behind_more, RULES).rule == REAR_END
    assert judge_contact(level_more, RULES).rule == SIDE_BY_SIDE


# --- side by side -----------------------------------------------------------------------------
def test_side_by_side_without_a_lateral_move_is_a_racing_incident():
    call = judge_contact(contact(car(10.0, 0.15), car(10.1, -0.15),
                                 car(7.0, 0.15), car(7.1, -0.15)), RULES)
    assert (call.rule, call.verdict, call.car) == (SIDE_BY_SIDE, NO_ACTION, None)
    assert 'racing incident' in call.why


def test_side_by_side_the_car_that_moved_over_is_at_fault():
    # b came 0.25 m (0.83 widths) across into a, a held its line
    call = judge_contact(contact(car(10.0, 0.15), car(10.1, -0.15),
                                 car(7.0, 0.15), car(7.1, -0.40)), RULES)
    assert (call.rule, call.verdict, call.car) == (SIDE_BY_SIDE, TIME_PENALTY, 'b')


def test_side_by_side_both_moving_into_each_other_is_a_racing_incident():
    call = judge_contact(contact(car(10.0, 0.15), car(10.1, -0.15),
                                 car(7.0, 0.40), car(7.1, -0.40)), RULES)
    assert (call.rule, call.verdict, call.car) == (SIDE_BY_SIDE, NO_ACTION, None)


def test_side_by_side_both_moving_the_same_way_blames_the_one_that_closed_in():
    # both drift right; b (on the left) drifts farther, onto a: only b moved towards a
    call = judge_contact(contact(car(10.0, -0.3), car(10.1, 0.0),
                                 car(7.0, -0.2), car(7.1, 0.3)), RULES)
    assert (call.rule, call.car) == (SIDE_BY_SIDE, 'b')


def test_a_small_lateral_move_stays_below_the_threshold():
    # 0.1 m = 0.33 widths, under lateral_move 0.5
    call = judge_contact(contact(car(10.0, 0.15), car(10.1, -0.15),
                                 car(7.0, 0.15), car(7.1, -0.25)), RULES)
    assert call.verdict == NO_ACTION


def test_side_by_side_just_after_a_reset_has_no_history_and_blames_nobody():
    call = judge_contact(contact(car(10.0, 0.15), car(10.1, -0.15)), RULES)
    assert (call.rule, call.verdict) == (SIDE_BY_SIDE, NO_ACTION)


# --- dive-bomb --------------------------------------------------------------------------------
def test_a_lunge_from_far_behind_is_a_dive_bomb():
    # a second ago a was 1.5 car lengths clear behind b; now alongside on the inside
    gap = 1.5 * LENGTH + LENGTH  # centre to centre
    call = judge_contact(contact(car(10.0, 0.2, 6.0), car(10.1, -0.1, 3.0),
                                 car(7.0 - gap, 0.2), car(7.0, -0.1)), RULES)
    assert (call.rule, call.verdict, call.car) == (DIVE_BOMB, DRIVE_THROUGH, 'a')


def test_a_dive_bomb_is_judged_even_when_the_car_ahead_turned_in():
    # ambiguous: b turned in on a (a lateral move that alone would blame b), but a came from
    # two lengths back: the lunge decides
    gap = 2.0 * LENGTH + LENGTH
    call = judge_contact(contact(car(10.0, 0.2, 6.0), car(10.1, -0.1, 3.0),
                                 car(7.0 - gap, 0.2), car(7.0, -0.4)), RULES)
    assert (call.rule, call.car) == (DIVE_BOMB, 'a')


def test_a_car_close_behind_a_second_ago_did_not_dive_bomb():
    gap = 0.5 * LENGTH + LENGTH  # half a length clear: under dive_bomb.gap 1.0
    call = judge_contact(contact(car(10.0, 0.2, 6.0), car(10.1, -0.1, 3.0),
                                 car(7.0 - gap, 0.2), car(7.0, -0.1)), RULES)
    assert (call.rule, call.verdict) == (SIDE_BY_SIDE, NO_ACTION)


# --- unsafe rejoin ----------------------------------------------------------------------------
def test_rejoining_into_a_car_is_the_rejoining_cars_fault_even_when_hit_from_behind():
    # geometry of a rear-end by b, but a came back onto the track 0.4 s ago
    call = judge_contact(contact(car(10.5, speed=1.0), car(10.0, speed=4.0), off_a=0.4), RULES)
    assert (call.rule, call.verdict, call.car) == (UNSAFE_REJOIN, TIME_PENALTY, 'a')
    assert '0.40 s after rejoining' in call.why


def test_a_car_still_off_the_track_touching_one_on_it_is_at_fault():
    call = judge_contact(contact(car(10.0, -0.6, off=True), car(10.1, -0.3), off_a=0.0),
                         RULES)
    assert (call.rule, call.car) == (UNSAFE_REJOIN, 'a')
    assert 'still off the track' in call.why


def test_both_just_off_the_track_is_not_a_rejoin():
    call = judge_contact(contact(car(10.0, speed=4.0), car(10.5, speed=1.0), off_a=0.2,
                                 off_b=0.3), RULES)
    assert call.rule == REAR_END


# --- forcing off track ------------------------------------------------------------------------
def test_moving_over_onto_a_car_alongside_that_then_leaves_the_track_forces_it_off():
    # v ran on the right edge; f, level on its left, came 0.3 m (1 width) across
    now = {'f': car(10.0, -0.5), 'v': car(10.1, -1.05, off=True)}
    before = {'f': car(7.0, -0.2), 'v': car(7.1, -0.9)}
    call = forcing_off_track('v', now, before, L, RULES)
    assert call is not None
    assert (call.rule, call.verdict, call.car) == (FORCING_OFF_TRACK, TIME_PENALTY, 'f')


@pytest.mark.parametrize('case', ['not alongside', 'held its line', 'on the outside',
                                  'no history'])
def test_leaving_the_track_on_its_own_is_not_forcing(case):
    f_now, f_before = car(10.0, -0.5), car(7.0, -0.2)
    if case == 'not alongside':
        f_now, f_before = car(8.0, -0.5), car(5.0, -0.2)
    if case == 'held its line':
        f_before = car(7.0, -0.45)
    now = {'f': f_now, 'v': car(10.1, -1.05, off=True)}
    before: dict[str, Along | None] = {'f': f_before, 'v': car(7.1, -0.9)}
    if case == 'on the outside':  # f beyond v, towards the edge v left
        now['f'], before['f'] = car(10.0, -1.3, off=False), car(7.0, -1.0)
    if case == 'no history':
        before['f'] = None
    assert forcing_off_track('v', now, before, L, RULES) is None


# --- track limits -----------------------------------------------------------------------------
def test_time_gained_is_the_distance_saved_at_the_excursions_mean_speed():
    # the edge was 10 m, the car drove 8 m in 2 s (4 m/s): 2 m saved is 0.5 s
    assert time_gained(10.0, 8.0, 2.0) == pytest.approx(0.5)
    assert time_gained(10.0, 12.0, 2.0) < 0.0  # ran wide: lost time
    assert time_gained(10.0, 0.0, 2.0) == 0.0


def test_track_limits_warn_then_penalise():
    verdicts = [track_limits(0.5, 1.0, warned, RULES) for warned in range(4)]
    assert [call.verdict if call else None for call in verdicts] == [
        WARNING, WARNING, TIME_PENALTY, TIME_PENALTY]
    assert all(call is not None and call.rule == TRACK_LIMITS for call in verdicts)


def test_track_limits_ignore_small_gains_and_short_excursions():
    assert track_limits(0.05, 1.0, 0, RULES) is None  # under min_gain_s 0.1
    strict = StewardSettings(track_limits=type(RULES.track_limits)(min_time_s=0.5))
    assert track_limits(0.5, 0.3, 0, strict) is None
    assert track_limits(0.5, 0.6, 0, strict) is not None


def test_the_edges_of_a_circle_are_shorter_inside_and_longer_outside():
    radius, n = 10.0, 720
    theta = np.linspace(0.0, 2.0 * math.pi, n, endpoint=False)
    points = radius * np.column_stack([np.cos(theta), np.sin(theta)])  # anticlockwise
    s = radius * theta * (2.0 * math.sin(math.pi / n) / (2.0 * math.pi / n))
    length = float(np.hypot(*(np.roll(points, -1, axis=0) - points).T).sum())
    edges = TrackEdges(points, s, np.full(n, 1.0), np.full(n, 2.0), length)
    quarter = length / 4.0
    assert edges.distance(True, 0.0, 0.0, quarter, quarter) == pytest.approx(
        9.0 * math.pi / 2.0, rel=1e-3)  # left = inside of a left turn
    assert edges.distance(False, 0.0, 0.0, quarter, quarter) == pytest.approx(
        12.0 * math.pi / 2.0, rel=1e-3)
    # across the start line, a lap later
    s0, s1 = length - quarter / 2.0, quarter / 2.0
    assert edges.distance(True, s0, length + s0, s1, 2 * length + s1) == pytest.approx(
        9.0 * math.pi / 2.0, rel=1e-3)
