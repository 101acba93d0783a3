"""The children's output, passed through to the runner's own and remembered line by line.

The runner reads every child's stdout and stderr through pipes, one thread for all of them,
and writes each chunk on unchanged to its own stdout or stderr, so the terminal shows what it
would show without the runner in between; the last lines of each child are kept for the
message that names a child that failed (``arsim_launch.failures``).
"""

from __future__ import annotations

import os
import selectors
import threading
import time
from typing import IO, Any

from arsim_launch.failures import LastLines

CHUNK = 65536


class OutputPump:
    """Copies children's pipes to ``(stdout, stderr)`` file descriptors in one thread, which
    ``start`` starts: a runner starts it once its children are started, because a fork while
    another thread runs can leave the child deadlocked in ``preexec_fn`` before it execs (a
    lock that thread held stays locked in the child)."""

    def __init__(self, out_fd: int = 1, err_fd: int = 2) -> None:
        self._targets = (out_fd, err_fd)
        self._selector = selectors.DefaultSelector()
        self._lock = threading.Lock()
        self._open = 0
        self._open_of: dict[str, int] = {}
        self._wake_r, self._wake_w = os.pipe()
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self.last: dict[str, LastLines] = {}
        self._thread = threading.Thread(target=self._run, name='output', daemon=True)

    def start(self) -> None:
        if self._thread.ident is None:
            self._thread.start()

    def add(self, name: str, stdout: IO[bytes], stderr: IO[bytes]) -> None:
        """Start passing on the pipes of the child called ``name``."""
        last = self.last.setdefault(name, LastLines())
        with self._lock:
            for pipe, target in zip((stdout, stderr), self._targets, strict=True):
                os.set_blocking(pipe.fileno(), False)
                self._selector.register(pipe, selectors.EVENT_READ, (target, last, name))
                self._open += 1
                self._open_of[name] = self._open_of.get(name, 0) + 1
        os.write(self._wake_w, b'.')  # the thread picks up the new pipes at once

    def lines(self, name: str, timeout_s: float = 1.0) -> list[str]:
        """The last lines of child ``name``, once what it printed before it exited is read
        (or ``timeout_s`` passed)."""
        deadline = time.monotonic() + timeout_s
        while self._open_of.get(name) and time.monotonic() < deadline:
            time.sleep(0.01)
        last = self.last.get(name)
        return last.last() if last is not None else []

    def drain(self, timeout_s: float = 1.0) -> None:
        """Wait (briefly) until every pipe is at its end: the children have all exited, and
        what they printed last must reach the terminal before the runner's own last words."""
        self.start()  # a start cut short by a signal never started it
        self._thread.join(timeout_s)

    def _run(self) -> None:
        while True:
            with self._lock:
                if self._open == 0 and self.last:
                    break
            for key, _ in self._selector.select(timeout=0.5):
                if key.data is None:
                    os.read(self._wake_r, CHUNK)
                    continue
                self._pass_on(key)
        self._selector.close()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def _pass_on(self, key: selectors.SelectorKey) -> None:
        target, last, name = key.data
        try:
            chunk = os.read(key.fd, CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b''
        if not chunk:
            with self._lock:
                self._selector.unregister(key.fileobj)
                self._open -= 1
                self._open_of[name] -= 1
            pipe: Any = key.fileobj  # the IO[bytes] registered in ``add``
            pipe.close()
            return
        last.feed(chunk)
        view = memoryview(chunk)
        while view:
            try:
                view = view[os.write(target, view):]
            except BlockingIOError:
                continue
            except OSError:
                break  # the runner's own output is gone; keep draining the child
