"""A PNG picture of a track: road, barriers, centerline, raceline, start pose and a scale bar,
and a Formula Student layout's cones, lines and stop zone.

Meant for a quick look at a new or generated track before driving it, and for docs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from arsim_core.errors import TrackError
from arsim_core.track import polylines
from arsim_core.track.mesh import PLACED_CONE_SIZES
from arsim_core.track.model import (
    LABEL_CONE_BIG_ORANGE,
    LABEL_CONE_BLUE,
    LABEL_CONE_ORANGE,
    LABEL_CONE_YELLOW,
    Track,
)

_ROAD = (200, 200, 200)
_BACKGROUND = (235, 245, 235)
_WALL = (30, 30, 30)
_CENTER = (150, 150, 150)
_RACELINE = (40, 40, 220)
_START = (40, 160, 40)
_TEXT = (20, 20, 20)
_LINE = (30, 30, 200)  # start and finish lines
_STOP_ZONE = (60, 60, 140)
CONE_COLOURS = {LABEL_CONE_BLUE: (200, 90, 20), LABEL_CONE_YELLOW: (20, 200, 235),
                 LABEL_CONE_ORANGE: (10, 130, 250), LABEL_CONE_BIG_ORANGE: (0, 90, 230)}


def _nice_length(target: float) -> float:
    """A round scale bar length (1, 2 or 5 times a power of ten) close to ``target``."""
    power = 10.0 ** math.floor(math.log10(target))
    return min((f * power for f in (1, 2, 5, 10)), key=lambda v: abs(v - target))


def render_preview(track: Track, size: int = 1200, margin_px: int = 40) -> np.ndarray:
    """BGR image (H, W, 3) of the track, at most ``size`` pixels on its long side."""
    xmin, ymin, xmax, ymax = track.bounds()
    span = max(xmax - xmin, ymax - ymin, 1e-6)
    scale = (size - 2 * margin_px) / span
    width = math.ceil((xmax - xmin) * scale) + 2 * margin_px
    height = math.ceil((ymax - ymin) * scale) + 2 * margin_px + 40
    img = np.full((height, width, 3), _BACKGROUND, dtype=np.uint8)

    def px(points: np.ndarray) -> np.ndarray:
        pts = np.asarray(points, dtype=float).reshape(-1, 2)
        col = (pts[:, 0] - xmin) * scale + margin_px
        row = height - 40 - ((pts[:, 1] - ymin) * scale + margin_px)
        return np.round(np.stack([col, row], axis=1) * 16).astype(np.int32).reshape(-1, 1, 2)

    # Road: the outer edge filled, the inner edge cut out again.
    left, right = track.left_boundary, track.right_boundary
    outer, inner = (
        (left, right)
        if abs(polylines.signed_area(left)) > abs(polylines.signed_area(right))
        else (right, left)
    )
    cv2.fillPoly(img, [px(outer)], _ROAD, cv2.LINE_AA, 4)
    cv2.fillPoly(img, [px(inner)], _BACKGROUND, cv2.LINE_AA, 4)
    if track.walls_are_outlines:
        cv2.fillPoly(img, [px(w) for w in track.walls], _WALL, cv2.LINE_AA, 4)
    cv2.polylines(img, [px(w) for w in track.walls], False, _WALL, 2, cv2.LINE_AA, 4)
    cv2.polylines(img, [px(track.centerline)], True, _CENTER, 1, cv2.LINE_AA, 4)
    if track.raceline is not None:
        cv2.polylines(img, [px(track.raceline[:, :2])], True, _RACELINE, 2, cv2.LINE_AA, 4)
    _draw_mission(img, track, px)
    x, y, yaw = track.start_pose
    arrow = max(0.04 * span, 0.5)
    a = px(np.array([x, y])).reshape(2) // 16
    b = px(np.array([x + arrow * math.cos(yaw), y + arrow * math.sin(yaw)])).reshape(2) // 16
    cv2.arrowedLine(
        img,
        tuple(int(v) for v in a),
        tuple(int(v) for v in b),
        _START,
        3,
        cv2.LINE_AA,
        tipLength=0.35,
    )
    cv2.circle(img, tuple(int(v) for v in a), 6, _START, -1, cv2.LINE_AA)
    # Scale bar in the bottom-left corner.
    bar = _nice_length(span / 5.0)
    x0, y0 = margin_px, height - 20
    x1 = x0 + round(bar * scale)
    cv2.line(img, (x0, y0), (x1, y0), _TEXT, 3)
    for xe in (x0, x1):
        cv2.line(img, (xe, y0 - 6), (xe, y0 + 6), _TEXT, 2)
    label = f'{bar:g} m'
    cv2.putText(img, label, (x1 + 10, y0 + 6), cv2.FONT_HERSHEY_SIMPLEX, 0.6, _TEXT, 1, cv2.LINE_AA)
    width_total = track.width_left + track.width_right
    title = (
        f'{track.name}: {track.length:.1f} m, width {width_total.min():.2f}-'
        f'{width_total.max():.2f} m'
    )
    cv2.putText(img, title, (margin_px, 28), cv2.FONT_HERSHEY_SIMPLEX, 0.7, _TEXT, 2, cv2.LINE_AA)
    return img


def _draw_mission(img: np.ndarray, track: Track,
                  px: Callable[[np.ndarray], np.ndarray]) -> None:
    """A Formula Student layout's stop zone, path and lines, and its cones in their colours
    (at least a few pixels across, to be seen)."""
    mission = track.mission
    if mission is not None:
        cv2.polylines(img, [px(mission.stop_zone)], True, _STOP_ZONE, 2, cv2.LINE_AA, 4)
        if mission.path is not None:
            cv2.polylines(img, [px(mission.path)], False, _CENTER, 1, cv2.LINE_AA, 4)
        for line in (mission.start_line, mission.finish_line):
            cv2.polylines(img, [px(line)], False, _LINE, 2, cv2.LINE_AA, 4)
    if track.cones is None:
        return
    centres = px(track.cones.positions).reshape(-1, 2)
    scale = float(np.hypot(*(px(np.array([[0.0, 0.0], [1.0, 0.0]])).reshape(2, 2)[1]
                            - px(np.zeros(2)).reshape(2)))) / 16.0
    for (col, row), label in zip(centres.tolist(), track.cones.labels.tolist(), strict=True):
        radius = PLACED_CONE_SIZES[label][0]
        cv2.circle(img, (col, row), max(3, round(radius * scale)) * 16, CONE_COLOURS[label], -1,
                   cv2.LINE_AA, 4)


def save_preview(track: Track, path: Path, size: int = 1200) -> Path:
    """Write the preview PNG of a track."""
    path = Path(path)
    img = render_preview(track, size=size)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        ok = cv2.imwrite(str(path), img)
    except OSError as exc:
        msg = f'{path}: cannot write preview: {exc}'
        raise TrackError(msg) from exc
    if not ok:
        msg = f'{path}: cannot write preview (unsupported image type?)'
        raise TrackError(msg)
    return path
