"""A 2D LiDAR's ranges as a learning policy observes them, for every face that hands a policy
its scan (the Gymnasium environments, a Gym policy racing in process as a driver of the zoo):
REP-117 ranges clipped into the observation space's bounds, as f1tenth_gym's, so a policy
trained in the gym sees the same numbers wherever it drives."""

from __future__ import annotations

import numpy as np

from arsim_core._jit import kernel


def clip_ranges(ranges: np.ndarray, low: np.float32, high: np.float32,
                out: np.ndarray | None = None) -> np.ndarray:
    """REP-117 ranges as an observation in [low, high], as f1tenth_gym's: no return (+inf)
    and a dropped beam (NaN) read ``high``, too close (-inf) reads ``low``. Into ``out`` if
    given (which may be ``ranges``)."""
    if out is None or not (out.flags.c_contiguous and out.dtype == np.float32):
        result = np.array(ranges, dtype=np.float32, order='C')
    else:
        result = out
        if out is not ranges:
            result[...] = ranges
    _clip_in_place(result.reshape(-1), np.float32(low), np.float32(high))
    if out is not None and result is not out:
        out[...] = result
        return out
    return result


@kernel
def _clip_in_place(values: np.ndarray, low: float, high: float) -> None:
    """One compiled pass; in place, because the compiler only vectorises the loop when it can
    tell that what it reads is not what it writes."""
    for i in range(values.shape[0]):
        v = values[i]
        v = v if v <= high else high  # NaN fails the test: high
        values[i] = v if v >= low else low
