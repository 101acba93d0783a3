"""Scenario, topic-map and sensor loading: resolved names, and errors naming file and key."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from arsim_core.config.scenario import load_scenario
from arsim_core.errors import ConfigError


@pytest.fixture
def settings(tmp_path: Path, repo_root: Path):
    def write(**changes) -> Path:
        data = yaml.safe_load((repo_root / 'config' / 'sim.yaml').read_text())
        data.update(changes)
        path = tmp_path / 'sim.yaml'
        path.write_text(yaml.safe_dump(data))
        return path
    return write


def test_default_scenario_resolves_f1tenth_gym_names(repo_root: Path) -> None:
    scenario = load_scenario(repo_root / 'config' / 'sim.yaml', repo_root)
    ego = scenario.cars[0]
    assert ego.names.sensor_topics == {'scan': '/scan'}
    assert ego.names.sensor_frames == {'scan': 'ego_racecar/laser'}
    assert (ego.names.odom_topic, ego.names.odom_frame, ego.names.base_frame) == \
        ('/ego_racecar/odom', 'map', 'ego_racecar/base_link')
    assert scenario.frame_period_ns == 25_000_000
    lidar = ego.profile.sensor('scan')
    assert (lidar.beams, lidar.fov_rad, lidar.range_max) == (1080, 4.7, 30.0)


def test_real_car_map_and_overrides(repo_root: Path) -> None:
    scenario = load_scenario(repo_root / 'config' / 'sim.yaml', repo_root,
                             {'topic_map': 'f1tenth_car', 'simulation': {'real_time_factor': 1}})
    names = scenario.cars[0].names
    assert (names.odom_topic, names.odom_frame, names.base_frame) == ('/odom', 'odom',
                                                                      'base_link')
    assert names.odom_relative_to_start and names.sensor_frames == {'scan': 'laser'}
    assert scenario.real_time_factor == 1.0
    assert scenario.frame_rate_hz == 40.0  # untouched keys keep their value


def test_the_vesc_map_drives_the_ego_through_vesc_driver_names(repo_root: Path) -> None:
    scenario = load_scenario(repo_root / 'config' / 'sim.yaml', repo_root,
                             {'topic_map': 'f1tenth_vesc'})
    names = scenario.cars[0].names
    assert names.vesc is not None and not names.odom_tf
    assert (names.vesc.speed_topic, names.vesc.servo_topic, names.vesc.state_topic) == \
        ('/commands/motor/speed', '/commands/servo/position', '/sensors/core')
    assert names.odom_topic == '/ground_truth/odom'  # /odom is vesc_to_odom's
    assert scenario.cars[0].profile.vehicle.vesc is not None


def test_a_vesc_car_without_a_vesc_section_is_refused(tmp_path: Path, repo_root: Path) -> None:
    profile = yaml.safe_load((repo_root / 'config' / 'cars' / 'f1tenth.yaml').read_text())
    del profile['Vesc']
    path = tmp_path / 'car.yaml'
    path.write_text(yaml.safe_dump(profile))
    data = yaml.safe_load((repo_root / 'config' / 'sim.yaml').read_text())
    data.update(topic_map='f1tenth_vesc', cars=[{'name': 'ego', 'profile': str(path)}])
    settings_path = tmp_path / 'sim.yaml'
    settings_path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r'cars\[0\].profile: .*f1tenth_vesc.yaml drives this '
                                          r'car through its VESC, but its profile .*car.yaml '
                                          r'has no Vesc section'):
        load_scenario(settings_path, repo_root)


@pytest.mark.parametrize(('simulation', 'held'), [
    ({}, True), ({'wait_for_drivers': False}, False),
    ({'wait_for_drivers': False, 'start_on_first_command': True}, True),
    ({'start_on_first_command': False}, False), ({'start_on_first_command': 'auto'}, True),
])
def test_time_is_held_for_a_first_command_by_default_with_wait_for_drivers(
        repo_root: Path, simulation: dict, held: bool) -> None:
    scenario = load_scenario(repo_root / 'config' / 'sim.yaml', repo_root,
                             {'simulation': simulation})
    assert scenario.start_on_first_command is held


@pytest.mark.parametrize(('changes', 'message'), [
    ({'cars': [{'name': 'ego', 'profile': 'f1tenth'}, {'name': 'ego', 'profile': 'f1tenth'}]},
     r"cars\[1\].name: duplicate car name 'ego'"),
    ({'cars': []}, 'cars: expected a non-empty list'),
    ({'cars': [{'name': 'ego', 'profile': 'f1tenth', 'colour': 'red'}]},
     r"cars\[0\]\.colour: unknown key, expected one of: driver, dynamics, name, pose, "
     r"profile"),
    ({'topic_map': 'gazebo'}, "topic_map: unknown name 'gazebo'; expected one of"),
    ({'simulation': {'start_on_first_command': 'yes'}},
     "simulation.start_on_first_command: expected true, false or auto, got 'yes'"),
    ({'simulation': {'frame_rate_hz': 30}}, 'does not divide simulation.frame_rate_hz 30'),
    ({'cars': [{'name': 'ego', 'profile': 'f1tenth', 'pose': [0, 'x', 0]}]},
     r'cars\[0\].pose: expected a list of 3 finite numbers'),
    ({'track': {'name': 'arsim_ring', 'scene': 'jungle'}},
     r"track.scene: expected one of \['auto', 'circuit', 'hall', 'none'\], got 'jungle'"),
    ({'track': {'name': 'arsim_ring', 'scene_density': -1}}, r'track.scene_density: expected'),
    ({'track': {'name': 'arsim_ring', 'scene_seed': 1.5}}, r'track.scene_seed: expected an '
                                                          r'integer >= 0'),
])
def test_bad_settings_name_file_and_key(settings, repo_root: Path, changes: dict,
                                        message: str) -> None:
    path = settings(**changes)
    with pytest.raises(ConfigError, match=message) as info:
        load_scenario(path, repo_root)
    assert str(path) in str(info.value)


def test_bad_sensor_names_profile_and_key(tmp_path: Path, repo_root: Path) -> None:
    profile = yaml.safe_load((repo_root / 'config' / 'cars' / 'f1tenth.yaml').read_text())
    profile['Sensors']['scan']['range_max'] = -1.0
    path = tmp_path / 'car.yaml'
    path.write_text(yaml.safe_dump(profile))
    data = yaml.safe_load((repo_root / 'config' / 'sim.yaml').read_text())
    data['cars'] = [{'name': 'ego', 'profile': str(path)}]
    settings_path = tmp_path / 'sim.yaml'
    settings_path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError,
                       match=rf'{path}:\d+: Sensors.scan.range_max: expected a number > 0'):
        load_scenario(settings_path, repo_root)


def test_yaml_syntax_error_names_the_line(tmp_path: Path, repo_root: Path) -> None:
    path = tmp_path / 'sim.yaml'
    path.write_text('simulation:\n  frame_rate_hz: [40\ncars: []\n')
    with pytest.raises(ConfigError, match=f'{path}:3:'):
        load_scenario(path, repo_root)


@pytest.mark.parametrize(('backend', 'message'), [
    ({'frames_address': 'tcp://0.0.0.0:5556'},
     r"backend.frames_address: expected tcp://127.0.0.1:<port 1-65535>.*got 'tcp://0.0.0.0:5556'"
     r'.*allow_remote: true'),
    ({'address': 'tcp://*:5555'}, r'backend.address: expected tcp://127.0.0.1.*allow_remote'),
    ({'address': 'tcp://127.0.0.1:70000'}, 'backend.address: expected a port between 1 and 65535'),
    ({'kind': 'external', 'address': 'tcp//10.0.0.2:5555'}, 'backend.address: expected tcp://'),
    ({'frames_address': 'ipc:///no/such/folder/frames'}, 'backend.frames_address: the folder'),
    ({'allow_remote': 'yes'}, 'backend.allow_remote: expected true or false'),
    ({'max_request_mib': 0}, 'backend.max_request_mib: expected an integer >= 1'),
])
def test_bad_backend_addresses_are_refused_naming_file_and_key(settings, repo_root: Path,
                                                               backend: dict,
                                                               message: str) -> None:
    path = settings(backend={'kind': 'embedded', **backend})
    with pytest.raises(ConfigError, match=message) as info:
        load_scenario(path, repo_root)
    assert re.match(rf'{re.escape(str(path))}:\d+: ', str(info.value)), info.value


def test_remote_addresses_need_allow_remote(settings, repo_root: Path) -> None:
    remote = {'kind': 'embedded', 'address': 'tcp://0.0.0.0:5555',
              'frames_address': 'tcp://0.0.0.0:5556'}
    scenario = load_scenario(settings(backend={**remote, 'allow_remote': True}), repo_root)
    assert scenario.backend.allow_remote and scenario.backend.frames_address == remote[
        'frames_address']
    # A backend that another program started is only connected to: any host will do.
    external = load_scenario(settings(backend={'kind': 'external',
                                               'address': 'tcp://gpu-box.local:5555'}),
                             repo_root)
    assert external.backend.address == 'tcp://gpu-box.local:5555'
    assert not external.backend.allow_remote


def test_default_backend_is_loopback_with_a_request_limit(repo_root: Path) -> None:
    backend = load_scenario(repo_root / 'config' / 'sim.yaml', repo_root).backend
    assert not backend.allow_remote and backend.max_request_mib == 128


@pytest.mark.parametrize(('view', 'message'), [
    ({'kind': 'rviz'}, r"view.kind: expected one of \['foxglove', 'none', 'web'\], got 'rviz'"),
    ({'kind': 'foxglove', 'port': 70000}, 'view.port: expected a port from 1 to 65535'),
    ({'kind': 'foxglove', 'host': '0.0.0.0'}, 'view.host: .*loopback'),
    ({'kind': 'foxglove', 'colour': 'red'}, 'view.colour: unknown key'),
])
def test_bad_view_settings_are_refused_naming_file_and_key(settings, repo_root: Path,
                                                           view: dict, message: str) -> None:
    path = settings(view=view)
    with pytest.raises(ConfigError, match=message) as info:
        load_scenario(path, repo_root)
    assert re.match(rf'{re.escape(str(path))}:\d+: ', str(info.value)), info.value


def test_the_view_is_off_and_loopback_by_default(settings, repo_root: Path) -> None:
    view = load_scenario(repo_root / 'config' / 'sim.yaml', repo_root).view
    assert (view.kind, view.host, view.port, view.allow_remote) == \
        ('none', '127.0.0.1', 8765, False)
    remote = load_scenario(settings(view={'kind': 'foxglove', 'host': '0.0.0.0',
                                          'allow_remote': True}), repo_root).view
    assert remote.host == '0.0.0.0'


def test_each_view_has_its_own_default_port(settings, repo_root: Path) -> None:
    ports = {kind: load_scenario(settings(view={'kind': kind}), repo_root).view.port
             for kind in ('web', 'foxglove')}
    assert ports == {'web': 8080, 'foxglove': 8765}
    assert load_scenario(settings(view={'kind': 'web', 'port': 9000}),
                         repo_root).view.port == 9000


def test_recording_is_off_by_default_and_relative_to_the_settings_file(
        settings, repo_root: Path, tmp_path: Path) -> None:
    assert load_scenario(repo_root / 'config' / 'sim.yaml', repo_root).recording.directory is None
    recording = load_scenario(settings(recording={
        'directory': 'bags/run1', 'topics': ['/scan'], 'topic_regex': '/tf.*',
        'storage': 'sqlite3', 'compression': 'zstd', 'max_bag_duration_s': 30}),
        repo_root).recording
    assert recording.directory == tmp_path / 'bags' / 'run1'
    assert (recording.storage, recording.compress, recording.bag_version) == ('sqlite3', True, 8)
    assert (recording.max_bag_size_mib, recording.max_bag_duration_s) == (None, 30.0)
    wanted = recording.selection
    assert [wanted.wants(t) for t in ('/scan', '/tf', '/tf_static', '/odom')] == \
        [True, True, True, False]


@pytest.mark.parametrize(('recording', 'message'), [
    ({'directory': 'run', 'topic_regex': '(/scan'}, 'recording.topic_regex: expected a regular '
                                                    'expression'),
    ({'directory': 'run', 'topics': 'scan'}, 'recording.topics: expected a list of topic names'),
    ({'directory': 'run', 'bag_version': 7}, r'recording.bag_version: expected one of \[8, 9\]'),
    ({'directory': 'run', 'storage': 'bag'}, 'recording.storage: expected one of'),
    ({'directory': 'run', 'split_mib': 100}, 'recording.split_mib: unknown key'),
    ({'directory': 'run', 'max_bag_size_mib': 0}, 'recording.max_bag_size_mib: expected a '
                                                  'number > 0'),
])
def test_bad_recording_settings_are_refused_before_anything_starts(
        settings, repo_root: Path, recording: dict, message: str) -> None:
    path = settings(recording=recording)
    with pytest.raises(ConfigError, match=message) as info:
        load_scenario(path, repo_root)
    assert re.match(rf'{re.escape(str(path))}:\d+: ', str(info.value)), info.value


@pytest.mark.parametrize('value', [1e-300, 0.001, -1, 1e300, float('nan'), '2', True])
def test_a_real_time_factor_a_running_simulation_would_refuse_is_refused_at_start(
        repo_root: Path, value: Any) -> None:
    """The pacing of a running simulation keeps 0 or 0.01 to 100 (a live view can set no
    other): a scenario with another factor fails at start, naming the key, instead of in the
    stepping loop."""
    with pytest.raises(ConfigError, match=r'simulation.real_time_factor: expected 0 \(as fast '
                                          r'as possible\) or a number from 0.01 to 100.0, got'):
        load_scenario(repo_root / 'config' / 'sim.yaml', repo_root,
                      {'simulation': {'real_time_factor': value}})


def test_the_seed_of_a_ros_run_is_the_scenarios(settings, repo_root: Path) -> None:
    """``simulation.seed`` (default 0) is the seed a ROS run draws every sensor's noise from."""
    assert load_scenario(repo_root / 'config' / 'sim.yaml', repo_root).seed == 0
    base = yaml.safe_load((repo_root / 'config' / 'sim.yaml').read_text())['simulation']
    assert load_scenario(settings(simulation={**base, 'seed': 42}), repo_root).seed == 42
    for bad in (-1, 1.5, 'seven', True):
        with pytest.raises(ConfigError, match=r'simulation\.seed.*integer >= 0'):
            load_scenario(settings(simulation={**base, 'seed': bad}), repo_root)
