"""Console entry points that a stop request during start-up ends quietly.

A node imports rclpy, NumPy, OpenCV and numba for a second or more before its own signal
handling is in place, and a Ctrl-C (or a launcher's SIGINT) in that window printed a
KeyboardInterrupt traceback from deep inside an import. ``run`` first makes SIGINT and SIGTERM
end the process at once with status 0, a clean stop (nothing has started that needs undoing),
then imports the program and hands the signals back to it. The pip launcher starts arsim's
processes with both signals blocked, so one that arrives while the interpreter itself starts
waits until this handler is in place.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from types import FrameType
from typing import NoReturn

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def run(module: str, function: str = 'main') -> NoReturn:
    """Import ``module`` quietly stoppable, then exit with what its ``function`` returns."""
    previous = {sig: signal.signal(sig, _exit_quietly) for sig in STOP_SIGNALS}
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    main = getattr(importlib.import_module(module), function)
    for sig, handler in previous.items():
        signal.signal(sig, handler)
    sys.exit(main())


def backend() -> None:
    """The embedded backend's console script."""
    run('arsim_core.backend.server')


def _exit_quietly(signum: int, frame: FrameType | None) -> None:
    os._exit(0)
