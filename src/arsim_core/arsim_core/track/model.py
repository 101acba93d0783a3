"""Track data types shared by every loader, mesher and rasteriser.

The types are frozen dataclasses holding read-only numpy arrays, so a track loaded once can be
handed to several nodes (map server, backend, scorer) without anyone mutating it under the
others' feet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from arsim_core import labels
from arsim_core.track import polylines

if TYPE_CHECKING:
    from arsim_core.track.fs.mission import Mission

# The track's triangle labels, as the track API names them; the ids are the semantic classes of
# arsim_core.labels, the one table of them.
LABEL_ROAD = labels.ROAD
LABEL_BARRIER = labels.BARRIER
LABEL_CONE_BLUE = labels.CONE_BLUE
LABEL_CONE_YELLOW = labels.CONE_YELLOW
LABEL_GROUND = labels.GROUND
LABEL_CONE_ORANGE = labels.CONE_ORANGE
LABEL_CONE_BIG_ORANGE = labels.CONE_BIG_ORANGE
LABEL_SCENERY_STRUCTURE = labels.SCENERY_STRUCTURE
LABEL_SCENERY_VEGETATION = labels.SCENERY_VEGETATION
LABEL_SCENERY_OBJECT = labels.SCENERY_OBJECT
LABEL_KERB = labels.KERB
CONE_LABELS = labels.CONES
SCENERY_LABELS = labels.SCENERY

OCCUPIED = 100
FREE = 0
UNKNOWN = -1


def _frozen_array(values: np.ndarray, dtype: type | np.dtype, name: str) -> np.ndarray:
    """Return a read-only contiguous copy so shared tracks cannot be changed in place."""
    arr = np.array(values, dtype=dtype, copy=True, order='C')
    arr.setflags(write=False)
    if arr.size and not np.all(np.isfinite(arr)) and np.issubdtype(arr.dtype, np.floating):
        msg = f'{name} contains NaN or infinite values'
        raise ValueError(msg)
    return arr


@dataclass(frozen=True, eq=False)
class OccupancyGridData:
    """An occupancy grid laid out exactly as ROS ``nav_msgs/OccupancyGrid`` expects.

    ``data[row, col]`` is row-major with row 0 at the origin (the bottom of a map image), so the
    array can be flattened straight into the message. Values: 100 occupied, 0 free, -1 unknown.
    ``origin`` is the world pose ``(x, y, yaw)`` of the outer corner of cell ``(0, 0)``.
    """

    data: np.ndarray
    resolution: float
    origin: tuple[float, float, float]

    def __post_init__(self) -> None:
        """Freeze the cell array and check its type, since ROS rejects anything but int8."""
        object.__setattr__(self, 'data', _frozen_array(self.data, np.int8, 'data'))
        if self.data.ndim != 2:
            msg = f'occupancy data must be 2-D, got shape {self.data.shape}'
            raise ValueError(msg)
        if not self.resolution > 0:
            msg = f'resolution must be positive, got {self.resolution}'
            raise ValueError(msg)
        object.__setattr__(self, 'origin', tuple(float(v) for v in self.origin))

    @property
    def height(self) -> int:
        """Number of rows (cells along the map's y axis)."""
        return int(self.data.shape[0])

    @property
    def width(self) -> int:
        """Number of columns (cells along the map's x axis)."""
        return int(self.data.shape[1])

    def cell_to_world(self, cols: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """World coordinates (K, 2) of fractional cell coordinates; cell centres are at +0.5."""
        x0, y0, yaw = self.origin
        lx = np.asarray(cols, dtype=float) * self.resolution
        ly = np.asarray(rows, dtype=float) * self.resolution
        c, s = np.cos(yaw), np.sin(yaw)
        return np.stack([x0 + c * lx - s * ly, y0 + s * lx + c * ly], axis=-1)

    def world_to_cell(self, points: np.ndarray) -> np.ndarray:
        """Fractional cell coordinates (K, 2) as (col, row) of world points (K, 2)."""
        x0, y0, yaw = self.origin
        pts = np.asarray(points, dtype=float).reshape(-1, 2)
        dx, dy = pts[:, 0] - x0, pts[:, 1] - y0
        c, s = np.cos(yaw), np.sin(yaw)
        return np.stack([c * dx + s * dy, -s * dx + c * dy], axis=-1) / self.resolution

    @property
    def occupied(self) -> np.ndarray:
        """Boolean mask of occupied cells, same layout as ``data``."""
        return self.data == OCCUPIED


@dataclass(frozen=True, eq=False)
class TrackMesh:
    """Triangle mesh of a track in the world frame, z up, ready for a ray caster.

    ``labels`` holds one ``LABEL_*`` per triangle so a renderer or a simulated camera can tell
    road, barrier, cones and ground apart (the values match ``arsim_msgs/TrackGeometry``).
    """

    vertices: np.ndarray
    triangles: np.ndarray
    labels: np.ndarray

    def __post_init__(self) -> None:
        """Freeze arrays in the dtypes the ROS message and Embree expect."""
        object.__setattr__(
            self, 'vertices', _frozen_array(np.reshape(self.vertices, (-1, 3)), np.float32, 'v')
        )
        object.__setattr__(
            self, 'triangles', _frozen_array(np.reshape(self.triangles, (-1, 3)), np.uint32, 't')
        )
        object.__setattr__(self, 'labels', _frozen_array(self.labels, np.uint8, 'labels'))
        if self.labels.shape != (self.triangles.shape[0],):
            msg = 'labels must hold exactly one value per triangle'
            raise ValueError(msg)
        if self.triangles.size and int(self.triangles.max()) >= self.vertices.shape[0]:
            msg = 'triangle index out of range'
            raise ValueError(msg)

    def select(self, label: int) -> TrackMesh:
        """Sub-mesh of the triangles with one label (vertices are shared, not compacted)."""
        keep = self.labels == label
        return TrackMesh(self.vertices, self.triangles[keep], self.labels[keep])


@dataclass(frozen=True, eq=False)
class Cones:
    """Cones placed on a track: ``positions (K, 2)`` in the world frame (the centre of each
    cone's base) and one ``LABEL_CONE_*`` per cone in ``labels (K,)``."""

    positions: np.ndarray
    labels: np.ndarray

    def __post_init__(self) -> None:
        """Freeze the arrays and check that every cone has a cone label."""
        pos = _frozen_array(np.reshape(self.positions, (-1, 2)), np.float64, 'cone positions')
        object.__setattr__(self, 'positions', pos)
        labs = _frozen_array(np.reshape(self.labels, (-1,)), np.uint8, 'cone labels')
        object.__setattr__(self, 'labels', labs)
        if labs.shape != (pos.shape[0],):
            msg = f'{pos.shape[0]} cone positions but {labs.shape[0]} cone labels'
            raise ValueError(msg)
        bad = sorted(set(labs.tolist()) - set(CONE_LABELS))
        if bad:
            msg = f'cone labels must be among {list(CONE_LABELS)}, got {bad}'
            raise ValueError(msg)

    def __len__(self) -> int:
        return int(self.positions.shape[0])

    def of(self, label: int) -> np.ndarray:
        """Positions (k, 2) of the cones with one label."""
        return self.positions[self.labels == label]


@dataclass(frozen=True, eq=False)
class Track:
    """A closed race track: centerline, widths, barrier walls and where cars start.

    ``centerline`` is ordered in the driving direction, closed implicitly (the first point is
    not repeated). ``width_left``/``width_right`` are distances from the centerline to the track
    edges, left and right as seen by a driver. Every entry of ``walls`` is a polyline of barrier
    in the world frame; a polyline whose last point equals its first is closed. When
    ``walls_are_outlines`` is true the walls are outlines of solid regions (occupied cells of a
    map), so a rasteriser fills them instead of drawing lines. ``cones`` are cones placed by
    the track itself (a Formula Student layout), each with its class; ``mission`` describes the
    event the layout is for (lines, stop zone, laps), for tracks made for one.
    """

    name: str
    centerline: np.ndarray
    width_right: np.ndarray
    width_left: np.ndarray
    walls: tuple[np.ndarray, ...]
    start_pose: tuple[float, float, float]
    raceline: np.ndarray | None = None
    raceline_speed: np.ndarray | None = None
    source: Path | None = None
    barrier_height: float = 0.3
    walls_are_outlines: bool = False
    mesh: TrackMesh | None = field(default=None, repr=False)
    occupancy: OccupancyGridData | None = field(default=None, repr=False)
    cones: Cones | None = field(default=None, repr=False)
    mission: Mission | None = None

    def __post_init__(self) -> None:
        """Freeze arrays and check shapes, so every consumer can trust the invariants."""
        center = _frozen_array(self.centerline, np.float64, 'centerline')
        if center.ndim != 2 or center.shape[1] != 2 or center.shape[0] < 3:
            msg = f'centerline must be (N>=3, 2), got {center.shape}'
            raise ValueError(msg)
        object.__setattr__(self, 'centerline', center)
        for key in ('width_right', 'width_left'):
            arr = _frozen_array(self.__dict__[key], np.float64, key)
            if arr.shape != (center.shape[0],):
                msg = f'{key} must have shape ({center.shape[0]},), got {arr.shape}'
                raise ValueError(msg)
            object.__setattr__(self, key, arr)
        walls = tuple(_frozen_array(w, np.float64, 'wall').reshape(-1, 2) for w in self.walls)
        object.__setattr__(self, 'walls', walls)
        if self.raceline is not None:
            object.__setattr__(
                self, 'raceline', _frozen_array(self.raceline, np.float64, 'raceline')
            )
        if self.raceline_speed is not None:
            object.__setattr__(
                self,
                'raceline_speed',
                _frozen_array(self.raceline_speed, np.float64, 'raceline_speed'),
            )
        object.__setattr__(self, 'start_pose', tuple(float(v) for v in self.start_pose))
        if self.source is not None:
            object.__setattr__(self, 'source', Path(self.source))

    @cached_property
    def length(self) -> float:
        """Length of the closed centerline in metres."""
        return float(polylines.closed_length(self.centerline))

    @cached_property
    def s(self) -> np.ndarray:
        """Arc length (N,) of every centerline point from the first one."""
        return polylines.arc_length(self.centerline)

    @cached_property
    def heading(self) -> np.ndarray:
        """Heading (N,) of the centerline in the driving direction, radians."""
        return polylines.headings(self.centerline)

    @cached_property
    def curvature(self) -> np.ndarray:
        """Signed curvature (N,) in 1/m, positive for left turns."""
        return polylines.curvature(self.centerline)

    def points_along(self, distance: float) -> int:
        """How many centerline points span ``distance`` metres of the track (at least one)."""
        return max(1, round(distance * self.centerline.shape[0] / max(self.length, 1e-9)))

    def smoothed_curvature(self, window: float) -> np.ndarray:
        """Curvature averaged over ``window`` metres of the closed track: a corner's bend
        without the kinks between the centerline's points."""
        return polylines.closed_moving_average(self.curvature, self.points_along(window))

    @cached_property
    def left_boundary(self) -> np.ndarray:
        """Left track edge (N, 2) from centerline and widths."""
        return polylines.offset(self.centerline, self.width_left)

    @cached_property
    def right_boundary(self) -> np.ndarray:
        """Right track edge (N, 2) from centerline and widths."""
        return polylines.offset(self.centerline, -self.width_right)

    def bounds(self) -> tuple[float, float, float, float]:
        """Axis-aligned bounds ``(xmin, ymin, xmax, ymax)`` of walls and track edges."""
        parts = [self.left_boundary, self.right_boundary, *self.walls]
        if self.cones is not None:
            parts.append(self.cones.positions)
        pts = np.concatenate([p for p in parts if p.size], axis=0)
        xmin, ymin = pts.min(axis=0)
        xmax, ymax = pts.max(axis=0)
        return float(xmin), float(ymin), float(xmax), float(ymax)
