"""Fixtures for the track tests: the shared real-track data and a ray caster."""

from __future__ import annotations

from pathlib import Path

import pytest
from track_helpers import MAPS, SHARED_TRACKS, RayCaster


@pytest.fixture(scope='module')
def shared_tracks() -> Path:
    """Folder of the real F1TENTH and TUM tracks, which the product does not ship."""
    if not SHARED_TRACKS.is_dir():
        pytest.skip(f'real track data not found at {SHARED_TRACKS}')
    return SHARED_TRACKS


@pytest.fixture(scope='module')
def maps_dir() -> Path:
    """The repository's own tracks."""
    return MAPS


@pytest.fixture(scope='module')
def ray_caster() -> type[RayCaster]:
    """The ``RayCaster`` class, skipping where Embree is not available (non-x86 machines)."""
    pytest.importorskip('embreex')
    return RayCaster
