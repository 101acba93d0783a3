"""``arsim-dataset``: labelled datasets from recorded bags (docs/datasets.md). Errors print one
line and exit with status 1."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from arsim_core.dataset.export import FORMATS, export
from arsim_core.errors import ArsimError
from arsim_core.recording.recover import recover


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='arsim-dataset', description=__doc__)
    commands = parser.add_subparsers(dest='command', required=True)
    out = commands.add_parser('export', help='labelled camera frames of a bag as YOLO or COCO, '
                                             'labelled LiDAR clouds as SemanticKITTI or NumPy')
    out.add_argument('bag', type=Path, help='a bag recorded with record:=DIR')
    out.add_argument('out', type=Path, help='a new folder for the dataset')
    out.add_argument('--format', choices=FORMATS, default='yolo')
    out.add_argument('--sensor', help='only this camera or LiDAR (its topic, e.g. /camera)')
    fix = commands.add_parser('recover', help='make a bag whose recording was killed whole, '
                                              'for readers that need its index')
    fix.add_argument('bag', type=Path)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``arsim-dataset``."""
    args = build_parser().parse_args(argv)
    try:
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


if __name__ == '__main__':
    sys.exit(main())
