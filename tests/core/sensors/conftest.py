"""Fixtures of the sensor tests: car profiles with chosen sensors (the backend fixture is
shared, in tests/conftest.py)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from arsim_core.config.profile import load_profile
from arsim_core.errors import ConfigError

SENSOR_TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(SENSOR_TESTS))


@pytest.fixture
def write_profile(tmp_path: Path, repo_root: Path) -> Callable[[dict[str, Any]], Path]:
    """Write the F1TENTH profile with its Sensors section replaced; returns the file."""
    base = yaml.safe_load((repo_root / 'config' / 'cars' / 'f1tenth.yaml').read_text())

    def write(sensors: dict[str, Any], name: str = 'car') -> Path:
        path = tmp_path / f'{name}.yaml'
        path.write_text(yaml.safe_dump({**base, 'Sensors': sensors}, sort_keys=False))
        return path

    return write


@pytest.fixture
def refused_sensor(write_profile: Callable[[dict[str, Any]], Path]
                   ) -> Callable[[dict[str, Any], str, str, str], None]:
    """Check that the profile with these ``sensors`` fails to load at the file, line and
    ``Sensors.<sensor>.<key>``, with ``expected`` in the message."""

    def check(sensors: dict[str, Any], sensor: str, key: str, expected: str) -> None:
        path = write_profile(sensors)
        with pytest.raises(ConfigError) as error:
            load_profile(path)
        message = str(error.value)
        assert re.match(rf'{re.escape(str(path))}:\d+: Sensors\.{sensor}\.{key}: ', message), \
            message
        assert expected in message

    return check
