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

import cv2
import numpy as np
from numpy.typing import NDArray

from arsim_core.sensors import labels

# Class names as FSOCO names them (and "car"), by semantic label.
CLASSES: Final = MappingProxyType({labels.CONE_BLUE: 'blue_cone',
                                   labels.CONE_YELLOW: 'yellow_cone', labels.CAR: 'car'})
OBJECTS: Final = frozenset({labels.BARRIER, *CLASSES})  # what can hide an object
DEPTH_STEP_M: Final = 0.3  # neighbouring pixels further apart than this are two objects
MIN_PIXELS: Final = 4  # smaller regions are not boxed (a few pixels of a far cone)


@dataclass(frozen=True)
class Box2D:
    """An object's pixels in one image: box ``[x, x + width) x [y, y + height)``."""

    label: int  # semantic label (arsim_core.sensors.labels)
    x: int
    y: int
    width: int
    height: int
    pixels: int  # how many pixels show it
    truncated: bool  # it touches the image border: part of it may lie outside
    occluded: bool  # something nearer borders it: part of it may be hidden

    @property
    def name(self) -> str:
        return CLASSES[self.label]

    def center(self) -> tuple[float, float]:
        return self.x + self.width / 2.0, self.y + self.height / 2.0


def boxes(semantic: NDArray[np.uint8], depth: NDArray[np.float32] | None = None,
          min_pixels: int = MIN_PIXELS) -> tuple[list[Box2D], NDArray[np.int32]]:
    """Every object of ``CLASSES`` in a semantic image, and the instance mask (0: none,
    i + 1: the pixels of ``boxes[i]``). ``depth`` [m], of the same camera and frame, splits
    regions at depth jumps and tells what is nearer; without it, any bordering object
    counts as occluding."""
    height, width = semantic.shape
    found: list[Box2D] = []
    instances = np.zeros((height, width), np.int32)
    for label in CLASSES:
        mask = semantic == label
        if depth is not None:
            mask &= ~_depth_edges(depth)
        count, regions, stats, _ = cv2.connectedComponentsWithStats(
            mask.astype(np.uint8), connectivity=4)
        for region in range(1, count):
            x, y, w, h, area = (int(v) for v in stats[region])
            if area < min_pixels:
                continue
            pixels = regions == region
            if depth is not None:  # give back the edge pixels that border this region only
                pixels = _grow(pixels, semantic == label, instances == 0)
                ys, xs = np.nonzero(pixels)
                x, y = int(xs.min()), int(ys.min())
                w, h = int(xs.max()) - x + 1, int(ys.max()) - y + 1
                area = int(pixels.sum())
            instances[pixels] = len(found) + 1
            truncated = x == 0 or y == 0 or x + w == width or y + h == height
            found.append(Box2D(label, x, y, w, h, area, truncated,
                               _occluded(pixels, semantic, depth)))
    return found, instances


def _depth_edges(depth: NDArray[np.float32]) -> NDArray[np.bool_]:
    """Pixels whose right or lower neighbour lies more than DEPTH_STEP_M away."""
    edges = np.zeros(depth.shape, bool)
    edges[:, :-1] |= np.abs(np.diff(depth, axis=1)) > DEPTH_STEP_M
    edges[:-1, :] |= np.abs(np.diff(depth, axis=0)) > DEPTH_STEP_M
    return edges


def _grow(pixels: NDArray[np.bool_], same_class: NDArray[np.bool_],
          free: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """``pixels`` with the neighbouring pixels of its class that no region took."""
    grown = cv2.dilate(pixels.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
    return pixels | (grown & same_class & free)


def _occluded(pixels: NDArray[np.bool_], semantic: NDArray[np.uint8],
              depth: NDArray[np.float32] | None) -> bool:
    ring = cv2.dilate(pixels.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
    ring &= ~pixels
    bordering = ring & np.isin(semantic, list(OBJECTS))
    if depth is None:
        return bool(bordering.any())
    nearest = float(depth[pixels].min())
    return bool((depth[bordering] < nearest - DEPTH_STEP_M).any())
