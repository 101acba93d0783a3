"""``arsim-race``: races between drivers of the zoo and Gym policies, in process and without
ROS, and leagues that may hold ROS stacks too, whose events then run on the ROS graph
(docs/race-control.md, "The driver zoo" and "Leagues"). Errors print one line and exit
with status 1 (2 for a bad spec or scenario).

``arsim-race run SCENARIO --laps N [-o OUT]``: one race of the scenario's cars, each driven
by its ``driver``, to the chequered flag (without ``--laps``, the scenario's ``race.event`` if
it has one); prints the classification and, with ``-o``, writes it (``classification.yaml``)
and the race's incident clips (``clips/``) into OUT.
``arsim-race league SPEC``: the league's events side by side, then its rating table, written
as ``index.html`` and ``league.json``, each event's classification and clips beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from arsim_core.config.race_event import STANDING, STARTS
from arsim_core.errors import ArsimError, ConfigError
from arsim_launch.cli_types import positive_int


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='arsim-race', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest='command', required=True)
    one = commands.add_parser('run', help='one race of a scenario\'s cars to the flag')
    one.add_argument('scenario', type=Path, help='a scenario whose cars name their driver, '
                                                 'e.g. config/race/twenty_cars.yaml')
    one.add_argument('--laps', type=positive_int,
                     help='laps of one race (default: the scenario\'s race.event, else 1)')
    one.add_argument('--start', choices=STARTS, default=STANDING,
                     help='the start of that race (default: standing)')
    one.add_argument('-o', '--out', type=Path,
                     help='a folder for the classification and the incident clips')
    one.add_argument('--track', help='a track name in maps/ or a path (default: the '
                                     'scenario\'s)')
    one.add_argument('--seed', type=int, default=0)
    one.add_argument('--max-time', type=float, help='stop the race after this much sim time')
    one.add_argument('--json', type=Path, help='also write the results here')
    league = commands.add_parser('league', help='a league of events and its rating table')
    league.add_argument('spec', type=Path, help='the league spec (YAML, docs/race-control.md)')
    league.add_argument('-o', '--out', type=Path,
                        help='a folder for the results (default: <spec name>_results beside '
                             'the spec)')
    league.add_argument('--workers', type=positive_int, help='events at once on this machine '
                                                         '(default: one per CPU)')
    league.add_argument('--ray', metavar='auto|ADDRESS',
                        help='run the events on a Ray cluster instead')
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``arsim-race``."""
    args = build_parser().parse_args(argv)
    try:
        return _league(args) if args.command == 'league' else _run(args)
    except ConfigError as exc:
        print(f'arsim-race: error: {exc}', file=sys.stderr)
        return 2
    except ArsimError as exc:
        print(f'arsim-race: error: {exc}', file=sys.stderr)
        return 1


def resources() -> Path:
    """config/ and maps/, found as the Gymnasium environment finds them (no ROS needed)."""
    from arsim_gym.setup import resources_dir

    return resources_dir()


def _run(args: argparse.Namespace) -> int:
    from arsim_core.config.scenario import load_scenario
    from arsim_core.league.race import run_race
    from arsim_core.track import load_track
    from arsim_launch.race_clips import race_clips

    found = resources()
    overrides = {'track': {'name': args.track}} if args.track else {}
    scenario = load_scenario(args.scenario, found, overrides)
    track = load_track(scenario.track.name, found / 'maps')
    result = run_race(scenario, track, args.laps, start=args.start, seed=args.seed,
                      max_time_s=args.max_time, out=args.out, clips=race_clips)
    print(result.table())
    print(f'{result.sim_s:.1f} s raced in {result.wall_s:.1f} s '
          f'({result.real_time_factor:.2f}x real time), {result.collisions} contacts, '
          f'{len(result.incidents)} rulings' + ('' if result.finished else
                                                 '; stopped at the time limit'))
    if result.classification_file is not None:
        print(f'classification: {result.classification_file}; {len(result.clips)} clips')
    if args.json:
        args.json.write_text(json.dumps(result.to_dict(), indent=1))
    return 0


def _league(args: argparse.Namespace) -> int:
    from arsim_core.league.run import run_event, run_league
    from arsim_core.league.spec import load_league
    from arsim_launch.league_ros import run_ros_event
    from arsim_launch.race_clips import race_clips

    found = resources()
    spec = load_league(args.spec, found)
    out = args.out or args.spec.resolve().parent / f'{args.spec.stem}_results'
    result = run_league(spec, out.resolve(), found, args.workers or os.cpu_count() or 1,
                        args.ray, clips=race_clips,
                        runner=run_ros_event if spec.over_ros else run_event)
    for row in result.ratings:
        print(f'{row.name:<16} rating {row.ordinal:7.2f}  (mu {row.mu:.2f}, '
              f'sigma {row.sigma:.2f}, {row.events} events)')
    print(f'results: {", ".join(str(f) for f in result.files)}')
    return 1 if result.failed else 0


if __name__ == '__main__':
    sys.exit(main())
