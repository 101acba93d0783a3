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
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent / 'tests'))

from benchkit import Row, main, sized, take_smoke_flag  # noqa: E402
from simharness import Simulation, driver_process, ros_env, stop_process  # noqa: E402

ROWS = (Row('rtf_default_sync', 'x_realtime'), Row('rtf_default_sync_with_driver', 'x_realtime'))
MEASURE_S = 20.0
WARMUP_S = 2.0
#: Longest the subscriber may wait for the first message on every topic (simulation start-up).
START_TIMEOUT_S = 180.0
SUBSCRIBER = BENCH_DIR / 'scan_counter.py'
DRIVER = BENCH_DIR.parent / 'tests' / 'drivers' / 'follow_the_gap.py'


def measure_rtf(settings: dict | None = None, topics: tuple[str, ...] = ('/scan',),
                measure_s: float | None = None, driver: bool = False,
                watcher: Callable[[Simulation], AbstractContextManager[object]] | None = None,
                ) -> tuple[float, dict]:
    """Start a simulation and a counting subscriber (and, with ``driver``, a follow-the-gap
    driver on /scan -> /drive; with ``watcher``, whatever it starts for the simulation, such
    as a browser on its page, before counting begins); return the RTF the subscriber saw.
    ``measure_s`` defaults to ``MEASURE_S`` (a second in a smoke run)."""
    measure_s = measure_s if measure_s is not None else sized(MEASURE_S, 1.0)
    warmup_s = sized(WARMUP_S, 0.2)
    with tempfile.TemporaryDirectory(prefix='arsim-bench-') as tmp, ExitStack() as stack:
        sim = Simulation(Path(tmp), settings)
        sim.start()
        drivers = [driver_process(DRIVER, sim.domain_id)] if driver else []
        try:
            if watcher is not None:
                stack.enter_context(watcher(sim))
            result = count_scans(sim, topics, measure_s, warmup_s)
        finally:
            for process in drivers:
                stop_process(process)
            sim.stop()
    return result['rtf'], result


def count_scans(sim: Simulation, topics: tuple[str, ...], measure_s: float,
                warmup_s: float) -> dict:
    """The scan counter's JSON result on ``topics`` of the running ``sim``; an error with both
    logs when the counter fails or the simulation ends first (instead of waiting for scans
    that will never come)."""
    with tempfile.TemporaryFile('w+') as out, tempfile.TemporaryFile('w+') as err:
        counter = subprocess.Popen(
            [sys.executable, str(SUBSCRIBER), '--seconds', str(measure_s), '--warmup',
             str(warmup_s), '--start-timeout', str(START_TIMEOUT_S), *topics],
            env=ros_env(sim.domain_id), stdout=out, stderr=err, text=True)
        try:
            while counter.poll() is None and sim.process.poll() is None:
                time.sleep(0.2)
        finally:
            stop_process(counter)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if counter.returncode != 0 or not stdout.strip():
        ended = sim.process.poll()
        why = (f'the simulation ended (exit status {ended}) before the subscriber was done'
               if ended is not None else f'the subscriber failed (exit status '
               f'{counter.returncode})')
        msg = f'{why}: {stdout}{stderr}\n{sim.log}'
        raise RuntimeError(msg)
    return json.loads(stdout.strip().splitlines()[-1])


def run() -> list[tuple[str, float, str]]:
    rtf, result = measure_rtf()
    print(f'[bench] rtf_default_sync: {result}', file=sys.stderr)
    with_driver, result = measure_rtf(driver=True)
    print(f'[bench] rtf_default_sync_with_driver: {result}', file=sys.stderr)
    return [('rtf_default_sync', rtf, 'x_realtime'),
            ('rtf_default_sync_with_driver', with_driver, 'x_realtime')]


if __name__ == '__main__':
    take_smoke_flag()
    sys.exit(main(run, ROWS))
