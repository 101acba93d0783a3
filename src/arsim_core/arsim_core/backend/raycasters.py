"""Picks the fastest ray caster this machine can run, in order: Embree 4 packets driven from
numba (``embree``, about 60 M rays/s per core), embreex's one-ray-at-a-time scene
(``raycast_embreex``, about 9 M rays/s), then exact NumPy (``raycast_numpy``). Each is imported
only when it is tried, so a machine without Embree or numba never loads them."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from arsim_core.backend.raycast import Raycaster

#: (module, class) of each caster, fastest first; a caster that cannot run here raises
#: ImportError (or a subclass) when imported or built.
ORDER = (('arsim_core.backend.embree', 'EmbreePacketRaycaster'),
         ('arsim_core.backend.raycast_embreex', 'EmbreeRaycaster'),
         ('arsim_core.backend.raycast_numpy', 'NumpyRaycaster'))


def make_raycaster(vertices: np.ndarray, triangles: np.ndarray) -> Raycaster:
    """The fastest ray caster available on this machine, on this mesh."""
    *faster, fallback = ORDER
    for module, name in faster:
        try:
            return _caster(module, name)(vertices, triangles)
        except ImportError:  # not on this machine: the next one
            continue
    return _caster(*fallback)(vertices, triangles)


def _caster(module: str, name: str) -> Any:
    return getattr(importlib.import_module(module), name)
