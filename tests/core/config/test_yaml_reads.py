"""A YAML file read again is parsed once per process (a vector of environments reads the same
scenario and profiles for every environment), yet every read gets data of its own, an edited
file is read afresh, and a broken one is refused every time."""

from __future__ import annotations

from pathlib import Path

import pytest

from arsim_core.errors import ConfigError
from arsim_core.yaml_fields import load_section, load_yaml


def test_each_read_gets_its_own_data(tmp_path: Path) -> None:
    path = tmp_path / 'car.yaml'
    path.write_text('Sensors:\n  scan: {beams: 1080, mount: [0.27, 0.0, 0.11]}\n')
    first = load_yaml(path)
    first['Sensors']['scan']['mount'].append('changed')
    first['Sensors'].clear()
    again = load_yaml(path)
    assert again == {'Sensors': {'scan': {'beams': 1080, 'mount': [0.27, 0.0, 0.11]}}}
    assert load_section(path).where('Sensors') == f'{path}:1'


def test_an_edited_file_is_read_afresh(tmp_path: Path) -> None:
    path = tmp_path / 'car.yaml'
    path.write_text('beams: 1080\n')
    assert load_yaml(path) == {'beams': 1080}
    path.write_text('\nbeams: 720\n')
    assert load_yaml(path) == {'beams': 720}
    assert load_section(path).where('beams') == f'{path}:2'


def test_a_broken_file_is_refused_every_time(tmp_path: Path) -> None:
    path = tmp_path / 'car.yaml'
    path.write_text('beams: [1080\n')
    for _ in range(2):
        with pytest.raises(ConfigError, match=r'car\.yaml:2:1: invalid YAML'):
            load_yaml(path)
