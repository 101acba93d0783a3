"""Run every benchmark and print one line per figure: ``BENCH <name> <value> <unit>``.

Each benchmark module exposes ``run() -> list[(name, value, unit)]``; a failing benchmark is
reported on stderr and the others still run.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
MODULES = ('bench_rtf', 'bench_cars', 'bench_dynamics', 'bench_tracks', 'bench_sensors',
           'bench_gym', 'bench_soak', 'bench_view', 'bench_record', 'bench_ground_truth',
           'bench_generate', 'bench_unity_host', 'bench_fs', 'bench_odometry')


def main() -> int:
    sys.path.insert(0, str(BENCH_DIR))
    sys.path.insert(0, str(BENCH_DIR.parent / 'tests'))
    failed = 0
    for name in MODULES:
        try:
            figures = importlib.import_module(name).run()
        except Exception:  # noqa: BLE001 - report and carry on with the other benchmarks
            traceback.print_exc()
            print(f'[bench] {name} failed', file=sys.stderr)
            failed += 1
            continue
        for figure, value, unit in figures:
            print(f'BENCH {figure} {value:.4g} {unit}', flush=True)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
