"""The environment's ``rgb_array`` picture: the track seen from above with the cars and their
scans. The track is drawn once; a frame is a copy of it plus a few shapes, so rendering every
step of a recorded episode stays cheap."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import cv2
import numpy as np

from arsim_core import labels
from arsim_core.engine.state import CarState
from arsim_core.engine.world import TrackWorld

Color = tuple[int, int, int]  # RGB
ScanGeometry = tuple[float, float, tuple[float, float, float]]

_SHIFT = 4  # OpenCV fixed-point bits: shapes land at 1/16 pixel, not rounded to whole pixels
_ONE = 1 << _SHIFT


def _srgb(linear: tuple[float, float, float]) -> Color:
    """The camera's linear label colours, gamma-encoded so they look the same on screen."""
    r, g, b = (round(255.0 * max(0.0, min(1.0, c)) ** (1.0 / 2.2)) for c in linear)
    return r, g, b


LABEL_COLORS: Mapping[int, Color] = {label: _srgb(labels.COLORS[label])
                                     for label in (labels.ROAD, labels.BARRIER, labels.CONE_BLUE,
                                                   labels.CONE_YELLOW, labels.GROUND,
                                                   labels.CONE_ORANGE, labels.CONE_BIG_ORANGE,
                                                   labels.KERB)}
GROUND_COLOR = LABEL_COLORS[labels.GROUND]
EGO_COLOR: Color = (225, 25, 25)
CAR_COLOR: Color = (150, 60, 225)
SCAN_COLOR: Color = (255, 140, 0)
MARK_COLOR: Color = (20, 20, 20)
TEXT_COLOR: Color = (255, 255, 255)
# painted in this order, so barriers stay visible over the road and the cones next to it
_LAYERS = (labels.GROUND, labels.ROAD, labels.KERB, labels.CONE_BLUE, labels.CONE_YELLOW,
           labels.CONE_ORANGE, labels.CONE_BIG_ORANGE, labels.BARRIER)


