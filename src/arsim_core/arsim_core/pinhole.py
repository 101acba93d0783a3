"""The pinhole camera model shared by the renderer and CameraInfo.

Pixel ``(u, v)`` integer coordinates are pixel centres (ROS and OpenCV convention), so the
principal point of a centred optical axis is ``((width - 1) / 2, (height - 1) / 2)`` and a point
``(X, Y, Z)`` in the optical frame (REP-103: z forward, x right, y down) lands on
``u = fx X / Z + cx``, ``v = fy Y / Z + cy``. The renderer uses exactly this projection.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# Body frame (x forward, y left, z up) -> optical frame (z forward, x right, y down).
OPTICAL_RPY = (-math.pi / 2.0, 0.0, -math.pi / 2.0)
OPTICAL_ROTATION = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])


@dataclass(frozen=True)
class Intrinsics:
    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float

    @classmethod
    def from_fov(cls, width: int, height: int, horizontal_fov: float) -> Intrinsics:
        """Square pixels, centred principal point, ``horizontal_fov`` across the full width."""
        f = (width / 2.0) / math.tan(horizontal_fov / 2.0)
        return cls(width, height, f, f, (width - 1) / 2.0, (height - 1) / 2.0)

    @property
    def k(self) -> list[float]:
        return [self.fx, 0.0, self.cx, 0.0, self.fy, self.cy, 0.0, 0.0, 1.0]

    @property
    def p(self) -> list[float]:
        return [self.fx, 0.0, self.cx, 0.0, 0.0, self.fy, self.cy, 0.0, 0.0, 0.0, 1.0, 0.0]

    def project(self, points: np.ndarray) -> np.ndarray:
        """Pixel coordinates (n, 2) of points (n, 3) in the optical frame."""
        points = np.asarray(points, dtype=np.float64)
        return np.stack([self.fx * points[:, 0] / points[:, 2] + self.cx,
                         self.fy * points[:, 1] / points[:, 2] + self.cy], axis=1)

    def pixel_directions(self) -> np.ndarray:
        """Unit rays (height, width, 3) through the pixel centres, in the optical frame."""
        u = (np.arange(self.width) - self.cx) / self.fx
        v = (np.arange(self.height) - self.cy) / self.fy
        rays = np.stack(np.broadcast_arrays(u[None, :], v[:, None], np.ones((1, 1))), axis=-1)
        return rays / np.linalg.norm(rays, axis=-1, keepdims=True)

    def clip_matrix(self, near: float, far: float) -> np.ndarray:
        """OpenGL clip transform from the optical frame: x_ndc = 2 fx X / (w Z) (which puts
        pixel u's centre at window x = u + 0.5), y_ndc likewise with v growing along the
        framebuffer's rows, and depth -1 at ``near``, +1 at ``far``."""
        return np.array([
            [2.0 * self.fx / self.width, 0.0, (2.0 * self.cx + 1.0) / self.width - 1.0, 0.0],
            [0.0, 2.0 * self.fy / self.height, (2.0 * self.cy + 1.0) / self.height - 1.0, 0.0],
            [0.0, 0.0, (far + near) / (far - near), 2.0 * far * near / (near - far)],
            [0.0, 0.0, 1.0, 0.0]])
