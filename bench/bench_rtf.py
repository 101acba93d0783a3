"""Real-time factor of the default scenario in synchronous mode.

One F1TENTH car, LiDAR at 40 Hz, physics at 200 Hz, as fast as the machine allows; the figure
counts only scans that a subscriber in another process actually received: sim time spanned by
the received scans divided by the wall time it took.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent / 'tests'))

from simharness import Simulation, ros_env  # noqa: E402

MEASURE_S = 20.0
SUBSCRIBER = BENCH_DIR / 'scan_counter.py'


def measure_rtf(settings: dict | None = None, topics: tuple[str, ...] = ('/scan',),
                measure_s: float = MEASURE_S) -> tuple[float, dict]:
    """Start a simulation and a counting subscriber; return the RTF seen by the subscriber."""
    with tempfile.TemporaryDirectory(prefix='arsim-bench-') as tmp:
        sim = Simulation(Path(tmp), settings)
        sim.start()
        try:
            counter = subprocess.run(
                [sys.executable, str(SUBSCRIBER), '--seconds', str(measure_s), *topics],
                env=ros_env(sim.domain_id), capture_output=True, text=True,
                timeout=measure_s + 120)
            if counter.returncode != 0:
                msg = f'subscriber failed: {counter.stderr}\n{sim.log}'
                raise RuntimeError(msg)
            result = json.loads(counter.stdout.strip().splitlines()[-1])
        finally:
            sim.stop()
    return result['rtf'], result


def run() -> list[tuple[str, float, str]]:
    rtf, result = measure_rtf()
    print(f'[bench] rtf_default_sync: {result}', file=sys.stderr)
    return [('rtf_default_sync', rtf, 'x_realtime')]


if __name__ == '__main__':
    for name, value, unit in run():
        print(f'BENCH {name} {value:.4g} {unit}')
