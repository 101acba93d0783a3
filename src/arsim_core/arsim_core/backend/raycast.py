"""Ray casting against triangle meshes (the track, and the boxes of other cars).

The fastest implementation available is picked: Embree 4 packets driven from numba
(``arsim_core.backend.embree``, about 60 M rays/s per core), then embreex's one-ray-at-a-time
scene (about 9 M rays/s), then an exact NumPy Moller-Trumbore fallback, slow but
dependency-free, so arsim runs everywhere.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

Cast = tuple[np.ndarray, np.ndarray, np.ndarray]  # distance, triangle, incidence cosine


class Raycaster(Protocol):
    def cast(self, origins: np.ndarray, directions: np.ndarray,
             max_distance: float = np.inf) -> Cast:
        """Distance along each unit direction to the first hit within ``max_distance`` (inf
        otherwise), the hit triangle's index (-1) and |cos| of the angle between the ray and
        the triangle's normal (0), all float32/int32. ``origins`` is (m, 3) for n rays, n a
        multiple of m: ray i starts at ``origins[i % m]``, so (1, 3) is one shared origin and
        a spinning LiDAR's (columns, 3) serves all its channel rows without a copy."""
        ...


def triangle_normals(vertices: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Unit normals (T, 3) float32; degenerate triangles get a zero normal."""
    corners = np.asarray(vertices, dtype=np.float64)[np.asarray(triangles, np.int64)]
    normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    length = np.linalg.norm(normals, axis=1, keepdims=True)
    return np.divide(normals, length, out=np.zeros_like(normals), where=length > 0) \
        .astype(np.float32)


class _Incidence:
    """|cos| of incidence from a normal table whose extra last row (zero) serves a miss, for
    the casters that report only the triangle hit."""

    def __init__(self, vertices: np.ndarray, triangles: np.ndarray) -> None:
        self._normals = np.vstack([triangle_normals(vertices, triangles),
                                   np.zeros((1, 3), np.float32)])

    def __call__(self, triangle: np.ndarray, directions: np.ndarray) -> np.ndarray:
        cosine = np.einsum('ij,ij->i', self._normals[triangle], directions)
        return np.abs(cosine, out=cosine).astype(np.float32, copy=False)


def cycled_origins(origins: np.ndarray, rays: int, dtype: type) -> np.ndarray:
    """``origins`` (m, 3) repeated for ``rays`` rays as ``Raycaster.cast`` reads them."""
    origins = np.asarray(origins, dtype=dtype).reshape(-1, 3)
    check_origins(len(origins), rays)
    return np.tile(origins, (rays // len(origins), 1))


def check_origins(origins: int, rays: int) -> None:
    if origins == 0 or rays % origins:
        msg = f'{rays} rays cannot cycle through {origins} origins'
        raise ValueError(msg)


class EmbreeRaycaster:
    """embreex's scene: one ray at a time from Cython."""

    def __init__(self, vertices: np.ndarray, triangles: np.ndarray) -> None:
        from embreex import rtcore_scene
        from embreex.mesh_construction import TriangleMesh

        self._scene = rtcore_scene.EmbreeScene()
        self._incidence = _Incidence(vertices, triangles)
        corners = np.ascontiguousarray(np.asarray(vertices)[np.asarray(triangles, np.int64)],
                                       dtype=np.float32)
        self._empty = not len(corners)
        if not self._empty:
            self._mesh = TriangleMesh(self._scene, corners)

    def cast(self, origins: np.ndarray, directions: np.ndarray,
             max_distance: float = np.inf) -> Cast:
        directions = np.ascontiguousarray(directions, dtype=np.float32).reshape(-1, 3)
        origins = np.ascontiguousarray(cycled_origins(origins, len(directions), np.float32))
        if not len(directions) or self._empty:
            return (np.full(len(directions), np.inf, np.float32),
                    np.full(len(directions), -1, np.int32), np.zeros(len(directions), np.float32))
        hits = self._scene.run(origins, directions, output=1)
        triangle = hits['primID']
        distance = np.where(triangle >= 0, hits['tfar'], np.float32(np.inf))
        far = distance > max_distance
        triangle = np.where(far, -1, triangle).astype(np.int32, copy=False)
        return (np.where(far, np.float32(np.inf), distance).astype(np.float32, copy=False),
                triangle, self._incidence(triangle, directions))


class NumpyRaycaster:
    """Vectorised ray/triangle intersection, in chunks of triangles to bound memory."""

    def __init__(self, vertices: np.ndarray, triangles: np.ndarray, chunk: int = 2048) -> None:
        corners = np.asarray(vertices, dtype=np.float64)[np.asarray(triangles, np.int64)]
        corners = corners.reshape(-1, 3, 3)
        self._v0 = corners[:, 0]
        self._e1 = corners[:, 1] - self._v0
        self._e2 = corners[:, 2] - self._v0
        self._chunk = chunk
        self._incidence = _Incidence(vertices, triangles)

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


def make_raycaster(vertices: np.ndarray, triangles: np.ndarray) -> Raycaster:
    """The fastest ray caster available on this machine."""
    from arsim_core.backend.embree import EmbreePacketRaycaster, EmbreeUnavailableError

    try:
        return EmbreePacketRaycaster(vertices, triangles)
    except EmbreeUnavailableError:
        pass
    try:
        return EmbreeRaycaster(vertices, triangles)
    except ImportError:
        return NumpyRaycaster(vertices, triangles)
