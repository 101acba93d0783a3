"""Fixtures of the fit tests: calibration drives recorded from arsim with a hidden car, made
once per session (recording one takes seconds)."""

from __future__ import annotations

from pathlib import Path

import pytest
from calibration_drive import gentle, hidden_profile, record


@pytest.fixture(scope='session')
def drives(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp('drives')


@pytest.fixture(scope='session')
def hidden_car(drives: Path) -> Path:
    return hidden_profile(drives)


@pytest.fixture(scope='session')
def calibration_bag(drives: Path, hidden_car: Path) -> Path:
    """The 30 s calibration programme once, on the hidden car."""
    bag = drives / 'calibration'
    record(bag, hidden_car, 30.0)
    return bag


@pytest.fixture(scope='session')
def gentle_bag(drives: Path, hidden_car: Path) -> Path:
    """12 s of rolling slowly straight on."""
    bag = drives / 'gentle'
    record(bag, hidden_car, 12.0, gentle)
    return bag
