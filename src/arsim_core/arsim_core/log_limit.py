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


class TokenBucket:
    """A burst of ``burst`` events, then one per ``period_s``: what a peer may do at most;
    thread-safe."""

    def __init__(self, burst: int = BURST, period_s: float = PERIOD_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if burst < 1 or not period_s > 0.0:
            msg = f'expected burst >= 1 and period_s > 0, got {burst} and {period_s}'
            raise ValueError(msg)
        self.burst, self.period_s = burst, period_s
        self._clock = clock
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._last = clock()

    def take(self) -> bool:
        """Whether one more event is allowed now (and it is counted)."""
        with self._lock:
            now = self._clock()
            self._tokens = min(float(self.burst),
                               self._tokens + (now - self._last) / self.period_s)
            self._last = now
            if self._tokens < 1.0:
                return False
            self._tokens -= 1.0
            return True


class LogLimit:
    """Log lines through a :class:`TokenBucket`; thread-safe.

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
        self.max_chars = max_chars
        self._bucket = TokenBucket(burst, period_s, clock)
        self._lock = threading.Lock()
        self._held = 0  # lines dropped since the last one admitted
        self.suppressed = 0  # lines dropped in all

    def admit(self, text: str) -> str | None:
        """The line to log for ``text``, or None while over the rate."""
        with self._lock:
            if not self._bucket.take():
                self._held += 1
                self.suppressed += 1
                return None
            held, self._held = self._held, 0
        line = clip(text, self.max_chars)
        return f'{line} ({held} similar lines suppressed)' if held else line
