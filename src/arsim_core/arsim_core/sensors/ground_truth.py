"""2D ground truth from a camera's own semantic image: one box per object seen (cones by colour,
cars), with its pixel mask, and whether it is cut by the image border (truncated) or hidden in
part behind something nearer (occluded).

Boxes come from the rendered pixels themselves (the connected regions of each class), so they
match the image exactly: what is hidden is not boxed, and a box never reaches beyond what
shows. Two objects of one class that touch in the image (a cone just behind another) are one
region, and so one box; with a depth image they are told apart where their depths jump.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

# OpenCV (about 15 MiB a process) is imported by the functions that use it: the launcher
# imports this module to check a scenario and never calls them.
import numpy as np
from numpy.typing import NDArray

from arsim_core import labels

# Class names as FSOCO names them (and "car"), by semantic label.
CLASSES: Final = MappingProxyType({labels.CONE_BLUE: 'blue_cone',
                                   labels.CONE_YELLOW: 'yellow_cone', labels.CAR: 'car',
                                   labels.CONE_ORANGE: 'orange_cone',
                                   labels.CONE_BIG_ORANGE: 'big_orange_cone'})
OBJECTS: Final = frozenset({labels.BARRIER, *CLASSES})  # what can hide an object
DEPTH_STEP_M: Final = 0.3  # neighbouring pixels further apart than this are two objects
MIN_PIXELS: Final = 4  # smaller regions are not boxed (a few pixels of a far cone)


@dataclass(frozen=True)
class Labelled:
    """An object of the ground truth: its semantic label, and its class as FSOCO names it."""

    label: int  # arsim_core.labels

    @property
    def name(self) -> str:
        return CLASSES[self.label]


@dataclass(frozen=True)
class Box2D(Labelled):
    """An object's pixels in one image: box ``[x, x + width) x [y, y + height)``."""

    x: int
    y: int
    width: int
    height: int
    pixels: int  # how many pixels show it
    truncated: bool  # it touches the image border: part of it may lie outside
    occluded: bool  # something nearer borders it: part of it may be hidden

    def center(self) -> tuple[float, float]:
        return self.x + self.width / 2.0, self.y + self.height / 2.0


def boxes(semantic: NDArray[np.uint8], depth: NDArray[np.float32] | None = None,
          min_pixels: int = MIN_PIXELS) -> tuple[list[Box2D], NDArray[np.int32]]:
    """Every object of ``CLASSES`` in a semantic image, and the instance mask (0: none,
    i + 1: the pixels of ``boxes[i]``). ``depth`` [m], of the same camera and frame, splits
    regions at depth jumps and tells what is nearer; without it, any bordering object
    counts as occluding."""
    import cv2
    height, width = semantic.shape
    found: list[Box2D] = []
    instances = np.zeros((height, width), np.int32)
    edges = None if depth is None else _depth_edges(depth)
    for label in CLASSES:
        of_class = semantic == label
        rows_with, cols_with = np.flatnonzero(of_class.any(axis=1)), \
            np.flatnonzero(of_class.any(axis=0))
        if not len(rows_with):
            continue
        # Labelling costs by image area: only the part the class shows in is labelled.
        top, left = int(rows_with[0]), int(cols_with[0])
        seen = (slice(top, int(rows_with[-1]) + 1), slice(left, int(cols_with[-1]) + 1))
        mask = of_class[seen] if edges is None else of_class[seen] & ~edges[seen]
        count, labelled, stats, _ = cv2.connectedComponentsWithStats(
            mask.astype(np.uint8), connectivity=4)
        regions = np.zeros((height, width), np.int32)
        regions[seen] = labelled
        for region in range(1, count):
            x, y, w, h, area = (int(v) for v in stats[region])
            x, y = x + left, y + top
            if area < min_pixels:
                continue
            # Work in the region's box and two pixels around it: room to grow by one pixel,
            # and for what borders it then.
            rows = slice(max(y - 2, 0), min(y + h + 2, height))
            cols = slice(max(x - 2, 0), min(x + w + 2, width))
            pixels = regions[rows, cols] == region
            if depth is not None:  # give back the edge pixels that border this region only
                pixels |= _dilated(pixels) & of_class[rows, cols] & (instances[rows, cols] == 0)
                ys, xs = np.nonzero(pixels)
                y, x = rows.start + int(ys.min()), cols.start + int(xs.min())
                h, w = int(ys.max()) - int(ys.min()) + 1, int(xs.max()) - int(xs.min()) + 1
                area = int(pixels.sum())
            instances[rows, cols][pixels] = len(found) + 1
            truncated = x == 0 or y == 0 or x + w == width or y + h == height
            found.append(Box2D(label, x, y, w, h, area, truncated, _occluded(
                pixels, semantic[rows, cols], None if depth is None else depth[rows, cols])))
    return found, instances


def _depth_edges(depth: NDArray[np.float32]) -> NDArray[np.bool_]:
    """Pixels whose right or lower neighbour lies more than DEPTH_STEP_M away. Two sky pixels
    (both inf) differ by NaN, which is no edge."""
    edges = np.zeros(depth.shape, bool)
    with np.errstate(invalid='ignore'):
        edges[:, :-1] |= np.abs(np.diff(depth, axis=1)) > DEPTH_STEP_M
        edges[:-1, :] |= np.abs(np.diff(depth, axis=0)) > DEPTH_STEP_M
    return edges


def _dilated(pixels: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """``pixels`` and their 8 neighbours."""
    import cv2
    return cv2.dilate(pixels.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)


def _occluded(pixels: NDArray[np.bool_], semantic: NDArray[np.uint8],
              depth: NDArray[np.float32] | None) -> bool:
    ring = _dilated(pixels) & ~pixels
    bordering = ring & np.isin(semantic, list(OBJECTS))
    if depth is None:
        return bool(bordering.any())
    nearest = float(depth[pixels].min())
    return bool((depth[bordering] < nearest - DEPTH_STEP_M).any())
