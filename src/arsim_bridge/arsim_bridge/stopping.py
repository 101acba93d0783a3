"""SIGINT and SIGTERM as a request to stop, delivered only where stopping is safe.

rclpy's own signal handler shuts the ROS context down at once, from inside the signal handler,
while callbacks and receive threads may still be publishing; they then fail with
``publisher's context is invalid``. Here a signal instead raises KeyboardInterrupt in the main
thread, but never inside a ROS callback: while an executor dispatches (or numba compiles, see
``arsim_core.process.interrupts.hold_interrupts``), the request is only noted and raised once
``spin_once`` returns. The context is shut down last, after every node (and its threads) is
gone.

A worker thread that dies of an unexpected exception stops its process the same way, and the
process then exits non-zero with the thread's one-line error.
"""

from __future__ import annotations

import _thread
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType

from rclpy.executors import Executor
from rclpy.node import Node

from arsim_core.process import heartbeat
from arsim_core.process.entrypoints import quiet_lost_interrupts
from arsim_core.process.interrupts import (
    hold_interrupts,
    interrupts_are_held,
    release_interrupts,
)


@dataclass
class _State:
    requested: bool = False
    failure: str | None = None  # why a worker thread stopped the process


_state = _State()


def _on_signal(signum: int, frame: FrameType | None) -> None:
    first = not _state.requested
    _state.requested = True
    if first and not interrupts_are_held():
        raise KeyboardInterrupt


def install() -> None:
    """Route SIGINT and SIGTERM to the stop request (main thread only, before rclpy.init), and
    let ``spin_once`` beat the launcher's heartbeat (``arsim_core.process.heartbeat``)."""
    _state.requested, _state.failure = False, None
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)
    quiet_lost_interrupts()  # a lost KeyboardInterrupt: spin_once raises the request again
    heartbeat.start()


def shutting_down() -> None:
    """From now on a signal is only noted: the process is already on its way out."""
    _state.requested = True


def requested() -> bool:
    return _state.requested


def failure() -> str | None:
    return _state.failure


def spin_once(executor: Executor, timeout_sec: float) -> None:
    """``executor.spin_once`` that raises a pending stop request after it, not inside a
    callback. The main loop of every node process turns here: a sign of life."""
    heartbeat.beat()
    hold_interrupts()
    try:
        executor.spin_once(timeout_sec=timeout_sec)
    finally:
        release_interrupts()
    if _state.requested:
        raise KeyboardInterrupt


def start_worker(node: Node, target: Callable[[], None], name: str) -> threading.Thread:
    """Run ``target`` in a daemon thread; if it raises, log one fatal line and stop the
    process, which then exits non-zero, instead of living on without the thread."""
    def run() -> None:
        try:
            target()
        except Exception as exc:  # noqa: BLE001 - any death of the thread ends the process
            _state.failure = f'{name} thread failed: {type(exc).__name__}: {exc}'
            node.get_logger().fatal(_state.failure)
            _thread.interrupt_main(signal.SIGINT)  # as Ctrl-C: the main thread winds down

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread
