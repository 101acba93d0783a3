"""The track as the engine holds it: the labelled mesh every renderer and the referee see,
where the cars start, and the centerline the race metrics measure progress along."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arsim_core.engine.state import Pose2D
from arsim_core.messages import TrackRequest
from arsim_core.track import Track, track_mesh


@dataclass(frozen=True, eq=False)
class TrackWorld:
    """One track in the shapes the engine's parts consume (float32 vertices, uint32
    triangles, one uint8 label per triangle). Without a centerline there are no race metrics
    (a mesh-only track from a backend, say)."""

    name: str
    vertices: np.ndarray
    triangles: np.ndarray
    labels: np.ndarray
    start_pose: Pose2D
    centerline: np.ndarray | None = None
    width_left: np.ndarray | None = None
    width_right: np.ndarray | None = None

    @classmethod
    def from_track(cls, track: Track) -> TrackWorld:
        mesh = track_mesh(track)
        return cls(track.name, mesh.vertices, mesh.triangles, mesh.labels, track.start_pose,
                   track.centerline, track.width_left, track.width_right)

    def track_request(self) -> TrackRequest:
        """This track as InitialSettings and Track requests carry it."""
        return TrackRequest(self.name, np.asarray(self.vertices, np.float32).reshape(-1, 3),
                            np.asarray(self.triangles, np.uint32).reshape(-1, 3),
                            np.asarray(self.labels, np.uint8))
