"""The pip launcher's planning step: read and check the configuration of
``python3 -m arsim_launch name:=value ...`` and turn it into the run's plan
(``node_spec.RunPlan``), written as JSON to the file descriptor ``node_spec.PLAN_FD_ENV`` names.

It runs in a short-lived process of its own (``arsim_launch.sim`` starts it), so the
launcher that then supervises the run for its whole length never imports the configuration's
readers: NumPy, the tracks, the lenses, their 25 MiB.

Exit code: 0 (with a plan written, or after ``--help``), 2 for a configuration error, which is
printed as one line.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from arsim_core.errors import ArsimError
from arsim_launch.arguments import launch_overrides, parse_arguments, usage
from arsim_launch.node_spec import PLAN_FD_ENV, RunPlan, remove_folders
from arsim_launch.nodes import generate_nodes, has_package, rviz_node, validate
from arsim_launch.process_environment import process_environment
from arsim_launch.resources import default_settings, resources_dir
from arsim_launch.sockets import load_run


def make_plan(argv: list[str]) -> RunPlan | None:
    """The plan of the run ``argv`` asks for, its summary printed; None after ``--help``.
    Raises ArsimError for a configuration that cannot run, having removed what it made."""
    if {'-h', '--help'} & set(argv):
        print(f'usage: python3 -m arsim_launch [name:=value ...]\n{usage()}')
        return None
    folders: list[Path] = []  # the run's, removed by the launcher when the run ends
    try:
        return _plan(argv, folders)
    except BaseException:
        remove_folders(folders)
        raise


def _plan(argv: list[str], folders: list[Path]) -> RunPlan:
    """``make_plan`` past ``--help``; the folders it makes go in ``folders``."""
    arguments = parse_arguments(argv)
    wants_rviz = arguments.pop('rviz', 'false').lower() in ('true', '1', 'yes')
    resources = resources_dir()
    settings = Path(arguments.pop('config', '') or default_settings(resources)).resolve()
    scenario, overrides = load_run(settings, resources,
                                   launch_overrides(arguments, settings, resources),
                                   owner=folders.append)
    validate(scenario)
    print(f'[arsim] {scenario.source}: {len(scenario.cars)} car(s) on {scenario.track.name!r}, '
          f'topic map {scenario.topic_map.name!r}', file=sys.stderr)
    env, discovery = process_environment(scenario, os.environ)
    print(f'[arsim] {discovery}', file=sys.stderr)
    processes = generate_nodes(scenario, settings, overrides)
    if wants_rviz:
        if has_package('rviz2'):
            processes.append(rviz_node(scenario))
        else:
            print('[arsim] rviz2 is not installed here (the PyPI runtime has none); run it '
                  'where ROS 2 is installed, on the same ROS_DOMAIN_ID', file=sys.stderr)
    return RunPlan(processes, env, scenario.heartbeat_timeout_s, [str(f) for f in folders])


def main() -> int:
    try:
        plan = make_plan(sys.argv[1:])
    except ArsimError as exc:
        print(f'[arsim] error: {exc}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # the launcher was stopped: it asks us to stop too
        return 0
    if plan is not None:
        try:
            with os.fdopen(int(os.environ[PLAN_FD_ENV]), 'w') as out:
                out.write(plan.to_json())
        except BrokenPipeError:  # the launcher is gone: nobody will run the plan
            remove_folders(plan.folders)
    return 0
