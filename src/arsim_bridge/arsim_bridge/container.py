"""Several arsim nodes in one process, served by one executor.

A scene with many cars would otherwise start two processes per car; on a small machine the
wake-ups between them cost more than the work. A one-process run (``simulation.one_process``)
hosts every node here, the bridge included, whose lockstep loop then spins the one executor
that serves them all (and renders in process: no backend process either). Each node keeps its
own name, namespace, parameters and remappings, exactly as if it ran alone, so the ROS graph
does not change.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable
from typing import Any

import rclpy.logging
from rclpy.node import Node
from rclpy.parameter import Parameter

from arsim_bridge.common import Spin, run_nodes
from arsim_core.errors import ArsimError
from arsim_core.process.entrypoints import quietly_stoppable

NODE_TYPES = {
    'bridge': 'arsim_bridge.bridge_node:Bridge',
    'track_loader': 'arsim_bridge.track_node:TrackNode',
    'dynamics': 'arsim_bridge.dynamics_node:DynamicsNode',
    'sensors': 'arsim_bridge.sensor_node:SensorNode',
    'description': 'arsim_bridge.description_node:DescriptionNode',
    'autopilot': 'arsim_bridge.autopilot_node:Autopilot',
    'foxglove': 'arsim_bridge.foxglove_node:FoxgloveView',
    'recorder': 'arsim_bridge.recorder_node:Recorder',
}


def node_factory(entry: dict[str, Any]) -> Callable[[], Node | None]:
    """A factory for one node described as the launch generator describes it. A node that is
    not required (a live view) and cannot start is reported and left out, as the launchers
    report such a process that ends: the factory then gives None."""
    module, _, cls = NODE_TYPES[entry['type']].partition(':')
    node_class = getattr(importlib.import_module(module), cls)
    cli_args = ['--ros-args', '-r', f'__node:={entry["name"]}']
    if entry.get('namespace'):
        cli_args += ['-r', f'__ns:=/{entry["namespace"]}']
    for source, target in entry.get('remappings', []):
        cli_args += ['-r', f'{source}:={target}']
    overrides = [Parameter(k, value=v) for k, v in entry.get('parameters', {}).items()]

    def make() -> Node | None:
        try:
            return node_class(cli_args=cli_args, use_global_arguments=False,
                              parameter_overrides=overrides)
        except ArsimError as exc:
            if entry.get('required', True):
                raise
            rclpy.logging.get_logger(entry['name']).error(
                f'{exc}; the simulation goes on without {entry["name"]}')
            return None

    return make


def hosted(entries: list[dict[str, Any]]) -> tuple[list[Callable[[], Node | None]], Spin | None]:
    """The node factories of a container's node list (the bridge first: its loop spins them
    all), and that loop."""
    for entry in entries:
        if entry.get('type') not in NODE_TYPES:
            msg = (f'container: unknown node type {entry.get("type")!r}; expected one of '
                   f'{sorted(NODE_TYPES)}')
            raise ArsimError(msg)
    nodes = sorted(entries, key=lambda e: e['type'] != 'bridge')
    spin = None
    if nodes and nodes[0]['type'] == 'bridge':
        from arsim_bridge.bridge_node import spin_bridge

        spin = spin_bridge
    return [node_factory(entry) for entry in nodes], spin


def main() -> int:
    parser = argparse.ArgumentParser(description='run several arsim nodes in one process')
    parser.add_argument('--nodes', required=True, help='JSON list of node descriptions')
    args, _ros_args = parser.parse_known_args()
    try:
        with quietly_stoppable():  # imports every node's module: seconds in which a stop
            factories, spin = hosted(json.loads(args.nodes))  # must not print a traceback
    except (ArsimError, json.JSONDecodeError, KeyError) as exc:
        print(f'[arsim] container: {exc}', file=sys.stderr)
        return 2
    return run_nodes(factories, spin)
