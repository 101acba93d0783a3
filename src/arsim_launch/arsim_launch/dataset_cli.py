"""``arsim-dataset``: labelled datasets from recorded bags (docs/datasets.md). Errors print one
line and exit with status 1.

It lives with the launcher, not in arsim_core, because ``generate`` simulates through the ROS
nodes' publishing code; ``export`` and ``recover`` are arsim_core's and need no ROS."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from arsim_core.dataset.export import FORMATS, export
from arsim_core.errors import ArsimError
from arsim_core.process.entrypoints import stop_on_signals
from arsim_core.recording.recover import recover
from arsim_launch.cli_types import positive_int


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='arsim-dataset', description=__doc__)
    commands = parser.add_subparsers(dest='command', required=True)
    out = commands.add_parser('export', help='labelled camera frames of a bag as YOLO or COCO, '
                                             'labelled LiDAR clouds as SemanticKITTI or NumPy')
    out.add_argument('bag', type=Path, help='a bag recorded with record:=DIR')
    out.add_argument('out', type=Path, help='a new folder for the dataset')
    out.add_argument('--format', choices=FORMATS, default='yolo')
    out.add_argument('--sensor', help='only this camera or LiDAR (its topic, e.g. /camera)')
    batch = commands.add_parser('generate', help='simulate the runs a spec file asks for, '
                                                 'each into a bag of its own, side by side')
    batch.add_argument('spec', type=Path, help='the spec (YAML, docs/datasets.md)')
    batch.add_argument('out', type=Path, help='a folder for the bags and the manifest; '
                                              'the same folder again resumes the batch')
    batch.add_argument('--workers', type=positive_int, help='runs at once on this machine '
                                                         '(default: one per CPU)')
    batch.add_argument('--ray', metavar='auto|ADDRESS',
                       help='schedule the runs on a Ray cluster instead')
    fix = commands.add_parser('recover', help='make a bag whose recording was killed whole, '
                                              'for readers that need its index')
    fix.add_argument('bag', type=Path)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``arsim-dataset``."""
    args = build_parser().parse_args(argv)
    try:
        if args.command == 'generate':
            return _generate(args)
        if args.command == 'recover':
            counts = recover(args.bag)
            print(f'{args.bag}: {sum(counts.values())} messages on {len(counts)} topics')
            return 0
        count = export(args.bag, args.out, args.format, args.sensor)
    except ArsimError as exc:
        print(f'arsim-dataset: error: {exc}', file=sys.stderr)
        return 1
    print(f'wrote {count} labelled frames to {args.out} ({args.format})')
    return 0


def _generate(args: argparse.Namespace) -> int:
    """The batch runs simulate through the ROS nodes' publishing code (rclpy's message types,
    no DDS), imported only here so that ``export`` and ``recover`` run without ROS."""
    from arsim_launch.generate import generate, summary

    stop = stop_on_signals()  # SIGTERM stops the batch as Ctrl-C does
    try:
        manifest = generate(args.spec, args.out, args.workers, args.ray, stop)
    except KeyboardInterrupt:
        print(f'arsim-dataset: stopped; the same command resumes the batch in {args.out}',
              file=sys.stderr)
        return 130
    text, complete = summary(manifest)
    print(text)
    return 0 if complete else 1


if __name__ == '__main__':
    sys.exit(main())
