"""Log lines that outside input can cause, bounded in length and rate.

A peer that sends malformed requests, a web page that sends bad commands, a client that misbehaves:
each deserves a line in the log, but not one per message at full rate, and not with everything it
sent quoted. A :class:`LogLimit` lets a burst of lines through, then one per ``period_s``, each
clipped to ``max_chars``; the next line it lets through says how many it held back, so nothing
goes missing without a count.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

MAX_LOG_CHARS = 300  # of one line caused by outside input
BURST = 10  # lines let through at once before the rate applies
PERIOD_S = 1.0  # between two lines after a burst


def clip(text: str, max_chars: int = MAX_LOG_CHARS) -> str:
    """``text`` cut to ``max_chars``, saying how long it was."""
    if len(text) <= max_chars:
        return text
    return f'{text[:max_chars]}... ({len(text)} characters)'


class LogLimit:
    """A token bucket of log lines; thread-safe.

    :meth:`admit` returns the line to log (clipped, with the count of lines held back since the
    last one admitted) or None to drop it.
    """

    def __init__(self, burst: int = BURST, period_s: float = PERIOD_S,
                 max_chars: int = MAX_LOG_CHARS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if burst < 1 or not period_s > 0.0 or max_chars < 1:
            msg = (f'expected burst >= 1, period_s > 0 and max_chars >= 1, got {burst}, '
                   f'{period_s} and {max_chars}')
            raise ValueError(msg)
        self.burst, self.period_s, self.max_chars = burst, period_s, max_chars
        self._clock = clock
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._last = clock()
        self._held = 0  # lines dropped since the last one admitted
        self.suppressed = 0  # lines dropped in all

    def admit(self, text: str) -> str | None:
        """The line to log for ``text``, or None while over the rate."""
        with self._lock:
            now = self._clock()
            self._tokens = min(float(self.burst),
                               self._tokens + (now - self._last) / self.period_s)
            self._last = now
            if self._tokens < 1.0:
                self._held += 1
                self.suppressed += 1
                return None
            self._tokens -= 1.0
            held, self._held = self._held, 0
        line = clip(text, self.max_chars)
        return f'{line} ({held} similar lines suppressed)' if held else line
