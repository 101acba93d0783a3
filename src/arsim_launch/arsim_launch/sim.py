"""``python3 -m arsim_launch`` (through ``__main__``): run a scenario without ros2 launch.

Arguments are those of ``ros2 launch arsim_launch sim.launch.py`` (``arsim_launch.arguments``),
e.g. ``track:=<name or path> cars:=3 profile:=<name> rtf:=1.0``; ``--help`` lists them.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from arsim_core.errors import ArsimError
from arsim_core.process.entrypoints import stop_on_signals
from arsim_launch.arguments import launch_overrides, parse_arguments, usage
from arsim_launch.nodes import generate_nodes, has_package, rviz_node, validate
from arsim_launch.process_environment import process_environment
from arsim_launch.resources import default_settings, resources_dir
from arsim_launch.runner import run
from arsim_launch.sockets import load_run


def main(argv: list[str] | None = None) -> int:
    stop = stop_on_signals()  # SIGTERM stops the runner as Ctrl-C does, also during start-up
    try:
        return _main(argv, stop)
    except KeyboardInterrupt:  # stopped before anything was started
        return 0


def _main(argv: list[str] | None, stop: threading.Event) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if {'-h', '--help'} & set(argv):
        print(f'usage: python3 -m arsim_launch [name:=value ...]\n{usage()}')
        return 0
    try:
        arguments = parse_arguments(argv)
        wants_rviz = arguments.pop('rviz', 'false').lower() in ('true', '1', 'yes')
        resources = resources_dir()
        settings = Path(arguments.pop('config', '') or default_settings(resources)).resolve()
        scenario, overrides = load_run(settings, resources,
                                       launch_overrides(arguments, settings, resources))
        validate(scenario)
    except ArsimError as exc:
        print(f'[arsim] error: {exc}', file=sys.stderr)
        return 2
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
    return run(processes, stop, scenario.heartbeat_timeout_s, env)


if __name__ == '__main__':
    sys.exit(main())
