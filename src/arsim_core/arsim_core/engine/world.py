"""The track as the engine holds it: the labelled mesh every renderer and the referee see,
where the cars start, the centerline the race metrics measure progress along and, on a
Formula Student layout, its cones (objects that can fall) and its mission."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arsim_core.config.scenario import SceneSettings
from arsim_core.geometry import Pose2D
from arsim_core.protocol.messages import TrackRequest
from arsim_core.track import Track, track_mesh
from arsim_core.track.fs.mission import Mission
from arsim_core.track.mesh import join_meshes, placed_cones_mesh
from arsim_core.track.model import Cones, TrackMesh
from arsim_core.track.scene import build_scene


@dataclass(frozen=True, eq=False)
class TrackWorld:
    """One track in the shapes the engine's parts consume (float32 vertices, uint32
    triangles, one uint8 label per triangle). Without a centerline there are no race metrics
    (a mesh-only track from a backend, say).

    The mesh holds what never moves; the track's placed ``cones`` are not in it, so the
    referee does not take them for barriers: renderers get them added (``track_request``),
    standing, or as they lie after cars hit them.
    """

    name: str
    vertices: np.ndarray
    triangles: np.ndarray
    labels: np.ndarray
    start_pose: Pose2D
    centerline: np.ndarray | None = None
    width_left: np.ndarray | None = None
    width_right: np.ndarray | None = None
    cones: Cones | None = None
    mission: Mission | None = None

    @classmethod
    def from_track(cls, track: Track, scene: SceneSettings | None = None) -> TrackWorld:
        """The world of ``track``, with the scenery ``scene`` asks for around it (none by
        default)."""
        mesh = fixed_mesh(track, scene)
        return cls(track.name, mesh.vertices, mesh.triangles, mesh.labels, track.start_pose,
                   track.centerline, track.width_left, track.width_right, track.cones,
                   track.mission)

    def track_request(self, cones: TrackMesh | None = None) -> TrackRequest:
        """This track as InitialSettings and Track requests carry it: the mesh with the
        placed cones, standing or as ``cones`` shows them."""
        vertices, triangles, labels = self.vertices, self.triangles, self.labels
        if cones is None and self.cones is not None and len(self.cones):
            cones = placed_cones_mesh(self.cones)
        if cones is not None:
            whole = join_meshes(TrackMesh(vertices, triangles, labels), cones)
            vertices, triangles, labels = whole.vertices, whole.triangles, whole.labels
        return TrackRequest(self.name, np.asarray(vertices, np.float32).reshape(-1, 3),
                            np.asarray(triangles, np.uint32).reshape(-1, 3),
                            np.asarray(labels, np.uint8))


def fixed_mesh(track: Track, scene: SceneSettings | None = None) -> TrackMesh:
    """What of a world never moves: the track's mesh without its placed cones, and the
    scenery around it."""
    mesh = track_mesh(track, placed_cones=False)
    if scene is None or scene.kind == 'none':
        return mesh
    return join_meshes(mesh, build_scene(track, scene.kind, scene.seed, scene.density))
