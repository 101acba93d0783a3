"""A stop signal that comes while numba compiles a kernel in the main thread, as one came
during a simulation's first steps: it must be noted, not raised there, or numba leaves the
kernel broken and the process ends with its traceback ("no compiled object yet")."""

from __future__ import annotations

import signal
import sys
import threading

from numba.core import event

from arsim_core._jit import kernel
from arsim_core.process.entrypoints import stop_on_signals


class SignalWhenCompiling(event.Listener):  # type: ignore[misc]
    def on_start(self, ev: event.Event) -> None:
        if threading.current_thread() is threading.main_thread():
            signal.raise_signal(signal.SIGINT)  # the handler runs here, inside the compile

    def on_end(self, ev: event.Event) -> None:
        pass


@kernel
def triple(value: float) -> float:
    return 3.0 * value


if __name__ == '__main__':
    stop = stop_on_signals()
    event.register('numba:compiler_lock', SignalWhenCompiling())
    print(f'triple(14.0) = {triple(14.0)}; stop requested: {stop.is_set()}')
    sys.exit(0)
