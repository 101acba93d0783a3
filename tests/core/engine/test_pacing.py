"""Pacing: the real-time factor kept against a clock, pause and single steps, changes that
take effect at the next frame without sim time racing to catch up, and a loop waiting in
``pace`` woken at once by any change."""

from __future__ import annotations

import math
import threading

import pytest

from arsim_core.engine.pacing import MAX_RTF, MAX_STEPS, MAX_WAIT_S, MIN_RTF, Pacing

FRAME_NS = 25_000_000


class FakeTime:
    """A wall clock that moves only when slept on or told to."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def wall() -> FakeTime:
    return FakeTime()


def test_the_real_time_factor_is_kept_from_the_first_paced_frame(wall):
    pacing = Pacing(2.0, clock=lambda: wall.now, sleep=wall.sleep)
    pacing.pace(FRAME_NS)  # anchors
    wall.now += 0.002  # the frame's work took 2 ms
    pacing.pace(2 * FRAME_NS)
    assert wall.slept == [pytest.approx(FRAME_NS / 1e9 / 2.0 - 0.002)]


def test_as_fast_as_possible_never_sleeps(wall):
    pacing = Pacing(0.0, clock=lambda: wall.now, sleep=wall.sleep)
    for k in range(1, 50):
        pacing.pace(k * FRAME_NS)
    assert wall.slept == []


def test_after_a_pause_the_loop_does_not_race_to_make_up_the_lost_time(wall):
    pacing = Pacing(1.0, clock=lambda: wall.now, sleep=wall.sleep)
    pacing.pace(FRAME_NS)
    pacing.pace(2 * FRAME_NS)
    pacing.pause()
    assert not pacing.may_step()
    wall.now += 30.0  # paused for half a minute
    pacing.play()
    assert pacing.may_step()
    wall.slept.clear()
    pacing.pace(3 * FRAME_NS)  # anchors again: no sleep, no burst
    pacing.pace(4 * FRAME_NS)
    assert wall.slept == [pytest.approx(FRAME_NS / 1e9)]


def test_steps_run_while_paused_and_add_up(wall):
    pacing = Pacing(1.0, clock=lambda: wall.now, sleep=wall.sleep)
    pacing.step()  # from running: pauses, one frame to go
    assert pacing.status() == (True, 1.0, 1)
    pacing.step(3)
    assert pacing.status().pending_steps == 4
    for k in range(4):
        assert pacing.may_step()
        pacing.pace((k + 1) * FRAME_NS)
    assert not pacing.may_step() and wall.slept == []  # single steps do not wait
    pacing.pause()
    assert pacing.status() == (True, 1.0, 0)


def test_a_new_factor_counts_from_the_next_frame(wall):
    pacing = Pacing(1.0, clock=lambda: wall.now, sleep=wall.sleep)
    pacing.pace(FRAME_NS)
    pacing.set_real_time_factor(10.0)
    pacing.pace(2 * FRAME_NS)
    pacing.pace(3 * FRAME_NS)
    assert wall.slept == [pytest.approx(FRAME_NS / 1e9 / 10.0)]


@pytest.mark.parametrize('value', [-1.0, math.nan, math.inf, -math.inf, 'fast', None, True,
                                   [1.0], 1e-300, 1e300, MIN_RTF / 2, MAX_RTF * 2,
                                   pytest.param(10**4000, id='a huge integer')])
def test_a_factor_that_is_no_factor_or_out_of_range_is_refused_and_changes_nothing(value):
    pacing = Pacing(3.0)
    with pytest.raises(ValueError, match=f'real-time factor of 0 .* or a number from {MIN_RTF} to '
                                         f'{MAX_RTF}'):
        pacing.set_real_time_factor(value)
    assert pacing.status().real_time_factor == 3.0


def test_a_refused_factor_is_quoted_clipped():
    with pytest.raises(ValueError) as refused:
        Pacing().set_real_time_factor('x' * 4000)
    assert len(str(refused.value)) < 200


@pytest.mark.parametrize('value', [0, 0.0, MIN_RTF, 1, MAX_RTF])
def test_the_ends_of_the_range_and_as_fast_as_possible_are_taken(value):
    pacing = Pacing()
    pacing.set_real_time_factor(value)
    assert pacing.status().real_time_factor == value


def test_the_first_factor_is_checked_as_any_other():
    with pytest.raises(ValueError, match='real-time factor'):
        Pacing(1e-300)


def test_a_wait_is_bounded_and_the_pace_is_kept_from_there(wall):
    """However far ahead a frame's sim time lies, one call waits at most MAX_WAIT_S, and the
    next frame is paced from there instead of rushing to catch up."""
    pacing = Pacing(MIN_RTF, clock=lambda: wall.now, sleep=wall.sleep)
    pacing.pace(0)
    pacing.pace(3600 * 10**9)  # an hour of sim time: 100 hours of wall time at MIN_RTF
    pacing.pace(3600 * 10**9 + 1_000_000)  # a millisecond later: 0.1 s
    assert wall.slept == [pytest.approx(MAX_WAIT_S), pytest.approx(0.1)]


def _waiting_in_pace(pacing: Pacing) -> threading.Thread:
    """A loop in its own thread, in a frame whose wait would take far longer than any test."""
    pacing.pace(0)  # anchors
    loop = threading.Thread(target=pacing.pace, args=(10**9,), daemon=True)  # 100 s at 0.01
    loop.start()
    loop.join(0.2)
    assert loop.is_alive()  # waiting (a slow machine only makes this likelier)
    return loop


@pytest.mark.parametrize('change', [
    lambda pacing: pacing.pause(),
    lambda pacing: pacing.play(),
    lambda pacing: pacing.step(),
    lambda pacing: pacing.set_real_time_factor(1.0),
    lambda pacing: pacing.set_real_time_factor(0.0),
], ids=['pause', 'play', 'step', 'new factor', 'as fast as possible'])
def test_any_change_wakes_a_loop_waiting_in_pace(change):
    pacing = Pacing(MIN_RTF)
    loop = _waiting_in_pace(pacing)
    change(pacing)
    loop.join(MAX_WAIT_S / 2)  # generous: a woken loop returns in microseconds
    assert not loop.is_alive()


def test_a_loop_waits_on_while_nothing_changes():
    pacing = Pacing(MIN_RTF)
    loop = _waiting_in_pace(pacing)
    pacing.status()  # reading the pacing is no change
    loop.join(0.3)
    assert loop.is_alive()
    pacing.pause()
    loop.join(MAX_WAIT_S)
    assert not loop.is_alive()


@pytest.mark.parametrize('frames', [0, -1, MAX_STEPS + 1])
def test_a_step_count_out_of_range_is_refused(frames):
    with pytest.raises(ValueError, match='frames to step'):
        Pacing().step(frames)
