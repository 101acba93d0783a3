"""What the live 2D ground truth costs a camera with the semantic output: milliseconds per
640x480 frame showing 24 cones spread over its lower half (``ground_truth_2d_ms``, and with a
depth image to split touching cones, ``ground_truth_2d_depth_ms``), the median of repeated
calls. Cameras without the semantic output pay nothing."""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
from benchkit import Row, main, sized, take_smoke_flag

from arsim_core import labels
from arsim_core.sensors.ground_truth import boxes

REPEATS = 60
ROWS = (Row('ground_truth_2d_ms', 'ms_per_frame'), Row('ground_truth_2d_depth_ms', 'ms_per_frame'))


def frame() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    semantic = np.full((480, 640), labels.ROAD, np.uint8)
    depth = np.full((480, 640), 20.0, np.float32)
    for index in range(24):
        x, y = int(rng.integers(0, 620)), int(rng.integers(200, 460))
        w, h = int(rng.integers(4, 20)), int(rng.integers(6, 30))
        semantic[y:y + h, x:x + w] = labels.CONE_BLUE if index % 2 else labels.CONE_YELLOW
        depth[y:y + h, x:x + w] = rng.uniform(2.0, 15.0)
    return semantic, depth


def median_ms(call) -> float:
    times = []
    for _ in range(sized(REPEATS, 3)):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def run() -> list[tuple[str, float, str]]:
    semantic, depth = frame()
    plain = median_ms(lambda: boxes(semantic))
    with_depth = median_ms(lambda: boxes(semantic, depth))
    return [('ground_truth_2d_ms', plain, 'ms_per_frame'),
            ('ground_truth_2d_depth_ms', with_depth, 'ms_per_frame')]


if __name__ == '__main__':
    take_smoke_flag()
    sys.exit(main(run, ROWS))
