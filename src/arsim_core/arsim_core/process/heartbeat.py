"""Signs of life that a launcher watches, so that a process which lives on but stops working
(its loop blocked for good, or stopped with SIGSTOP) ends the run as surely as one that exits.

A launcher gives each process it starts a file, named in ``ARSIM_HEARTBEAT_FILE``. The process
touches it from the loop that does its work (``beat``), at most every ``PERIOD_S``; a thread
that works on its own beats a file of its own beside it (``<file>.<thread>``), so a stuck
receive thread shows even while the main loop runs. The launcher reads how long ago the
stalest of them was touched (``silence``). Without the variable nothing is written.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

Key = TypeVar('Key')

ENV = 'ARSIM_HEARTBEAT_FILE'
PERIOD_S = 0.5


class Heartbeat:
    """Touches one file, at most every ``PERIOD_S``."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._next = 0.0

    @classmethod
    def from_environment(cls, thread: str = '') -> Heartbeat:
        """The process's heartbeat (``thread`` empty: its main loop), or a silent one when no
        launcher asked for it."""
        given = os.environ.get(ENV)
        if not given:
            return cls(None)
        return cls(Path(f'{given}.{thread}' if thread else given))

    def beat(self) -> None:
        if self.path is None:
            return
        now = time.monotonic()
        if now < self._next:
            return
        self._next = now + PERIOD_S
        try:
            self.path.touch()
        except OSError:
            self.path = None  # the launcher's folder is gone: it is stopping us anyway


_process = Heartbeat(None)


def start() -> None:
    """Make this process's main loop beat the launcher's file (call before the loop)."""
    global _process
    _process = Heartbeat.from_environment()


def beat() -> None:
    """A sign of life from the main loop (cheap: a clock read between touches)."""
    _process.beat()


@contextmanager
def beating() -> Iterator[None]:
    """Beat from a thread while the main loop is held up by work known to be long (compiling
    a backend's kernels for a new scene can take seconds in one C call). SIGSTOP still
    silences the process, as it stops every thread; a caller that may hang for good inside
    must have another watch on it (the bridge waits for a backend's Ready only
    ``backend.startup_timeout_s``)."""
    done = threading.Event()

    def keep_beating() -> None:
        while not done.wait(PERIOD_S / 2):
            _process.beat()

    thread = threading.Thread(target=keep_beating, name='heartbeat', daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def silence(path: Path) -> float | None:
    """Seconds since the stalest of ``path`` and its threads' files was touched, or None
    before the process's first beat."""
    now = time.time()
    ages = []
    for file in (path, *path.parent.glob(f'{path.name}.*')):
        try:
            ages.append(now - file.stat().st_mtime)
        except FileNotFoundError:
            continue
    return max(ages) if ages else None


def first_silent(files: Iterable[tuple[Key, Path]],
                 timeout_s: float) -> tuple[Key, float] | None:
    """The first of ``files`` (a process's key and its heartbeat file) silent for longer than
    ``timeout_s``, and for how long: what both launchers watch for."""
    for key, path in files:
        seconds = silence(path)
        if seconds is not None and seconds > timeout_s:
            return key, seconds
    return None
