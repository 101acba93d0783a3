"""sim.launch.py without ros2 launch installed: the launch and launch_ros classes it uses are
replaced by recorders, so its arguments and the processes it starts can be checked here."""

from __future__ import annotations

import runpy
import sys
import types
from pathlib import Path

import pytest

from arsim_launch.arguments import NAMES

LAUNCH_FILE = Path(__file__).resolve().parents[2] / 'src' / 'arsim_launch' / 'launch' / \
    'sim.launch.py'


class Action:
    def __init__(self, *args, **kwargs) -> None:
        self.args, self.kwargs = args, kwargs


@pytest.fixture
def launch_file(monkeypatch):
    """``launch_file(**arguments)``: the launch description's declared arguments and the
    names of the processes it starts with ``arguments``."""
    def load(**arguments: str) -> tuple[list[str], list[str]]:
        values = {name: '' for name in NAMES} | {'rviz': 'false'} | arguments

        class LaunchConfiguration:
            def __init__(self, name: str) -> None:
                self.name = name

            def perform(self, _context) -> str:
                return values[self.name]

        kinds = {name: type(name, (Action,), {}) for name in (
            'LaunchDescription', 'DeclareLaunchArgument', 'EmitEvent', 'ExecuteProcess',
            'OpaqueFunction', 'RegisterEventHandler', 'OnProcessExit', 'Shutdown', 'Node',
            'ParameterValue')}
        modules = {'launch': ['LaunchDescription'],
                   'launch.actions': ['DeclareLaunchArgument', 'EmitEvent', 'ExecuteProcess',
                                      'OpaqueFunction', 'RegisterEventHandler'],
                   'launch.event_handlers': ['OnProcessExit'], 'launch.events': ['Shutdown'],
                   'launch_ros': [], 'launch_ros.actions': ['Node'],
                   'launch_ros.parameter_descriptions': ['ParameterValue']}
        for module, members in modules.items():
            stub = types.ModuleType(module)
            for member in members:
                setattr(stub, member, kinds[member])
            monkeypatch.setitem(sys.modules, module, stub)
        monkeypatch.setitem(sys.modules, 'launch.substitutions', types.SimpleNamespace(
            LaunchConfiguration=LaunchConfiguration))
        code = runpy.run_path(str(LAUNCH_FILE))
        description = code['generate_launch_description']()
        declared = [a.args[0] for a in description.args[0]
                    if type(a).__name__ == 'DeclareLaunchArgument']
        started = [a.kwargs['name'] for a in code['_processes'](None)
                   if type(a).__name__ in ('Node', 'ExecuteProcess')]
        return declared, started
    return load


def test_every_launch_argument_is_declared(launch_file) -> None:
    declared, _ = launch_file()
    assert declared == list(NAMES)


def test_cars_argument_starts_the_container_processes(launch_file) -> None:
    _, started = launch_file(cars='2')
    assert started[:3] == ['backend', 'arsim_bridge', 'track_loader']
    assert {'cars_dynamics', 'cars_sensors'} <= set(started)
