"""Pacing: the real-time factor kept against a clock, pause and single steps, and changes that
take effect at the next frame without sim time racing to catch up."""

from __future__ import annotations

import math

import pytest

from arsim_core.engine.pacing import MAX_STEPS, Pacing

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


@pytest.mark.parametrize('value', [-1.0, math.nan, math.inf, 'fast', None, True])
def test_a_factor_that_is_no_factor_is_refused_and_changes_nothing(value):
    pacing = Pacing(3.0)
    with pytest.raises(ValueError, match='real-time factor >= 0'):
        pacing.set_real_time_factor(value)
    assert pacing.status().real_time_factor == 3.0


@pytest.mark.parametrize('frames', [0, -1, MAX_STEPS + 1])
def test_a_step_count_out_of_range_is_refused(frames):
    with pytest.raises(ValueError, match='frames to step'):
        Pacing().step(frames)
