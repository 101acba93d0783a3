"""Where the installed configuration lives."""

from __future__ import annotations

from pathlib import Path

from arsim_core.errors import ArsimError


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