class TopDownView:
    """A top-down picture of the track, the cars with their footprints, and scans.

    World x points right and world y up, at one scale on both axes chosen so the track (its
    road, barriers and cones; the ground plane can be far larger) plus ``margin_m`` fits
    ``size = (width, height)`` pixels. ``draw`` returns (height, width, 3) uint8 RGB.
    """

    def __init__(self, world: TrackWorld, *, size: tuple[int, int] = (800, 800),
                 margin_m: float = 1.0) -> None:
        width, height = int(size[0]), int(size[1])
        if width < 16 or height < 16:
            msg = f'size: expected at least 16 x 16 pixels, got {size!r}'
            raise ValueError(msg)
        if not (math.isfinite(margin_m) and margin_m >= 0.0):
            msg = f'margin_m: expected a finite number >= 0, got {margin_m!r}'
            raise ValueError(msg)
        self.world = world  # so a caller can tell when the track changed under the picture
        self.width, self.height = width, height
        vertices = np.asarray(world.vertices, dtype=np.float64).reshape(-1, 3)
        triangles = np.asarray(world.triangles, dtype=np.int64).reshape(-1, 3)
        tri_labels = np.asarray(world.labels).reshape(-1)

        track = triangles[tri_labels != labels.GROUND]
        used = vertices[np.unique(track)] if track.size else vertices
        if used.size:
            lo, hi = used[:, :2].min(axis=0), used[:, :2].max(axis=0)
        else:  # an empty world: a 20 m square round the start
            lo = np.asarray(world.start_pose[:2]) - 10.0
            hi = lo + 20.0
        lo, hi = lo - margin_m, hi + margin_m
        span = np.maximum(hi - lo, 1e-6)
        self.scale = float(min((width - 1) / span[0], (height - 1) / span[1]))  # px per m
        centre = 0.5 * (lo + hi)
        self._ox = 0.5 * (width - 1) - self.scale * float(centre[0])
        self._oy = 0.5 * (height - 1) + self.scale * float(centre[1])

        background = np.empty((height, width, 3), dtype=np.uint8)
        background[:] = GROUND_COLOR
        for label in _LAYERS:
            chosen = triangles[tri_labels == label]
            if chosen.size:
                self._paint(background, vertices[chosen][:, :, :2], LABEL_COLORS[label])
        background.setflags(write=False)
        self.background = background
        self._angles: dict[tuple[float, float, int], tuple[np.ndarray, np.ndarray]] = {}
        self._font = max(0.4, min(width, height) / 1300.0)

    def to_pixel(self, points: np.ndarray) -> np.ndarray:
        """Pixel coordinates (..., 2) as (column, row), fractional, of world points (..., 2);
        whole numbers are pixel centres."""
        pts = np.asarray(points, dtype=np.float64)
        out = np.empty(pts.shape)
        out[..., 0] = self._ox + self.scale * pts[..., 0]
        out[..., 1] = self._oy - self.scale * pts[..., 1]
        return out

    def _fixed(self, points: np.ndarray) -> np.ndarray:
        return np.round(self.to_pixel(points) * _ONE).astype(np.int32)

    def _paint(self, image: np.ndarray, corners: np.ndarray, color: Color) -> None:
        """Fill triangles (K, 3, 2) seen from above. One fillPoly call fills by the even-odd
        rule, so overlapping triangles would cancel: repeated triangles (the two faces of a
        thin wall) are drawn once, the upward- and downward-facing ones in separate calls (a
        closed surface's top or bottom alone does not overlap itself), and the vertical ones
        (a zero-thickness wall), which have no area from above, as lines so a thin barrier
        still shows."""
        pixels = self._fixed(corners)
        wide = pixels.astype(np.int64)
        keys = np.sort((wide[:, :, 0] << 32) | (wide[:, :, 1] & 0xFFFFFFFF), axis=1)
        pixels = pixels[np.sort(np.unique(keys, axis=0, return_index=True)[1])]
        a = (pixels[:, 1] - pixels[:, 0]).astype(np.int64)
        b = (pixels[:, 2] - pixels[:, 0]).astype(np.int64)
        area = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
        flat = _ONE * _ONE // 50  # 1/100 pixel^2, in fixed-point units
        for side in (area > flat, area < -flat):
            if side.any():
                cv2.fillPoly(image, list(pixels[side]), color, cv2.LINE_8, _SHIFT)
        edge = np.abs(area) <= flat
        if edge.any():
            thickness = max(2, round(0.04 * self.scale))
            cv2.polylines(image, list(pixels[edge]), True, color, thickness, cv2.LINE_8, _SHIFT)

    def _scan_angles(self, angle_min: float, increment: float,
                     beams: int) -> tuple[np.ndarray, np.ndarray]:
        key = (angle_min, increment, beams)
        cached = self._angles.get(key)
        if cached is None:
            angles = angle_min + increment * np.arange(beams)
            cached = self._angles[key] = (np.cos(angles), np.sin(angles))
        return cached

    def draw(self, states: Mapping[str, CarState], footprints: Mapping[str, tuple[float, float]],
             scans: Mapping[str, np.ndarray] | None = None,
             scan_geometry: Mapping[str, ScanGeometry] | None = None,
             ego: str | None = None, text: Sequence[str] = ()) -> np.ndarray:
        """One frame: the track, every car's footprint (``footprints[car] = (length,
        width)`` centred on its pose; the ego last and in its own colour) with a tick ahead
        of it, the end points of the finite ranges of each scan (``scan_geometry[car] =
        (angle_min, angle_increment, (mount_x, mount_y, mount_yaw))`` in the car frame), and
        ``text`` lines at the top left."""
        image = self.background.copy()
        order = [car for car in states if car != ego]
        if ego is not None and ego in states:
            order.append(ego)
        for car in order:
            self._car(image, states[car], footprints.get(car),
                      EGO_COLOR if car == ego else CAR_COLOR)
        if scans:
            for car, ranges in scans.items():
                if scan_geometry is None or car not in scan_geometry or car not in states:
                    msg = f'scan of {car!r}: its car state and scan_geometry are needed to draw it'
                    raise ValueError(msg)
                self._scan(image, states[car], np.asarray(ranges).reshape(-1),
                           scan_geometry[car])
        for i, line in enumerate(text):
            origin = (8, round((i + 1) * 26 * self._font / 0.65))
            cv2.putText(image, line, origin, cv2.FONT_HERSHEY_SIMPLEX, self._font, MARK_COLOR,
                        3, cv2.LINE_AA)
            cv2.putText(image, line, origin, cv2.FONT_HERSHEY_SIMPLEX, self._font, TEXT_COLOR,
                        1, cv2.LINE_AA)
        return image

    def _car(self, image: np.ndarray, state: CarState, footprint: tuple[float, float] | None,
             color: Color) -> None:
        c, s = math.cos(state.yaw), math.sin(state.yaw)
        if footprint is None:  # unknown size: a dot
            u, v = self.to_pixel(np.array([state.x, state.y]))
            cv2.circle(image, (round(u), round(v)), 3, color, -1, cv2.LINE_8)
            return
        half_l, half_w = 0.5 * float(footprint[0]), 0.5 * float(footprint[1])
        local = np.array([[half_l, half_w], [half_l, -half_w], [-half_l, -half_w],
                          [-half_l, half_w], [0.3 * half_l, 0.0], [1.5 * half_l, 0.0]])
        world = np.empty_like(local)
        world[:, 0] = state.x + c * local[:, 0] - s * local[:, 1]
        world[:, 1] = state.y + s * local[:, 0] + c * local[:, 1]
        pixels = self._fixed(world)
        cv2.fillConvexPoly(image, pixels[:4], color, cv2.LINE_8, _SHIFT)
        tick = max(1, round(0.25 * footprint[1] * self.scale))
        cv2.line(image, tuple(pixels[4].tolist()), tuple(pixels[5].tolist()), MARK_COLOR, tick,
                 cv2.LINE_8, _SHIFT)

    def _scan(self, image: np.ndarray, state: CarState, ranges: np.ndarray,
              geometry: ScanGeometry) -> None:
        angle_min, increment, (mx, my, myaw) = geometry
        cos_b, sin_b = self._scan_angles(float(angle_min), float(increment), ranges.size)
        c, s = math.cos(state.yaw), math.sin(state.yaw)
        sx = state.x + c * mx - s * my
        sy = state.y + s * mx + c * my
        heading = state.yaw + myaw
        ch, sh = math.cos(heading), math.sin(heading)
        ok = np.isfinite(ranges) & (ranges > 0.0)
        r = ranges[ok]
        cb, sb = cos_b[ok], sin_b[ok]
        # beam direction in the world: the beam angle turned by the sensor's heading
        u = self._ox + self.scale * (sx + r * (cb * ch - sb * sh))
        v = self._oy - self.scale * (sy + r * (cb * sh + sb * ch))
        cols = np.rint(u).astype(np.intp)
        rows = np.rint(v).astype(np.intp)
        inside = (cols >= 0) & (cols < self.width - 1) & (rows >= 0) & (rows < self.height - 1)
        cols, rows = cols[inside], rows[inside]
        for dr, dc in ((0, 0), (0, 1), (1, 0), (1, 1)):  # 2 x 2 dots, visible at any size
            image[rows + dr, cols + dc] = SCAN_COLOR
