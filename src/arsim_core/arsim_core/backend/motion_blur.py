"""Motion blur and rolling shutter of a camera: its image as the camera moved while it was
exposed and read out (docs/sensors.md, "Exposure and motion").

The renderer draws the scene at the frame time t. Over the ``span`` before it (the motion
blur's exposure time plus the rolling shutter's readout time) the camera is taken to move at
the car's velocity and yaw rate of the last frame (the last two poses the backend received),
which gives its pose at t - span. Each pixel's point (its ray and rendered depth; the sky is
at infinity) is moved into that earlier camera and projected, through the lens's local
Jacobian for a lens camera: the pixel's flow F over the span (worked out on every fourth row
and column and interpolated). The view at t - s is the image read at p - (s / span) F(p), a
first-order model: exact for a camera that turns in place, and for translation it shifts
each pixel by its own depth's flow without working out what it would uncover.

- Rolling shutter: row v is read ``readout_time (H - 1 - v) / (H - 1)`` before the frame
  time (the top row first, the bottom row at t), one remap of colour (bilinear) and of depth
  and class ids (nearest), so ground truth stays aligned with what the colour image shows.
- Motion blur: the average of ``samples`` views evenly spread over the exposure time that
  ends at each row's readout, made by doubling: the image averaged with itself shifted by one
  sample step, that with itself shifted by two steps, and so on (log2(samples) remaps).
  Depth and class ids are not blurred: they stay the frame's own.

A camera that did not move returns its images unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import cv2
import numpy as np

from arsim_core.backend.pixel_rays import pixel_rays, pixels_per_ray
from arsim_core.backend.timeline import Timeline
from arsim_core.geometry import Pose
from arsim_core.lens import Resampling
from arsim_core.pinhole import Intrinsics
from arsim_core.protocol.camera_effects import MotionBlur, RollingShutter

FLOW_STEP = 4  # the flow is worked out on every fourth row and column
STILL_PX = 0.05  # a camera whose pixels move less than this over the span did not move


class CameraMotion:
    """The motion blur and rolling shutter of one camera (either may be None)."""

    def __init__(self, blur: MotionBlur | None, shutter: RollingShutter | None,
                 intrinsics: Intrinsics, resampling: Resampling | None = None) -> None:
        self.blur, self.shutter = blur, shutter
        self.exposure_s = blur.exposure_time if blur is not None else 0.0
        self.readout_s = shutter.readout_time if shutter is not None else 0.0
        self.span_s = self.exposure_s + self.readout_s
        self.intrinsics = intrinsics
        width, height = intrinsics.width, intrinsics.height
        low = (max(1, math.ceil(height / FLOW_STEP)), max(1, math.ceil(width / FLOW_STEP)))
        self._rows = np.clip(np.rint((np.arange(low[0]) + 0.5) * height / low[0] - 0.5), 0,
                             height - 1).astype(np.intp)
        self._cols = np.clip(np.rint((np.arange(low[1]) + 0.5) * width / low[1] - 0.5), 0,
                             width - 1).astype(np.intp)
        x, y = pixel_rays(intrinsics, resampling)
        jacobian = pixels_per_ray(intrinsics, resampling, x, y)
        at = np.ix_(self._rows, self._cols)
        self._x, self._y = x[at].astype(np.float64), y[at].astype(np.float64)
        self._jacobian = None if jacobian is None else jacobian[at]
        # Each sampled row's readout before the frame time, as a share of the span.
        late = (height - 1 - self._rows) / max(height - 1, 1)
        self._readout_share = (late * self.readout_s / self.span_s)[:, None]
        self._grid = np.meshgrid(np.arange(width, dtype=np.float32),
                                 np.arange(height, dtype=np.float32))

    def apply(self, images: Mapping[str, np.ndarray], timeline: Timeline, car: str,
              optical_to_world: Callable[[Pose], np.ndarray]) -> dict[str, np.ndarray]:
        """``images`` (with the frame's depth) as the moving camera saw them; the frame's own
        arrays where the camera stood still."""
        earlier = earlier_pose(timeline, car, self.span_s)
        if earlier is None:
            return dict(images)
        now = optical_to_world(timeline.poses(-1)[car])
        moved = np.linalg.inv(optical_to_world(earlier)) @ now
        flow = self.flow(images['depth'], moved)
        if flow is None:
            return dict(images)
        return self.smear(images, flow)

    def flow(self, depth: np.ndarray, moved: np.ndarray) -> tuple[np.ndarray, ...] | None:
        """Each sampled pixel's displacement [px] (u, v: low-resolution arrays) over the span,
        for the camera moved by ``moved`` (points in the optical frame now -> then); None when
        no pixel moves by STILL_PX."""
        with np.errstate(divide='ignore'):
            inverse = 1.0 / depth[np.ix_(self._rows, self._cols)].astype(np.float64)
        inverse[~np.isfinite(inverse) | (inverse < 0.0)] = 0.0  # the sky, at infinity
        rotation, shift = moved[:3, :3], moved[:3, 3]
        x, y = self._x, self._y
        a, b, c = (rotation[i, 0] * x + rotation[i, 1] * y + rotation[i, 2] + shift[i] * inverse
                   for i in range(3))
        ahead = c > 1e-6
        with np.errstate(divide='ignore', invalid='ignore'):
            dx = np.where(ahead, a / c - x, 0.0)
            dy = np.where(ahead, b / c - y, 0.0)
        if self._jacobian is None:
            du, dv = self.intrinsics.fx * dx, self.intrinsics.fy * dy
        else:
            j = self._jacobian
            du, dv = j[..., 0, 0] * dx + j[..., 0, 1] * dy, j[..., 1, 0] * dx + j[..., 1, 1] * dy
        if max(float(np.abs(du).max(initial=0.0)), float(np.abs(dv).max(initial=0.0))) \
                < STILL_PX:
            return None
        return du, dv

    def smear(self, images: Mapping[str, np.ndarray], flow: tuple[np.ndarray, ...]
              ) -> dict[str, np.ndarray]:
        """The rolling shutter's remap of every image, then the motion blur of colour."""
        width, height = self.intrinsics.width, self.intrinsics.height
        du, dv = flow
        out = dict(images)

        def full(low: np.ndarray) -> np.ndarray:
            return cv2.resize(low.astype(np.float32), (width, height),
                              interpolation=cv2.INTER_LINEAR)

        grid_u, grid_v = self._grid
        if self.shutter is not None:
            map_u = grid_u - full(self._readout_share * du)
            map_v = grid_v - full(self._readout_share * dv)
            for name, image in images.items():
                method = cv2.INTER_LINEAR if name == 'rgb' else cv2.INTER_NEAREST
                out[name] = cv2.remap(image, map_u, map_v, method,
                                      borderMode=cv2.BORDER_REPLICATE)
        if self.blur is not None and 'rgb' in out:
            share = self.exposure_s / self.span_s / (self.blur.samples - 1)
            step_u, step_v = full(share * du), full(share * dv)
            image, shift = out['rgb'], 1.0
            while shift < self.blur.samples:
                shifted = cv2.remap(image, cv2.scaleAdd(step_u, -shift, grid_u),
                                    cv2.scaleAdd(step_v, -shift, grid_v), cv2.INTER_LINEAR,
                                    borderMode=cv2.BORDER_REPLICATE)
                image = cv2.addWeighted(image, 0.5, shifted, 0.5, 0.0)
                shift *= 2.0
            out['rgb'] = image
        return out


def earlier_pose(timeline: Timeline, car: str, span_s: float) -> np.ndarray | None:
    """The car's pose ``span_s`` before the last frame, moving at its velocity and yaw rate
    of the last frame interval (the two latest frames with the car); None with only one."""
    times = timeline.times
    latest: list[tuple[int, np.ndarray]] = []
    for index in range(len(times) - 1, -1, -1):
        poses = timeline.poses(index)
        if car in poses:
            latest.append((int(times[index]), np.asarray(poses[car], np.float64)))
            if len(latest) == 2:
                break
    if len(latest) < 2:
        return None
    (t1, p1), (t0, p0) = latest
    step = p1 - p0
    step[3:] = (step[3:] + math.pi) % (2.0 * math.pi) - math.pi
    return p1 - step * (span_s / ((t1 - t0) * 1e-9))
