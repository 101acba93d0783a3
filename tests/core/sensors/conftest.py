"""Fixtures of the sensor tests: car profiles with chosen sensors, and a running backend."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from simharness import free_port

from arsim_core.backend.client import BackendClient

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
def backend() -> Iterator[BackendClient]:
    """The embedded backend as its own process, on a real socket."""
    address = f'tcp://127.0.0.1:{free_port()}'
    process = subprocess.Popen([sys.executable, '-m', 'arsim_core.backend.server',
                                '--address', address])
    client = BackendClient(address, timeout_s=30.0)
    yield client
    client.close()
    process.terminate()
    assert process.wait(10) == 0
