"""An exact NumPy Moller-Trumbore ``Raycaster``: slow but dependency-free, so arsim runs
everywhere."""

from __future__ import annotations

import numpy as np

from arsim_core.backend.raycast import Cast, Incidence, cycled_origins


class NumpyRaycaster:
    """Vectorised ray/triangle intersection, in chunks of triangles to bound memory."""

    def __init__(self, vertices: np.ndarray, triangles: np.ndarray, chunk: int = 2048) -> None:
        corners = np.asarray(vertices, dtype=np.float64)[np.asarray(triangles, np.int64)]
        corners = corners.reshape(-1, 3, 3)
        self._v0 = corners[:, 0]
        self._e1 = corners[:, 1] - self._v0
        self._e2 = corners[:, 2] - self._v0
        self._chunk = chunk
        self._incidence = Incidence(vertices, triangles)

    def cast(self, origins: np.ndarray, directions: np.ndarray,
             max_distance: float = np.inf) -> Cast:
        d = np.asarray(directions, dtype=np.float64).reshape(-1, 3)[:, None, :]
        o = cycled_origins(origins, len(d), np.float64)[:, None, :]
        best = np.full(len(d), np.inf)
        best_index = np.full(len(d), -1, dtype=np.int64)
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
        far = best > max_distance
        best[far], best_index[far] = np.inf, -1
        triangle = best_index.astype(np.int32)
        return best.astype(np.float32), triangle, self._incidence(triangle, d[:, 0, :])
