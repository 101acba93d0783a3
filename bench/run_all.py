"""Run every benchmark and print one line per figure: ``BENCH <name> <value> <unit>``.

Each benchmark module exposes ``run() -> list[(name, value, unit)]`` and declares the rows it
prints in ``ROWS`` (benchkit.Row); a failing benchmark, or one whose figures do not match its
declared rows, is reported on stderr, the others still run, and the exit status is 1.
``--smoke`` runs every benchmark in smoke mode (benchkit): every row, with meaningless values.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
MODULES = ('bench_rtf', 'bench_cars', 'bench_dynamics', 'bench_tracks', 'bench_sensors',
           'bench_gym', 'bench_soak', 'bench_view', 'bench_record', 'bench_ground_truth',
           'bench_generate', 'bench_unity_host', 'bench_fs', 'bench_odometry', 'bench_fit',
           'bench_camera_model', 'bench_weather', 'bench_clips', 'bench_race', 'bench_scan')


def main() -> int:
    sys.path.insert(0, str(BENCH_DIR))
    sys.path.insert(0, str(BENCH_DIR.parent / 'tests'))
    from benchkit import check, line, take_smoke_flag

    take_smoke_flag()
    failed = 0
    for name in MODULES:
        try:
            module = importlib.import_module(name)
            figures = module.run()
        except Exception:  # noqa: BLE001 - report and carry on with the other benchmarks
            traceback.print_exc()
            print(f'[bench] {name} failed', file=sys.stderr)
            failed += 1
            continue
        for figure in figures:
            print(line(figure), flush=True)
        problems = check(module.ROWS, figures)
        for problem in problems:
            print(f'[bench] {name}: {problem}', file=sys.stderr, flush=True)
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
