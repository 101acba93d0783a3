"""Reading and writing track CSV files (TUM centerlines, F1TENTH racelines).

Parsing is done line by line instead of with ``numpy.loadtxt`` so that every problem can be
reported with the file and the line number a user has to fix.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from arsim_core.errors import TrackError
from arsim_core.track import polylines
from arsim_core.track.model import (
    LABEL_CONE_BIG_ORANGE,
    LABEL_CONE_BLUE,
    LABEL_CONE_ORANGE,
    LABEL_CONE_YELLOW,
    Cones,
)
from arsim_core.track.textfiles import CsvTable, read_numeric_csv, write_lines

TUM_HEADER = '# x_m,y_m,w_tr_right_m,w_tr_left_m'
CONES_HEADER = '# x_m,y_m,class'
CONE_CLASSES = {
    'blue': LABEL_CONE_BLUE,
    'yellow': LABEL_CONE_YELLOW,
    'orange': LABEL_CONE_ORANGE,
    'big_orange': LABEL_CONE_BIG_ORANGE,
}
"""Cone class names of a cones CSV and their labels."""


def validate_closed_centerline(table: CsvTable, path: Path) -> CsvTable:
    """Check that a centerline table describes a closed, simple loop; drop a repeated end.

    A closed centerline may repeat its first point at the end (that copy is dropped). It is
    open when the gap from the last point back to the first is far longer than the other
    segments, and invalid when it crosses itself; both are reported with file and line.
    """
    values, lines = table.values, table.lines
    if values.shape[0] >= 2 and np.allclose(values[-1, :2], values[0, :2], atol=1e-9):
        values, lines = values[:-1], lines[:-1]
    if values.shape[0] < 3:
        msg = f'{path}: a centerline needs at least 3 points, found {values.shape[0]}'
        raise TrackError(msg)
    pts = values[:, :2]
    seg = np.hypot(*polylines.segments_closed(pts).T)
    zero = np.flatnonzero(seg[:-1] == 0.0)
    if zero.size:
        i = int(zero[0])
        msg = f'{path}:{lines[i + 1]}: centerline point repeats the previous one'
        raise TrackError(msg)
    gap, inner = seg[-1], seg[:-1]
    if gap > max(3.0 * float(np.median(inner)), 1.5 * float(inner.max())):
        msg = (
            f'{path}:{lines[-1]}: centerline is not closed: the last point is {gap:.3g} m from '
            f'the first (line {lines[0]}), segments are usually {np.median(inner):.3g} m'
        )
        raise TrackError(msg)
    crossings = polylines.self_intersections(pts, closed=True)
    if crossings:
        a, b = crossings[0]
        msg = (
            f'{path}:{lines[a]}: centerline intersects itself: the segment starting on line '
            f'{lines[a]} crosses the one starting on line {lines[b]}'
        )
        raise TrackError(msg)
    if any(w < 0 for w in values[:, 2:4].ravel()):
        bad = int(np.flatnonzero((values[:, 2:4] < 0).any(axis=1))[0])
        msg = f'{path}:{lines[bad]}: track widths must not be negative'
        raise TrackError(msg)
    return CsvTable(values, lines)


def read_tum_centerline(path: Path) -> CsvTable:
    """Read and validate a TUM centerline: ``x_m, y_m, w_tr_right_m, w_tr_left_m``."""
    table = read_numeric_csv(path, 4, 'TUM centerline (x_m, y_m, w_tr_right_m, w_tr_left_m)')
    return validate_closed_centerline(table, path)


def read_f1tenth_raceline(path: Path) -> CsvTable:
    """Read an F1TENTH raceline: ``s_m; x_m; y_m; psi_rad; kappa_radpm; vx_mps; ax_mps2``."""
    return read_numeric_csv(
        path, 7, 'raceline (s_m; x_m; y_m; psi_rad; kappa_radpm; vx_mps; ax_mps2)'
    )


def write_tum_centerline(
    path: Path, centerline: np.ndarray, width_right: np.ndarray, width_left: np.ndarray
) -> Path:
    """Write a TUM-format centerline CSV, the exchange format every arsim tool reads."""
    path = Path(path)
    data = np.column_stack([centerline, width_right, width_left])
    lines = [TUM_HEADER] + [f'{x:.6f},{y:.6f},{wr:.6f},{wl:.6f}' for x, y, wr, wl in data]
    return write_lines(path, lines, 'centerline')


def write_cones_csv(path: Path, cones: Cones) -> Path:
    """Write placed cones as ``x_m,y_m,class`` lines, class one of ``CONE_CLASSES``."""
    path = Path(path)
    names = {label: name for name, label in CONE_CLASSES.items()}
    lines = [CONES_HEADER] + [f'{x:.6f},{y:.6f},{names[int(label)]}'
                              for (x, y), label in zip(cones.positions, cones.labels, strict=True)]
    return write_lines(path, lines, 'cones')


def read_cones_csv(path: Path, scale: float = 1.0) -> Cones:
    """Read a cones CSV (``x_m,y_m,class`` per line, ``#`` comments), positions scaled.

    Every problem is one ``TrackError`` naming the file and line.
    """
    try:
        text = Path(path).read_text(encoding='utf-8')
    except (OSError, UnicodeDecodeError) as exc:
        msg = f'{path}: cannot read cones: {exc}'
        raise TrackError(msg) from exc
    points: list[tuple[float, float]] = []
    labels: list[int] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith('#'):
            continue
        cells = [c.strip() for c in line.split(';' if ';' in line else ',')]
        if len(cells) != 3:
            msg = f'{path}:{lineno}: cones need 3 columns (x_m, y_m, class), found {len(cells)}'
            raise TrackError(msg)
        try:
            x, y = float(cells[0]), float(cells[1])
        except ValueError as exc:
            msg = f'{path}:{lineno}: cone position is not a number: {line[:80]!r}'
            raise TrackError(msg) from exc
        if not (math.isfinite(x) and math.isfinite(y)):
            msg = f'{path}:{lineno}: cone position has NaN or infinite values: {line[:80]!r}'
            raise TrackError(msg)
        if cells[2] not in CONE_CLASSES:
            msg = (f'{path}:{lineno}: unknown cone class {cells[2]!r}; expected one of: '
                   f'{", ".join(CONE_CLASSES)}')
            raise TrackError(msg)
        points.append((x * scale, y * scale))
        labels.append(CONE_CLASSES[cells[2]])
    return Cones(np.asarray(points, dtype=float).reshape(-1, 2), np.asarray(labels, np.uint8))
