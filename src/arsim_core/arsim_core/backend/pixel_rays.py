"""Where each pixel of a camera's published image looks: the normalised coordinates (x/z,
y/z, optical frame) of its ray, through the lens where the camera has one. Vignetting needs
each pixel's angle off the axis and motion blur the flow of each pixel; both ask once per
camera."""

from __future__ import annotations

import cv2
import numpy as np

from arsim_core.lens import Resampling
from arsim_core.pinhole import Intrinsics


def pixel_rays(intrinsics: Intrinsics, resampling: Resampling | None
               ) -> tuple[np.ndarray, np.ndarray]:
    """x/z and y/z (height, width, float32) of every pixel's ray. A lens camera's come from
    its resampling maps (where each pixel reads the ideal pinhole image, to 1/32 of an ideal
    pixel)."""
    if resampling is None:
        u = ((np.arange(intrinsics.width) - intrinsics.cx) / intrinsics.fx).astype(np.float32)
        v = ((np.arange(intrinsics.height) - intrinsics.cy) / intrinsics.fy).astype(np.float32)
        x, y = np.meshgrid(u, v)
        return x, y
    ideal = resampling.ideal
    map_x, map_y = cv2.convertMaps(*resampling.linear, cv2.CV_32FC1)
    return ((map_x - np.float32(ideal.cx)) / np.float32(ideal.fx),
            (map_y - np.float32(ideal.cy)) / np.float32(ideal.fy))


def pixels_per_ray(intrinsics: Intrinsics, resampling: Resampling | None,
                   x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """How a small change of a pixel's ray moves it in the image: the 2 x 2 Jacobian
    d(u, v) / d(x, y) per pixel (height, width, 2, 2), the inverse of the rays' differences
    between neighbouring pixels; None for a pinhole, whose Jacobian is diag(fx, fy)
    everywhere."""
    if resampling is None or min(x.shape) < 2:  # a line of pixels: as its pinhole
        return None
    dx_dv, dx_du = np.gradient(x.astype(np.float64))
    dy_dv, dy_du = np.gradient(y.astype(np.float64))
    determinant = dx_du * dy_dv - dx_dv * dy_du
    jacobian = np.empty((*x.shape, 2, 2), np.float32)
    jacobian[..., 0, 0] = dy_dv / determinant
    jacobian[..., 0, 1] = -dx_dv / determinant
    jacobian[..., 1, 0] = -dy_du / determinant
    jacobian[..., 1, 1] = dx_du / determinant
    return jacobian
