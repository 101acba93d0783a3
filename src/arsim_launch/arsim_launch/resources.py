"""Where the installed configuration lives, and launch arguments as settings overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arsim_core.errors import ArsimError

LAUNCH_ARGUMENTS = ('topic_map', 'rtf', 'backend')


def resources_dir() -> Path:
    """The folder holding config/, maps/ and rviz/: the installed share of this package."""
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

    try:
        return Path(get_package_share_directory('arsim_launch'))
    except PackageNotFoundError as exc:
        msg = 'arsim_launch is not installed; build the workspace and source install/setup.bash'
        raise ArsimError(msg) from exc


def default_settings(resources: Path) -> Path:
    return resources / 'config' / 'sim.yaml'


def launch_overrides(arguments: dict[str, str]) -> dict[str, Any]:
    """Settings overrides from launch arguments (empty values mean 'as in the file')."""
    unknown = sorted(set(arguments) - set(LAUNCH_ARGUMENTS) - {'config'})
    if unknown:
        expected = ', '.join(('config', *LAUNCH_ARGUMENTS, 'rviz'))
        msg = f'unknown launch argument(s) {unknown}; expected {expected}'
        raise ArsimError(msg)
    overrides: dict[str, Any] = {}
    if arguments.get('topic_map'):
        overrides['topic_map'] = arguments['topic_map']
    if arguments.get('rtf'):
        try:
            overrides['simulation'] = {'real_time_factor': float(arguments['rtf'])}
        except ValueError as exc:
            msg = f'launch argument rtf: expected a number, got {arguments["rtf"]!r}'
            raise ArsimError(msg) from exc
    backend = arguments.get('backend', '')
    if backend in ('embedded', 'unity'):
        overrides['backend'] = {'kind': backend}
    elif backend:
        overrides['backend'] = {'kind': 'external', 'address': backend}
    return overrides
