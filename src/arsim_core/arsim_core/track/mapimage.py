"""ROS ``map_saver`` occupancy maps: yaml + image in, occupancy grid and barrier walls out.

The rules follow ``nav2_map_server``: a pixel's occupancy probability is ``(255 - v) / 255``
(``v / 255`` when ``negate`` is set); above ``occupied_thresh`` it is occupied, below
``free_thresh`` free, unknown in between. The image's bottom row is the map origin.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from arsim_core.errors import TrackError
from arsim_core.track.model import FREE, OCCUPIED, UNKNOWN, OccupancyGridData
from arsim_core.yaml_fields import load_section


def read_map_image(path: Path) -> np.ndarray:
    """Read a map image as 8-bit grey, averaging colour channels as map_server does."""
    path = Path(path)
    if not path.is_file():
        msg = f'{path}: map image not found'
        raise TrackError(msg)
    img = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if img is None:
        msg = f'{path}: cannot decode map image'
        raise TrackError(msg)
    if img.dtype != np.uint8:
        img = (img.astype(np.float64) * (255.0 / np.iinfo(img.dtype).max)).astype(np.uint8)
    if img.ndim == 3:
        img = img[:, :, :3].mean(axis=2).astype(np.uint8)
    return img


def occupancy_from_image(
    img: np.ndarray,
    resolution: float,
    origin: tuple[float, float, float],
    negate: bool = False,
    occupied_thresh: float = 0.65,
    free_thresh: float = 0.196,
    mode: str = 'trinary',
) -> OccupancyGridData:
    """Classify an 8-bit map image into an occupancy grid (row 0 = image bottom)."""
    flipped = img[::-1]
    p = flipped.astype(np.float32) / 255.0 if negate else (255.0 - flipped) / 255.0
    data = np.full(flipped.shape, UNKNOWN, dtype=np.int8)
    data[p < free_thresh] = FREE
    if mode == 'scale':
        mid = (p >= free_thresh) & (p <= occupied_thresh)
        scaled = (p - free_thresh) / max(occupied_thresh - free_thresh, 1e-9) * 99.0
        data[mid] = np.round(scaled[mid]).astype(np.int8)
    data[p > occupied_thresh] = OCCUPIED
    return OccupancyGridData(data, resolution, origin)


def read_ros_map(yaml_path: Path) -> tuple[OccupancyGridData, Path, Mapping[str, Any]]:
    """Load a map_saver yaml and its image; returns the grid, image path and yaml dict.

    Keys other than map_server's are left alone: the file is another tool's format."""
    yaml_path = Path(yaml_path)
    meta = load_section(yaml_path, TrackError)
    resolution = meta.number('resolution', minimum=0.0, exclusive_minimum=True)
    origin = meta.vector('origin', 3)
    negate = meta.raw('negate', 0)
    if negate not in (0, 1):  # an integer in map_server's files, true/false in some others
        meta.fail(f'expected 0 or 1, got {negate!r}', 'negate')
    occ = meta.number('occupied_thresh', 0.65, minimum=0.0, maximum=1.0)
    free = meta.number('free_thresh', 0.196, minimum=0.0, maximum=1.0)
    mode = meta.string('mode', 'trinary', choices=('trinary', 'scale', 'raw'))
    image_path = meta.file_inside('image')
    try:
        img = read_map_image(image_path)
    except TrackError as exc:
        meta.fail(str(exc), 'image')
    pose = (origin[0], origin[1], origin[2])
    if mode == 'raw':
        raw = img[::-1].astype(np.int16)
        data = np.where(raw > 100, UNKNOWN, raw).astype(np.int8)
        grid = OccupancyGridData(data, resolution, pose)
    else:
        grid = occupancy_from_image(
            img, resolution, pose, bool(negate), occ, free, mode
        )
    return grid, image_path, meta.data


def walls_from_occupancy(
    grid: OccupancyGridData, simplify_cells: float = 0.3, min_cells: int = 1
) -> tuple[np.ndarray, ...]:
    """Outlines of occupied regions as closed world polylines (outer outlines and holes).

    Outlines run through the centres of the boundary cells, so filling them (even-odd)
    reproduces the occupied cells. Regions of one cell become a cell-sized square so that
    they still make a barrier when extruded. ``simplify_cells`` is the Douglas-Peucker
    tolerance in cells (0.3 only merges collinear runs, keeping the round trip exact);
    ``min_cells`` drops specks smaller than that many cells.
    """
    mask = (grid.data == OCCUPIED).astype(np.uint8)
    if min_cells > 1:
        _, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        small = np.flatnonzero(stats[:, cv2.CC_STAT_AREA] < min_cells)
        small = small[small > 0]
        if small.size:
            mask[np.isin(labels, small)] = 0
    contours, _ = cv2.findContours(mask, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_NONE)
    walls: list[np.ndarray] = []
    square = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5], [-0.5, -0.5]])
    for contour in contours:
        if simplify_cells > 0 and contour.shape[0] > 3:
            contour = cv2.approxPolyDP(contour, simplify_cells, closed=True)
        pts = contour.reshape(-1, 2).astype(np.float64)
        if pts.shape[0] == 1:
            pts = pts[0] + square
        else:
            pts = np.vstack([pts, pts[:1]])
        walls.append(grid.cell_to_world(pts[:, 0] + 0.5, pts[:, 1] + 0.5))
    return tuple(walls)


def write_ros_map(grid: OccupancyGridData, yaml_path: Path, image_suffix: str = '.png') -> Path:
    """Save a grid the way ``map_saver`` does, so any ROS map tool can open it.

    The image has occupied cells black, free white, unknown grey and the far edge on top; the
    yaml beside it has resolution, origin and the usual thresholds.
    """
    yaml_path = Path(yaml_path)
    image_path = yaml_path.with_suffix(image_suffix)
    data = grid.data[::-1]
    img = np.full(data.shape, 205, dtype=np.uint8)
    img[data == FREE] = 254
    img[data == OCCUPIED] = 0
    text = (
        f'image: {image_path.name}\n'
        f'mode: trinary\n'
        f'resolution: {grid.resolution:.6g}\n'
        f'origin: [{grid.origin[0]:.6f}, {grid.origin[1]:.6f}, {grid.origin[2]:.6f}]\n'
        'negate: 0\n'
        'occupied_thresh: 0.65\n'
        'free_thresh: 0.196\n'
    )
    try:
        yaml_path.parent.mkdir(parents=True, exist_ok=True)
        if not cv2.imwrite(str(image_path), img):
            msg = f'{image_path}: cannot write map image'
            raise TrackError(msg)
        yaml_path.write_text(text, encoding='utf-8')
    except OSError as exc:
        msg = f'{yaml_path}: cannot write map: {exc}'
        raise TrackError(msg) from exc
    return yaml_path
