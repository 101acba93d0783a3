"""``arsim-fit``: fit a car profile to a real car's recorded drive (docs/digital-twins.md).

Reads a rosbag2 bag (MCAP or SQLite) of the car's commands, odometry and IMU, fits the
parameters the drive identifies and writes the fitted profile, an HTML report and a
domain-randomisation file. Errors print one line and exit with status 1."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from arsim_core.errors import ArsimError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='arsim-fit', description=__doc__)
    parser.add_argument('bag', type=Path, help='the recorded drive: a rosbag2 folder')
    parser.add_argument('--profile', type=Path, required=True,
                        help='the car profile to start from (config/cars/*.yaml or a path)')
    parser.add_argument('-o', '--output', type=Path, required=True,
                        help='the fitted profile to write')
    parser.add_argument('--report', type=Path, required=True, help='the HTML report to write')
    parser.add_argument('--randomization', type=Path,
                        help='the domain-randomisation file to write (default: beside the '
                             'fitted profile, <name>.randomization.yaml)')
    parser.add_argument('--quiet', action='store_true', help='no progress bar')
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``arsim-fit``."""
    from arsim_core.fit.run import fit_bag

    args = build_parser().parse_args(argv)
    randomization = args.randomization or args.output.with_name(
        f'{args.output.stem}.randomization.yaml')
    try:
        profile = _profile(args.profile)
        outcome = fit_bag(args.bag, profile, args.output, args.report, randomization,
                          progress=not args.quiet)
    except ArsimError as exc:
        print(f'arsim-fit: error: {exc}', file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print('arsim-fit: stopped; nothing written', file=sys.stderr)
        return 130
    identified = [name for name, v in outcome.verdicts.items() if v.identified]
    missing = [name for name, v in outcome.verdicts.items() if not v.identified]
    before, after = outcome.start_errors.replay_error, outcome.fitted_errors.replay_error
    ratio = before / after if after > 0 else math.inf
    print(f'replay error {before:.2%} -> {after:.2%} ({ratio:.1f} times lower) in '
          f'{outcome.seconds:.1f} s')
    print(f'identified: {", ".join(identified) or "nothing"}')
    if missing:
        print(f'not identified (the report says why): {", ".join(missing)}')
    print(f'wrote {args.output}, {randomization} and {args.report}')
    return 0


def _profile(value: Path) -> Path:
    """A profile by path, or by name from config/cars/ as the launcher takes it."""
    if value.exists() or value.suffix:
        return value
    from arsim_launch.resources import resources_dir

    return resources_dir() / 'config' / 'cars' / f'{value}.yaml'


if __name__ == '__main__':
    sys.exit(main())
