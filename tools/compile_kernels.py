"""Compile the simulator's kernels into numba's on-disk cache (``arsim_core._jit``), once per
source version: ``tools/setup.sh`` runs this after a build, so the first ``make sim`` on a
machine starts in about 2 s instead of 23 and never holds the compiler's memory (a first run
peaks near 500 MiB PSS while it compiles, about 290 MiB from the cache).

The default car steps a few times in the Gym environment: the engine, its dynamics, scan and
race kernels are those of a ROS run; a camera's photon noise kernel draws a few values. Prints
a line when it compiled or failed; exits 0 whatever happens, since a run compiles what it lacks
anyway."""

from __future__ import annotations

import sys
import time

MARKER = 'default-run.compiled'  # in the cache directory: this version is compiled


def main() -> int:
    started = time.monotonic()
    try:
        from arsim_core._jit import NUMBA_ENABLED, cache_directory

        cache = cache_directory()
        if not NUMBA_ENABLED or cache is None or (cache / MARKER).is_file():
            return 0
        import gymnasium

        env = gymnasium.make('arsim_gym:arsim/Race-v0')
        env.reset(seed=0)
        for _ in range(3):
            env.step(env.action_space.sample())
        env.close()
        _draw_camera_noise()
        (cache / MARKER).touch()
    except Exception as exc:  # noqa: BLE001 - only a head start: a run compiles what it lacks
        print(f'[arsim] kernels not compiled ahead ({type(exc).__name__}: {exc}); the first '
              'run compiles them', file=sys.stderr)
        return 0
    print(f'[arsim] kernels compiled into {cache} in {time.monotonic() - started:.0f} s',
          file=sys.stderr)
    return 0


def _draw_camera_noise() -> None:
    """One call of the camera photon noise kernel, which compiles it."""
    import numpy as np

    from arsim_core.backend.exposure import DRAW_BITS, noisy

    values = np.zeros(8, np.uint8)
    noisy(values, np.zeros(256 << DRAW_BITS, np.uint8), np.uint64(1), np.empty(1, np.uint64),
          np.empty_like(values))


if __name__ == '__main__':
    sys.exit(main())
