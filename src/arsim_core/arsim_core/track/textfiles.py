"""A track's plain text files: numeric CSV rows in, lines out, for the track's CSV formats
(``csvio``) and the Formula Student missions alike. Imports nothing of the track, so the track
model may name a mission without an import cycle."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from arsim_core.errors import TrackError


def write_lines(path: Path, lines: list[str], what: str) -> Path:
    """Write ``lines`` to ``path`` (its folder made if needed); a failure is a TrackError
    naming the file and ``what`` it was to hold."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('\n'.join(lines) + '\n', encoding='utf-8')
    except OSError as exc:
        msg = f'{path}: cannot write {what}: {exc}'
        raise TrackError(msg) from exc
    return path


@dataclass(frozen=True)
class CsvTable:
    """Numeric rows of a CSV file and the 1-based file line each row came from."""

    values: np.ndarray
    lines: tuple[int, ...]


def read_numeric_csv(path: Path, columns: int, what: str) -> CsvTable:
    """Read a comma- or semicolon-separated numeric file with exactly ``columns`` columns.

    Lines starting with ``#`` and blank lines are skipped; anything else must be numbers.
    Raises one ``TrackError`` naming the file and line of the first bad row.
    """
    try:
        text = Path(path).read_text(encoding='utf-8')
    except (OSError, UnicodeDecodeError) as exc:
        msg = f'{path}: cannot read {what}: {exc}'
        raise TrackError(msg) from exc
    rows: list[list[float]] = []
    lines: list[int] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith('#'):
            continue
        sep = ';' if ';' in line else ','
        cells = [c.strip() for c in line.split(sep)]
        if len(cells) != columns:
            msg = (
                f'{path}:{lineno}: {what} needs {columns} columns, found {len(cells)}: '
                f'{line[:80]!r}'
            )
            raise TrackError(msg)
        try:
            row = [float(c) for c in cells]
        except ValueError as exc:
            msg = f'{path}:{lineno}: {what} has a value that is not a number: {line[:80]!r}'
            raise TrackError(msg) from exc
        if not all(math.isfinite(v) for v in row):
            msg = f'{path}:{lineno}: {what} has NaN or infinite values: {line[:80]!r}'
            raise TrackError(msg)
        rows.append(row)
        lines.append(lineno)
    if not rows:
        msg = f'{path}: {what} has no data rows'
        raise TrackError(msg)
    return CsvTable(np.asarray(rows, dtype=float), tuple(lines))
