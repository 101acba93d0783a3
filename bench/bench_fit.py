"""How long ``arsim-fit`` takes: ``fit_seconds``, the wall time of the command (process start
included) on a 60 s calibration drive recorded at 40 Hz from arsim (tests/fit: a car whose
actuators, limits and tyres differ from config/cars/f1tenth.yaml, the profile the fit starts
from), until the fitted profile, the report and the randomisation file are written.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(REPO / 'tests'))

from benchkit import Row, main, sized, take_smoke_flag  # noqa: E402
from fit.calibration_drive import hidden_profile, record  # noqa: E402

DURATION_S = 60.0
ROWS = (Row('fit_seconds', 's'),)


def run() -> list[tuple[str, float, str]]:
    duration_s = sized(DURATION_S, 5.0)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        record(folder / 'drive', hidden_profile(folder), duration_s)
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, '-m', 'arsim_launch.fit_cli', str(folder / 'drive'), '--profile',
             str(REPO / 'config' / 'cars' / 'f1tenth.yaml'), '-o', str(folder / 'fitted.yaml'),
             '--report', str(folder / 'report.html'), '--quiet'],
            capture_output=True, text=True, check=False)
        elapsed = time.monotonic() - started
        if done.returncode != 0:
            raise RuntimeError(done.stdout + done.stderr)
    print(f'[bench_fit] {duration_s:g} s drive: {done.stdout.strip()}', file=sys.stderr)
    return [('fit_seconds', elapsed, 's')]


if __name__ == '__main__':
    take_smoke_flag()
    sys.exit(main(run, ROWS))
