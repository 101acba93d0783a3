"""Loading tracks by name or path, with one loader per file format.

A track folder holds a ``track.yaml`` that names its ``format`` and data ``file``; the format
selects a loader from ``TRACK_LOADERS``. A path to a bare data file (a TUM CSV, a map_saver
yaml, a mesh) or to an F1TENTH racetrack folder also works: the format is then recognised from
the file itself. Adding a format means adding one function to the registry.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from arsim_core.errors import TrackError
from arsim_core.track import polylines
from arsim_core.track.csvio import read_f1tenth_raceline, read_tum_centerline
from arsim_core.track.model import OccupancyGridData, Track, TrackMesh
from arsim_core.yaml_fields import Section, load_section

TRACK_YAML = 'track.yaml'
MESH_SUFFIXES = ('.obj', '.stl', '.glb', '.gltf', '.ply', '.off')
UNITS = MappingProxyType({'m': 1.0, 'dm': 0.1, 'cm': 0.01, 'mm': 0.001})
DIRECTIONS = MappingProxyType({'forward': False, 'reverse': True})
DEFAULT_BARRIER_HEIGHT = 0.3
FULL_SCALE_BARRIER_HEIGHT = 1.0  # [m], as concrete walls and guard rails stand
FULL_SCALE_WIDTH = 4.0


@dataclass(frozen=True)
class TrackOptions:
    """Everything a ``track.yaml`` can say besides the data file, with defaults for bare files.

    ``scale`` multiplies all coordinates and widths (``units`` and an explicit ``scale``
    combine), so a full-scale circuit can be driven at 1:10 by writing ``scale: 0.1``.
    """

    name: str
    scale: float = 1.0
    barrier_height: float | None = None
    start_index: int = 0
    reverse: bool = False
    raceline: Path | None = None
    centerline: Path | None = None
    descriptor: Path | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    cones: Path | None = None
    mission: Path | None = None


TrackLoader = Callable[[Path, TrackOptions], Track]


def default_maps_dir() -> Path:
    """Folder of the tracks shipped with arsim.

    ``ARSIM_MAPS_DIR`` wins, so an installed system can point at its share folder; otherwise
    the ``maps`` folder of the source tree this module lives in.
    """
    env = os.environ.get('ARSIM_MAPS_DIR')
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / 'maps').is_dir() and (parent / 'src').is_dir():
            return parent / 'maps'
    return here.parents[4] / 'maps'


def available_tracks(maps_dir: Path | None = None) -> list[str]:
    """Names of the track folders (those with a ``track.yaml``) in ``maps_dir``."""
    root = Path(maps_dir) if maps_dir is not None else default_maps_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / TRACK_YAML).is_file())


# ---------------------------------------------------------------------------------------------
# Building tracks


def track_from_centerline(
    name: str,
    centerline: np.ndarray,
    width_right: np.ndarray,
    width_left: np.ndarray,
    options: TrackOptions | None = None,
    walls: tuple[np.ndarray, ...] | None = None,
    **kwargs: Any,
) -> Track:
    """Assemble a ``Track`` from a centerline in file order, applying direction and start.

    Without ``walls`` the barriers are the two track edges, closed loops offset from the
    centerline by the widths, which is what a TUM CSV describes.
    """
    opts = options or TrackOptions(name=name)
    center = np.asarray(centerline, dtype=float)
    wr = np.asarray(width_right, dtype=float)
    wl = np.asarray(width_left, dtype=float)
    n = center.shape[0]
    index = opts.start_index
    if not -n <= index < n:
        where = opts.descriptor or name
        msg = f"{where}: key 'start.index' is {index}, the centerline has {n} points"
        raise TrackError(msg)
    index %= n
    if opts.reverse:
        center, wr, wl = center[::-1], wl[::-1], wr[::-1]
        index = n - 1 - index
        raceline = kwargs.get('raceline')
        if raceline is not None:
            kwargs['raceline'] = raceline[::-1]
            if kwargs.get('raceline_speed') is not None:
                kwargs['raceline_speed'] = kwargs['raceline_speed'][::-1]
    if walls is None:
        left = polylines.offset(center, wl)
        right = polylines.offset(center, -wr)
        walls = (polylines.close_wall(left), polylines.close_wall(right))
    yaw = float(polylines.headings(center)[index])
    start = (float(center[index, 0]), float(center[index, 1]), yaw)
    height = opts.barrier_height
    if height is None:
        # A full-scale car's bumper LiDAR sits above 0.3 m: give wide tracks walls it sees.
        wide = float(np.median(wr + wl)) > FULL_SCALE_WIDTH
        height = FULL_SCALE_BARRIER_HEIGHT if wide else DEFAULT_BARRIER_HEIGHT
    return Track(
        name=name,
        centerline=center,
        width_right=wr,
        width_left=wl,
        walls=walls,
        start_pose=start,
        barrier_height=height,
        **kwargs,
    )


def save_track(track: Track, folder: Path, name: str | None = None) -> Path:
    """Write a track as a track folder (``track.yaml`` + TUM ``centerline.csv``).

    This is the form of the tracks in ``maps/``, so anything loadable can become a track of
    its own that ``load_track`` finds by name. A track's placed cones go to ``cones.csv`` and
    its mission to ``mission.yaml``; a track without barriers says so (``walls: none``).
    """
    from arsim_core.track.csvio import write_cones_csv, write_tum_centerline

    folder = Path(folder)
    write_tum_centerline(
        folder / 'centerline.csv', track.centerline, track.width_right, track.width_left
    )
    x, y, _ = track.start_pose
    start = int(np.argmin(np.hypot(track.centerline[:, 0] - x, track.centerline[:, 1] - y)))
    text = (
        f'name: {name or track.name}\n'
        'format: tum_csv\n'
        'file: centerline.csv\n'
        'units: m\n'
        f'barrier_height: {track.barrier_height:.6g}\n'
        'start:\n'
        f'  index: {start}\n'
        '  direction: forward\n'
    )
    if track.cones is not None:
        write_cones_csv(folder / 'cones.csv', track.cones)
        text += 'cones: cones.csv\n'
    if track.mission is not None:
        from arsim_core.track.fs.mission import write_mission

        write_mission(track.mission, folder / 'mission.yaml')
        text += 'mission: mission.yaml\n'
    if not track.walls:
        text += 'options:\n  walls: none\n'
    try:
        (folder / TRACK_YAML).write_text(text, encoding='utf-8')
    except OSError as exc:
        msg = f'{folder / TRACK_YAML}: cannot write: {exc}'
        raise TrackError(msg) from exc
    return folder / TRACK_YAML


def _read_raceline(path: Path | None, scale: float) -> dict[str, Any]:
    """Raceline positions and speeds as keyword arguments for ``Track``, or nothing."""
    if path is None:
        return {}
    table = read_f1tenth_raceline(path).values
    return {'raceline': table[:, 1:3] * scale, 'raceline_speed': table[:, 5] * scale}


def _centerline_from_csv(path: Path, opts: TrackOptions) -> tuple[np.ndarray, ...]:
    """Centerline and widths of a TUM CSV, scaled."""
    values = read_tum_centerline(path).values * opts.scale
    return values[:, :2], values[:, 2], values[:, 3]


# ---------------------------------------------------------------------------------------------
# Loaders, one per format


def load_tum_csv(path: Path, opts: TrackOptions) -> Track:
    """TUM racetrack database CSV (``x_m, y_m, w_tr_right_m, w_tr_left_m``), any scale."""
    center, wr, wl = _centerline_from_csv(path, opts)
    walls: tuple[np.ndarray, ...] | None = () if opts.extra.get('walls') == 'none' else None
    return track_from_centerline(
        opts.name, center, wr, wl, opts, walls=walls, source=path,
        **_read_raceline(opts.raceline, opts.scale)
    )


def _map_track(
    grid: OccupancyGridData, path: Path, opts: TrackOptions, walls: tuple[np.ndarray, ...]
) -> Track:
    """Track of an occupancy map: walls given, centerline from a CSV or extracted."""
    if opts.centerline is not None:
        center, wr, wl = _centerline_from_csv(opts.centerline, opts)
    else:
        from arsim_core.track.centerline import extract_centerline

        try:
            center, wr, wl = extract_centerline(grid)
        except TrackError as exc:
            msg = f'{path}: {exc}'
            raise TrackError(msg) from exc
    return track_from_centerline(
        opts.name,
        center,
        wr,
        wl,
        opts,
        walls=walls,
        source=path,
        walls_are_outlines=True,
        occupancy=grid,
        **_read_raceline(opts.raceline, opts.scale),
    )


def _scaled_grid(grid: OccupancyGridData, scale: float) -> OccupancyGridData:
    """The same grid with its metric size multiplied by ``scale``."""
    if scale == 1.0:
        return grid
    x, y, yaw = grid.origin
    return OccupancyGridData(grid.data, grid.resolution * scale, (x * scale, y * scale, yaw))


def load_ros_map(path: Path, opts: TrackOptions) -> Track:
    """ROS map_saver map (yaml + pgm/png): occupied cells become barrier outlines."""
    from arsim_core.track.mapimage import read_ros_map, walls_from_occupancy

    grid, _, _ = read_ros_map(path)
    grid = _scaled_grid(grid, opts.scale)
    simplify = float(opts.extra.get('simplify_cells', 0.3))
    min_cells = int(opts.extra.get('min_region_cells', 1))
    walls = walls_from_occupancy(grid, simplify_cells=simplify, min_cells=min_cells)
    if not walls:
        msg = f'{path}: the map has no occupied cells, so there are no barriers'
        raise TrackError(msg)
    return _map_track(grid, path, opts, walls)


def _f1tenth_files(path: Path) -> tuple[str, Path]:
    """Track name and folder of an F1TENTH racetrack given its folder or its map yaml."""
    if path.is_dir():
        maps = sorted(path.glob('*_map.yaml'))
        if not maps:
            msg = f'{path}: no <Track>_map.yaml in this F1TENTH racetrack folder'
            raise TrackError(msg)
        path = maps[0]
    stem = path.name.removesuffix('_map.yaml').removesuffix('.yaml')
    return stem, path.parent


def load_f1tenth(path: Path, opts: TrackOptions) -> Track:
    """F1TENTH racetrack: map for walls, ``_centerline.csv`` and ``_raceline.csv`` if present."""
    stem, folder = _f1tenth_files(path)
    center_csv = folder / f'{stem}_centerline.csv'
    race_csv = folder / f'{stem}_raceline.csv'
    options = TrackOptions(
        name=opts.name,
        scale=opts.scale,
        barrier_height=opts.barrier_height,
        start_index=opts.start_index,
        reverse=opts.reverse,
        raceline=opts.raceline or (race_csv if race_csv.is_file() else None),
        centerline=opts.centerline or (center_csv if center_csv.is_file() else None),
        descriptor=opts.descriptor,
        extra=opts.extra,
    )
    return load_ros_map(folder / f'{stem}_map.yaml', options)


def load_mesh(path: Path, opts: TrackOptions) -> Track:
    """Ready-made 3D track (obj/stl/glb/...): the mesh is used as is, walls are its section."""
    from arsim_core.track.meshfile import read_track_mesh, walls_from_mesh

    mesh = read_track_mesh(path, opts.scale, str(opts.extra.get('up_axis', 'auto')))
    height = opts.barrier_height
    if height is None:
        labelled = mesh.vertices[np.unique(mesh.triangles[mesh.labels == 1])]
        height = float(labelled[:, 2].max()) if labelled.size else DEFAULT_BARRIER_HEIGHT
    slice_z = float(opts.extra.get('slice_height', min(0.15, 0.5 * height)))
    walls = walls_from_mesh(mesh, slice_z, path)
    resolution = float(opts.extra.get('resolution', 0.05 * max(opts.scale, 1.0)))
    from arsim_core.track.occupancy import rasterize_walls

    grid = rasterize_walls(walls, resolution, margin=4 * resolution, closed_fill=False)
    options = TrackOptions(
        name=opts.name,
        scale=opts.scale,
        barrier_height=height,
        start_index=opts.start_index,
        reverse=opts.reverse,
        raceline=opts.raceline,
        centerline=opts.centerline,
        descriptor=opts.descriptor,
        extra=opts.extra,
    )
    track = _map_track(grid, path, options, walls)
    return _replace(track, mesh=mesh, walls_are_outlines=False, occupancy=None)


def _replace(track: Track, **changes: Any) -> Track:
    """``dataclasses.replace`` that keeps the typing simple at call sites."""
    from dataclasses import replace

    return replace(track, **changes)


TRACK_LOADERS: Mapping[str, TrackLoader] = MappingProxyType(
    {
        'tum_csv': load_tum_csv,
        'f1tenth': load_f1tenth,
        'ros_map': load_ros_map,
        'mesh': load_mesh,
    }
)
"""Loader per ``format`` value of a ``track.yaml``; each takes the data path and options."""


# ---------------------------------------------------------------------------------------------
# Format recognition and the public entry point


def _suffix_format(path: Path) -> tuple[str | None, Section | None]:
    """Format of a bare data file recognised by its suffix (and content for yaml), with the
    yaml document where it was read."""
    suffix = path.suffix.lower()
    by_suffix = {'.csv': 'tum_csv', **dict.fromkeys(MESH_SUFFIXES, 'mesh')}
    if suffix in by_suffix:
        return by_suffix[suffix], None
    if suffix in ('.yaml', '.yml'):
        doc = load_section(path, TrackError)
        by_key = {'format': 'descriptor', 'image': 'ros_map'}
        found = [fmt for key, fmt in by_key.items() if doc.has(key)]
        if found:
            fmt = 'f1tenth' if found[0] == 'ros_map' and _is_f1tenth(path) else found[0]
            return fmt, doc
        msg = f"{path}: yaml is neither a track.yaml (no 'format') nor a map (no 'image')"
        raise TrackError(msg)
    return None, None


def _is_f1tenth(map_yaml: Path) -> bool:
    """True for ``<T>_map.yaml`` with a ``<T>_centerline.csv`` beside it."""
    stem = map_yaml.name.removesuffix('_map.yaml')
    return stem != map_yaml.name and (map_yaml.parent / f'{stem}_centerline.csv').is_file()


DESCRIPTOR_KEYS = frozenset({'name', 'description', 'format', 'file', 'units', 'scale',
                             'barrier_height', 'start', 'raceline', 'centerline', 'options',
                             'cones', 'mission'})
START_KEYS = frozenset({'index', 'direction'})


def _simplify_cells(options: Section, key: str) -> float:
    return options.number(key, minimum=0.0)


def _min_region_cells(options: Section, key: str) -> int:
    return options.integer(key, minimum=1)


def _up_axis(options: Section, key: str) -> str:
    return options.string(key, choices=('auto', 'y', 'z'))


def _walls(options: Section, key: str) -> str:
    return options.string(key, choices=('edges', 'none'))


def _positive(options: Section, key: str) -> float:
    return options.number(key, minimum=0.0, exclusive_minimum=True)


_MAP_OPTIONS: Mapping[str, Callable[[Section, str], Any]] = MappingProxyType(
    {'simplify_cells': _simplify_cells, 'min_region_cells': _min_region_cells})
_FORMAT_OPTION_READERS: Mapping[str, Mapping[str, Callable[[Section, str], Any]]] = {
    'tum_csv': {'walls': _walls}, 'ros_map': _MAP_OPTIONS, 'f1tenth': _MAP_OPTIONS,
    'mesh': {'up_axis': _up_axis, 'slice_height': _positive, 'resolution': _positive}}
FORMAT_OPTIONS = {fmt: frozenset(readers) for fmt, readers in _FORMAT_OPTION_READERS.items()}
"""The ``options:`` each format reads."""


def _options_from_descriptor(doc: Section) -> tuple[str, Path, TrackOptions]:
    """Format, data path and options of a ``track.yaml``; a key that nothing reads is a
    mistake, refused with its line rather than ignored."""
    folder = Path(doc.source).parent
    fmt = doc.string('format', choices=TRACK_LOADERS)
    doc.reject_unknown(DESCRIPTOR_KEYS)
    start = doc.section('start', {})
    start.reject_unknown(START_KEYS)
    options = doc.section('options', {})
    readers = _FORMAT_OPTION_READERS.get(fmt, {})
    options.reject_unknown(readers)
    data = doc.file_inside('file')
    raceline, centerline, cones, mission = (
        doc.file_inside(key) if doc.has(key) else None
        for key in ('raceline', 'centerline', 'cones', 'mission'))
    units = doc.string('units', 'm', choices=UNITS)
    return fmt, data, TrackOptions(
        name=doc.string('name', folder.name),
        scale=UNITS[units] * doc.number('scale', 1.0, minimum=0.0, exclusive_minimum=True),
        barrier_height=(doc.number('barrier_height', minimum=0.0, exclusive_minimum=True)
                        if doc.has('barrier_height') else None),
        start_index=start.integer('index', 0),
        reverse=DIRECTIONS[start.string('direction', 'forward', choices=DIRECTIONS)],
        raceline=raceline,
        centerline=centerline,
        descriptor=Path(doc.source),
        extra={key: readers[key](options, key) for key in options.data},
        cones=cones,
        mission=mission,
    )


def resolve_track(
    spec: str | os.PathLike[str], maps_dir: Path | None = None
) -> tuple[str, Path, TrackOptions]:
    """Work out format, data path and options for a track name or path without loading it."""
    candidate = Path(spec)
    if not candidate.exists():
        root = Path(maps_dir) if maps_dir is not None else default_maps_dir()
        named = root / str(spec)
        if not named.exists():
            known = ', '.join(available_tracks(root)) or 'none'
            msg = f'{spec}: no such track file, and no track of that name in {root} ({known})'
            raise TrackError(msg)
        candidate = named
    if candidate.is_dir():
        if (candidate / TRACK_YAML).is_file():
            candidate = candidate / TRACK_YAML
        elif any(candidate.glob('*_map.yaml')):
            stem, _ = _f1tenth_files(candidate)
            return 'f1tenth', candidate, TrackOptions(name=stem)
        else:
            msg = f'{candidate}: folder has no {TRACK_YAML} and no <Track>_map.yaml'
            raise TrackError(msg)
    fmt, doc = _suffix_format(candidate)
    if fmt == 'descriptor':
        assert doc is not None  # a descriptor is recognised by reading it
        return _options_from_descriptor(doc)
    if fmt is None:
        msg = f'{candidate}: unknown track file type {candidate.suffix!r}'
        raise TrackError(msg)
    name = candidate.stem.removesuffix('_map').removesuffix('_centerline')
    return fmt, candidate, TrackOptions(name=name)


def load_track(spec: str | os.PathLike[str], maps_dir: Path | None = None) -> Track:
    """Load a track by name (a folder in ``maps_dir``) or by path to a folder or file.

    Every problem is reported as one ``TrackError`` naming the file (and line or key); nothing
    is returned half-loaded.
    """
    fmt, path, options = resolve_track(spec, maps_dir)
    track = TRACK_LOADERS[fmt](path, options)
    if options.descriptor is not None:
        track = _replace(track, source=options.descriptor)
    if options.cones is not None:
        from arsim_core.track.csvio import read_cones_csv

        track = _replace(track, cones=read_cones_csv(options.cones, options.scale))
    if options.mission is not None:
        from arsim_core.track.fs.mission import read_mission

        track = _replace(track, mission=read_mission(options.mission, options.scale))
    return track


__all__ = [
    'TRACK_LOADERS',
    'TrackLoader',
    'TrackMesh',
    'TrackOptions',
    'available_tracks',
    'default_maps_dir',
    'load_track',
    'resolve_track',
    'save_track',
    'track_from_centerline',
]
