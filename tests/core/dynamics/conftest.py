"""Shared fixtures: the shipped car profiles as fresh, mutable mappings."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
CARS = REPO / 'config' / 'cars'
F1TENTH_YAML = CARS / 'f1tenth.yaml'
FULL_SCALE_YAML = CARS / 'full_scale.yaml'

_CACHE: dict[Path, dict[str, Any]] = {}


def load_profile(path: Path) -> dict[str, Any]:
    """A deep copy of a shipped profile, so tests may edit it."""
    if path not in _CACHE:
        _CACHE[path] = yaml.safe_load(path.read_text(encoding='utf-8'))
    return copy.deepcopy(_CACHE[path])


@pytest.fixture
def f1tenth_profile() -> dict[str, Any]:
    return load_profile(F1TENTH_YAML)


@pytest.fixture
def full_scale_profile() -> dict[str, Any]:
    return load_profile(FULL_SCALE_YAML)
