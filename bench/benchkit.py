"""What every benchmark module shares: its declared rows, the smoke mode and the row printer.

Each module declares the rows it prints in ``ROWS`` (name, unit and, for rows that need
something optional, what they need); ``run_all.py``, the smoke test (tests/bench) and the
README's table are all checked against those declarations, so a row that is renamed, dropped
or never printed is caught.

Smoke mode (``ARSIM_BENCH_SMOKE=1``, or ``--smoke`` on ``run_all.py`` or on any module run as a
script) runs every row with the fewest frames, steps and runs that still go through the same
code: the values are meaningless, the point is that every row is printed with a number.
"""

from __future__ import annotations

import importlib.util
import math
import os
import shutil
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
SHARED_TRACKS = REPO.parent / 'shared' / 'tracks'
SMOKE_ENV = 'ARSIM_BENCH_SMOKE'
SMOKE_PACE = 2.0  # x real time
F1TENTH_GYM_ENV = 'ARSIM_F1TENTH_GYM_PYTHON'

Figure = tuple[str, float, str]
T = TypeVar('T')


@dataclass(frozen=True)
class Row:
    """One declared figure: ``BENCH <name> <value> <unit>``; ``needs`` names keys of
    ``REQUIREMENTS`` when the row is only printed where those are present."""

    name: str
    unit: str
    needs: tuple[str, ...] = ()


def _tracks() -> str | None:
    return None if SHARED_TRACKS.is_dir() else f'real track data not found at {SHARED_TRACKS}'


def _module(name: str, hint: str) -> Callable[[], str | None]:
    def check() -> str | None:
        return None if importlib.util.find_spec(name) else f'Python module {name} missing ({hint})'

    return check


def _f1tenth_gym() -> str | None:
    python = os.environ.get(F1TENTH_GYM_ENV, '')
    if not python:
        return (f'{F1TENTH_GYM_ENV} is not set (an interpreter with f1tenth_gym v1.0: '
                'bench/f1tenth_gym_baseline.py says how to install it)')
    if not os.access(python, os.X_OK):
        return f'{F1TENTH_GYM_ENV}={python} is not an executable'
    return None


def _mono() -> str | None:
    missing = [tool for tool in ('mono', 'mcs') if shutil.which(tool) is None]
    return (f'{" and ".join(missing)} not found (tools/setup.sh --mono installs Mono)'
            if missing else None)


def _chromium() -> str | None:
    chromium, driver = Path('/usr/bin/chromium'), Path('/usr/bin/chromedriver')
    if chromium.exists() and driver.exists():
        return None
    return f'no {chromium} and {driver} (tools/setup.sh --test installs them as root)'


#: What optional rows need: each check returns why it is missing, or None when present.
REQUIREMENTS: dict[str, Callable[[], str | None]] = {
    'tracks': _tracks,
    'kiss_icp': _module('kiss_icp', 'pip install -r tools/requirements-test.txt'),
    'f1tenth_gym': _f1tenth_gym,
    'mono': _mono,
    'chromium': _chromium,
}


def missing(needs: str | Iterable[str]) -> str | None:
    """Why rows needing ``needs`` (one key of ``REQUIREMENTS`` or several) cannot run here,
    or None when they can."""
    for need in (needs,) if isinstance(needs, str) else needs:
        reason = REQUIREMENTS[need]()
        if reason:
            return reason
    return None


def unavailable(rows: Iterable[Row]) -> dict[str, str]:
    """Row name -> why it cannot run here, for the rows whose requirement is missing."""
    out = {}
    for row in rows:
        reason = missing(row.needs)
        if reason:
            out[row.name] = reason
    return out


def skip_reason(module: str, needs: str) -> str | None:
    """Report on stderr, once per call, that ``module``'s rows needing ``needs`` are skipped;
    the reason, or None when they can run."""
    reason = missing(needs)
    if reason:
        print(f'[bench] {module}: rows needing {needs} skipped: {reason}', file=sys.stderr,
              flush=True)
    return reason


def smoke() -> bool:
    """Whether this run is a smoke run (``ARSIM_BENCH_SMOKE`` set to anything but 0/empty)."""
    return os.environ.get(SMOKE_ENV, '') not in ('', '0')


def sized(normal: T, smoke_value: T) -> T:
    """``smoke_value`` in a smoke run, else ``normal``."""
    return smoke_value if smoke() else normal


def simulation_pace() -> float | None:
    """The real_time_factor of a benchmark's simulation: sim.yaml's (as fast as possible), but
    twice real time in a smoke run, whose figures are never judged: unpaced, each simulation
    took whole cores of the suite while its subscriber started."""
    return sized(None, SMOKE_PACE)


def check(rows: Sequence[Row], figures: Sequence[Figure]) -> list[str]:
    """What is wrong with ``figures`` against the declared ``rows``: undeclared or repeated
    names, wrong units, values that are not finite numbers, and declared rows missing (unless
    their requirement is missing here)."""
    declared = {row.name: row for row in rows}
    problems = []
    seen: set[str] = set()
    for name, value, unit in figures:
        row = declared.get(name)
        if row is None:
            problems.append(f'{name}: printed but not declared')
        elif unit != row.unit:
            problems.append(f'{name}: unit {unit!r}, declared {row.unit!r}')
        if name in seen:
            problems.append(f'{name}: printed twice')
        seen.add(name)
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            problems.append(f'{name}: value {value!r} is not a finite number')
    skipped = unavailable(rows)
    problems += [f'{row.name}: declared but not printed' for row in rows
                 if row.name not in seen and row.name not in skipped]
    return problems


def line(figure: Figure) -> str:
    name, value, unit = figure
    return f'BENCH {name} {value:.4g} {unit}'


def take_smoke_flag(argv: Sequence[str] | None = None) -> list[str]:
    """``argv`` (default the command line's) without ``--smoke``, which turns smoke mode on."""
    args = list(sys.argv[1:] if argv is None else argv)
    if '--smoke' in args:
        os.environ[SMOKE_ENV] = '1'
        args = [arg for arg in args if arg != '--smoke']
    return args


def main(run: Callable[[], Sequence[Figure]], rows: Sequence[Row]) -> int:
    """A module run as a script (after ``take_smoke_flag``): every figure printed, then every
    problem against ``rows`` on stderr, with exit status 1."""
    figures = run()
    for figure in figures:
        print(line(figure), flush=True)
    problems = check(rows, figures)
    for problem in problems:
        print(f'[bench] {problem}', file=sys.stderr, flush=True)
    return 1 if problems else 0
