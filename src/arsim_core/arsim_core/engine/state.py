"""The ground truth of one car at one frame, as the engine hands it to every face."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

Pose2D = tuple[float, float, float]  # x [m], y [m], yaw [rad] of base_link in the world frame


class CarState(NamedTuple):
    """Planar state of a car's base_link: world pose, velocities and accelerations in its own
    frame (REP-103), and the front wheel angle. Dynamics models and external dynamics nodes
    both reduce to this; the referee, the renderer and the race metrics read nothing else.
    A named tuple: immutable, and quick to make for every car in every frame."""

    x: float
    y: float
    yaw: float
    vx: float = 0.0
    vy: float = 0.0
    yaw_rate: float = 0.0
    ax: float = 0.0
    ay: float = 0.0
    steering_angle: float = 0.0
    z: float = 0.0

    @property
    def pose(self) -> Pose2D:
        return self.x, self.y, self.yaw

    def render_pose(self) -> list[float]:
        """x, y, z, roll, pitch, yaw as the backend protocol moves a car."""
        return [self.x, self.y, self.z, 0.0, 0.0, self.yaw]

    def to_wire(self) -> dict[str, Any]:
        """The ``state`` object of a fan-out car frame (docs/protocol.md)."""
        return {'pose': [self.x, self.y, self.yaw], 'twist': [self.vx, self.vy, self.yaw_rate],
                'accel': [self.ax, self.ay], 'steering_angle': self.steering_angle}

    def problem(self, max_speed: float) -> str | None:
        """Why this state cannot be a real car's (non-finite, or faster than ``max_speed``),
        or None: the engine refuses such a state instead of letting it reach the referee."""
        total = (self.x + self.y + self.z + self.yaw + self.vx + self.vy + self.yaw_rate
                 + self.ax + self.ay + self.steering_angle)
        if not math.isfinite(total):  # a NaN or an infinity anywhere makes the sum one
            return 'non-finite value in the state'
        speed = math.hypot(self.vx, self.vy)
        if speed > max_speed:
            return f'speed {speed:.1f} m/s above {max_speed:g} m/s'
        return None
