"""One helper thread that shares the backend's large jobs with the caller: a 3D LiDAR's
revolution, a camera's resampling through its lens and its sensor's noise.

The jobs run in code that releases the GIL (compiled Embree loops, OpenCV, numba kernels), so
the two halves run on two cores when two are free and one after the other when not: unlike
numba's parallel loops and OpenCV's thread pool, which spin and slow down ten-fold when a
thread is preempted, a waiting Python thread just sleeps. In the backend the bridge, the sensor
nodes and the dynamics leave about half of the second core idle here: an OS1-64 revolution in
arsim_ring's hall took 1.5 ms on two threads where one took 2.7, with the same hits; a
1024 x 760 camera's resampling through its lens 1.4 ms where one took 2.8 (in process, the
same pixels). ``ARSIM_BACKEND_THREADS=1`` keeps every job on the caller's thread.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait

THREADS_ENV = 'ARSIM_BACKEND_THREADS'


def _threads() -> int:
    """THREADS_ENV as a number of threads: 2 when unset, 1 or more."""
    given = os.environ.get(THREADS_ENV, '').strip() or '2'
    try:
        return max(1, int(given))
    except ValueError:
        msg = f'{THREADS_ENV}={given!r}: expected a whole number of threads (1 or 2)'
        raise ValueError(msg) from None


#: Threads a large job may use (ARSIM_BACKEND_THREADS, default 2; 1 runs it on the caller's).
THREADS = _threads()
PARTS = 4  # a shared job is cut in this many parts, taken in turns by the two threads
_HELPER: ThreadPoolExecutor | None = None
_ON_HELPER = threading.local()  # ``inside`` is set on the helper thread


def _helper() -> ThreadPoolExecutor:
    global _HELPER
    if _HELPER is None:
        _HELPER = ThreadPoolExecutor(max_workers=1, thread_name_prefix='arsim-helper',
                                     initializer=setattr, initargs=(_ON_HELPER, 'inside', True))
    return _HELPER


def parts(total: int, step: int, least: int) -> list[slice]:
    """``range(total)`` cut into PARTS slices that start at multiples of ``step``; one slice
    when ``total`` is below ``least`` or the job keeps one thread. Neighbouring parts of a
    sensor differ in work (a LiDAR's upper rows reach far walls, its lower ones the floor),
    so taking parts in turns balances the threads."""
    if total < least or THREADS < 2:
        return [slice(0, total)]
    cuts = sorted({min(total, (total * k // PARTS) // step * step) for k in range(PARTS)}
                  | {total})
    return [slice(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if b > a]


def _each(action: Callable[[slice], None], chosen: Sequence[slice]) -> None:
    for part in chosen:
        action(part)


def share(action: Callable[[slice], None], chosen: Sequence[slice]) -> None:
    """``action`` on every part: every other one on the helper thread, the rest on the
    caller's; returns when all are done (an error of either thread is raised here). Called
    on the helper thread itself, it does them all there: waiting for a job queued behind the
    running one would never end."""
    if len(chosen) < 2 or getattr(_ON_HELPER, 'inside', False):
        _each(action, chosen)
        return
    helped = _helper().submit(_each, action, chosen[1::2])
    try:
        _each(action, chosen[0::2])
    except BaseException:
        wait([helped])  # the helper may still write into the caller's arrays
        raise
    helped.result()


SPLIT_PIXELS = 65_536  # an image of at least this many pixels is shared with the helper thread
ROW_STEP = 8  # bands of an image start at multiples of 8 rows: on whole words of noise draws


def image_rows(height: int, width: int) -> list[slice]:
    """Bands of rows of a ``height`` x ``width`` image for ``share``."""
    return parts(height, ROW_STEP, -(-SPLIT_PIXELS // max(width, 1)))
