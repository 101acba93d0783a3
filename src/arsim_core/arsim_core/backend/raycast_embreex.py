"""embreex's scene as a ``Raycaster``: one ray at a time from Cython (about 9 M rays/s here),
for machines where the Embree 4 packet kernels cannot run."""

from __future__ import annotations

import numpy as np

from arsim_core.backend.raycast import Cast, Incidence, cycled_origins


class EmbreeRaycaster:
    """embreex's scene: one ray at a time from Cython."""

    def __init__(self, vertices: np.ndarray, triangles: np.ndarray) -> None:
        from embreex import rtcore_scene
        from embreex.mesh_construction import TriangleMesh

        self._scene = rtcore_scene.EmbreeScene()
        self._incidence = Incidence(vertices, triangles)
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
