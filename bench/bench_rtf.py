"""Real-time factor of the default scenario in synchronous mode.

One F1TENTH car, LiDAR at 40 Hz, physics at 200 Hz, as fast as the machine allows; the figure
counts only scans that a subscriber in another process actually received: sim time spanned by
the received scans divided by the wall time it took.

- ``rtf_default_sync``: nobody drives; after one driver timeout the bridge stops waiting for a
  driver, so this is the simulator alone.
- ``rtf_default_sync_with_driver``: a follow-the-gap driver in its own process answers every
  scan, and the bridge waits for each answer (``wait_for_drivers``): the figure a user with a
  real stack sees.
- ``rtf_node_processes_sync`` and ``rtf_node_processes_sync_with_driver``: the same with
  ``simulation.one_process: false`` (a process per node and one for the backend; the default
  hosts every node in one process).
- ``pss_default_run_mib`` and ``pss_node_processes_run_mib``: the memory of the run without a
  driver, the proportional set size (shared pages split between the processes that map them)
  summed over every process the launcher started and the launcher itself, the highest of the
  samples taken each second while the scans are counted.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent / 'tests'))

from benchkit import Row, main, simulation_pace, sized, take_smoke_flag  # noqa: E402
from simharness import Simulation, driver_process, ros_env, stop_process  # noqa: E402

ROWS = (Row('rtf_default_sync', 'x_realtime'), Row('rtf_default_sync_with_driver', 'x_realtime'),
        Row('pss_default_run_mib', 'MiB'), Row('rtf_node_processes_sync', 'x_realtime'),
        Row('rtf_node_processes_sync_with_driver', 'x_realtime'),
        Row('pss_node_processes_run_mib', 'MiB'))  # in the order run() measures them
NODE_PROCESSES = {'simulation': {'one_process': False}}
PSS_PERIOD_S = 1.0
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
        sim = Simulation(Path(tmp), settings, pace=simulation_pace())
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


def session_pss_kib(sim: Simulation) -> int:
    """The PSS of every process in the simulation's session (the launcher and all it
    started), in KiB; a process that ends meanwhile counts nothing."""
    total = 0
    for pid in sim.session_processes():
        try:
            rollup = Path(f'/proc/{pid}/smaps_rollup').read_text()
        except OSError:
            continue
        total += sum(int(line.split()[1]) for line in rollup.splitlines()
                     if line.startswith('Pss:'))
    return total


def pss_watcher(peak: list[int]) -> Callable[[Simulation], AbstractContextManager[None]]:
    """A watcher for ``measure_rtf`` that samples the session's PSS every ``PSS_PERIOD_S``
    while the scans are counted, into ``peak``."""
    @contextmanager
    def watch(sim: Simulation) -> Iterator[None]:
        done = threading.Event()

        def sample() -> None:
            while not done.wait(PSS_PERIOD_S):
                peak.append(session_pss_kib(sim))

        thread = threading.Thread(target=sample, daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()

    return watch


def run() -> list[tuple[str, float, str]]:
    rows = []
    for name, settings in (('default', None), ('node_processes', NODE_PROCESSES)):
        peak: list[int] = []
        rtf, result = measure_rtf(settings, watcher=pss_watcher(peak))
        print(f'[bench] rtf_{name}_sync: {result}', file=sys.stderr)
        with_driver, result = measure_rtf(settings, driver=True)
        print(f'[bench] rtf_{name}_sync_with_driver: {result}', file=sys.stderr)
        if not peak:
            msg = f'no PSS sample of the {name} run: it ended before the first'
            raise RuntimeError(msg)
        rows += [(f'rtf_{name}_sync', rtf, 'x_realtime'),
                 (f'rtf_{name}_sync_with_driver', with_driver, 'x_realtime'),
                 (f'pss_{name}_run_mib', max(peak) / 1024, 'MiB')]
    return rows


if __name__ == '__main__':
    take_smoke_flag()
    sys.exit(main(run, ROWS))
