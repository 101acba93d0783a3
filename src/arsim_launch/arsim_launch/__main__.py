"""``python3 -m arsim_launch``: the simulator's launcher (``arsim_launch.sim``), quiet when
stopped while it starts (``arsim_core.process.entrypoints``)."""

from __future__ import annotations

import importlib
import os

from arsim_core.process.entrypoints import run

NUMBA_SWITCH = 'ARSIM_NUMBA'  # read by arsim_core._jit as it is imported


def main() -> None:
    import_kernels_uncompiled()
    run('arsim_launch.sim')


def import_kernels_uncompiled() -> None:
    """The launcher reads and checks the configuration but never steps a car, so arsim's
    kernels stay plain Python in it (``ARSIM_NUMBA=0`` while ``arsim_core._jit`` is imported):
    importing numba was a third of the launcher's start-up, paid at every run. The processes
    it starts get the environment as it was."""
    given = os.environ.get(NUMBA_SWITCH)
    os.environ[NUMBA_SWITCH] = '0'
    try:
        importlib.import_module('arsim_core._jit')
    finally:
        if given is None:
            del os.environ[NUMBA_SWITCH]
        else:
            os.environ[NUMBA_SWITCH] = given


if __name__ == '__main__':
    main()
