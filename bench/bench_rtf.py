"""Real-time factor of the default scenario in synchronous mode.

One F1TENTH car, LiDAR at 40 Hz, physics at 200 Hz, as fast as the machine allows; the figure
counts only scans that a subscriber in another process actually received: sim time spanned by
the received scans divided by the wall time it took.

- ``rtf_default_sync``: nobody drives; after one driver timeout the bridge stops waiting for a
  driver, so this is the simulator alone.
- ``rtf_default_sync_with_driver``: a follow-the-gap driver in its own process answers every
  scan, and the bridge waits for each answer (``wait_for_drivers``): the figure a user with a
  real stack sees.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent / 'tests'))

from simharness import Simulation, driver_process, ros_env, stop_process  # noqa: E402

MEASURE_S = 20.0
SUBSCRIBER = BENCH_DIR / 'scan_counter.py'
DRIVER = BENCH_DIR.parent / 'tests' / 'drivers' / 'follow_the_gap.py'


def measure_rtf(settings: dict | None = None, topics: tuple[str, ...] = ('/scan',),
                measure_s: float = MEASURE_S, driver: bool = False,
                watcher: Callable[[Simulation], AbstractContextManager[object]] | None = None,
                ) -> tuple[float, dict]:
    """Start a simulation and a counting subscriber (and, with ``driver``, a follow-the-gap
    driver on /scan -> /drive; with ``watcher``, whatever it starts for the simulation, such
    as a browser on its page, before counting begins); return the RTF the subscriber saw."""
    with tempfile.TemporaryDirectory(prefix='arsim-bench-') as tmp, ExitStack() as stack:
        sim = Simulation(Path(tmp), settings)
        sim.start()
        drivers = [driver_process(DRIVER, sim.domain_id)] if driver else []
        try:
            if watcher is not None:
                stack.enter_context(watcher(sim))
            counter = subprocess.run(
                [sys.executable, str(SUBSCRIBER), '--seconds', str(measure_s), *topics],
                env=ros_env(sim.domain_id), capture_output=True, text=True,
                timeout=measure_s + 120)
            if counter.returncode != 0:
                msg = f'subscriber failed: {counter.stderr}\n{sim.log}'
                raise RuntimeError(msg)
            result = json.loads(counter.stdout.strip().splitlines()[-1])
        finally:
            for process in drivers:
                stop_process(process)
            sim.stop()
    return result['rtf'], result


def run() -> list[tuple[str, float, str]]:
    rtf, result = measure_rtf()
    print(f'[bench] rtf_default_sync: {result}', file=sys.stderr)
    with_driver, result = measure_rtf(driver=True)
    print(f'[bench] rtf_default_sync_with_driver: {result}', file=sys.stderr)
    return [('rtf_default_sync', rtf, 'x_realtime'),
            ('rtf_default_sync_with_driver', with_driver, 'x_realtime')]


if __name__ == '__main__':
    for name, value, unit in run():
        print(f'BENCH {name} {value:.4g} {unit}')
