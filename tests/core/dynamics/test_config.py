"""Car profile loading and validation (arsim_core.dynamics.vehicle_config)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arsim_core.dynamics import (
    F1TENTH,
    FULL_SCALE,
    MODELS,
    SingleTrack,
    load_vehicle_config,
    load_vehicle_config_file,
)
from arsim_core.errors import ConfigError

from .conftest import F1TENTH_YAML, FULL_SCALE_YAML

SRC = 'config/cars/f1tenth.yaml'


def test_shipped_profiles_load_with_the_presets() -> None:
    f1 = load_vehicle_config_file(F1TENTH_YAML)
    assert f1.model is SingleTrack
    assert f1.model_name == 'st'
    assert f1.integrator == 'rk4'
    assert f1.physics_rate_hz == 200.0
    assert f1.params == F1TENTH
    full = load_vehicle_config_file(FULL_SCALE_YAML)
    assert full.params == FULL_SCALE


def test_shipped_f1tenth_sensor_and_footprint_sections(f1tenth_profile: dict[str, Any]) -> None:
    assert f1tenth_profile['Sensors'] == {'scan': {
        'type': 'lidar2d', 'position': [0.27, 0.0, 0.11], 'rotation': [0.0, 0.0, 0.0],
        'rate_hz': 40.0, 'beams': 1080, 'fov_rad': 4.7, 'range_min': 0.0, 'range_max': 30.0}}
    assert f1tenth_profile['Footprint'] == {'length': 0.58, 'width': 0.31, 'height': 0.2}


def test_foreign_sections_are_ignored_whatever_they_hold(f1tenth_profile: dict[str, Any]) -> None:
    f1tenth_profile['Sensors'] = {'anything': {'goes': [1, 2]}}
    f1tenth_profile['InitialPose'] = 'not even a mapping'
    f1tenth_profile['Footprint'] = None
    f1tenth_profile['description'] = 42
    assert load_vehicle_config(f1tenth_profile, SRC).params == F1TENTH


def test_every_model_name_is_accepted(f1tenth_profile: dict[str, Any]) -> None:
    for name, cls in MODELS.items():
        f1tenth_profile['model'] = name
        assert load_vehicle_config(f1tenth_profile, SRC).model is cls


def test_unknown_model_lists_the_valid_ones(f1tenth_profile: dict[str, Any]) -> None:
    f1tenth_profile['model'] = 'mb'
    with pytest.raises(ConfigError, match=r"^config/cars/f1tenth\.yaml: model: unknown model "
                                          r"'mb', expected one of: ks, st, std or "):
        load_vehicle_config(f1tenth_profile, SRC)


def test_negative_mass(f1tenth_profile: dict[str, Any]) -> None:
    f1tenth_profile['CarParameters']['body']['mass'] = -3
    with pytest.raises(ConfigError, match=r'^config/cars/f1tenth\.yaml: CarParameters\.body\.mass: '
                                          r'expected a number > 0, got -3$'):
        load_vehicle_config(f1tenth_profile, SRC)


@pytest.mark.parametrize('value', [0, -0.1])
def test_lf_must_be_positive(f1tenth_profile: dict[str, Any], value: float) -> None:
    f1tenth_profile['CarParameters']['body']['cog_to_front_axle'] = value
    with pytest.raises(ConfigError, match=r'CarParameters\.body\.cog_to_front_axle: expected a '
                                          r'number > 0, got '):
        load_vehicle_config(f1tenth_profile, SRC)


@pytest.mark.parametrize('value', ['heavy', True, None, [3.74], float('nan'), float('inf')])
def test_wrong_type_or_non_finite(f1tenth_profile: dict[str, Any], value: Any) -> None:
    f1tenth_profile['CarParameters']['body']['mass'] = value
    with pytest.raises(ConfigError, match=rf'CarParameters\.body\.mass: expected a number > 0, '
                                          rf'got {_re(repr(value))}$'):
        load_vehicle_config(f1tenth_profile, SRC)


def _re(text: str) -> str:
    import re
    return re.escape(text)


def test_group_of_wrong_type(f1tenth_profile: dict[str, Any]) -> None:
    f1tenth_profile['CarParameters']['steering'] = [1, 2]
    with pytest.raises(ConfigError, match=r'CarParameters\.steering: expected a mapping, got \['):
        load_vehicle_config(f1tenth_profile, SRC)


def test_missing_parameter(f1tenth_profile: dict[str, Any]) -> None:
    del f1tenth_profile['CarParameters']['tyre']['friction']
    with pytest.raises(ConfigError, match=r'^config/cars/f1tenth\.yaml: CarParameters\.tyre\.'
                                          r'friction: missing, expected a number > 0$'):
        load_vehicle_config(f1tenth_profile, SRC)


def test_missing_group(f1tenth_profile: dict[str, Any]) -> None:
    del f1tenth_profile['CarParameters']['longitudinal']
    with pytest.raises(ConfigError, match=r'CarParameters\.longitudinal: missing'):
        load_vehicle_config(f1tenth_profile, SRC)


def test_unknown_key_inside_own_section(f1tenth_profile: dict[str, Any]) -> None:
    f1tenth_profile['CarParameters']['body']['masss'] = 3.0
    with pytest.raises(ConfigError, match=r'CarParameters\.body\.masss: unknown key, expected one '
                                          r'of: cog_height, cog_to_front_axle'):
        load_vehicle_config(f1tenth_profile, SRC)


def test_unknown_group_and_controller_key(f1tenth_profile: dict[str, Any]) -> None:
    f1tenth_profile['CarParameters']['aero'] = {}
    with pytest.raises(ConfigError, match=r'CarParameters\.aero: unknown key'):
        load_vehicle_config(f1tenth_profile, SRC)
    del f1tenth_profile['CarParameters']['aero']
    f1tenth_profile['Controller']['speed']['ki'] = 1.0
    with pytest.raises(ConfigError, match=r'Controller\.speed\.ki: unknown key'):
        load_vehicle_config(f1tenth_profile, SRC)


def test_unknown_top_level_key(f1tenth_profile: dict[str, Any]) -> None:
    f1tenth_profile['Sensor'] = {}
    with pytest.raises(ConfigError, match=r"^config/cars/f1tenth\.yaml: Sensor: unknown key, "
                                          r"expected one of: .*Sensors"):
        load_vehicle_config(f1tenth_profile, SRC)


@pytest.mark.parametrize(('path', 'value', 'expected'), [
    (('integrator',), 'rk45', r"integrator: expected one of \['euler', 'rk4'\], got 'rk45'"),
    (('physics_rate_hz',), 0, r'physics_rate_hz: expected a number in \(0, 1e6\]'),
    (('CarParameters', 'steering', 'max_angle'), -0.1,
     r'steering\.max_angle: expected a number > 0'),
    (('CarParameters', 'steering', 'min_rate'), 3.2, r'steering\.min_rate: expected a number < 0'),
    (('CarParameters', 'longitudinal', 'min_speed'), 1.0, r'min_speed: expected a number <= 0'),
    (('CarParameters', 'drivetrain', 'brake_torque_split_front'), 1.5,
     r'brake_torque_split_front: expected a number in \[0, 1\]'),
    (('CarParameters', 'tyre', 'pacejka', 'p_dy1'), 0, r'pacejka\.p_dy1: expected a finite number'),
    (('Controller', 'steering', 'kp'), 500.0,
     r'Controller\.steering\.kp: expected a number in \(0, physics_rate_hz = 200\]'),
    (('model',), 3, r'model: expected a model name, got 3'),
])
def test_non_physical_values(f1tenth_profile: dict[str, Any], path: tuple[str, ...], value: Any,
                             expected: str) -> None:
    node = f1tenth_profile
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    with pytest.raises(ConfigError, match=expected):
        load_vehicle_config(f1tenth_profile, SRC)


def test_partial_pacejka_overrides_keep_commonroad_defaults(
        f1tenth_profile: dict[str, Any]) -> None:
    f1tenth_profile['CarParameters']['tyre']['pacejka'] = {'p_dx1': 1.0}
    pacejka = load_vehicle_config(f1tenth_profile, SRC).params.tyre.pacejka
    assert pacejka.p_dx1 == 1.0
    assert pacejka.p_dy1 == F1TENTH.tyre.pacejka.p_dy1


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / 'bad.yaml'
    bad.write_text('model: [unclosed\n')
    with pytest.raises(ConfigError, match=r'bad\.yaml:\d+:\d+: invalid YAML'):
        load_vehicle_config_file(bad)
    with pytest.raises(ConfigError, match=r'missing\.yaml: file not found'):
        load_vehicle_config_file(tmp_path / 'missing.yaml')
    not_mapping = tmp_path / 'list.yaml'
    not_mapping.write_text('- 1\n')
    with pytest.raises(ConfigError, match=r'list\.yaml: expected a mapping'):
        load_vehicle_config_file(not_mapping)
