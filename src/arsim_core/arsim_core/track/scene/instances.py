"""Many copies of one object, stamped out with numpy and tested for placement as a batch.

A scene holds thousands of trees, boxes and panels; building them one by one in Python would
take seconds on a full-scale circuit. ``assemble`` scales, offsets, turns and moves the parts
of an object for every instance at once, and ``Instances.footprints`` gives each instance's
ground outline for the keep-out test.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import shapely

from arsim_core.track.model import TrackMesh
from arsim_core.track.scene.shapes import Part

PartSpec = tuple[Part, np.ndarray | Sequence[float], np.ndarray | Sequence[float]]
"""A part with its per-instance ``scale`` and ``offset`` ((K, 3) or (3,)), in object frame."""


@dataclass(frozen=True)
class Instances:
    """K copies of an object: ``vertices (K, V, 3)`` in the world, shared triangles and labels."""

    vertices: np.ndarray
    triangles: np.ndarray  # (T, 3), local to one instance
    labels: np.ndarray  # (T,)

    @staticmethod
    def empty() -> Instances:
        """No instances at all."""
        return Instances(np.zeros((0, 0, 3)), np.zeros((0, 3), np.int64), np.zeros(0, np.uint8))

    def __len__(self) -> int:
        return int(self.vertices.shape[0])

    def footprints(self) -> np.ndarray:
        """Convex hull of each instance's vertices on the ground: every one of its triangles
        projects inside it, so testing the hull tests the triangles."""
        if not len(self):
            return np.empty(0, dtype=object)
        xy = self.vertices[:, :, :2]
        points = shapely.multipoints(xy.reshape(-1, 2), indices=np.repeat(
            np.arange(len(self)), xy.shape[1]))
        return shapely.convex_hull(points)

    def subset(self, keep: np.ndarray) -> Instances:
        """The instances where ``keep`` (a mask or indices) selects them."""
        return Instances(self.vertices[keep], self.triangles, self.labels)

    def flat(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Vertices (K*V, 3), triangles (K*T, 3) and labels (K*T,) of all instances."""
        k, v = self.vertices.shape[:2]
        tris = (self.triangles[None] + (np.arange(k) * v)[:, None, None]).reshape(-1, 3)
        return self.vertices.reshape(-1, 3), tris, np.tile(self.labels, k)


def to_mesh(batches: Sequence[Instances]) -> TrackMesh:
    """One mesh of all instances of all batches (an empty mesh for none)."""
    verts, tris, labs, count = [np.zeros((0, 3))], [np.zeros((0, 3), np.int64)], [
        np.zeros(0, np.uint8)], 0
    for batch in batches:
        v, t, lab = batch.flat()
        verts.append(v)
        tris.append(t + count)
        labs.append(lab)
        count += v.shape[0]
    return TrackMesh(np.concatenate(verts), np.concatenate(tris), np.concatenate(labs))


def assemble(parts: Sequence[PartSpec], xy: np.ndarray, yaw: np.ndarray | float = 0.0,
             z: np.ndarray | float = 0.0) -> Instances:
    """Instances of an object made of ``parts``, each part scaled and offset per instance in
    the object frame, then turned by ``yaw`` about z and moved to ``(xy, z)``.

    Scales must be positive (a negative one would turn the solid inside out).
    """
    xy = np.asarray(xy, float).reshape(-1, 2)
    k = xy.shape[0]
    verts, tris, labs, count = [], [], [], 0
    for part, scale, offset in parts:
        s = np.broadcast_to(np.asarray(scale, float), (k, 3))
        o = np.broadcast_to(np.asarray(offset, float), (k, 3))
        verts.append(part.vertices[None] * s[:, None] + o[:, None])
        tris.append(part.triangles + count)
        labs.append(part.labels)
        count += part.vertices.shape[0]
    local = np.concatenate(verts, axis=1) if verts else np.zeros((k, 0, 3))
    yaw = np.broadcast_to(np.asarray(yaw, float), (k,))
    c, s = np.cos(yaw)[:, None], np.sin(yaw)[:, None]
    world = np.empty_like(local)
    world[:, :, 0] = c * local[:, :, 0] - s * local[:, :, 1] + xy[:, :1]
    world[:, :, 1] = s * local[:, :, 0] + c * local[:, :, 1] + xy[:, 1:]
    world[:, :, 2] = local[:, :, 2] + np.broadcast_to(np.asarray(z, float), (k,))[:, None]
    return Instances(world, np.concatenate(tris), np.concatenate(labs).astype(np.uint8))


def boxes(part: Part, centres: np.ndarray, size: np.ndarray, yaw: np.ndarray | float = 0.0,
          z0: np.ndarray | float = 0.0) -> Instances:
    """Boxes (or any unit solid of size 1) of ``size (K, 3)`` standing at ``z0`` on
    ``centres (K, 2)``, their length along ``yaw``."""
    return assemble([(part, size, (0.0, 0.0, 0.0))], centres, yaw, z0)
