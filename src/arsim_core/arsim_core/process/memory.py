"""Heap tuning for processes that move megabyte buffers every frame (images, clouds, bags).

glibc serves every allocation above its mmap threshold (128 KiB until it adapts) with a fresh
mmap and returns it to the system when freed, so each new 1 MB buffer is faulted in page by
page again. A process that copies a 640x480 image several times a frame (the recorder writing
it into a bag) spends a third of that time in page faults. Keeping such buffers in the heap,
and not trimming the heap's top after each free, makes the copies plain memory copies.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

# mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
_M_MMAP_THRESHOLD = -3
LARGE_BUFFER_BYTES = 64 * 2**20  # kept in the heap up to this size
HEAP_SLACK_BYTES = 256 * 2**20  # free memory at the heap's top kept, not given back


def keep_large_buffers() -> bool:
    """Keep buffers up to LARGE_BUFFER_BYTES in the heap; whether the C library took it
    (glibc only; elsewhere nothing changes)."""
    if not sys.platform.startswith('linux'):
        return False
    name = ctypes.util.find_library('c')
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError, TypeError):  # not glibc
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return all(mallopt(parameter, value) == 1 for parameter, value in (
        (_M_MMAP_THRESHOLD, LARGE_BUFFER_BYTES), (_M_TRIM_THRESHOLD, HEAP_SLACK_BYTES),
        (_M_TOP_PAD, LARGE_BUFFER_BYTES)))
