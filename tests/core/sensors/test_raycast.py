"""Every ray caster the backend may pick reads origins the same way: ray i starts at
origins[i % m], so a spinning LiDAR's channel rows share its columns' origins without a copy."""

from __future__ import annotations

import numpy as np
import pytest
from scenes import HALF, room

from arsim_core.backend.embree import EmbreePacketRaycaster, EmbreeUnavailableError
from arsim_core.backend.raycast import EmbreeRaycaster, NumpyRaycaster


def _embree_packets(vertices: np.ndarray, triangles: np.ndarray) -> EmbreePacketRaycaster:
    try:
        return EmbreePacketRaycaster(vertices, triangles)
    except EmbreeUnavailableError as exc:
        pytest.skip(f'Embree packets unavailable: {exc}')


def _embreex(vertices: np.ndarray, triangles: np.ndarray) -> EmbreeRaycaster:
    pytest.importorskip('embreex')
    return EmbreeRaycaster(vertices, triangles)


CASTERS = {'embree-packets': _embree_packets, 'embreex': _embreex, 'numpy': NumpyRaycaster}


@pytest.fixture(params=sorted(CASTERS))
def caster(request):
    vertices, triangles, _ = room()
    return CASTERS[request.param](vertices, triangles)


def test_channel_rows_cycle_through_the_column_origins(caster) -> None:
    """3 rows (horizontal rays along +x) x 5 columns (origins spread in x): the distance to the
    +x wall depends on the column's origin only."""
    columns = np.array([[x, 0.0, 0.5] for x in (-4.0, -2.0, 0.0, 1.0, 3.0)], np.float32)
    rows = 3
    directions = np.tile([1.0, 0.0, 0.0], (rows * len(columns), 1)).astype(np.float32)
    distance, triangle = caster.cast(columns, directions, 30.0)
    expected = np.tile(HALF - columns[:, 0], rows)
    np.testing.assert_allclose(distance, expected, atol=1e-4)
    assert np.all(triangle >= 0)
    tiled, _ = caster.cast(np.tile(columns, (rows, 1)), directions, 30.0)
    np.testing.assert_array_equal(distance, tiled)


def test_rays_that_do_not_fill_whole_rows_are_refused(caster) -> None:
    directions = np.tile([1.0, 0.0, 0.0], (7, 1)).astype(np.float32)
    with pytest.raises(ValueError, match='7 rays cannot cycle through 5 origins'):
        caster.cast(np.zeros((5, 3), np.float32), directions, 30.0)
