"""What of the scene a camera can see, decided on the CPU before anything is drawn.

llvmpipe transforms and sets up every triangle it is given on one thread, about a quarter of a
microsecond each, whether it lands in the image or not; a camera looking along a track sees a
third of it. ``Chunks`` cuts the track's triangles into runs of consecutive ones (the order
kept, so where faces overlap the same one wins) with a bounding box each; a frame draws only
the runs whose box meets the view frustum. The sky is treated alike: a colour-only camera
clears to the horizon's colour and shades only the part of the image above the horizon.
"""

from __future__ import annotations

import numpy as np

CHUNK = 32  # triangles per run


def frustum_planes(world_to_clip: np.ndarray) -> np.ndarray:
    """The six planes (6, 4) of the view volume, inside where ``plane . (x, y, z, 1) >= 0``."""
    rows = np.asarray(world_to_clip, np.float64)
    return np.array([rows[3] + rows[0], rows[3] - rows[0], rows[3] + rows[1],
                     rows[3] - rows[1], rows[3] + rows[2], rows[3] - rows[2]])


def boxes_visible(low: np.ndarray, high: np.ndarray, planes: np.ndarray) -> np.ndarray:
    """Whether each axis-aligned box (k, 3 corners) may show: none lies wholly outside a plane
    (conservative: a box near a corner of the volume may pass unseen)."""
    normals, offsets = planes[:, :3], planes[:, 3]
    farthest = np.where(normals[None] >= 0.0, high[:, None], low[:, None])  # (k, 6, 3)
    return ~np.any(np.einsum('kpj,pj->kp', farthest, normals) + offsets < 0.0, axis=1)


class Chunks:
    """Runs of ``CHUNK`` consecutive triangles of a mesh drawn as unshared vertices, with their
    bounding boxes."""

    def __init__(self, corners: np.ndarray) -> None:
        """``corners``: (3 T, 3), three per triangle, in drawing order."""
        triangles = len(corners) // 3
        self.first = np.arange(0, triangles, CHUNK) * 3
        self.count = np.minimum(triangles * 3 - self.first, CHUNK * 3)
        if triangles:
            self.low = np.minimum.reduceat(corners, self.first, axis=0)
            self.high = np.maximum.reduceat(corners, self.first, axis=0)
        else:
            self.low = self.high = np.zeros((0, 3))

    def runs(self, planes: np.ndarray) -> list[tuple[int, int]]:
        """(first vertex, vertex count) of the visible chunks, neighbours merged, in order."""
        visible = boxes_visible(self.low, self.high, planes)
        edges = np.diff(np.r_[0, visible.astype(np.int8), 0])
        starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
        return [(int(self.first[s]), int(self.first[e - 1] + self.count[e - 1] - self.first[s]))
                for s, e in zip(starts, ends, strict=True)]
