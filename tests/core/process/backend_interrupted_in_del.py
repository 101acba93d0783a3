"""The embedded backend, where a stop signal comes while a ``__del__`` method runs in the middle
of each request, as one once came during numba's compiler: Python drops the KeyboardInterrupt
the handler raises there (printing "Exception ignored in"), and the backend must stop anyway."""

from __future__ import annotations

import signal
import sys

from arsim_core.backend import server
from arsim_core.protocol import framing


class _SignalledWhileCollected:
    def __del__(self) -> None:
        signal.raise_signal(signal.SIGINT)  # the handler runs here, and its exception is lost


class BackendInterruptedInDel(server.EmbeddedBackend):
    def handle(self, message: framing.Message) -> server.Frames:
        _SignalledWhileCollected()  # collected at once
        return super().handle(message)


if __name__ == '__main__':
    server.EmbeddedBackend = BackendInterruptedInDel  # type: ignore[misc]
    sys.exit(server.main())
