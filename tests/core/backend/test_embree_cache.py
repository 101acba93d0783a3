"""Embree's packet kernels, and the 2D scans rasterised into a slice, compile once per machine
and source version: every later process loads them from numba's cache, so a simulation starts
in a second and a half instead of four."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# The kernels a simulation with a 2D LiDAR compiles when it starts, and what numba's cache did
# for each: (signatures loaded from the cache, signatures compiled).
LOAD = '''
import json
from arsim_core.backend import embree
try:
    embree.prepare_scan()
    runtime = embree.runtime()
except embree.EmbreeUnavailableError as exc:
    print(json.dumps({'unavailable': str(exc)}))
    raise SystemExit(0)
rays, scan, _, measured, _ = runtime.scanner(parallel=False)
_, plane_scan, _, plane_measured, _ = runtime.scanner(parallel=False, plane=True)
kernels = {'cast': runtime.kernel, 'rays': rays, 'scan': scan, 'scan_measured': measured,
           'plane_scan': plane_scan, 'plane_scan_measured': plane_measured}
print(json.dumps({name: [len(kernel.stats.cache_hits), len(kernel.stats.cache_misses)]
                  for name, kernel in kernels.items()}))
'''


def _load_in_a_new_process(cache: Path) -> dict[str, list[int]]:
    env = {**os.environ, 'ARSIM_NUMBA_CACHE': str(cache)}
    done = subprocess.run([sys.executable, '-c', LOAD], env=env, capture_output=True, text=True,
                          timeout=300, check=True)
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    if 'unavailable' in outcome:
        pytest.skip(outcome['unavailable'])
    return outcome


def _files(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns
            for p in folder.rglob('*') if p.is_file()}


def test_a_second_process_loads_every_kernel_from_the_cache(tmp_path: Path) -> None:
    first = _load_in_a_new_process(tmp_path)
    assert all(misses > 0 for _, misses in first.values()), first  # compiled and saved
    saved = _files(tmp_path)

    second = _load_in_a_new_process(tmp_path)
    assert second == {name: [hits, 0] for name, (hits, _) in second.items()}, second
    assert all(hits > 0 for hits, _ in second.values()), second
    # Found under the same keys: nothing was added or rewritten (a key that changed from one
    # process to the next would add an entry at every start, and compile every time).
    assert _files(tmp_path) == saved
