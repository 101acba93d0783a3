"""One Ray cluster of the test suite at a time: a second cluster started on the machine while
another runs (pytest-xdist runs test modules side by side) can take the first one's session
files, and its clients then fail to authenticate to their own head node."""

from __future__ import annotations

import fcntl
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK = Path(tempfile.gettempdir()) / 'arsim-tests-ray.lock'


@contextmanager
def one_ray_cluster() -> Iterator[None]:
    """Hold the machine-wide lock for as long as the test's Ray cluster lives."""
    with LOCK.open('a') as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
