"""The track seen from above, as one PNG a page draws under the cars.

Every triangle of the labelled track mesh is projected onto the ground plane and filled in its
label's colour, the ground first and cones last, so the picture holds whatever the mesh holds
(barriers of an occupancy-grid map, cone rows, the road between them) with no per-format code.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from arsim_core.engine.world import TrackWorld
from arsim_core.track.model import (
    LABEL_BARRIER,
    LABEL_CONE_BIG_ORANGE,
    LABEL_CONE_BLUE,
    LABEL_CONE_ORANGE,
    LABEL_CONE_YELLOW,
    LABEL_GROUND,
    LABEL_KERB,
    LABEL_ROAD,
)

MAX_PIXELS = 2048  # the longer side of the image, at most
MARGIN_M = 2.0
# BGR, drawn in this order: later labels cover earlier ones.
COLOURS = ((LABEL_GROUND, (225, 232, 222)), (LABEL_ROAD, (200, 200, 200)),
           (LABEL_KERB, (60, 60, 210)),
           (LABEL_BARRIER, (60, 60, 60)), (LABEL_CONE_BLUE, (200, 90, 20)),
           (LABEL_CONE_YELLOW, (20, 200, 230)), (LABEL_CONE_ORANGE, (20, 110, 250)),
           (LABEL_CONE_BIG_ORANGE, (20, 110, 250)))
BACKGROUND = (245, 245, 245)


@dataclass(frozen=True)
class TrackImage:
    """A PNG of the track and where it lies: pixel (0, 0) is the top-left corner at world
    (``x_min``, ``y_max``); one pixel is ``resolution`` metres."""

    png: bytes
    x_min: float
    y_max: float
    resolution: float
    width: int
    height: int

    def placement(self) -> dict[str, float]:
        return {'x_min': self.x_min, 'y_max': self.y_max, 'resolution': self.resolution,
                'width': self.width, 'height': self.height}


def track_image(world: TrackWorld, max_pixels: int = MAX_PIXELS) -> TrackImage:
    """The picture of the whole mesh the renderers get: the fixed part and the placed cones."""
    mesh = world.track_request()
    xy = np.asarray(mesh.vertices, np.float64).reshape(-1, 3)[:, :2]
    low, high = xy.min(axis=0) - MARGIN_M, xy.max(axis=0) + MARGIN_M
    resolution = float(max(high - low)) / max_pixels
    width, height = (int(np.ceil(v)) for v in (high - low) / resolution)
    image = np.full((height, width, 3), BACKGROUND, np.uint8)
    pixels = np.empty_like(xy)
    pixels[:, 0] = (xy[:, 0] - low[0]) / resolution
    pixels[:, 1] = (high[1] - xy[:, 1]) / resolution
    corners = np.round(pixels * 16).astype(np.int32)  # 4 fractional bits for cv2's shift
    triangles = np.asarray(mesh.triangles, np.int64).reshape(-1, 3)
    labels = np.asarray(mesh.labels).ravel()
    for label, colour in COLOURS:
        polygons = list(corners[triangles[labels == label]])
        if polygons:
            cv2.fillPoly(image, polygons, colour, cv2.LINE_AA, shift=4)
            # Walls stand on the ground plane as zero-area slivers: their outline shows them.
            cv2.polylines(image, polygons, True, colour, 1, cv2.LINE_AA, shift=4)
    ok, png = cv2.imencode('.png', image)
    if not ok:
        msg = f'could not encode the picture of track {world.name!r}'
        raise RuntimeError(msg)
    return TrackImage(png.tobytes(), float(low[0]), float(high[1]), resolution, width, height)
