"""``arsim-track``: convert, generate, extract and preview tracks from the command line.

Every subcommand reads tracks the way the simulator does (``load_track``), so whatever it
accepts the simulator accepts too. Errors print one line and exit with status 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

import numpy as np

from arsim_core.errors import TrackError
from arsim_core.track import polylines
from arsim_core.track.csvio import write_tum_centerline
from arsim_core.track.fs.mission import KINDS as FS_MISSIONS
from arsim_core.track.loaders import (
    MESH_SUFFIXES,
    TrackOptions,
    load_track,
    save_track,
    track_from_centerline,
)
from arsim_core.track.model import Track
from arsim_core.track.textfiles import read_numeric_csv


def _load(args: argparse.Namespace, spec: str) -> Track:
    """Load a track named on the command line, honouring ``--maps-dir``."""
    return load_track(spec, Path(args.maps_dir) if args.maps_dir else None)


def _write_csv(track: Track, out: Path, args: argparse.Namespace) -> None:
    del args
    write_tum_centerline(out, track.centerline, track.width_right, track.width_left)


def _write_map(track: Track, out: Path, args: argparse.Namespace) -> None:
    from arsim_core.track.mapimage import write_ros_map
    from arsim_core.track.occupancy import rasterize

    write_ros_map(rasterize(track, resolution=args.resolution, margin=args.margin), out)


def _write_mesh(track: Track, out: Path, args: argparse.Namespace) -> None:
    from arsim_core.track.mesh import track_mesh
    from arsim_core.track.meshfile import export_mesh

    mesh = track_mesh(track, height=args.height, profile=args.profile, cones=args.cones)
    export_mesh(mesh, out)


WRITERS: Mapping[str, Callable[[Track, Path, argparse.Namespace], None]] = MappingProxyType(
    {
        '.csv': _write_csv,
        '.yaml': _write_map,
        '.yml': _write_map,
        **dict.fromkeys(MESH_SUFFIXES, _write_mesh),
    }
)
"""Output writer by file suffix; a path without suffix becomes a track folder."""


def _write_any(track: Track, out: Path, args: argparse.Namespace) -> None:
    """Write a track in the form the output path asks for."""
    suffix = out.suffix.lower()
    if not suffix:
        save_track(track, out, name=args.name or out.name)
        return
    if suffix not in WRITERS:
        msg = f'{out}: unknown output type {suffix!r}; use {", ".join(WRITERS)} or a folder'
        raise TrackError(msg)
    WRITERS[suffix](track, out, args)


def cmd_convert(args: argparse.Namespace) -> int:
    """Convert any loadable track into a CSV, a ROS map, a mesh file or a track folder."""
    track = _load(args, args.source)
    _write_any(track, Path(args.output), args)
    print(f'wrote {args.output} ({track.name}, {track.length:.1f} m)')
    return 0


def cmd_random(args: argparse.Namespace) -> int:
    """Generate a random valid track from a seed."""
    from arsim_core.track.generator import RandomTrackParams, random_track

    params = RandomTrackParams(
        waypoints=args.waypoints,
        area=(args.area[0], args.area[1]),
        min_radius=args.min_radius,
        min_width=args.min_width,
        width_variation=args.width_variation,
        spacing=args.spacing,
        seed=args.seed,
    )
    made = random_track(params)
    name = args.name or f'random_{args.seed}'
    track = track_from_centerline(
        name, made.centerline, made.width_right, made.width_left, TrackOptions(name=name)
    )
    _write_any(track, Path(args.output), args)
    print(
        f'wrote {args.output} (seed {args.seed}: {made.length:.1f} m, '
        f'min radius {made.min_radius:.2f} m)'
    )
    return 0


def cmd_fs(args: argparse.Namespace) -> int:
    """Write the track folder of a Formula Student driverless mission."""
    from arsim_core.track.fs import generate

    out = Path(args.output)
    track = generate(args.mission, args.seed, args.name or out.name)
    save_track(track, out, name=args.name or out.name)
    assert track.mission is not None and track.cones is not None
    print(f'wrote {out} ({args.mission}: {len(track.cones)} cones, '
          f'{track.mission.laps} lap{"s" if track.mission.laps > 1 else ""})')
    return 0


def cmd_centerline(args: argparse.Namespace) -> int:
    """Extract the centerline of an occupancy map and save it as a TUM CSV."""
    from arsim_core.track.centerline import extract_centerline
    from arsim_core.track.mapimage import read_ros_map

    path = Path(args.map)
    grid, _, _ = read_ros_map(path)
    try:
        center, wr, wl = extract_centerline(
            grid,
            spacing=args.spacing,
            clockwise=args.clockwise,
            seed=tuple(args.seed_point) if args.seed_point else None,
        )
    except TrackError as exc:
        msg = f'{path}: {exc}'
        raise TrackError(msg) from exc
    write_tum_centerline(Path(args.output), center, wr, wl)
    print(f'wrote {args.output} ({len(center)} points, {polylines.closed_length(center):.1f} m)')
    return 0


def cmd_spline(args: argparse.Namespace) -> int:
    """Turn control points (x, y, w_right, w_left) into a smooth TUM centerline."""
    from arsim_core.track.generator import spline_track

    table = read_numeric_csv(Path(args.control), 4, 'control points (x, y, w_right, w_left)')
    cp = table.values
    made = spline_track(cp[:, :2], cp[:, 2], cp[:, 3], spacing=args.spacing)
    write_tum_centerline(Path(args.output), made.centerline, made.width_right, made.width_left)
    print(f'wrote {args.output} ({made.length:.1f} m, min radius {made.min_radius:.2f} m)')
    return 0


def cmd_preview(args: argparse.Namespace) -> int:
    """Render a PNG of a track."""
    from arsim_core.track.preview import save_preview

    track = _load(args, args.track)
    save_preview(track, Path(args.output), size=args.size)
    print(f'wrote {args.output}')
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    """Print the facts of a track."""
    track = _load(args, args.track)
    width = track.width_left + track.width_right
    kappa = float(np.abs(track.curvature).max())
    x, y, yaw = track.start_pose
    print(f'name:           {track.name}')
    print(f'source:         {track.source}')
    print(f'length:         {track.length:.2f} m ({len(track.centerline)} points)')
    print(f'width:          {width.min():.2f} .. {width.max():.2f} m')
    print(f'min radius:     {1.0 / kappa if kappa else float("inf"):.2f} m')
    print(f'walls:          {len(track.walls)} polylines')
    print(f'start pose:     x={x:.3f} y={y:.3f} yaw={yaw:.3f}')
    print(f'barrier height: {track.barrier_height:.2f} m')
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, separate from ``main`` so docs and tests can inspect it."""
    parser = argparse.ArgumentParser(prog='arsim-track', description=__doc__.splitlines()[0])
    parser.add_argument('--maps-dir', help='folder of named tracks (default: arsim maps/)')
    sub = parser.add_subparsers(dest='command', required=True)

    def outputs(p: argparse.ArgumentParser) -> None:
        p.add_argument('--name', help='track name when writing a track folder')
        p.add_argument('--resolution', type=float, default=0.05, help='map cell size, m')
        p.add_argument('--margin', type=float, default=1.0, help='free border of a map, m')
        p.add_argument('--height', type=float, default=None, help='barrier height, m')
        p.add_argument('--profile', default='wall', choices=('wall', 'beam', 'pipe'))
        p.add_argument('--cones', action='store_true', help='add blue/yellow cones to meshes')

    p = sub.add_parser('convert', help='convert a track to csv, map yaml, mesh or folder')
    p.add_argument('source', help='track name or path')
    p.add_argument('output', help='.csv | .yaml (ROS map) | .obj/.stl/.glb/.ply | folder')
    outputs(p)
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser('random', help='generate a random track from a seed')
    p.add_argument('output', help='.csv | .yaml | mesh file | folder')
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--waypoints', type=int, default=12)
    p.add_argument('--area', type=float, nargs=2, default=(30.0, 20.0), metavar=('W', 'H'))
    p.add_argument('--min-radius', type=float, default=2.0)
    p.add_argument('--min-width', type=float, default=2.0)
    p.add_argument('--width-variation', type=float, default=0.6)
    p.add_argument('--spacing', type=float, default=0.2, help='centerline point spacing, m')
    outputs(p)
    p.set_defaults(func=cmd_random)

    p = sub.add_parser('fs', help='write a Formula Student driverless mission track folder')
    p.add_argument('mission', help=f'one of: {", ".join(FS_MISSIONS)}')
    p.add_argument('output', help='track folder to write')
    p.add_argument('--seed', type=int, default=0, help='picks the autocross/trackdrive course')
    p.add_argument('--name', help='track name (default: the folder name)')
    p.set_defaults(func=cmd_fs)

    p = sub.add_parser('centerline', help='extract the centerline of a ROS map as TUM CSV')
    p.add_argument('map', help='map_saver yaml')
    p.add_argument('output', help='TUM CSV to write')
    p.add_argument('--spacing', type=float, default=None, help='point spacing, m')
    p.add_argument('--clockwise', action='store_true', help='drive clockwise')
    p.add_argument(
        '--seed-point',
        type=float,
        nargs=2,
        metavar=('X', 'Y'),
        help='a point on the track when the map has several closed areas',
    )
    p.set_defaults(func=cmd_centerline)

    p = sub.add_parser('spline', help='smooth centerline through control points')
    p.add_argument('control', help='CSV of x, y, w_right, w_left control points')
    p.add_argument('output', help='TUM CSV to write')
    p.add_argument('--spacing', type=float, default=0.1)
    p.set_defaults(func=cmd_spline)

    p = sub.add_parser('preview', help='render a PNG of a track')
    p.add_argument('track', help='track name or path')
    p.add_argument('output', help='PNG to write')
    p.add_argument('--size', type=int, default=1200, help='long side in pixels')
    p.set_defaults(func=cmd_preview)

    p = sub.add_parser('info', help='print length, widths, radius and start of a track')
    p.add_argument('track', help='track name or path')
    p.set_defaults(func=cmd_info)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``arsim-track``."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except TrackError as exc:
        print(f'arsim-track: error: {exc}', file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
