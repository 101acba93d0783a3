"""Ray casting against the track mesh.

Embree (through ``embreex``) when it is installed: about 15 M rays/s on two cores. Otherwise an
exact NumPy Moller-Trumbore fallback, slower but dependency-free, so arsim runs everywhere.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Raycaster(Protocol):
    def cast(self, origins: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Distance along each unit direction to the first hit (inf on a miss) and the hit
        triangle's index (-1 on a miss)."""
        ...


class EmbreeRaycaster:
    def __init__(self, vertices: np.ndarray, triangles: np.ndarray) -> None:
        from embreex import rtcore_scene
        from embreex.mesh_construction import TriangleMesh

        self._scene = rtcore_scene.EmbreeScene()
        corners = np.ascontiguousarray(vertices[triangles], dtype=np.float32)
        self._mesh = TriangleMesh(self._scene, corners)

    def cast(self, origins: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        hits = self._scene.run(np.ascontiguousarray(origins, dtype=np.float32),
                               np.ascontiguousarray(directions, dtype=np.float32), output=1)
        triangle = hits['primID']
        distance = np.where(triangle >= 0, hits['tfar'], np.float32(np.inf))
        return distance.astype(np.float32, copy=False), triangle


class NumpyRaycaster:
    """Vectorised ray/triangle intersection, in chunks of triangles to bound memory."""

    def __init__(self, vertices: np.ndarray, triangles: np.ndarray, chunk: int = 2048) -> None:
        corners = np.asarray(vertices, dtype=np.float64)[triangles]
        self._v0 = corners[:, 0]
        self._e1 = corners[:, 1] - self._v0
        self._e2 = corners[:, 2] - self._v0
        self._chunk = chunk

    def cast(self, origins: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        o = np.asarray(origins, dtype=np.float64)[:, None, :]
        d = np.asarray(directions, dtype=np.float64)[:, None, :]
        best = np.full(len(origins), np.inf)
        best_index = np.full(len(origins), -1, dtype=np.int64)
        for start in range(0, len(self._v0), self._chunk):
            v0, e1, e2 = (a[start:start + self._chunk][None] for a in (self._v0, self._e1,
                                                                      self._e2))
            p = np.cross(d, e2)
            det = np.einsum('ijk,ijk->ij', e1, p)
            with np.errstate(divide='ignore', invalid='ignore'):
                inv = 1.0 / det
                s = o - v0
                u = np.einsum('ijk,ijk->ij', s, p) * inv
                q = np.cross(s, e1)
                v = np.einsum('ijk,ijk->ij', d, q) * inv
                t = np.einsum('ijk,ijk->ij', e2, q) * inv
            valid = (np.abs(det) > 1e-12) & (u >= 0) & (v >= 0) & (u + v <= 1) & (t > 1e-6)
            t = np.where(valid, t, np.inf)
            index = np.argmin(t, axis=1)
            nearest = t[np.arange(len(t)), index]
            closer = nearest < best
            best[closer] = nearest[closer]
            best_index[closer] = index[closer] + start
        return best.astype(np.float32), best_index


def make_raycaster(vertices: np.ndarray, triangles: np.ndarray) -> Raycaster:
    """The fastest ray caster available on this machine."""
    try:
        return EmbreeRaycaster(vertices, triangles)
    except ImportError:
        return NumpyRaycaster(vertices, triangles)
