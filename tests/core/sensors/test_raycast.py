"""Every ray caster the backend may pick answers alike: ray i starts at origins[i % m], so a
spinning LiDAR's channel rows share its columns' origins without a copy, and each hit comes with
the cosine of its angle of incidence."""

from __future__ import annotations

import numpy as np
import pytest
from scenes import CASTERS, HALF, room


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
    distance, triangle, _ = caster.cast(columns, directions, 30.0)
    expected = np.tile(HALF - columns[:, 0], rows)
    np.testing.assert_allclose(distance, expected, atol=1e-4)
    assert np.all(triangle >= 0)
    tiled, _, _ = caster.cast(np.tile(columns, (rows, 1)), directions, 30.0)
    np.testing.assert_array_equal(distance, tiled)


def test_hits_report_the_cosine_of_incidence(caster) -> None:
    """From the centre at 0.5 m height: level rays meet the +x wall at 0, 30 and 40 degrees
    from its normal, a ray 30 degrees below level meets the ground at 60 degrees from the
    vertical, and a ray out over the wall hits nothing (cosine 0)."""
    angles = np.radians([0.0, 30.0, 40.0])
    level = np.column_stack([np.cos(angles), np.sin(angles), np.zeros(3)])
    down = [np.cos(np.radians(30.0)), 0.0, -np.sin(np.radians(30.0))]
    up = [0.0, np.cos(np.radians(60.0)), np.sin(np.radians(60.0))]
    directions = np.vstack([level, down, up]).astype(np.float32)
    distance, triangle, cosine = caster.cast(np.array([[0.0, 0.0, 0.5]]), directions, 30.0)
    np.testing.assert_allclose(cosine, [*np.cos(angles), 0.5, 0.0], atol=1e-5)
    assert triangle[-1] == -1 and distance[-1] == np.inf


def test_rays_that_do_not_fill_whole_rows_are_refused(caster) -> None:
    directions = np.tile([1.0, 0.0, 0.0], (7, 1)).astype(np.float32)
    with pytest.raises(ValueError, match='7 rays cannot cycle through 5 origins'):
        caster.cast(np.zeros((5, 3), np.float32), directions, 30.0)
