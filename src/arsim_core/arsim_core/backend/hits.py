"""What the backend's ray casters work with: a car's footprint box, and what rays hit."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arsim_core.geometry import Footprint, Pose, rotation_matrix

# A box: corners (x, y, z) in units of (length/2, width/2, height) and 12 outward triangles.
_BOX_CORNERS = np.array([[x, y, z] for z in (0.0, 1.0) for y in (-1.0, 1.0) for x in (-1.0, 1.0)])
_BOX_TRIANGLES = np.array([
    [0, 2, 1], [1, 2, 3],  # bottom (z = 0)
    [4, 5, 6], [5, 7, 6],  # top
    [0, 1, 4], [1, 5, 4],  # y = -1 side
    [2, 6, 3], [3, 6, 7],  # y = +1 side
    [0, 4, 2], [2, 4, 6],  # x = -1 (rear)
    [1, 3, 5], [3, 7, 5],  # x = +1 (front)
], dtype=np.uint32)


@dataclass(frozen=True)
class Hits:
    """What a batch of rays hit: distance [m] (inf = nothing within the maximum distance), the
    semantic class (labels.NONE on a miss) and |cos| of the angle of incidence (0 on a miss)."""

    distance: np.ndarray
    label: np.ndarray
    cosine: np.ndarray


def box_mesh(footprint: Footprint, pose: Pose) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (8, 3) and triangles (12, 3) of a car's box at ``pose``."""
    x, y, z, roll, pitch, yaw = pose
    scale = np.array([footprint.length / 2.0, footprint.width / 2.0, footprint.height])
    corners = (_BOX_CORNERS * scale) @ rotation_matrix(roll, pitch, yaw).T + [x, y, z]
    return corners.astype(np.float32), _BOX_TRIANGLES


def nearer(first: Hits, second: Hits) -> Hits:
    """Per ray, the nearer of two scenes' hits (arrays of the same shape)."""
    closer = second.distance < first.distance
    if not closer.any():
        return first
    return Hits(np.where(closer, second.distance, first.distance),
                np.where(closer, second.label, first.label),
                np.where(closer, second.cosine, first.cosine))
