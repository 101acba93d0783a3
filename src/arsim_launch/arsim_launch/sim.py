"""``python3 -m arsim_launch.sim``: run a scenario without ros2 launch.

Arguments mirror ``ros2 launch arsim_launch sim.launch.py``: ``config:=<file>``,
``topic_map:=<name>``, ``rtf:=<factor>``, ``backend:=embedded|unity|<address>``,
``rviz:=true``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from arsim_core.errors import ArsimError
from arsim_launch.nodes import generate_nodes, has_package, rviz_node, validate
from arsim_launch.resources import default_settings, launch_overrides, resources_dir
from arsim_launch.runner import run, stop_on_signals
from arsim_launch.sockets import load_run


def parse_arguments(argv: list[str]) -> dict[str, str]:
    arguments = {}
    for item in argv:
        key, sep, value = item.partition(':=')
        if not sep:
            msg = f'expected arguments as name:=value, got {item!r}'
            raise ArsimError(msg)
        arguments[key] = value
    return arguments


def main(argv: list[str] | None = None) -> int:
    stop_on_signals()
    try:
        return _main(argv)
    except KeyboardInterrupt:  # stopped before anything was started
        return 0


def _main(argv: list[str] | None) -> int:
    try:
        arguments = parse_arguments(sys.argv[1:] if argv is None else argv)
        wants_rviz = arguments.pop('rviz', 'false').lower() in ('true', '1', 'yes')
        resources = resources_dir()
        settings = Path(arguments.pop('config', '') or default_settings(resources)).resolve()
        scenario, overrides = load_run(settings, resources, launch_overrides(arguments))
        validate(scenario)
    except ArsimError as exc:
        print(f'[arsim] error: {exc}', file=sys.stderr)
        return 2
    print(f'[arsim] {scenario.source}: {len(scenario.cars)} car(s) on {scenario.track.name!r}, '
          f'topic map {scenario.topic_map.name!r}', file=sys.stderr)
    processes = generate_nodes(scenario, settings, overrides)
    if wants_rviz:
        if has_package('rviz2'):
            processes.append(rviz_node(scenario))
        else:
            print('[arsim] rviz2 is not installed here (the PyPI runtime has none); run it '
                  'where ROS 2 is installed, on the same ROS_DOMAIN_ID', file=sys.stderr)
    return run(processes, grace_s=scenario.backend.timeout_s + 3.0)


if __name__ == '__main__':
    sys.exit(main())
