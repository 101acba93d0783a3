"""A 2D scan as a policy observes it (arsim_core.sensors.scan_ranges): the one clipping rule
the Gymnasium environments and a Gym policy racing as a driver of the zoo share."""

from __future__ import annotations

import numpy as np

from arsim_core.sensors.scan_ranges import clip_ranges

LOW, HIGH = np.float32(0.06), np.float32(30.0)


def test_no_return_and_dropped_beams_read_the_far_bound_too_close_the_near_one() -> None:
    ranges = np.array([np.inf, np.nan, -np.inf, 0.01, 5.0, 31.0], np.float32)
    clipped = clip_ranges(ranges, LOW, HIGH)
    assert clipped.dtype == np.float32 and clipped is not ranges
    np.testing.assert_array_equal(clipped, [HIGH, HIGH, LOW, LOW, 5.0, HIGH])
    assert np.isnan(ranges[1])  # the input is left as it was


def test_clipping_into_an_array_of_the_callers() -> None:
    ranges = np.array([[np.nan, 1.0], [-np.inf, 40.0]])  # float64: copied, then clipped
    out = np.empty((2, 2), np.float32)
    assert clip_ranges(ranges, LOW, HIGH, out=out) is out
    np.testing.assert_array_equal(out, [[HIGH, 1.0], [LOW, HIGH]])
    same = np.array([np.inf, 2.0], np.float32)
    assert clip_ranges(same, LOW, HIGH, out=same) is same
    np.testing.assert_array_equal(same, [HIGH, 2.0])
