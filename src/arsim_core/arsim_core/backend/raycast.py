"""What every ray caster shares: the ``Raycaster`` interface, its ``Cast`` result and the
helpers the casters build on. The casters are one module each; ``raycasters`` picks one."""

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


class Incidence:
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
