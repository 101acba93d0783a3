"""Backing out of a wall or a car: what every built-in driver does when it has stood still,
asked to drive, for ``STUCK_S``: it reverses for ``REVERSE_S`` at ``REVERSE_SHARE`` of its top
speed, steering the other way, then drives on."""

from __future__ import annotations

STOPPED = 0.3  # a car slower than this has stopped [m/s]
STUCK_S = 1.0
REVERSE_S = 0.8
REVERSE_SHARE = 0.05  # of the top speed, backing out


class Unstick:
    """One driver's backing out, acting every ``period_s`` at a ``top_speed`` [m/s]."""

    def __init__(self, period_s: float, top_speed: float) -> None:
        self.period_s = period_s
        self.top_speed = top_speed
        self.stuck_s = 0.0  # how long it has stood still, asked to drive
        self.reversing = 0.0  # how long it still backs out

    def reset(self) -> None:
        self.stuck_s = self.reversing = 0.0

    def command(self, steer: float, speed: float, vx: float, asked: bool) -> tuple[float, float]:
        """The driver's ``steer`` and ``speed``, or the way back out while it backs out;
        ``asked``: whether the driver wants to move (a driver that stops on purpose, behind a
        stopped car, is not stuck)."""
        if self.reversing > 0.0:
            self.reversing -= self.period_s
            return -steer, -REVERSE_SHARE * self.top_speed
        stuck = asked and abs(vx) < STOPPED
        self.stuck_s = self.stuck_s + self.period_s if stuck else 0.0
        if self.stuck_s > STUCK_S:
            self.stuck_s, self.reversing = 0.0, REVERSE_S
        return steer, speed
