"""What every fuzz test shares: how many inputs to generate, how long one may take, and how
long a whole run lasts.

Knobs (environment variables, read once):
- ``ARSIM_FUZZ_PROFILE``: ``ci`` (default: a brief run, part of ``make test``) or ``fuzz``
  (``make fuzz``: a hundred times as many inputs per run);
- ``ARSIM_FUZZ_EXAMPLES``: the number of inputs of every test's run, whatever the profile;
- ``ARSIM_FUZZ_SECONDS``: each test repeats its run with fresh inputs until this much wall
  time has passed (0: one run), so ``make fuzz`` can go on for an hour.

An input that takes longer than ``HANG_S`` is a failure (Hypothesis's deadline in process; a
reply timeout over sockets), and so is any exception but the project's own errors. The brief run
shares the machine with the rest of ``make test``, so it only fails an input after 20 s (and
has no deadline in process: pytest-timeout ends a true hang); the long run holds to 5 s.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, settings

PROFILE = os.environ.get('ARSIM_FUZZ_PROFILE', 'ci')
if PROFILE not in ('ci', 'fuzz'):
    msg = f'ARSIM_FUZZ_PROFILE must be ci or fuzz, got {PROFILE!r}'
    raise ValueError(msg)
EXAMPLES = os.environ.get('ARSIM_FUZZ_EXAMPLES')
SECONDS = float(os.environ.get('ARSIM_FUZZ_SECONDS', '0'))
LONG_FACTOR = 100  # the fuzz profile's inputs per run, against the brief one's
HANG_S = 5.0 if PROFILE == 'fuzz' else 20.0
REPO = Path(__file__).resolve().parents[2]

# Shared by every test: no example database (runs leave nothing behind), in the long run a
# deadline that makes an input taking over HANG_S fail, and no health checks (slow inputs are
# the point).
# The brief run draws the same inputs every time (derandomize), so make test passes or fails
# alike on every run; the long run explores anew each time.
settings.register_profile('ci', database=None, deadline=None, derandomize=True,
                          suppress_health_check=list(HealthCheck), print_blob=True)
settings.register_profile('fuzz', parent=settings.get_profile('ci'), derandomize=False,
                          deadline=timedelta(seconds=HANG_S))
BASE = settings.get_profile(PROFILE)
NO_SHRINK = [Phase.explicit, Phase.generate]  # for stateful targets: one failure is enough


def examples(brief: int) -> int:
    """Inputs per run of a test whose brief run is ``brief`` inputs."""
    if EXAMPLES is not None:
        return int(EXAMPLES)
    return brief if PROFILE == 'ci' else brief * LONG_FACTOR


def fuzz(brief: int, **changes: object) -> settings:
    """The settings of one test's run (``changes`` as for ``hypothesis.settings``)."""
    return settings(BASE, max_examples=examples(brief), **changes)  # type: ignore[arg-type]


def timeout_s(brief_s: float) -> float:
    """pytest-timeout for a test whose brief run takes about ``brief_s`` here: room for a
    loaded machine, for the long profile, and for ARSIM_FUZZ_SECONDS."""
    scale = examples(1) if EXAMPLES is not None else (1 if PROFILE == 'ci' else LONG_FACTOR)
    return 300 + 10 * brief_s * scale + 2 * SECONDS


def repeat(run: Callable[[], None]) -> int:
    """Call a Hypothesis test until ARSIM_FUZZ_SECONDS have passed (at least once); each call
    draws new inputs. The number of runs."""
    end = time.monotonic() + SECONDS
    runs = 0
    while True:
        run()
        runs += 1
        if time.monotonic() >= end:
            return runs


def rss_kib(pid: int | str = 'self') -> int:
    """A process's resident memory [KiB], from /proc/PID/status."""
    for line in Path(f'/proc/{pid}/status').read_text().splitlines():
        if line.startswith('VmRSS:'):
            return int(line.split()[1])
    msg = f'no VmRSS in /proc/{pid}/status'
    raise LookupError(msg)


def key_paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key path into nested dicts and lists (a JSON header, a YAML document), for
    mutations to pick from."""
    items = value.items() if isinstance(value, dict) else enumerate(value) \
        if isinstance(value, list) else ()
    for key, child in items:
        yield (*prefix, key)
        yield from key_paths(child, (*prefix, key))
