"""Console entry points that a stop request during start-up ends quietly.

A node imports rclpy, NumPy, OpenCV and numba for a second or more before its own signal
handling is in place, and a Ctrl-C (or a launcher's SIGINT) in that window printed a
KeyboardInterrupt traceback from deep inside an import. ``run`` first makes SIGINT and SIGTERM
end the process at once with status 0, a clean stop (nothing has started that needs undoing),
then imports the program and hands the signals back to it. The pip launcher starts arsim's
processes with both signals blocked, so one that arrives while the interpreter itself starts
waits until this handler is in place.

``stop_on_signals`` is the handling a long-running arsim process without rclpy (the embedded
backend, the pip launcher) then installs for itself.

Those handlers leave main-thread work that ``interrupts.hold_interrupts`` marks uncut: they only
note the signal, and the process's main loop acts on the note.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import NoReturn

from arsim_core.process.interrupts import interrupts_are_held

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


NUMBA_SWITCH = 'ARSIM_NUMBA'  # read by arsim_core._jit as it is imported


def run(module: str, function: str = 'main', *, steps_cars: bool = True) -> NoReturn:
    """Import ``module`` quietly stoppable, then exit with what its ``function`` returns.
    A program that never steps a car (``steps_cars=False``) gets arsim's kernels uncompiled."""
    with quietly_stoppable():
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        if not steps_cars:
            import_kernels_uncompiled()
        main = getattr(importlib.import_module(module), function)
    sys.exit(main())


def import_kernels_uncompiled() -> None:
    """Import ``arsim_core._jit`` with ``ARSIM_NUMBA=0``, so that this process's kernels stay
    plain Python: for a program that only reads configuration and never steps a car (the
    launcher, a car's description), importing numba was a third of its start-up, paid at every
    run. The processes it starts get the environment as it was."""
    given = os.environ.get(NUMBA_SWITCH)
    os.environ[NUMBA_SWITCH] = '0'
    try:
        importlib.import_module('arsim_core._jit')
    finally:
        if given is None:
            del os.environ[NUMBA_SWITCH]
        else:
            os.environ[NUMBA_SWITCH] = given


@contextlib.contextmanager
def quietly_stoppable() -> Iterator[None]:
    """Within the block SIGINT and SIGTERM end the process at once with status 0: for start-up
    work before anything needs undoing, such as the imports of a container's nodes."""
    previous = {sig: signal.signal(sig, _exit_quietly) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def backend() -> None:
    """The embedded backend's console script."""
    run('arsim_core.backend.server')


def stop_on_signals() -> threading.Event:
    """From now on SIGINT and SIGTERM set the returned event and raise KeyboardInterrupt in
    the main thread. The exception cuts long work short; the event makes the stop certain, as
    Python drops an exception raised while a ``__del__`` method runs (printing only "Exception
    ignored in"): a process that relied on the exception alone ran on after Ctrl-C until its
    launcher killed it. Its main loop must therefore also end when the event is set."""
    requested = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        requested.set()
        if not interrupts_are_held():
            raise KeyboardInterrupt

    for sig in STOP_SIGNALS:
        signal.signal(sig, on_signal)
    quiet_lost_interrupts()
    return requested


def quiet_lost_interrupts() -> None:
    """A KeyboardInterrupt that Python drops (raised while a ``__del__`` method runs) prints
    nothing: the process keeps the stop request elsewhere and stops all the same, so the
    traceback Python would print is noise. Any other dropped exception is printed as before."""
    sys.unraisablehook = _print_unless_interrupt


def _print_unless_interrupt(unraisable: sys.UnraisableHookArgs) -> None:
    if not isinstance(unraisable.exc_value, KeyboardInterrupt):
        sys.__unraisablehook__(unraisable)


def _exit_quietly(signum: int, frame: FrameType | None) -> None:
    os._exit(0)
