"""Small rigid-body helpers shared by the backend, the nodes and the tests."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# x, y, z, roll, pitch, yaw of a car's base_link in the world frame, as numbers or an array
Pose = Sequence[float] | np.ndarray
# x [m], y [m], yaw [rad] of a car's base_link on the ground plane of the world frame
Pose2D = tuple[float, float, float]


@dataclass(frozen=True)
class Wheels:
    """Where a car's wheels are, as its description (arsim_description) draws them [m]: the
    rear and front axles' x in base_link, and each wheel's radius and width."""

    rear_x: float
    front_x: float
    radius: float
    width: float


@dataclass(frozen=True)
class Footprint:
    """A car's box, centred on base_link [m]: its rectangle collides with barriers and other
    cars, and the box, from the car's z up to ``height``, is what other cars' sensors see.
    ``wheels``, when known, places the wheels of the model cameras draw inside the box."""

    length: float
    width: float
    height: float
    wheels: Wheels | None = None


def rotation_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Rotation of fixed-axis roll, pitch, yaw (REP-103: R = Rz(yaw) Ry(pitch) Rx(roll))."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def yaw_to_quaternion(yaw: float) -> tuple[float, float, float, float]:
    """(x, y, z, w) of a rotation about z."""
    return 0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0)


def rpy_to_quaternion(roll: float, pitch: float, yaw: float) -> tuple[float, float, float, float]:
    """(x, y, z, w) of fixed-axis roll, pitch, yaw."""
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return (sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy)


def quaternion_to_yaw(x: float, y: float, z: float, w: float) -> float:
    """Heading of a quaternion, ignoring roll and pitch."""
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def relative_pose(origin: tuple[float, float, float],
                  pose: tuple[float, float, float]) -> tuple[float, float, float]:
    """``pose`` (x, y, yaw) expressed in the frame of ``origin`` (x, y, yaw)."""
    ox, oy, oyaw = origin
    dx, dy = pose[0] - ox, pose[1] - oy
    c, s = math.cos(oyaw), math.sin(oyaw)
    yaw = math.atan2(math.sin(pose[2] - oyaw), math.cos(pose[2] - oyaw))
    return c * dx + s * dy, -s * dx + c * dy, yaw

