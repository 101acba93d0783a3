"""The processes of a run as plain data, and the run's plan as JSON.

Kept apart from ``arsim_launch.nodes`` (which reads scenarios, and so imports NumPy, the
tracks and the lenses) so that the pip launcher's supervising process imports none of that:
it stays up for the whole run, and its memory counts in every run's total.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PLAN_FD_ENV = 'ARSIM_PLAN_FD'  # the pipe arsim_launch.plan writes the plan to


@dataclass(frozen=True)
class NodeSpec:
    """One process: a ROS node (``ros=True``) or a plain executable such as the backend."""

    package: str
    executable: str
    name: str
    namespace: str = ''
    parameters: dict[str, Any] = field(default_factory=dict)
    remappings: tuple[tuple[str, str], ...] = ()
    arguments: tuple[str, ...] = ()
    required: bool = False  # its end stops the whole simulation (arsim_launch.failures)
    ros: bool = True
    members: tuple[NodeSpec, ...] = ()  # the nodes a container process hosts
    # A program outside the workspace (a Unity player): its whole command line, which then
    # stands for package, executable and arguments.
    command: tuple[str, ...] = ()

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> NodeSpec:
        """The spec ``dataclasses.asdict`` (through JSON) described."""
        return cls(**{**data,
                      'remappings': tuple((source, target)
                                          for source, target in data['remappings']),
                      'arguments': tuple(data['arguments']),
                      'members': tuple(cls.from_data(member) for member in data['members']),
                      'command': tuple(data['command'])})


@dataclass(frozen=True)
class RunPlan:
    """What the pip launcher starts and how it watches it: the processes, the variables
    they get on top of the launcher's environment, how long a required process may go
    without a heartbeat, and the folders made for the run (its sockets), which the launcher
    removes when the run ends."""

    processes: list[NodeSpec]
    env: dict[str, str]
    heartbeat_timeout_s: float = math.inf
    folders: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> RunPlan:
        data = json.loads(text)
        return cls([NodeSpec.from_data(p) for p in data['processes']], data['env'],
                   data['heartbeat_timeout_s'], data['folders'])


def remove_folders(folders: Iterable[str | Path]) -> None:
    """Remove a run's folders (``RunPlan.folders``), whatever is in them, if still there."""
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
