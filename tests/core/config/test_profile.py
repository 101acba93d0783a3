"""A car profile is read once, with every error at its file and line, and carries its
validated dynamics for every consumer: no second parse, no made-up physical values."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from arsim_core.config.profile import load_profile
from arsim_core.errors import ConfigError


@pytest.fixture
def profile_text(repo_root: Path) -> str:
    return (repo_root / 'config' / 'cars' / 'f1tenth.yaml').read_text()


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / 'car.yaml'
    path.write_text(text)
    return path


def line_of(path: Path, fragment: str) -> int:
    return next(n for n, text in enumerate(path.read_text().splitlines(), 1) if fragment in text)


def test_the_profile_carries_its_dynamics_and_the_wheelbase_comes_from_them(
        repo_root: Path) -> None:
    path = repo_root / 'config' / 'cars' / 'f1tenth.yaml'
    body = yaml.safe_load(path.read_text())['CarParameters']['body']
    vehicle = load_profile(path).vehicle
    assert vehicle.params.body.mass == body['mass']
    assert vehicle.params.body.wheelbase == pytest.approx(body['cog_to_front_axle']
                                                          + body['cog_to_rear_axle'])


def test_a_bad_value_is_reported_at_its_line(tmp_path: Path, profile_text: str) -> None:
    path = write(tmp_path, profile_text.replace('mass: 3.74', 'mass: -3', 1))
    with pytest.raises(ConfigError) as info:
        load_profile(path)
    assert str(info.value) == (f'{path}:{line_of(path, "mass: -3")}: CarParameters.body.mass: '
                               f'expected a number > 0, got -3')


def test_a_missing_axle_distance_is_refused_rather_than_guessed(
        tmp_path: Path, profile_text: str) -> None:
    kept = [line for line in profile_text.splitlines() if 'cog_to_front_axle:' not in line]
    path = write(tmp_path, '\n'.join(kept) + '\n')
    with pytest.raises(ConfigError) as info:
        load_profile(path)
    message = str(info.value)
    assert message.startswith(f'{path}:{line_of(path, "body:")}: '), message  # the section
    assert 'CarParameters.body.cog_to_front_axle: missing, expected a number > 0' in message


def test_an_unknown_top_level_key_is_refused_at_its_line(tmp_path: Path,
                                                         profile_text: str) -> None:
    path = write(tmp_path, profile_text + 'Sensor: {}\n')
    with pytest.raises(ConfigError, match=rf'^{path}:{line_of(path, "Sensor: ")}: Sensor: '
                                          r'unknown key, expected one of: .*Sensors'):
        load_profile(path)


def test_a_footprint_without_a_height_is_refused(tmp_path: Path, profile_text: str) -> None:
    path = write(tmp_path, profile_text.replace(', height: 0.2}', '}', 1))
    with pytest.raises(ConfigError, match=r'Footprint\.height: missing, expected a number > 0'):
        load_profile(path)
