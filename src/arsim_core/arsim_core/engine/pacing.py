"""How fast sim time runs against the wall clock: the real-time factor, pause and single steps.

A stepping loop asks :meth:`Pacing.may_step` before each frame and calls :meth:`Pacing.pace`
in it; anything else (a live view's buttons, in its own thread) may change the pacing at any
moment. A change takes effect at the next frame: sim time is never rewound or skipped.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import NamedTuple

MAX_STEPS = 10_000  # steps one request may ask for (a step button pressed, or a typed number)


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
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._lock = threading.Lock()
        self._clock, self._sleep = clock, sleep
        self._rtf = _checked_rtf(real_time_factor)
        self._paused = False
        self._steps = 0
        self._anchor: tuple[float, int] | None = None  # (wall time [s], sim time [ns])

    # --- controls (any thread) ---------------------------------------------------------------
    def pause(self) -> None:
        with self._lock:
            self._paused, self._steps = True, 0

    def play(self) -> None:
        with self._lock:
            self._paused, self._steps, self._anchor = False, 0, None

    def step(self, frames: int = 1) -> None:
        """Pause (if running) and run ``frames`` more frames."""
        if not 1 <= frames <= MAX_STEPS:
            msg = f'expected 1 to {MAX_STEPS} frames to step, got {frames}'
            raise ValueError(msg)
        with self._lock:
            self._steps = self._steps + frames if self._paused else frames
            self._paused = True

    def set_real_time_factor(self, real_time_factor: float) -> None:
        """0 runs as fast as the machine allows."""
        rtf = _checked_rtf(real_time_factor)
        with self._lock:
            self._rtf, self._anchor = rtf, None

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
        sleeps as long as the real-time factor asks."""
        with self._lock:
            if self._paused:
                self._steps = max(self._steps - 1, 0)
                self._anchor = None
                return
            if self._anchor is None or self._rtf <= 0.0:
                self._anchor = (self._clock(), now_ns)
                return
            wall, sim = self._anchor
            delay = wall + (now_ns - sim) / 1e9 / self._rtf - self._clock()
        if delay > 0.0:
            self._sleep(delay)


def _checked_rtf(value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value < 0.0:
        msg = f'expected a real-time factor >= 0 (0: as fast as possible), got {value!r}'
        raise ValueError(msg)
    return float(value)
