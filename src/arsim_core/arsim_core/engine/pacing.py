"""How fast sim time runs against the wall clock: the real-time factor, pause and single steps.

A stepping loop asks :meth:`Pacing.may_step` before each frame and calls :meth:`Pacing.pace`
in it; anything else (a live view's buttons, in its own thread) may change the pacing at any
moment. A change takes effect at the next frame: sim time is never rewound or skipped. A loop
waiting in :meth:`Pacing.pace` is woken by any change at once, so a pause or a faster factor
never waits for a slow frame to end, and no frame waits longer than ``MAX_WAIT_S``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import NamedTuple

from arsim_core.config.scenario import (
    MAX_REAL_TIME_FACTOR,
    MIN_REAL_TIME_FACTOR,
    REAL_TIME_FACTORS,
    is_real_time_factor,
)
from arsim_core.log_limit import clip

MAX_STEPS = 10_000  # steps one request may ask for (a step button pressed, or a typed number)
# The real-time factors a loop keeps, 0 aside (as fast as possible): those a scenario may set.
MIN_RTF = MIN_REAL_TIME_FACTOR
MAX_RTF = MAX_REAL_TIME_FACTOR
# The longest one frame waits: a frame whose pace asks for more (a slow frame rate at the
# smallest factor) runs after MAX_WAIT_S and the pace goes on from there, so the loop still
# turns often enough to notice a stop.
MAX_WAIT_S = 3.0


class PacingStatus(NamedTuple):
    paused: bool
    real_time_factor: float  # 0: as fast as the machine allows
    pending_steps: int  # frames still to run while paused


class Pacing:
    """Real-time pacing and the pause/step/speed controls of one stepping loop; thread-safe.

    The pace is anchored at the frame after each change, so after a pause or a new factor the
    loop neither races to catch up nor sleeps for time it lost.
    """

    def __init__(self, real_time_factor: float = 0.0,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], object] | None = None) -> None:
        """``sleep`` (for tests) replaces the wait that any change cuts short."""
        self._lock = threading.Condition()  # notified on every change
        self._clock = clock
        self._sleep = sleep or self._lock.wait
        self._rtf = _checked_rtf(real_time_factor)
        self._paused = False
        self._steps = 0
        self._anchor: tuple[float, int] | None = None  # (wall time [s], sim time [ns])
        self._changes = 0  # counts the changes, for a waiting loop to see one

    # --- controls (any thread) ---------------------------------------------------------------
    def pause(self) -> None:
        with self._lock:
            self._paused, self._steps = True, 0
            self._changed()

    def play(self) -> None:
        with self._lock:
            self._paused, self._steps, self._anchor = False, 0, None
            self._changed()

    def step(self, frames: int = 1) -> None:
        """Pause (if running) and run ``frames`` more frames."""
        if not 1 <= frames <= MAX_STEPS:
            msg = f'expected 1 to {MAX_STEPS} frames to step, got {frames}'
            raise ValueError(msg)
        with self._lock:
            self._steps = self._steps + frames if self._paused else frames
            self._paused = True
            self._changed()

    def set_real_time_factor(self, real_time_factor: float) -> None:
        """0 runs as fast as the machine allows; else from MIN_RTF to MAX_RTF, or ValueError."""
        rtf = _checked_rtf(real_time_factor)
        with self._lock:
            self._rtf, self._anchor = rtf, None
            self._changed()

    def _changed(self) -> None:
        """Wake a loop waiting in :meth:`pace` (called holding the lock)."""
        self._changes += 1
        self._lock.notify_all()

    def status(self) -> PacingStatus:
        with self._lock:
            return PacingStatus(self._paused, self._rtf, self._steps)

    # --- the loop's side -------------------------------------------------------------------
    def may_step(self) -> bool:
        """Whether the loop may run its next frame now."""
        with self._lock:
            return not self._paused or self._steps > 0

    def pace(self, now_ns: int) -> None:
        """Called in the frame at sim time ``now_ns``: counts a step taken while paused and
        waits as long as the real-time factor asks, at most MAX_WAIT_S, or until a change."""
        with self._lock:
            if self._paused:
                self._steps = max(self._steps - 1, 0)
                self._anchor = None
                return
            if self._anchor is None or self._rtf <= 0.0:
                self._anchor = (self._clock(), now_ns)
                return
            wall, sim = self._anchor
            due = wall + (now_ns - sim) / 1e9 / self._rtf
            latest = self._clock() + MAX_WAIT_S
            if due > latest:  # the next frame is paced from when this one runs
                due, self._anchor = latest, (latest, now_ns)
            changes = self._changes
            while self._changes == changes:
                delay = due - self._clock()
                if delay <= 0.0:
                    break
                self._sleep(delay)


def _checked_rtf(value: object) -> float:
    """``value`` as a real-time factor: 0, or a number from MIN_RTF to MAX_RTF (NaN is
    neither; a huge integer compares exactly, never overflowing a float)."""
    if is_real_time_factor(value):
        return float(value)
    try:
        shown = clip(repr(value), 40)
    except ValueError:  # an integer of more digits than Python prints
        shown = 'a huge integer'
    msg = f'expected a real-time factor of {REAL_TIME_FACTORS}, got {shown}'
    raise ValueError(msg)
