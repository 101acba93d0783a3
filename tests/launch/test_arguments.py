"""Launch arguments: the overrides they stand for, and errors naming the argument."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from arsim_core.config.scenario import load_scenario
from arsim_core.errors import ArsimError, ConfigError
from arsim_launch.arguments import NAMES, launch_overrides, parse_arguments, usage
from arsim_launch.nodes import validate


def scenario_with(repo_root: Path, settings: Path | None = None, **arguments: str):
    settings = settings or repo_root / 'config' / 'sim.yaml'
    overrides = launch_overrides(arguments, settings, repo_root)
    return load_scenario(settings, repo_root, overrides), overrides


def test_cars_extends_the_file_with_the_last_profile_on_the_grid(repo_root: Path) -> None:
    scenario, _ = scenario_with(repo_root, cars='3')
    assert [c.name for c in scenario.cars] == ['ego', 'car2', 'car3']
    assert {c.profile.source for c in scenario.cars} == {scenario.cars[0].profile.source}
    assert all(c.pose is None for c in scenario.cars)


def test_cars_takes_the_first_of_the_file_and_keeps_their_keys(repo_root: Path,
                                                               tmp_path: Path) -> None:
    settings = tmp_path / 'sim.yaml'
    data = yaml.safe_load((repo_root / 'config' / 'sim.yaml').read_text())
    data['cars'] = [{'name': 'a', 'profile': 'f1tenth', 'pose': [8.0, 0.0, 0.0]},
                    {'name': 'car2', 'profile': 'full_scale'}, {'name': 'c', 'profile': 'f1tenth'}]
    settings.write_text(yaml.safe_dump(data))
    scenario, _ = scenario_with(repo_root, settings, cars='1')
    assert [(c.name, c.pose) for c in scenario.cars] == [('a', (8.0, 0.0, 0.0))]
    scenario, _ = scenario_with(repo_root, settings, cars='4')
    assert [c.name for c in scenario.cars] == ['a', 'car2', 'c', 'car4']


def test_profile_applies_to_every_car_and_track_to_the_scenario(repo_root: Path) -> None:
    scenario, overrides = scenario_with(repo_root, cars='2', profile='full_scale',
                                        track='arsim_ring')
    assert [Path(c.profile.source).stem for c in scenario.cars] == ['full_scale'] * 2
    assert scenario.track.name == 'arsim_ring'
    assert overrides['track'] == {'name': 'arsim_ring'}


def test_paths_become_absolute(repo_root: Path, monkeypatch) -> None:
    monkeypatch.chdir(repo_root)
    scenario, overrides = scenario_with(repo_root, track='maps/arsim_ring',
                                        profile='config/cars/f1tenth.yaml')
    assert overrides['track']['name'] == str(repo_root / 'maps' / 'arsim_ring')
    assert overrides['cars'][0]['profile'] == str(repo_root / 'config' / 'cars' /
                                                  'f1tenth.yaml')


def test_record_is_a_new_directory_from_where_the_launch_starts(tmp_path: Path, repo_root: Path,
                                                                monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    scenario, overrides = scenario_with(repo_root, record='bags/run1')
    assert overrides['recording'] == {'directory': str(tmp_path / 'bags' / 'run1')}
    assert scenario.recording.directory == tmp_path / 'bags' / 'run1'
    assert scenario.recording.selection.wants('/scan')  # every topic by default


@pytest.mark.parametrize(('record', 'message'), [
    ('.', '.* exists already; a recording needs a new directory'),
    ('sim.yaml/run', r'cannot create .*/sim.yaml/run: .*/sim.yaml is not a writable folder'),
])
def test_a_record_directory_that_cannot_be_new_is_refused_before_anything_starts(
        tmp_path: Path, repo_root: Path, monkeypatch, record: str, message: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'sim.yaml').write_text('')
    scenario, _ = scenario_with(repo_root, record=record)
    with pytest.raises(ConfigError, match=rf'sim\.yaml: recording\.directory: {message}'):
        validate(scenario)


@pytest.mark.parametrize(('arguments', 'message'), [
    ({'cars': 'three'}, "launch argument cars: expected a whole number of cars from 1 to 64, "
                        "got 'three'"),
    ({'cars': '0'}, 'launch argument cars: expected a whole number'),
    ({'view': 'rviz'}, "launch argument view: expected one of none, foxglove, web, got 'rviz'"),
    ({'one_process': 'yes'}, "launch argument one_process: expected true or false, got 'yes'"),
    ({'profile': 'racecar'}, r"launch argument profile: expected one of \['calibration_car', "
                             r"'f1tenth', 'formula_student', 'full_scale', 'model_1_14', "
                             r"'platform_1_5'\] "
                             r"or a path to a .yaml file, got 'racecar'"),
    ({'profile': 'nope/car.yaml'}, 'launch argument profile: expected a name in .* or an '
                                   'existing .yaml file'),
    ({'track': 'monza'}, r'launch argument track: expected a track name in maps/ '
                         r'\(arsim_ring, arsim_ring_1_14, arsim_ring_1_5, '
                         r'arsim_ring_full_scale, fs_acceleration, fs_autocross, fs_skidpad, '
                         r'fs_trackdrive\) or a path'),
    ({'topic_map': 'ros1'}, 'launch argument topic_map: expected one of'),
    ({'rtf': '-1'}, r"launch argument rtf: expected a real-time factor of 0 \(as fast as "
                    r"possible\) or a number from 0.01 to 100.0"),
    ({'rtf': '1e-300'}, "launch argument rtf: expected a real-time factor of 0"),
    ({'rtf': 'nan'}, "launch argument rtf: expected a real-time factor of 0"),
    ({'laps': '3'}, r"unknown launch argument\(s\) \['laps'\]"),
])
def test_bad_values_name_the_argument_and_what_it_expects(repo_root: Path, arguments: dict,
                                                          message: str) -> None:
    with pytest.raises(ArsimError, match=message):
        scenario_with(repo_root, **arguments)


def test_usage_lists_every_argument() -> None:
    text = usage()
    assert all(f'{name}:=' in text for name in NAMES)
    assert parse_arguments(['cars:=2', 'track:=x']) == {'cars': '2', 'track': 'x'}


def test_one_process_is_the_default_and_an_argument_turns_it_off(repo_root: Path) -> None:
    assert scenario_with(repo_root)[0].one_process
    assert not scenario_with(repo_root, one_process='false')[0].one_process
    assert scenario_with(repo_root, one_process='True')[0].one_process
