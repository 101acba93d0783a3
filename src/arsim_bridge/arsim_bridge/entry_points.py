"""The nodes' console scripts: each imports its node only once a stop request during the
import would end it quietly (``arsim_core.process.entrypoints``)."""

from __future__ import annotations

from arsim_core.process.entrypoints import run


def bridge() -> None:
    run('arsim_bridge.bridge_node')


def container() -> None:
    run('arsim_bridge.container')


def description() -> None:
    run('arsim_bridge.description_node', steps_cars=False)


def dynamics() -> None:
    run('arsim_bridge.dynamics_node')


def sensors() -> None:
    run('arsim_bridge.sensor_node', steps_cars=False)


def track_loader() -> None:
    run('arsim_bridge.track_node', steps_cars=False)


def foxglove() -> None:
    run('arsim_bridge.foxglove_node')


def autopilot() -> None:
    run('arsim_bridge.autopilot_node')


def recorder() -> None:
    run('arsim_bridge.recorder_node')
