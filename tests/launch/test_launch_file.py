"""sim.launch.py without ros2 launch installed: the launch and launch_ros classes it uses are
replaced by recorders, so its arguments and the processes it starts can be checked here."""

from __future__ import annotations

import os
import runpy
import sys
import time
import types
from pathlib import Path

import pytest

from arsim_core.process import heartbeat
from arsim_launch.arguments import NAMES

LAUNCH_FILE = Path(__file__).resolve().parents[2] / 'src' / 'arsim_launch' / 'launch' / \
    'sim.launch.py'


class Action:
    def __init__(self, *args, **kwargs) -> None:
        self.args, self.kwargs = args, kwargs


@pytest.fixture
def launch_file(monkeypatch):
    """``launch_file(**arguments)``: the launch description's declared arguments and the
    names of the processes it starts with ``arguments``. After the test, the launch's own
    shutdown handlers run, as ``ros2 launch`` would run them (they remove its heartbeat
    folder)."""
    loaded: list[list[Action]] = []

    def load(**arguments: str) -> tuple[list[str], list[str]]:
        declared, actions = load_actions(**arguments)
        started = [a.kwargs['name'] for a in actions
                   if type(a).__name__ in ('Node', 'ExecuteProcess')]
        return declared, started

    def load_actions(**arguments: str) -> tuple[list[str], list[Action]]:
        values = {name: '' for name in NAMES} | {'rviz': 'false'} | arguments

        class LaunchConfiguration:
            def __init__(self, name: str) -> None:
                self.name = name

            def perform(self, _context) -> str:
                return values[self.name]

        kinds = {name: type(name, (Action,), {}) for name in (
            'LaunchDescription', 'DeclareLaunchArgument', 'EmitEvent', 'ExecuteProcess',
            'LogInfo', 'OpaqueFunction', 'RegisterEventHandler', 'TimerAction', 'OnProcessExit',
            'OnProcessIO', 'OnShutdown', 'Shutdown', 'Node', 'ParameterValue')}
        modules = {'launch': ['LaunchDescription'],
                   'launch.actions': ['DeclareLaunchArgument', 'EmitEvent', 'ExecuteProcess',
                                      'LogInfo', 'OpaqueFunction', 'RegisterEventHandler',
                                      'TimerAction'],
                   'launch.event_handlers': ['OnProcessExit', 'OnProcessIO', 'OnShutdown'],
                   'launch.events': ['Shutdown'],
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
        loaded.append(code['_processes'](None))
        return declared, loaded[-1]

    load.actions = load_actions
    yield load
    stopping = types.SimpleNamespace(is_shutdown=True)
    for actions in loaded:
        for handler in _handlers_of(actions, 'OnShutdown'):
            handler.kwargs['on_shutdown'](None, stopping)


def _handlers_of(actions: list[Action], kind: str) -> list[Action]:
    """The ``kind`` event handlers that ``actions`` register."""
    return [h for a in actions if type(a).__name__ == 'RegisterEventHandler'
            for h in a.args if type(h).__name__ == kind]


def test_every_launch_argument_is_declared(launch_file) -> None:
    declared, _ = launch_file()
    assert declared == list(NAMES)


def test_cars_argument_starts_the_container_processes(launch_file) -> None:
    _, started = launch_file(cars='2', one_process='false')
    assert started[:3] == ['backend', 'arsim_bridge', 'track_loader']
    assert {'cars_dynamics', 'cars_sensors'} <= set(started)


def test_by_default_one_process_hosts_every_node(launch_file) -> None:
    _, actions = launch_file.actions(cars='2')
    [simulation] = [a for a in actions if type(a).__name__ in ('Node', 'ExecuteProcess')]
    assert simulation.kwargs['name'] == 'simulation'
    assert simulation.kwargs['executable'] == 'container'
    assert set(_handlers(actions, 'OnProcessExit')) == {'simulation'}


def _handlers(actions: list[Action], kind: str) -> dict[str, Action]:
    """The ``kind`` event handlers registered, by the name of the process they watch."""
    return {h.kwargs['target_action'].kwargs['name']: h for h in _handlers_of(actions, kind)}


REQUIRED = {'backend', 'arsim_bridge', 'track_loader', 'cars_dynamics', 'cars_sensors'}


def test_every_required_process_stops_the_launch_when_it_ends(launch_file) -> None:
    _, actions = launch_file.actions(cars='2', one_process='false')
    exits, outputs = _handlers(actions, 'OnProcessExit'), _handlers(actions, 'OnProcessIO')
    assert set(exits) == set(outputs) == REQUIRED  # description publishers may end alone

    outputs['cars_dynamics'].kwargs['on_stderr'](
        types.SimpleNamespace(text=b'[INFO] [ego_dynamics]: ready\nsegmentation fault\n'))
    running = types.SimpleNamespace(is_shutdown=False)
    reaction = exits['cars_dynamics'].kwargs['on_exit'](
        types.SimpleNamespace(returncode=-9), running)
    log, emit = reaction
    assert type(log).__name__ == 'LogInfo' and type(emit).__name__ == 'EmitEvent'
    message = log.kwargs['msg']
    assert message.startswith('[arsim] required process cars_dynamics (hosting ego_dynamics, '
                              'car2_dynamics) was killed by SIGKILL; stopping the simulation')
    assert message.endswith('    | [INFO] [ego_dynamics]: ready\n    | segmentation fault')
    shutdown = emit.kwargs['event']
    assert type(shutdown).__name__ == 'Shutdown'
    assert shutdown.kwargs['reason'] == 'cars_dynamics was killed by SIGKILL'

    # Only one message: the others end because of the shutdown.
    assert exits['arsim_bridge'].kwargs['on_exit'](
        types.SimpleNamespace(returncode=0), running) is None


def test_a_process_ending_during_a_shutdown_is_not_a_failure(launch_file) -> None:
    _, actions = launch_file.actions(one_process='false')
    exits = _handlers(actions, 'OnProcessExit')
    stopping = types.SimpleNamespace(is_shutdown=True)
    assert exits['ego_dynamics'].kwargs['on_exit'](
        types.SimpleNamespace(returncode=0), stopping) is None


def test_a_required_process_without_a_sign_of_life_stops_the_launch(launch_file) -> None:
    _, actions = launch_file.actions(one_process='false')
    started = [a for a in actions if type(a).__name__ in ('Node', 'ExecuteProcess')]
    files = {a.kwargs['name']: Path(a.kwargs['additional_env'][heartbeat.ENV]) for a in started}
    assert set(files) == {a.kwargs['name'] for a in started}
    shutdown = _handlers_of(actions, 'OnShutdown')
    [timer] = [a for a in actions if type(a).__name__ == 'TimerAction']
    running = types.SimpleNamespace(is_shutdown=False)
    try:
        for path in files.values():
            path.touch()
        [again] = timer.kwargs['actions'][0].kwargs['function'](running)
        assert type(again).__name__ == 'TimerAction'  # all fresh: it looks again later

        stale = time.time() - 30.0  # the default timeout is 20 s
        os.utime(files['ego_sensors'], (stale, stale))
        _handlers(actions, 'OnProcessIO')['ego_sensors'].kwargs['on_stderr'](
            types.SimpleNamespace(text=b'[INFO] [ego_sensors]: ready\n'))
        log, emit = again.kwargs['actions'][0].kwargs['function'](running)
        assert log.kwargs['msg'].startswith('[arsim] required process ego_sensors stopped '
                                            'answering (no sign of life for 30.')
        assert log.kwargs['msg'].endswith('    | [INFO] [ego_sensors]: ready')
        assert emit.kwargs['event'].kwargs['reason'] == 'ego_sensors stopped answering'
    finally:
        shutdown[0].kwargs['on_shutdown'](None, running)
    assert not next(iter(files.values())).parent.exists()


def _started_env(actions: list[Action]) -> list[dict[str, str]]:
    return [a.kwargs['additional_env'] for a in actions
            if type(a).__name__ in ('Node', 'ExecuteProcess')]


def test_every_process_discovers_on_this_machine_only_by_default(launch_file, monkeypatch
                                                                 ) -> None:
    for name in ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'ROS_LOCALHOST_ONLY', 'ROS_STATIC_PEERS'):
        monkeypatch.delenv(name, raising=False)
    _, actions = launch_file.actions()
    assert all(env['ROS_AUTOMATIC_DISCOVERY_RANGE'] == 'LOCALHOST'
               for env in _started_env(actions))
    [said] = [a.kwargs['msg'] for a in actions if type(a).__name__ == 'LogInfo']
    assert 'ROS discovery stays on this machine' in said


def test_discovery_on_the_network_when_the_scenario_or_the_user_asks(
        launch_file, monkeypatch, tmp_path: Path, repo_root: Path) -> None:
    import yaml
    for name in ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'ROS_LOCALHOST_ONLY', 'ROS_STATIC_PEERS'):
        monkeypatch.delenv(name, raising=False)
    data = yaml.safe_load((repo_root / 'config' / 'sim.yaml').read_text())
    settings = tmp_path / 'sim.yaml'
    settings.write_text(yaml.safe_dump({**data, 'ros': {'discovery': 'network'}}))
    _, actions = launch_file.actions(config=str(settings))
    assert not any('ROS_AUTOMATIC_DISCOVERY_RANGE' in env or 'ROS_LOCALHOST_ONLY' in env
                   for env in _started_env(actions))
    monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'SUBNET')
    _, actions = launch_file.actions()
    assert not any('ROS_AUTOMATIC_DISCOVERY_RANGE' in env for env in _started_env(actions))
