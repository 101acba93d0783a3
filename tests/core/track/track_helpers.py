"""Shared pieces of the track tests: where the data lives and an Embree ray caster."""

from __future__ import annotations

from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[3]
SHARED_TRACKS = REPO.parent / 'shared' / 'tracks'
MAPS = REPO / 'maps'
F1TENTH_TRACKS = ('Monza', 'Silverstone', 'Spielberg')
TUM_TRACKS = ('Monza', 'Silverstone', 'Spa', 'Spielberg')


class RayCaster:
    """Embree ray caster over a ``TrackMesh``, as the headless backend uses it."""

    def __init__(self, vertices: np.ndarray, triangles: np.ndarray) -> None:
        """Build the Embree scene once; casting is then cheap."""
        from embreex import rtcore_scene as rtcs
        from embreex.mesh_construction import TriangleMesh

        self.scene = rtcs.EmbreeScene()
        TriangleMesh(
            self.scene,
            np.ascontiguousarray(vertices, np.float32),
            np.ascontiguousarray(triangles, np.uint32),
        )

    def cast(self, origins: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Distance (inf on a miss) and triangle index (-1 on a miss) of each ray."""
        out = self.scene.run(
            np.ascontiguousarray(origins, np.float32),
            np.ascontiguousarray(directions, np.float32),
            output=1,
        )
        prim = out['primID'].astype(np.int64)
        dist = np.where(prim >= 0, out['tfar'], np.inf)
        return dist, prim
