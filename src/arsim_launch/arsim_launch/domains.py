"""ROS domains for runs side by side on one machine: a ROS_DOMAIN_ID that no other run
started this way is using, held by a lock file until it is given back.

Two simulations in one domain hear each other's commands and clocks; the events of a league
run in parallel, and so do tests, so each takes a domain of its own.
"""

from __future__ import annotations

import fcntl
import os
import random
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DOMAINS = range(1, 200)  # ROS_DOMAIN_IDs that stay clear of DDS's port limits


def take_domain() -> tuple[int, int]:
    """A free domain and the open lock file that holds it (closing it gives it back)."""
    folder = Path(tempfile.gettempdir()) / 'arsim-domains'
    folder.mkdir(exist_ok=True)
    candidates = list(DOMAINS)
    random.Random(os.getpid() ^ time.monotonic_ns()).shuffle(candidates)
    for domain in candidates:
        fd = os.open(folder / f'{domain}.lock', os.O_CREAT | os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        return domain, fd
    msg = f'no free ROS domain id between {DOMAINS.start} and {DOMAINS.stop - 1}'
    raise RuntimeError(msg)


@contextmanager
def reserved_domain() -> Iterator[int]:
    """A free ROS domain, this process's until the block ends."""
    domain, fd = take_domain()
    try:
        yield domain
    finally:
        os.close(fd)
