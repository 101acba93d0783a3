"""Several arsim nodes in one process, served by one executor.

A scene with many cars would otherwise start two processes per car; on a small machine the
wake-ups between them cost more than the work. Each node keeps its own name, namespace,
parameters and remappings, exactly as if it ran alone, so the ROS graph does not change.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable
from typing import Any

from rclpy.node import Node
from rclpy.parameter import Parameter

from arsim_bridge.common import run_nodes
from arsim_core.errors import ArsimError

NODE_TYPES = {
    'dynamics': 'arsim_bridge.dynamics_node:DynamicsNode',
    'sensors': 'arsim_bridge.sensor_node:SensorNode',
    'description': 'arsim_bridge.description_node:DescriptionNode',
}


def node_factory(entry: dict[str, Any]) -> Callable[[], Node]:
    """A factory for one node described as the launch generator describes it."""
    kind = entry.get('type')
    if kind not in NODE_TYPES:
        msg = f'container: unknown node type {kind!r}; expected one of {sorted(NODE_TYPES)}'
        raise ArsimError(msg)
    module, _, cls = NODE_TYPES[kind].partition(':')
    node_class = getattr(importlib.import_module(module), cls)
    cli_args = ['--ros-args', '-r', f'__node:={entry["name"]}']
    if entry.get('namespace'):
        cli_args += ['-r', f'__ns:=/{entry["namespace"]}']
    for source, target in entry.get('remappings', []):
        cli_args += ['-r', f'{source}:={target}']
    overrides = [Parameter(k, value=v) for k, v in entry.get('parameters', {}).items()]
    return lambda: node_class(cli_args=cli_args, use_global_arguments=False,
                              parameter_overrides=overrides)


def main() -> int:
    parser = argparse.ArgumentParser(description='run several arsim nodes in one process')
    parser.add_argument('--nodes', required=True, help='JSON list of node descriptions')
    args, _ros_args = parser.parse_known_args()
    try:
        factories = [node_factory(entry) for entry in json.loads(args.nodes)]
    except (ArsimError, json.JSONDecodeError, KeyError) as exc:
        print(f'[arsim] container: {exc}', file=sys.stderr)
        return 2
    return run_nodes(factories)
