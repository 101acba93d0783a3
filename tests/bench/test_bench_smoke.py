"""Every benchmark module runs whole in smoke mode and prints every row it declares.

Each module runs as ``python3 bench/<module>.py --smoke`` in its own process, as ``make bench``
would run it, only with the fewest frames, steps and runs; the values are never judged, only
that every declared row is printed once with a finite number and its unit, and nothing else.
Rows that need something optional that is missing here are skipped with the reason.
"""

from __future__ import annotations

import importlib
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / 'bench'
sys.path.insert(0, str(BENCH))

from benchkit import (  # noqa: E402
    F1TENTH_GYM_ENV,
    REQUIREMENTS,
    SMOKE_ENV,
    Row,
    check,
    missing,
    unavailable,
)
from run_all import MODULES  # noqa: E402

#: Per module, generous: a module that starts many simulations on a loaded 2-core machine.
TIMEOUT_S = 900
TABLE_ROW = re.compile(r'^\| `([^`]+)` \| `([^`]+)` \|', re.MULTILINE)


def declared(module: str) -> tuple[Row, ...]:
    return tuple(importlib.import_module(module).ROWS)


def parse(stdout: str) -> list[tuple[str, float, str]]:
    figures = []
    for line in stdout.splitlines():
        if line.startswith('BENCH '):
            _, name, value, unit = line.split()
            figures.append((name, float(value), unit))
    return figures


@pytest.mark.bench_smoke
@pytest.mark.timeout(TIMEOUT_S + 60)
@pytest.mark.parametrize('module', MODULES)
def test_module_prints_every_declared_row_in_smoke_mode(module: str, tmp_path: Path) -> None:
    rows = declared(module)
    skipped = unavailable(rows)
    if len(skipped) == len(rows):
        pytest.skip(f'{module}: {sorted(set(skipped.values()))[0]}')
    env = {**os.environ, SMOKE_ENV: '1'}
    done = subprocess.run([sys.executable, str(BENCH / f'{module}.py'), '--smoke'], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT_S,
                          check=False)
    figures = parse(done.stdout)
    problems = check(rows, figures)
    assert not problems and done.returncode == 0, (
        f'{module} --smoke (exit status {done.returncode}): {problems}\n'
        f'{done.stdout}\n{done.stderr[-6000:]}')
    printed = {name: unit for name, _, unit in figures}
    for row in rows:
        if row.name not in skipped:
            assert printed.get(row.name) == row.unit
    assert all(math.isfinite(value) for _, value, _ in figures)


def test_every_bench_module_is_run_by_make_bench() -> None:
    """A new bench_*.py that run_all.py does not list would never run, nor be smoke-tested."""
    assert sorted(p.stem for p in BENCH.glob('bench_*.py')) == sorted(MODULES)


def test_readme_lists_every_declared_row_with_its_unit() -> None:
    listed = dict(TABLE_ROW.findall((BENCH / 'README.md').read_text()))
    rows = {row.name: row.unit for module in MODULES for row in declared(module)}
    assert {name: listed.get(name) for name in rows} == rows
    assert sorted(set(listed) - set(rows)) == [], 'the README lists rows no module declares'


def test_every_requirement_a_row_names_exists() -> None:
    for module in MODULES:
        for row in declared(module):
            assert set(row.needs) <= set(REQUIREMENTS), (module, row)
            missing(row.needs)  # each check runs without raising


def test_check_names_what_is_wrong(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(F1TENTH_GYM_ENV, raising=False)
    rows = (Row('a', 's'), Row('b', 'Hz'), Row('c', 'x', ('f1tenth_gym',)))
    assert check(rows, [('a', 1.0, 's'), ('b', 2.0, 'Hz')]) == []  # c needs what is missing
    problems = check(rows, [('a', math.nan, 's'), ('b', 2.0, 'ms'), ('z', 1.0, 's'),
                            ('a', 1.0, 's')])
    assert 'a: value nan is not a finite number' in problems
    assert "b: unit 'ms', declared 'Hz'" in problems
    assert 'z: printed but not declared' in problems
    assert 'a: printed twice' in problems
    assert check(rows[:2], [('a', 1.0, 's')]) == ['b: declared but not printed']
