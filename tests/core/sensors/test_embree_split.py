"""A large Embree cast shared with a helper thread gives exactly the hits of one thread."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scenes import room

from arsim_core.backend import embree, helper_thread
from arsim_core.beams import spinning_directions


@pytest.fixture(scope='module')
def caster() -> embree.EmbreePacketRaycaster:
    try:
        vertices, triangles, _ = room()
        return embree.EmbreePacketRaycaster(vertices, triangles)
    except embree.EmbreeUnavailableError as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize('origins', ['one', 'cycled', 'per_ray'])
def test_a_split_cast_equals_a_single_thread_cast(caster, monkeypatch: pytest.MonkeyPatch,
                                                  origins: str) -> None:
    columns, channels = 1000, 24  # 1000 origins: cuts must fall on multiples of 2000
    directions = spinning_directions(0.0, 2.0 * math.pi / columns, columns,
                                     np.linspace(-0.4, 0.4, channels)).reshape(-1, 3)
    rng = np.random.default_rng(1)
    count = {'one': 1, 'cycled': columns, 'per_ray': len(directions)}[origins]
    starts = np.column_stack([rng.uniform(-3.0, 3.0, (count, 2)), rng.uniform(0.1, 1.5, count)])
    assert embree._parts(len(directions), count)[1:], 'the cast must be split'
    split = caster.cast(starts, directions, 20.0)
    monkeypatch.setattr(helper_thread, 'THREADS', 1)
    single = caster.cast(starts, directions, 20.0)
    assert 0.5 < np.isfinite(single[0]).mean() < 1.0  # hits and misses both
    for got, want in zip(split, single, strict=True):
        np.testing.assert_array_equal(got, want)


def test_parts_cover_the_rays_in_whole_packets_and_origin_cycles() -> None:
    parts = embree._parts(24_000, 1000)
    assert len(parts) == 4 and parts[0].start == 0 and parts[-1].stop == 24_000
    assert all(a.stop == b.start for a, b in zip(parts, parts[1:], strict=False))
    assert all(p.start % 2000 == 0 for p in parts)
    assert embree._parts(embree.SPLIT_RAYS - 1, 1) == [slice(0, embree.SPLIT_RAYS - 1)]
