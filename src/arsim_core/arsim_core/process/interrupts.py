"""Main-thread work that a KeyboardInterrupt would leave half done (rclpy dispatching callbacks,
numba compiling a kernel). While it runs, arsim's stop handlers (``entrypoints.stop_on_signals``
and the nodes' own) only note a stop signal, and the process's main loop acts on the note.

Kept apart from the signal handling so that the lowest modules (``arsim_core._jit``) can mark
such work without importing the entry points."""

from __future__ import annotations

_holds = 0  # how deep the main thread is in work an interrupt must not cut


def hold_interrupts() -> None:
    """Until ``release_interrupts``, a stop signal is only noted, never raised: for main-thread
    work an exception would leave half done (numba, for one, leaves a kernel it was compiling
    broken: "no compiled object yet"). Holds nest."""
    global _holds
    _holds += 1


def release_interrupts() -> None:
    """Leave what ``hold_interrupts`` entered."""
    global _holds
    _holds -= 1


def interrupts_are_held() -> bool:
    return _holds > 0
