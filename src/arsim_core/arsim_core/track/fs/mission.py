"""What a referee needs to know about the event a track is laid out for, and its file form.

A mission file (``mission.yaml`` in a track folder, named by the ``mission:`` key of
``track.yaml``) holds the kind of event, the laps, the start and finish lines as segments, the
polygon the car must stop in and, for the skidpad, the path the car is to follow::

    kind: skidpad
    laps: 4
    timed_laps: [2, 4]
    start_line: [[0.0, -1.5], [0.0, 1.5]]
    finish_line: [[0.0, -1.5], [0.0, 1.5]]
    stop_zone: [[0.0, -1.5], [25.0, -1.5], [25.0, 1.5], [0.0, 1.5]]
    path: path.csv          # optional, x_m,y_m per line
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from arsim_core.errors import TrackError
from arsim_core.track.textfiles import read_numeric_csv, write_lines
from arsim_core.yaml_fields import Section, load_section

KINDS = ('acceleration', 'skidpad', 'autocross', 'trackdrive')
"""The dynamic driverless events."""

MISSION_KEYS = frozenset({'kind', 'laps', 'timed_laps', 'start_line', 'finish_line',
                          'stop_zone', 'path'})
PATH_HEADER = '# x_m,y_m'


def _points(values: object, shape: tuple[int, ...] | None, name: str) -> np.ndarray:
    """Read-only float array (K, 2), checked."""
    arr = np.array(values, dtype=np.float64, copy=True).reshape(-1, 2)
    if shape is not None and arr.shape != shape:
        msg = f'mission {name} must have shape {shape}, got {arr.shape}'
        raise ValueError(msg)
    if not np.all(np.isfinite(arr)):
        msg = f'mission {name} contains NaN or infinite values'
        raise ValueError(msg)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class Mission:
    """One driverless event on a track.

    Timing runs from the moment the car's foremost part crosses ``start_line`` until it
    crosses ``finish_line`` after ``laps`` laps (both are 2 x 2 segments; on the skidpad,
    autocross and trackdrive they are the same timekeeping line). ``timed_laps`` are the
    1-based laps that count. ``stop_zone`` is the polygon (K, 2) the car must come to a stop
    in after finishing. ``path`` is the line the car is to follow when the track's centerline
    is not it (the figure of eight of the skidpad), else ``None``.
    """

    kind: str
    laps: int
    start_line: np.ndarray
    finish_line: np.ndarray
    stop_zone: np.ndarray
    timed_laps: tuple[int, ...] = ()
    path: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        """Check the kind and laps and freeze the geometry."""
        if self.kind not in KINDS:
            msg = f'unknown mission {self.kind!r}; choose one of: {", ".join(KINDS)}'
            raise ValueError(msg)
        if self.laps < 1:
            msg = f'a mission needs at least one lap, got {self.laps}'
            raise ValueError(msg)
        object.__setattr__(self, 'start_line', _points(self.start_line, (2, 2), 'start_line'))
        object.__setattr__(self, 'finish_line', _points(self.finish_line, (2, 2), 'finish_line'))
        zone = _points(self.stop_zone, None, 'stop_zone')
        if zone.shape[0] < 3:
            msg = f'mission stop_zone needs at least 3 corners, got {zone.shape[0]}'
            raise ValueError(msg)
        object.__setattr__(self, 'stop_zone', zone)
        timed = tuple(int(v) for v in (self.timed_laps or range(1, self.laps + 1)))
        if any(not 1 <= v <= self.laps for v in timed):
            msg = f'timed laps {timed} must lie within 1..{self.laps}'
            raise ValueError(msg)
        object.__setattr__(self, 'timed_laps', timed)
        if self.path is not None:
            object.__setattr__(self, 'path', _points(self.path, None, 'path'))

    def scaled(self, factor: float) -> Mission:
        """The same mission with every length multiplied by ``factor``."""
        path = None if self.path is None else self.path * factor
        return Mission(self.kind, self.laps, self.start_line * factor,
                       self.finish_line * factor, self.stop_zone * factor, self.timed_laps,
                       path)


def _yaml_points(points: np.ndarray) -> str:
    return '[' + ', '.join(f'[{x:.6f}, {y:.6f}]' for x, y in points) + ']'


def write_mission(mission: Mission, path: Path) -> Path:
    """Write ``mission.yaml`` (and ``path.csv`` beside it when the mission has a path)."""
    path = Path(path)
    lines = [
        f'kind: {mission.kind}',
        f'laps: {mission.laps}',
        f'timed_laps: [{", ".join(str(v) for v in mission.timed_laps)}]',
        f'start_line: {_yaml_points(mission.start_line)}',
        f'finish_line: {_yaml_points(mission.finish_line)}',
        f'stop_zone: {_yaml_points(mission.stop_zone)}',
    ]
    if mission.path is not None:
        csv = write_lines(path.with_name('path.csv'),
                          [PATH_HEADER] + [f'{x:.6f},{y:.6f}' for x, y in mission.path],
                          'the mission path')
        lines.append(f'path: {csv.name}')
    return write_lines(path, lines, 'the mission')


def _read_points(doc: Section, key: str, count: int | None) -> np.ndarray:
    """A list of [x, y] pairs under ``key``, with ``count`` pairs when given."""
    raw = doc.raw(key, what='a list of [x, y] points')
    ok = isinstance(raw, list) and all(
        isinstance(p, list) and len(p) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in p)
        for p in raw)
    if not ok or (count is not None and len(raw) != count):
        size = f'{count} ' if count is not None else ''
        doc.fail(f'expected a list of {size}[x, y] points, got {raw!r:.80}', key)
    return np.asarray(raw, dtype=float).reshape(-1, 2)


def read_mission(path: Path, scale: float = 1.0) -> Mission:
    """Read a mission file; every problem is one ``TrackError`` naming the file and key."""
    doc = load_section(path, TrackError)
    doc.reject_unknown(MISSION_KEYS)
    kind = doc.string('kind', choices=KINDS)
    laps = doc.integer('laps', minimum=1)
    timed: tuple[int, ...] = ()
    if doc.has('timed_laps'):
        raw = doc.raw('timed_laps', what='a list of lap numbers')
        if not isinstance(raw, list) or not all(
                isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= laps for v in raw):
            doc.fail(f'expected a list of lap numbers within 1..{laps}, got {raw!r:.80}',
                     'timed_laps')
        timed = tuple(raw)
    start = _read_points(doc, 'start_line', 2)
    finish = _read_points(doc, 'finish_line', 2)
    zone = _read_points(doc, 'stop_zone', None)
    if zone.shape[0] < 3:
        doc.fail('a stop zone needs at least 3 corners', 'stop_zone')
    drive_path = None
    if doc.has('path'):
        drive_path = read_numeric_csv(doc.file_inside('path'), 2,
                                      'mission path (x_m, y_m)').values
    try:
        mission = Mission(kind, laps, start, finish, zone, timed, drive_path)
    except ValueError as exc:
        msg = f'{path}: {exc}'
        raise TrackError(msg) from exc
    return mission.scaled(scale) if scale != 1.0 else mission
