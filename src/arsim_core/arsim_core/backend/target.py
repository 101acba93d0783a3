"""The calibration board as the embedded backend's cameras see it: a flat mesh of black and
white squares in a white margin (class ``calibration_target``), placed at the pose its
scenario gives for the frame (``arsim_core.protocol.target`` has the board's frame).

Cameras render its mesh; a 3D LiDAR casts its rays at the board's rectangle (``Board.cast``),
so that camera-to-LiDAR extrinsics can be checked on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from arsim_core import labels
from arsim_core.backend.hits import Hits
from arsim_core.backend.materials import BOARD_BLACK, BOARD_WHITE
from arsim_core.geometry import Pose, rotation_matrix
from arsim_core.protocol.target import CalibrationTarget


@dataclass(frozen=True, eq=False)
class BoardMesh:
    """Triangles of the board in its own frame, each with its class and material."""

    vertices: np.ndarray  # (V, 3) float64 [m]
    triangles: np.ndarray  # (T, 3) int64
    labels: np.ndarray  # (T,) uint8
    materials: np.ndarray  # (T,) uint8


def _rectangles(y0: np.ndarray, y1: np.ndarray, z0: np.ndarray, z1: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """Rectangles in the board's plane (x = 0) spanning [y0, y1] x [z0, z1], two triangles
    each."""
    corners = np.stack([np.column_stack([np.zeros_like(y), y, z]) for y, z in
                        ((y0, z0), (y1, z0), (y1, z1), (y0, z1))], axis=1)
    first = 4 * np.arange(len(y0))[:, None]
    triangles = np.concatenate([first + [0, 1, 2], first + [0, 2, 3]])
    return corners.reshape(-1, 3), triangles


def board_mesh(target: CalibrationTarget) -> BoardMesh:
    """The squares, the top-left one black, and the margin's four strips."""
    columns, rows = target.squares
    size, margin = target.square_size, target.margin
    half_w, half_h = columns * size / 2.0, rows * size / 2.0
    c, r = (a.ravel() for a in np.meshgrid(np.arange(columns), np.arange(rows)))
    left, top = half_w - c * size, half_h - r * size  # columns along -y, rows along -z
    y0 = np.r_[left - size, [-half_w - margin, -half_w - margin, half_w, -half_w - margin]]
    y1 = np.r_[left, [half_w + margin, half_w + margin, half_w + margin, -half_w]]
    z0 = np.r_[top - size, [half_h, -half_h - margin, -half_h, -half_h]]
    z1 = np.r_[top, [half_h + margin, -half_h, half_h, half_h]]
    if margin <= 0.0:
        y0, y1, z0, z1 = y0[:-4], y1[:-4], z0[:-4], z1[:-4]
    vertices, triangles = _rectangles(y0, y1, z0, z1)
    materials = np.full(len(y0), BOARD_WHITE, np.uint8)
    materials[:columns * rows][(c + r) % 2 == 0] = BOARD_BLACK
    return BoardMesh(vertices, triangles, np.full(len(triangles), labels.CALIBRATION_TARGET,
                                                  np.uint8), np.tile(materials, 2))


def _transform(pose: Pose) -> np.ndarray:
    x, y, z, roll, pitch, yaw = pose
    matrix = np.eye(4)
    matrix[:3, :3] = rotation_matrix(roll, pitch, yaw)
    matrix[:3, 3] = [x, y, z]
    return matrix


class Board:
    """A scenario's board and where it stands at each frame."""

    def __init__(self, target: CalibrationTarget, frame_period_ns: int) -> None:
        self.target = target
        self.frame_period_ns = frame_period_ns
        self.mesh = board_mesh(target)

    def model(self, time_ns: int, car_poses: Mapping[str, Pose]) -> np.ndarray | None:
        """Board frame -> world (4 x 4) at ``time_ns``; None while the car it stands in front
        of has no pose."""
        target = self.target
        pose = _transform(target.poses[target.pose_index(time_ns, self.frame_period_ns)])
        if not target.car:
            return pose
        car = car_poses.get(target.car)
        return None if car is None else _transform(car) @ pose

    def cast(self, origins: np.ndarray, directions: np.ndarray, max_distance: float,
             time_ns: int, car_poses: Mapping[str, Pose]) -> Hits | None:
        """Rays (``origins`` (n, 3) or (1, 3), ``directions`` (n, 3), unit) against the board's
        rectangle, margin included, where it stands at ``time_ns``; None without a pose."""
        model = self.model(time_ns, car_poses)
        if model is None:
            return None
        rotation, position = model[:3, :3], model[:3, 3]
        start = (np.asarray(origins, np.float64) - position) @ rotation  # in the board frame
        along = np.asarray(directions, np.float64) @ rotation
        target = self.target
        half_w = target.squares[0] * target.square_size / 2.0 + max(target.margin, 0.0)
        half_h = target.squares[1] * target.square_size / 2.0 + max(target.margin, 0.0)
        with np.errstate(divide='ignore', invalid='ignore'):
            s = -start[:, 0] / along[:, 0]
            hit = (s > 0.0) & (s <= max_distance) \
                & (np.abs(start[:, 1] + s * along[:, 1]) <= half_w) \
                & (np.abs(start[:, 2] + s * along[:, 2]) <= half_h)
        return Hits(np.where(hit, s, np.inf).astype(np.float32),
                    np.where(hit, labels.CALIBRATION_TARGET, labels.NONE).astype(np.uint8),
                    np.where(hit, np.abs(along[:, 0]), 0.0).astype(np.float32))
