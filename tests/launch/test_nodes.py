"""Launch generation is plain data: check the node list without launching anything."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
import yaml

from arsim_core.config.scenario import load_scenario
from arsim_core.errors import ConfigError
from arsim_launch.node_spec import RunPlan
from arsim_launch.nodes import flatten, generate_nodes, validate

SPLIT = {'one_process': False}  # a process per node: each node's own spec is what it starts


def nodes_by_name(repo_root: Path, **overrides):
    """The node specs of the default scenario with ``overrides``, in a process per node."""
    overrides = {**overrides, 'simulation': {**SPLIT, **overrides.get('simulation', {})}}
    settings = repo_root / 'config' / 'sim.yaml'
    scenario = load_scenario(settings, repo_root, overrides)
    return {n.name: n for n in flatten(generate_nodes(scenario, settings, overrides,
                                                      state_publisher=False))}


def test_default_scenario_starts_backend_bridge_track_and_car_nodes(repo_root: Path) -> None:
    nodes = nodes_by_name(repo_root)
    assert set(nodes) == {'backend', 'arsim_bridge', 'track_loader', 'ego_dynamics',
                          'ego_sensors', 'ego_description'}
    assert dict(nodes['ego_description'].remappings) == {
        'robot_description': '/ego_racecar/robot_description'}
    assert not nodes['backend'].ros and nodes['backend'].required
    assert nodes['arsim_bridge'].required
    assert '--address' in nodes['backend'].arguments
    assert nodes['ego_dynamics'].parameters['car'] == 'ego'
    assert dict(nodes['ego_dynamics'].remappings)['drive'] == '/drive'
    assert dict(nodes['ego_dynamics'].remappings)['reset'] == '/arsim/ego/reset'
    sensors = dict(nodes['ego_sensors'].remappings)
    assert sensors == {'odom': '/ego_racecar/odom', 'scan': '/scan'}
    assert dict(nodes['track_loader'].remappings)['map'] == '/map'


def test_every_process_but_the_description_and_the_view_is_required(repo_root: Path) -> None:
    """The runner stops the run when a required process ends (tests/e2e/test_process_failures
    kills one of each kind: the backend, a node, a container); which ones are required is
    decided here."""
    overrides = {'cars': [{'name': 'ego', 'profile': 'f1tenth'},
                          {'name': 'opp', 'profile': 'f1tenth'}],
                 'view': {'kind': 'foxglove'}, 'recording': {'directory': 'bags'},
                 'simulation': {**SPLIT, 'autopilot': 'follow_the_gap'}}
    settings = repo_root / 'config' / 'sim.yaml'
    processes = generate_nodes(load_scenario(settings, repo_root, overrides), settings,
                               overrides, state_publisher=False)
    assert {p.name: p.required for p in processes} == {
        'backend': True, 'arsim_bridge': True, 'track_loader': True, 'cars_dynamics': True,
        'cars_sensors': True, 'cars_description': False, 'autopilot': True,
        'foxglove_view': False, 'recorder': True}
    assert all(m.required == p.required for p in processes for m in p.members)


def test_topic_map_changes_remappings_only(repo_root: Path) -> None:
    nodes = nodes_by_name(repo_root, topic_map='f1tenth_car')
    assert dict(nodes['ego_sensors'].remappings) == {'odom': '/odom', 'scan': '/scan'}
    assert dict(nodes['track_loader'].remappings)['map'] == '/arsim/map'
    assert yaml.safe_load(nodes['ego_sensors'].parameters['settings_overrides']) == {
        'topic_map': 'f1tenth_car', 'simulation': SPLIT}


def test_the_backend_gets_its_limits_and_remote_access_from_the_settings(
        repo_root: Path) -> None:
    arguments = nodes_by_name(repo_root)['backend'].arguments
    assert arguments[arguments.index('--max-request-mib') + 1] == '128'
    assert '--allow-remote' not in arguments
    arguments = nodes_by_name(repo_root, backend={'allow_remote': True,
                                                  'max_request_mib': 16})['backend'].arguments
    assert arguments[arguments.index('--max-request-mib') + 1] == '16'
    assert '--allow-remote' in arguments


def test_external_backend_is_not_started(repo_root: Path) -> None:
    nodes = nodes_by_name(repo_root, backend={'kind': 'external'})
    assert 'backend' not in nodes
    nodes = nodes_by_name(repo_root, backend={'kind': 'unity'})  # started by hand
    assert 'backend' not in nodes and 'unity' not in nodes


def test_a_unity_executable_is_started_with_the_backend_arguments(
        repo_root: Path, tmp_path: Path) -> None:
    player = tmp_path / 'arsim-server.x86_64'
    player.write_text('')
    unity = nodes_by_name(repo_root, backend={'kind': 'unity', 'executable': str(player),
                                              'address': 'tcp://127.0.0.1:6001'})['unity']
    assert unity.required and not unity.ros
    assert unity.command == (str(player), '--address', 'tcp://127.0.0.1:6001',
                             '--max-request-mib', '128')


def test_the_console_host_runs_on_mono(repo_root: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    host = tmp_path / 'arsim-unity-host.exe'
    host.write_text('')
    backend = {'kind': 'unity', 'executable': str(host)}
    monkeypatch.setattr('shutil.which', lambda name: f'/opt/bin/{name}')
    command = nodes_by_name(repo_root, backend=backend)['unity'].command
    assert command[:2] == ('/opt/bin/mono', str(host))
    assert '--address' in command
    monkeypatch.setattr('shutil.which', lambda name: None)
    with pytest.raises(ConfigError, match=r'backend\.executable: .* runs on mono, which is '
                                          r'not installed'):
        nodes_by_name(repo_root, backend=backend)


@pytest.mark.parametrize(('backend', 'expected'), [
    ({'kind': 'unity', 'executable': 'no/such/player'},
     r'backend\.executable.*no/such/player is not a file; expected a built Unity player'),
    ({'kind': 'external', 'executable': 'sim.yaml'},
     r'backend\.executable.*only a unity backend is started from an executable'),
])
def test_a_bad_backend_executable_is_named(repo_root: Path, backend: dict,
                                           expected: str) -> None:
    with pytest.raises(ConfigError, match=expected):
        nodes_by_name(repo_root, backend=backend)


def test_many_cars_share_three_container_processes(repo_root: Path) -> None:
    cars = [{'name': 'ego', 'profile': 'f1tenth'}, {'name': 'opp_racecar', 'profile': 'f1tenth'},
            {'name': 'car2', 'profile': 'f1tenth'}]
    settings = repo_root / 'config' / 'sim.yaml'
    overrides = {'cars': cars, 'simulation': SPLIT}
    scenario = load_scenario(settings, repo_root, overrides)
    processes = generate_nodes(scenario, settings, overrides, state_publisher=False)
    assert sorted(p.name for p in processes if p.members) == [
        'cars_description', 'cars_dynamics', 'cars_sensors']
    nodes = {n.name: n for n in flatten(processes)}
    assert dict(nodes['opp_racecar_sensors'].remappings) == {  # f1tenth_gym_ros's names
        'odom': '/opp_racecar/odom', 'scan': '/opp_scan'}
    assert dict(nodes['opp_racecar_dynamics'].remappings)['drive'] == '/opp_drive'
    assert dict(nodes['car2_sensors'].remappings) == {'odom': '/car2/odom',
                                                      'scan': '/car2/scan'}


def test_a_one_process_run_hosts_every_node_in_one_container_without_a_backend(
        repo_root: Path) -> None:
    cars = [{'name': 'ego', 'profile': 'f1tenth'}, {'name': 'b', 'profile': 'f1tenth'}]
    overrides = {'cars': cars, 'simulation': {'one_process': True, 'autopilot': 'follow_the_gap'}}
    settings = repo_root / 'config' / 'sim.yaml'
    scenario = load_scenario(settings, repo_root, overrides)
    split = {n.name: n for n in flatten(generate_nodes(
        dataclasses.replace(scenario, one_process=False), settings, overrides,
        state_publisher=False))}
    [process] = generate_nodes(scenario, settings, overrides, state_publisher=False)
    assert process.name == 'simulation' and process.required
    del split['backend']  # the bridge renders in process
    assert {n.name: n for n in process.members} == split  # the same nodes, the same settings
    described = json.loads(process.arguments[process.arguments.index('--nodes') + 1])
    assert [(d['type'], d['name'], d['required']) for d in described] == [
        (n.executable, n.name, n.required) for n in process.members]


@pytest.mark.parametrize('state_publisher', [True, False])
def test_external_cars_and_state_publishers_keep_their_own_processes(
        repo_root: Path, state_publisher: bool) -> None:
    cars = [{'name': 'ego', 'profile': 'f1tenth', 'dynamics': 'external'},
            {'name': 'b', 'profile': 'f1tenth', 'dynamics': 'external'}]
    settings = repo_root / 'config' / 'sim.yaml'
    overrides = {'cars': cars, 'simulation': SPLIT}
    scenario = load_scenario(settings, repo_root, overrides)
    names = [p.name for p in generate_nodes(scenario, settings, overrides,
                                            state_publisher=state_publisher)]
    assert 'cars_dynamics' not in names  # no container without members
    assert ('ego_robot_state_publisher' in names) == state_publisher
    assert ('cars_description' in names) != state_publisher


def test_a_hall_around_a_full_scale_circuit_stops_the_launch_naming_the_key(
        repo_root: Path, shared_tracks: Path) -> None:
    settings = repo_root / 'config' / 'sim.yaml'
    spa = str(shared_tracks / 'tum_racetrack_database' / 'Spa.csv')
    scenario = load_scenario(settings, repo_root, {'track': {'name': spa, 'scene': 'hall'}})
    with pytest.raises(ConfigError, match=rf'{settings}: track.scene: a hall fits tracks up '
                                          rf'to 400 m across'):
        validate(scenario)
    validate(load_scenario(settings, repo_root, {'track': {'name': spa, 'scene': 'auto'}}))


@pytest.mark.parametrize('one_process', [True, False])
def test_a_run_plan_crosses_its_pipe_as_it_was(repo_root: Path, one_process: bool) -> None:
    """The pip launcher gets its processes from the planning process as JSON: every spec,
    the containers' members and the tuples among them come back equal."""
    overrides = {'cars': [{'name': 'ego', 'profile': 'f1tenth'},
                          {'name': 'opp', 'profile': 'f1tenth'}],
                 'simulation': {'one_process': one_process, 'autopilot': 'follow_the_gap'}}
    settings = repo_root / 'config' / 'sim.yaml'
    processes = generate_nodes(load_scenario(settings, repo_root, overrides), settings,
                               overrides, state_publisher=False)
    assert any(p.members for p in processes)
    plan = RunPlan(processes, {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}, math.inf,
                   ['/tmp/arsim-sockets-x'])
    assert RunPlan.from_json(plan.to_json()) == plan
