"""What the car's motion means to an IMU and to wheel odometry; plain math on the state the
bridge hands out each frame (pose x, y, yaw; body twist vx, vy, yaw rate; steering angle)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PlanarState:
    """One frame of a car: world pose, velocity in base_link, steering angle."""

    time_ns: int
    x: float
    y: float
    yaw: float
    vx: float
    vy: float
    yaw_rate: float
    steering_angle: float = 0.0


def body_acceleration(previous: PlanarState | None,
                      current: PlanarState) -> tuple[float, float, float]:
    """Acceleration of base_link (ax, ay) in its own frame and the yaw acceleration, from two
    consecutive frames: d/dt of the body velocity plus the rotating frame's term w x v."""
    if previous is None or current.time_ns <= previous.time_ns:
        return 0.0, 0.0, 0.0
    dt = (current.time_ns - previous.time_ns) * 1e-9
    w = 0.5 * (previous.yaw_rate + current.yaw_rate)
    vx, vy = 0.5 * (previous.vx + current.vx), 0.5 * (previous.vy + current.vy)
    ax = (current.vx - previous.vx) / dt - w * vy
    ay = (current.vy - previous.vy) / dt + w * vx
    return ax, ay, (current.yaw_rate - previous.yaw_rate) / dt


def specific_force(accel: tuple[float, float, float], yaw_rate: float, gravity: float,
                   lever: np.ndarray, mount_rotation: np.ndarray) -> np.ndarray:
    """What an accelerometer at ``lever`` (its position in base_link) with axes
    ``mount_rotation`` (base_link <- sensor) measures on a car moving in the plane: the point's
    acceleration (base_link's, plus the lever arm's tangential and centripetal terms) minus
    gravity, so +g on z at rest."""
    ax, ay, yaw_acceleration = accel
    omega = np.array([0.0, 0.0, yaw_rate])
    alpha = np.array([0.0, 0.0, yaw_acceleration])
    point = np.array([ax, ay, 0.0]) + np.cross(alpha, lever) \
        + np.cross(omega, np.cross(omega, lever))
    return mount_rotation.T @ (point + np.array([0.0, 0.0, gravity]))


@dataclass
class WheelOdometry:
    """vesc_to_odom's dead reckoning: speed and steering angle give the yaw rate through the
    wheelbase; position integrates with the previous heading (explicit Euler), once per
    message; speeds below 5 cm/s count as standing still, as the VESC driver does."""

    wheelbase: float
    x: float = 0.0
    y: float = 0.0
    yaw: float = 0.0
    last_time_ns: int | None = None

    def step(self, time_ns: int, speed: float, steering_angle: float) -> tuple[float, float]:
        """Advance to ``time_ns``; returns (speed, yaw rate) as published in the twist."""
        if abs(speed) < 0.05:
            speed = 0.0
        yaw_rate = speed * math.tan(steering_angle) / self.wheelbase
        if self.last_time_ns is not None:
            dt = (time_ns - self.last_time_ns) * 1e-9
            self.x += speed * math.cos(self.yaw) * dt
            self.y += speed * math.sin(self.yaw) * dt
            self.yaw += yaw_rate * dt
        self.last_time_ns = time_ns
        return speed, yaw_rate


@dataclass
class WheelEncoders:
    """Two incremental encoders on the rear wheels, ``track_width`` apart: each wheel rolls
    without slip at the car's speed plus or minus half the track times the yaw rate, its
    revolutions integrated frame by frame (trapezoidal), and an encoder counts the whole ticks
    it has passed, ``ticks_per_wheel_revolution`` per revolution, signed by direction."""

    track_width: float
    wheel_radius: float
    ticks_per_wheel_revolution: float
    revolutions: tuple[float, float] = (0.0, 0.0)  # left, right, since the first frame
    _last: tuple[int, float, float] | None = None  # time [ns] and wheel speeds [m/s]

    def advance(self, time_ns: int, speed: float, yaw_rate: float) -> None:
        """Roll on to ``time_ns`` at ``speed`` [m/s] and ``yaw_rate`` [rad/s]."""
        half = 0.5 * self.track_width * yaw_rate
        left, right = speed - half, speed + half
        if self._last is not None:
            last_ns, last_left, last_right = self._last
            turns = (time_ns - last_ns) * 1e-9 / (2.0 * math.pi * self.wheel_radius) * 0.5
            self.revolutions = (self.revolutions[0] + (left + last_left) * turns,
                                self.revolutions[1] + (right + last_right) * turns)
        self._last = (time_ns, left, right)

    def reading(self) -> tuple[float, float, float, float, float, float]:
        """Ticks counted (left, right), the wheel angles [rad] they resolve and the wheels'
        angular speeds [rad/s] now."""
        per_turn = self.ticks_per_wheel_revolution
        left, right = (float(math.floor(r * per_turn)) for r in self.revolutions)
        step = 2.0 * math.pi / per_turn
        speed_left, speed_right = (0.0, 0.0) if self._last is None else self._last[1:]
        return (left, right, left * step, right * step, speed_left / self.wheel_radius,
                speed_right / self.wheel_radius)
