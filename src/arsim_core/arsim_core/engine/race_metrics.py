"""Race metrics: progress along the centerline, laps, sectors, time off track, collisions.

The engine hands every car's pose each frame to ``RaceMetrics.update``. Positions are projected
onto the closed centerline polyline; reinforcement-learning users step thousands of frames per
second on tracks with thousands of centerline points, so each car keeps the segment it was last
projected to and only a small window of segments around it is searched (see ``project``).

Progress is measured from the start line (``start_s`` on the centerline) and unwrapped, so it
grows by the track length ``L`` every lap and shrinks when a car drives backwards. Lap ``k`` is
completed the first time progress reaches ``k * L``; checkpoints (``sectors``, fractions of the
lap from the start line) work the same way within a lap. Crossing times are interpolated
between frames, so lap and sector times do not depend on the frame rate and sectors add up to
the lap time exactly.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Any, NamedTuple, Protocol

import numpy as np

from arsim_core._jit import inline_kernel, kernel, parallel_kernel, prange, threads_for
from arsim_core.errors import ArsimError, ConfigError
from arsim_core.geometry import Pose2D
from arsim_core.track.polylines import arc_length, closed_length


class Course(Protocol):
    """What the metrics need of a track (a ``Track`` or the engine's ``TrackWorld``)."""

    @property
    def centerline(self) -> Any: ...
    @property
    def width_left(self) -> Any: ...
    @property
    def width_right(self) -> Any: ...
    @property
    def start_pose(self) -> tuple[float, float, float]: ...


#: Segments searched on either side of a car's last segment before falling back to all of them.
WINDOW = 16


class UnknownCarError(ArsimError, KeyError):
    """A car name the race does not know; a ``KeyError`` so mapping-style callers catch it."""

    def __str__(self) -> str:
        """The plain message: ``KeyError`` would show it quoted."""
        return str(self.args[0])


@kernel
def _scan(points: np.ndarray, x: float, y: float, first: int,
          count: int) -> tuple[int, float, float]:
    """Nearest of ``count`` segments from ``first`` (wrapping): (segment, t, squared distance)."""
    n = points.shape[0]
    best, best_t, best_d2 = -1, 0.0, math.inf
    j = first % n  # then stepped with a comparison: a modulo per segment cost a third
    for _ in range(count):
        i = j
        j = i + 1 if i + 1 < n else 0
        ax, ay = points[i, 0], points[i, 1]
        dx, dy = points[j, 0] - ax, points[j, 1] - ay
        len2 = dx * dx + dy * dy
        t = 0.0
        if len2 > 0.0:
            t = min(max(((x - ax) * dx + (y - ay) * dy) / len2, 0.0), 1.0)
        ex, ey = ax + t * dx - x, ay + t * dy - y
        d2 = ex * ex + ey * ey
        if d2 < best_d2:
            best, best_t, best_d2 = i, t, d2
    return best, best_t, best_d2


@kernel
def _nearest(points: np.ndarray, s_cumulative: np.ndarray, x: float, y: float, hint: int,
             window: int, radius: float) -> tuple[float, float, int, float]:
    """(s, signed lateral offset, segment, t along the segment) of the nearest centerline point.

    With ``hint >= 0`` only ``hint +- window`` is searched; that local minimum is the global one
    unless it lies on the window's edge (the car moved further) or farther than ``radius`` from
    the centerline (another part of the track may be closer), and then every segment is searched.
    """
    n = points.shape[0]
    segment, t, d2 = -1, 0.0, math.inf
    if hint >= 0 and 2 * window + 1 < n:
        segment, t, d2 = _scan(points, x, y, hint - window, 2 * window + 1)
        edge = (segment - hint + window) % n
        if edge == 0 or edge == 2 * window or d2 > radius * radius:
            segment = -1
    if segment < 0:
        segment, t, d2 = _scan(points, x, y, 0, n)
    j = segment + 1 if segment + 1 < n else 0
    ax, ay = points[segment, 0], points[segment, 1]
    dx, dy = points[j, 0] - ax, points[j, 1] - ay
    seg_len = math.sqrt(dx * dx + dy * dy)
    last_dx, last_dy = points[0, 0] - points[n - 1, 0], points[0, 1] - points[n - 1, 1]
    length = s_cumulative[n - 1] + math.sqrt(last_dx * last_dx + last_dy * last_dy)
    s = s_cumulative[segment] + t * seg_len
    if s >= length:
        s -= length
    lateral = math.copysign(math.sqrt(d2), dx * (y - ay) - dy * (x - ax))
    return float(s), float(lateral), segment, float(t)  # plain floats without numba too


def project(centerline: np.ndarray, s_cumulative: np.ndarray, point: Sequence[float],
            hint: int = -1, window: int = WINDOW,
            radius: float = math.inf) -> tuple[float, float, int]:
    """Nearest point of the closed ``centerline`` (N, 2) to ``point``: (s, lateral, segment).

    ``s_cumulative`` (N,) is the arc length of every centerline point from the first one and
    ``lateral`` is positive to the left of the driving direction. ``hint`` is the segment found
    last time (-1 searches all segments); the window around it widens to a full search when
    the nearest point is on the window's edge or farther than ``radius`` from the centerline.
    """
    # Copies: a read-only array (a track from the wire) would compile a kernel of its own.
    s, lateral, segment, _ = _nearest(
        np.array(centerline, dtype=np.float64), np.array(s_cumulative, dtype=np.float64),
        float(point[0]), float(point[1]), int(hint), int(window), float(radius))
    return s, lateral, segment


# Columns of the per-car array the hot fields of every car live in (see ``_Car``).
S, LATERAL, SEGMENT, OFF_TRACK, PROGRESS, TIME, TIME_OFF_TRACK, TARGET, LAPS, LAP_START = \
    range(10)
_COLUMNS = 10
REACHED_CHECKPOINT, NOT_PLACED = 1, 2  # news of a car's move that Python code handles


@kernel
def _project_into(points: np.ndarray, s_cumulative: np.ndarray, width_left: np.ndarray,
                  width_right: np.ndarray, x: float, y: float, hint: int, radius: float,
                  row: np.ndarray) -> None:
    """Project ``(x, y)`` into a car's row: s, lateral offset, segment and off-track flag."""
    s, lateral, segment, t = _nearest(points, s_cumulative, x, y, hint, WINDOW, radius)
    j = segment + 1 if segment + 1 < width_left.shape[0] else 0
    if lateral >= 0.0:
        edge = width_left[segment] * (1.0 - t) + width_left[j] * t
    else:
        edge = width_right[segment] * (1.0 - t) + width_right[j] * t
    row[S] = s
    row[LATERAL] = lateral
    row[SEGMENT] = segment
    row[OFF_TRACK] = 1.0 if abs(lateral) > edge else 0.0


@kernel
def _progress_rows(state: np.ndarray, rows: np.ndarray, length: float, time_s: float,
                   out: np.ndarray) -> None:
    """``RaceMetrics.progress_table`` of the cars at ``rows``, into ``out``: one call, where
    picking and scaling the columns in NumPy took four."""
    for k in range(rows.shape[0]):
        row = state[rows[k]]
        out[k, 0] = row[S] / length
        out[k, 1] = row[PROGRESS]
        out[k, 2] = row[LAPS]
        out[k, 3] = time_s - row[LAP_START]


@inline_kernel
def _advance_range(points: np.ndarray, s_cumulative: np.ndarray, width_left: np.ndarray,
                   width_right: np.ndarray, radius: float, length: float, state: np.ndarray,
                   rows: np.ndarray, xy: np.ndarray, time_s: float, news: np.ndarray,
                   before: np.ndarray, first: int, last: int) -> int:
    """``_advance_rows`` of the cars ``rows[first:last]``."""
    count = 0
    for k in range(first, last):
        row = state[rows[k]]
        news[k] = 0
        if row[SEGMENT] < 0.0:
            news[k] = NOT_PLACED
            count += 1
            continue
        previous_s, previous, previous_time = row[S], row[PROGRESS], row[TIME]
        _project_into(points, s_cumulative, width_left, width_right, xy[k, 0], xy[k, 1],
                      int(row[SEGMENT]), radius, row)
        ds = row[S] - previous_s
        row[PROGRESS] = previous + ((ds + 0.5 * length) % length - 0.5 * length)
        if row[PROGRESS] >= row[TARGET]:
            news[k] = REACHED_CHECKPOINT
            count += 1
            before[k, 0] = previous
            before[k, 1] = previous_time
        if row[OFF_TRACK] != 0.0:
            row[TIME_OFF_TRACK] += time_s - previous_time
        row[TIME] = time_s
    return count


@kernel
def _advance_rows(points: np.ndarray, s_cumulative: np.ndarray, width_left: np.ndarray,
                  width_right: np.ndarray, radius: float, length: float, state: np.ndarray,
                  rows: np.ndarray, xy: np.ndarray, time_s: float, news: np.ndarray,
                  before: np.ndarray) -> int:
    """Every car in ``rows`` moved to its ``xy`` at race time ``time_s``: projected near its
    last segment, progress by the shortest arc step, time off track counted. What is left to
    the caller goes in ``news[k]``: ``REACHED_CHECKPOINT`` (``before[k]`` then holds the car's
    progress and time before the move) or ``NOT_PLACED`` (a car without a pose so far). Returns
    how many cars have news."""
    return _advance_range(points, s_cumulative, width_left, width_right, radius, length, state,
                          rows, xy, time_s, news, before, 0, rows.shape[0])


@parallel_kernel
def _advance_rows_threaded(points: np.ndarray, s_cumulative: np.ndarray,
                           width_left: np.ndarray, width_right: np.ndarray, radius: float,
                           length: float, state: np.ndarray, rows: np.ndarray, xy: np.ndarray,
                           time_s: float, news: np.ndarray, before: np.ndarray,
                           threads: int) -> int:
    """``_advance_rows`` in ``threads`` runs of cars on numba's threads (each car's row is
    its own: the serial kernel's values)."""
    count = 0
    cars = rows.shape[0]
    for run in prange(threads):
        count += _advance_range(points, s_cumulative, width_left, width_right, radius, length,
                                state, rows, xy, time_s, news, before, run * cars // threads,
                                (run + 1) * cars // threads)
    return count


class _Column:
    """A field of ``_Car`` kept in its row of the metrics' array, so one compiled call updates
    every car."""

    def __init__(self, column: int, kind: type = float) -> None:
        self.column, self.kind = column, kind

    def __get__(self, car: _Car, owner: type | None = None) -> Any:
        return self.kind(car.row[self.column])

    def __set__(self, car: _Car, value: float) -> None:
        car.row[self.column] = value


class CarRaceStatus(NamedTuple):
    """One car's race at the latest frame; times in seconds, distances in metres. A named
    tuple: immutable, and made every step of a training loop five times as fast as a frozen
    dataclass."""

    name: str
    position: int  # 1-based standing
    s: float  # arc length along the centerline from its first point, [0, L)
    lap_fraction: float  # s / L
    progress: float  # unwrapped distance since the start line, negative on the grid
    laps: int  # completed laps
    lap_time: float  # running time of the current lap
    last_lap: float | None
    best_lap: float | None
    lap_times: tuple[float, ...]
    sector_times: tuple[float | None, ...]  # current lap, None while not reached
    last_sector_times: tuple[float | None, ...]  # of the last completed lap
    best_sector_times: tuple[float | None, ...]
    time_off_track: float  # total
    off_track: bool  # in this frame
    collisions: int
    lateral_offset: float  # positive left of the centerline


class _Car:
    """Mutable per-car bookkeeping; ``CarRaceStatus`` is its frozen public view. The fields
    every frame changes live in ``row``, the car's row of the metrics' array."""

    __slots__ = (
        'best_sector_times', 'collisions', 'lap_frame', 'lap_times', 'last_sector_times',
        'name', 'next_sector', 'row', 'sector_start', 'sector_times',
    )
    s = _Column(S)  # arc length of the last projection
    lateral = _Column(LATERAL)
    segment = _Column(SEGMENT, int)  # centerline segment of the last projection; -1 unplaced
    off_track = _Column(OFF_TRACK, bool)
    progress = _Column(PROGRESS)
    time = _Column(TIME)  # race time of the car's last update
    time_off_track = _Column(TIME_OFF_TRACK)
    target = _Column(TARGET)  # progress of the next checkpoint (sector end or lap end)
    laps = _Column(LAPS, int)  # completed
    lap_start = _Column(LAP_START)  # race time the current lap started: the last completion

    def __init__(self, name: str, sectors: int, row: np.ndarray) -> None:
        self.name = name
        self.row = row
        row[:] = 0.0
        self.segment = -1
        self.target = math.inf
        self.next_sector = 0
        self.sector_start = 0.0
        self.lap_times: list[float] = []
        self.sector_times: list[float | None] = [None] * sectors
        self.last_sector_times: list[float | None] = [None] * sectors
        self.best_sector_times: list[float | None] = [None] * sectors
        self.collisions = 0
        self.lap_frame = -1  # update count at the last lap completion

    def rank(self) -> tuple[float, float, float, str]:
        """Sort key of the standings: more laps, more progress, earlier lap completion, name."""
        row = self.row.tolist()
        return -row[LAPS], -row[PROGRESS], row[LAP_START], self.name


class RaceMetrics:
    """Per-car race progress, lap and sector times, time off track and collisions.

    ``centerline`` (N, 2) is closed implicitly and ordered in the driving direction;
    ``width_left``/``width_right`` (N,) are the distances to the track edges. ``start_s`` is
    the arc length of the start line and ``sectors`` the lap fractions (from the start line) of
    the checkpoints between sectors: ``(1/3, 2/3)`` makes three sectors.

    A car is placed (by ``reset``, ``place`` or, if it has no pose yet, its first pose in
    ``update``) without counting the move as progress: its progress becomes its completed laps
    times ``L`` plus the signed shortest arc distance of its pose from the start line, so a car
    1 m behind the line has progress -1, and a car reset to the grid mid-race keeps its laps but
    starts its lap position afresh. Checkpoints a placement jumps past are skipped (their time
    stays None), never timed. Between placements the poses must be close (less than L/2 apart).
    """

    def __init__(self, centerline: np.ndarray, width_left: np.ndarray, width_right: np.ndarray,
                 cars: Sequence[str], start_s: float = 0.0,
                 sectors: Sequence[float] = (), threads: int = 1) -> None:
        self.threads = threads  # > 1: a batch of many cars updates over numba's threads
        points = np.array(centerline, dtype=np.float64)
        if points.ndim != 2 or points.shape[1] != 2 or points.shape[0] < 3:
            msg = f'centerline must be an (N >= 3, 2) array of x, y points, got {points.shape}'
            raise ConfigError(msg)
        widths: dict[str, np.ndarray] = {}
        for key, values in (('width_left', width_left), ('width_right', width_right)):
            arr = np.array(values, dtype=np.float64)  # own, writable: one kernel signature
            if arr.shape != (points.shape[0],):
                msg = (f'{key} must have shape ({points.shape[0]},), one width per centerline '
                       f'point, got {arr.shape}')
                raise ConfigError(msg)
            if not np.all(arr >= 0.0):
                msg = f'{key} must hold finite non-negative distances [m], got {arr.min()}'
                raise ConfigError(msg)
            widths[key] = arr
        length = closed_length(points)
        if not np.all(np.isfinite(points)) or not length > 0.0:
            msg = 'centerline must hold finite points of a loop with a non-zero length'
            raise ConfigError(msg)
        fractions = tuple(float(f) for f in sectors)
        if any(not 0.0 < f < 1.0 for f in fractions) or any(
                a >= b for a, b in pairwise(fractions)):
            msg = f'sectors must be strictly increasing lap fractions in (0, 1), got {fractions}'
            raise ConfigError(msg)
        names = tuple(cars)
        if len(set(names)) != len(names):
            msg = f'car names must be unique, got {list(names)}'
            raise ConfigError(msg)
        self._points = points
        self._s = arc_length(points)
        self._length = length
        self._width_left = widths['width_left']
        self._width_right = widths['width_right']
        # Inside the widest track edge a local nearest point is the global one on any track
        # whose edges do not overlap; farther out, every segment is searched.
        self._radius = float(max(np.max(widths['width_left']), np.max(widths['width_right'])))
        self._start_s = float(start_s) % self._length
        self._fractions = (*fractions, 1.0)  # checkpoint lap fractions, the lap end last
        self._names = names
        self._rows = {name: i for i, name in enumerate(names)}
        self._state = np.zeros((len(names), _COLUMNS))
        self._index_cache: dict[tuple[str, ...], np.ndarray] = {}
        self.reset({})

    @classmethod
    def for_track(cls, track: Course, cars: Sequence[str], sectors: Sequence[float] = (),
                  threads: int = 1) -> RaceMetrics:
        """Metrics on ``track``, the start line where its start pose projects."""
        points = np.asarray(track.centerline, dtype=np.float64)
        start_s, _, _ = project(points, arc_length(points), track.start_pose[:2])
        return cls(points, track.width_left, track.width_right, cars, start_s, sectors,
                   threads)

    @property
    def sectors(self) -> tuple[float, ...]:
        """Where each sector ends, as lap fractions from the start line (the last is 1)."""
        return self._fractions

    @property
    def length(self) -> float:
        """Length L of the closed centerline [m]."""
        return self._length

    @property
    def cars(self) -> tuple[str, ...]:
        """Car names in the order given."""
        return self._names

    @property
    def rows(self) -> np.ndarray:
        """Every car's latest projection as it changes frame by frame, one row per car in
        ``cars`` order, columns ``S``, ``LATERAL``, ``SEGMENT``, ``OFF_TRACK``, ``PROGRESS``, ...
        (a read-only view: rules that watch every car each frame read it without a copy)."""
        view = self._state.view()
        view.flags.writeable = False
        return view

    @property
    def centerline(self) -> tuple[np.ndarray, np.ndarray]:
        """The closed centerline (N, 2) and the arc length of each of its points (N,)."""
        return self._points, self._s

    def reset(self, poses: Mapping[str, Pose2D]) -> None:
        """Start a new race at time 0: everything cleared, the cars in ``poses`` placed."""
        sectors = len(self._fractions)
        self._cars: dict[str, _Car] = {name: _Car(name, sectors, row)
                                       for name, row in zip(self._names, self._state, strict=True)}
        self._time = 0.0
        self._frame = 0  # updates since the reset
        for name, pose in poses.items():
            self._place(self._car(name), float(pose[0]), float(pose[1]))

    def restart(self, car: str, pose: Pose2D) -> None:
        """Start ``car``'s race afresh at the current race time, at ``pose``: laps, times and
        counts cleared. Independent simulations sharing one engine (a vector environment)
        each restart their own car."""
        old = self._car(car)
        state = _Car(old.name, len(self._fractions), old.row)
        state.time = state.lap_start = state.sector_start = self._time
        self._cars[car] = state
        self._place(state, float(pose[0]), float(pose[1]))

    def progress_table(self, cars: Sequence[str]) -> np.ndarray:
        """(n, 4) float64 rows of lap fraction, progress [m], completed laps and the current
        lap's time [s] of ``cars``: what an observation needs, without the standings."""
        rows = self._indices(cars)
        table = np.empty((len(rows), 4))
        _progress_rows(self._state, rows, self._length, self._time, table)
        return table

    def _indices(self, cars: Sequence[str]) -> np.ndarray:
        """The rows of ``cars`` in the array (kept for the lists that come back every frame),
        or the error ``_car`` gives for an unknown one."""
        key = tuple(cars)
        found = self._index_cache.get(key)
        if found is None:
            found = np.array([self._rows[self._car(name).name] for name in key], np.intp)
            if len(self._index_cache) > 16:
                self._index_cache.clear()
            self._index_cache[key] = found
        return found

    def place(self, car: str, pose: Pose2D) -> None:
        """Teleport ``car`` to ``pose`` without counting the jump (see the class docstring)."""
        self._place(self._car(car), float(pose[0]), float(pose[1]))

    def update(self, time_s: float, poses: Mapping[str, Sequence[float]],
               new_contacts: Iterable[str] = (), xy: np.ndarray | None = None) -> None:
        """Advance to race time ``time_s`` [s since reset] with the cars' poses of this frame.

        A pose is any sequence of numbers that starts with x, y: a ``Pose2D`` or a whole
        ``CarState`` (all of the same length); ``xy`` may give them as an (n, 2) array in the
        order of ``poses``, if the caller has it. ``new_contacts`` names the cars that started
        a new contact in this frame. Cars missing from ``poses`` keep their state.
        """
        if time_s < self._time:
            msg = f'race time must not go back: {time_s} after {self._time}'
            raise ValueError(msg)
        self._time = time_s
        self._frame += 1
        if poses:
            rows = self._indices(tuple(poses))
            if xy is None:
                xy = np.array([pose[:2] for pose in poses.values()], np.float64)
            news, before = np.empty(len(rows), np.int8), np.empty((len(rows), 2))
            moved = (self._points, self._s, self._width_left, self._width_right, self._radius,
                     self._length, self._state, rows, xy, time_s, news, before)
            threads = threads_for(len(rows), self.threads)
            with_news = _advance_rows_threaded(*moved, threads) if threads > 1 \
                else _advance_rows(*moved)
            if with_news:
                cars = list(map(self._cars.__getitem__, poses))
                for k in np.flatnonzero(news).tolist():
                    car = cars[k]
                    if news[k] == REACHED_CHECKPOINT:
                        self._pass_checkpoints(car, before[k, 0], before[k, 1], time_s)
                    else:  # no pose before: placed, not moved
                        self._place(car, xy[k, 0], xy[k, 1])
                        car.time = time_s
        for name in new_contacts:
            self._car(name).collisions += 1

    def lap_completed(self, car: str) -> bool:
        """True only right after the update in which ``car`` completed a lap (for rewards)."""
        return self._car(car).lap_frame == self._frame

    def status(self, car: str, alone: bool = False) -> CarRaceStatus:
        """``car``'s race at the latest frame; ``alone``: in a race of its own (position 1),
        as each car of a vector environment's packed engine is, which spares ranking it
        against every other car."""
        state = self._car(car)
        if alone or len(self._cars) == 1:
            return self._status(state, 1)
        rank = state.rank()
        ahead = sum(other.rank() < rank for other in self._cars.values())
        return self._status(state, ahead + 1)

    def statuses(self, cars: Iterable[str]) -> dict[str, CarRaceStatus]:
        """``status`` of each of ``cars``, the standings sorted once for all of them."""
        wanted = [self._car(name) for name in cars]
        if len(wanted) < 2:
            return {car.name: self.status(car.name) for car in wanted}
        order = sorted(self._cars.values(), key=_Car.rank)
        position = {car.name: place for place, car in enumerate(order, start=1)}
        return {car.name: self._status(car, position[car.name]) for car in wanted}

    def standings(self) -> list[CarRaceStatus]:
        """Every car's status, leader first."""
        order = sorted(self._cars.values(), key=_Car.rank)
        return [self._status(car, position) for position, car in enumerate(order, start=1)]

    def table(self) -> str:
        """A plain-text results table in standings order, for printing when a race stops."""
        header = ('Pos', 'Car', 'Laps', 'Best lap', 'Last lap', 'Best sectors', 'Off track',
                  'Collisions')
        rows = [(str(st.position), st.name, str(st.laps), _seconds(st.best_lap),
                 _seconds(st.last_lap), ' / '.join(_seconds(t) for t in st.best_sector_times),
                 f'{st.time_off_track:.2f}', str(st.collisions))
                for st in self.standings()]
        widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
        left = {1, 5}  # names and sector lists read better left-aligned
        lines = ['  '.join(cell.ljust(w) if i in left else cell.rjust(w)
                           for i, (cell, w) in enumerate(zip(row, widths, strict=True))).rstrip()
                 for row in (header, *rows)]
        return '\n'.join(lines)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """Every car's status as plain JSON-serialisable values, keyed by name, leader first."""
        return {st.name: st._asdict() for st in self.standings()}

    def _car(self, name: str) -> _Car:
        """The state of car ``name``, or an error listing the cars this race knows."""
        try:
            return self._cars[name]
        except KeyError:
            msg = f'unknown car {name!r}; the race has {", ".join(map(repr, self._names))}'
            raise UnknownCarError(msg) from None

    def _place(self, car: _Car, x: float, y: float) -> None:
        """Project with a full search and restart the car's position on its current lap."""
        _project_into(self._points, self._s, self._width_left, self._width_right, x, y, -1,
                      self._radius, car.row)
        car.progress = car.laps * self._length + _shortest(car.s - self._start_s, self._length)
        car.target = self._checkpoint(car)
        while car.progress >= car.target:  # jumped past a checkpoint: skip, do not time it
            car.next_sector += 1
            car.sector_start = self._time
            car.target = self._checkpoint(car)

    def _pass_checkpoints(self, car: _Car, previous: float, previous_time: float,
                          time_s: float) -> None:
        """Time the checkpoints ``car`` passed moving from progress ``previous`` at
        ``previous_time`` to its progress now, at ``time_s``."""
        while car.progress >= car.target:
            at = previous_time + (time_s - previous_time) * (car.target - previous) / (
                car.progress - previous)
            self._pass_checkpoint(car, at)

    def _pass_checkpoint(self, car: _Car, at: float) -> None:
        """Record the sector ending at race time ``at`` and, after the last one, the lap."""
        k = car.next_sector
        split = at - car.sector_start
        car.sector_times[k] = split
        best = car.best_sector_times[k]
        if best is None or split < best:
            car.best_sector_times[k] = split
        car.sector_start = at
        car.next_sector = k + 1
        if car.next_sector == len(self._fractions):
            car.lap_times.append(at - car.lap_start)
            car.lap_start = at
            car.laps += 1
            car.last_sector_times = car.sector_times
            car.sector_times = [None] * len(self._fractions)
            car.next_sector = 0
            car.lap_frame = self._frame
        car.target = self._checkpoint(car)

    def _checkpoint(self, car: _Car) -> float:
        """Progress at which ``car`` passes its next checkpoint."""
        return (car.laps + self._fractions[car.next_sector]) * self._length

    def _status(self, car: _Car, position: int) -> CarRaceStatus:
        """The frozen public view of ``car`` at standing ``position``."""
        laps = tuple(car.lap_times)
        row = car.row.tolist()  # one read of the array fields
        return CarRaceStatus(  # positional, in field order: made every step of a training loop
            car.name, position, row[S], row[S] / self._length, row[PROGRESS], int(row[LAPS]),
            self._time - row[LAP_START], laps[-1] if laps else None,
            min(laps) if laps else None, laps, tuple(car.sector_times),
            tuple(car.last_sector_times), tuple(car.best_sector_times), row[TIME_OFF_TRACK],
            row[OFF_TRACK] != 0.0, car.collisions, row[LATERAL])


def _shortest(ds: float, length: float) -> float:
    """The arc step ``ds`` wrapped to the shorter way round a loop of ``length``, [-L/2, L/2)."""
    return (ds + 0.5 * length) % length - 0.5 * length


def _seconds(value: float | None) -> str:
    """Seconds with millisecond precision, or '-' for a time not set yet."""
    return '-' if value is None else f'{value:.3f}'
