"""The benchmarks' real-time factor measurement fails at once, with the simulation's log, when
the simulation ends before the scans were counted, instead of waiting for scans that will never
come."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / 'bench'))

from bench_rtf import measure_rtf  # noqa: E402


def test_a_simulation_that_ends_fails_the_measurement_with_its_log() -> None:
    started = time.monotonic()
    with pytest.raises(RuntimeError, match='no_such_track') as failure:
        measure_rtf({'track': {'name': 'no_such_track'}}, measure_s=1.0)
    assert 'the simulation ended' in str(failure.value)
    assert time.monotonic() - started < 90.0  # the subscriber alone would wait 120 s or more
