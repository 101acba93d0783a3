"""A sample Formula Student driver's planning: cones or a path in, (speed, steering) out.

Pure Python and numpy, so the same code drives a car in a test process and behind the ROS node
``cone_driver.py``. Two modes:

- ``ConePlanner``: the track is only what the car sees. The middle of the lane lies between
  the blue (left) and yellow (right) cones, so the midpoints of neighbouring left and right
  cones, chained outwards from the car, are the path. Pure pursuit steers along it and the
  path's curvature sets the speed. The planner counts passes of the timekeeping gate (big
  orange cones) to know when the mission's laps are done, and then brakes to a standstill.
- ``PathFollower``: the skidpad's figure of eight crosses itself, so midpoints of the cones
  there are ambiguous; this mode follows a known world-frame path (``mission.path``) from the
  car's pose instead, and stops at the path's end.

Frames: cones in the car frame (x forward, y left, metres, origin at the car's base_link),
poses in the world frame.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

LEFT = ('blue',)
RIGHT = ('yellow',)
BY_SIDE = ('orange', 'big_orange')  # left or right by the sign of y

LANE_MIN_M, LANE_MAX_M = 2.0, 6.0  # cone pairs across the lane (3.3 m apart) fall in here
STEP_MAX_M = 6.0                   # farthest next midpoint when chaining the path
TURN_MAX_RAD = math.radians(60.0)  # sharpest bend between two path steps
SAME_POINT_M = 1.0                 # midpoints closer than this are one point
GATE_HALF_WIDTH_M = 3.0            # big orange cones this close beside the car form the gate
GATE_RANGE_M = 10.0                # ...and this close along it
GATE_LOST_M = 3.0                  # a gate seen this close ahead and then gone is passed
CREEP_SPEED = 2.0                  # speed when no path is seen


def resample(points: np.ndarray, step: float) -> np.ndarray:
    """The polyline ``points`` (N, 2) at an even ``step`` along its length."""
    seg = np.hypot(*np.diff(points, axis=0).T)
    arc = np.concatenate([[0.0], np.cumsum(seg)])
    if arc[-1] < step:
        return points[[0, -1]] if len(points) > 1 else points
    s = np.arange(0.0, arc[-1] + 1e-9, step)
    return np.column_stack([np.interp(s, arc, points[:, 0]), np.interp(s, arc, points[:, 1])])


def point_at(points: np.ndarray, arc: np.ndarray, s: float) -> np.ndarray:
    """The point of the polyline ``points`` at arc position ``s``, clipped to its ends."""
    return np.array([np.interp(s, arc, points[:, 0]), np.interp(s, arc, points[:, 1])])


def curvature(points: np.ndarray, span: int) -> np.ndarray:
    """|curvature| (N,) of an evenly spaced polyline from the circle through the points
    ``span`` before and after each one: a wide span smooths the noise of cone midpoints."""
    n = len(points)
    if n < 3:
        return np.zeros(n)
    i = np.arange(n)
    a = points[np.clip(i - span, 0, n - 1)]
    b = points
    c = points[np.clip(i + span, 0, n - 1)]
    ab, bc, ca = (np.hypot(*(q - p).T) for p, q in ((a, b), (b, c), (c, a)))
    cross = (b - a)[:, 0] * (c - a)[:, 1] - (b - a)[:, 1] * (c - a)[:, 0]
    with np.errstate(divide='ignore', invalid='ignore'):
        k = 2.0 * np.abs(cross) / (ab * bc * ca)
    return np.nan_to_num(k, nan=0.0, posinf=0.0)


class _Driving:
    """Pure pursuit and a curvature speed limit, shared by both modes."""

    def __init__(self, wheelbase: float, max_steer: float, max_speed: float,
                 rear_axle_x: float | None, lateral_accel: float, braking: float) -> None:
        self.wheelbase = wheelbase
        self.max_steer = max_steer
        self.max_speed = max_speed
        # Pure pursuit's geometry holds at the rear axle; the FS car's base_link is midway.
        self.rear_axle_x = -0.5 * wheelbase if rear_axle_x is None else rear_axle_x
        self.lateral_accel = lateral_accel
        self.braking = braking

    def lookahead(self, speed: float) -> float:
        """Farther ahead at speed, so the steering stays calm."""
        return float(np.clip(2.5 + 0.35 * max(speed, 0.0), 3.5, 10.0))

    def steer_to(self, target: np.ndarray) -> float:
        """Pure pursuit: the steering angle of the arc from the rear axle through ``target``
        (car frame)."""
        dx, dy = float(target[0]) - self.rear_axle_x, float(target[1])
        dist_sq = dx * dx + dy * dy
        if dist_sq < 1e-6:
            return 0.0
        angle = math.atan(2.0 * self.wheelbase * dy / dist_sq)
        return float(np.clip(angle, -self.max_steer, self.max_steer))

    def speed_for(self, points: np.ndarray, arc: np.ndarray, end_speed: float | None) -> float:
        """The fastest speed from which every point ahead (N, 2) can be taken under the
        lateral limit, braking at ``braking`` in between; the car can also stop (or reach
        ``end_speed``) by the last point, since nothing beyond it is known."""
        kappa = curvature(points, span=3)
        with np.errstate(divide='ignore'):
            corner = np.minimum(np.sqrt(self.lateral_accel / kappa), self.max_speed)
        reach = np.sqrt(corner**2 + 2.0 * self.braking * arc)
        end = 0.0 if end_speed is None else end_speed
        limit = min(float(reach.min()), math.sqrt(end**2 + 2.0 * self.braking * arc[-1]))
        return min(limit, self.max_speed)


class ConePlanner(_Driving):
    """Drive between the cones the car sees; stop after the mission's laps.

    ``step(cones, speed)`` takes the visible cones in the car frame, by class name ('blue',
    'yellow', 'orange', 'big_orange') to (k, 2) arrays, and returns (speed target [m/s],
    steering angle [rad]).
    """

    def __init__(self, wheelbase: float, max_steer: float, max_speed: float, kind: str,
                 laps: int, *, rear_axle_x: float | None = None, lateral_accel: float = 8.0,
                 braking: float = 8.0, offset: float = 0.0) -> None:
        super().__init__(wheelbase, max_steer, max_speed, rear_axle_x, lateral_accel, braking)
        self.offset = offset  # drive this far left of the middle [m]: a test that hits cones
        self.kind = kind
        self.laps = laps
        # Acceleration: the start gate, then the finish gate 75 m on. Autocross and
        # trackdrive: the one timekeeping line, once to start and once per lap. Either way,
        # laps + 1 passes; the stop area follows the last one.
        self.gates_to_pass = laps + 1
        self.gates_passed = 0
        self._gate_ahead: float | None = None  # x of the gate while it is ahead
        self.path = np.zeros((1, 2))  # the last path, for a look at what it planned
        self._steer = 0.0

    @property
    def done(self) -> bool:
        """All laps driven: only braking is left."""
        return self.gates_passed >= self.gates_to_pass

    def step(self, cones: Mapping[str, np.ndarray], speed: float) -> tuple[float, float]:
        self._count_gate(np.reshape(cones.get('big_orange', np.zeros((0, 2))), (-1, 2)))
        self.path = path = self.midline(cones)
        path[1:, 1] += self.offset
        if len(path) >= 2:  # path[0] is the rear axle, where pure pursuit measures from
            points = resample(path, 0.5)
            arc = np.arange(len(points)) * 0.5
            self._steer = self.steer_to(point_at(points, arc, self.lookahead(speed)))
            target = self.speed_for(points, arc, None)
        else:
            target = CREEP_SPEED  # keep rolling with the last steering until cones show up
        if self.done:
            target = 0.0
        return target, self._steer

    def midline(self, cones: Mapping[str, np.ndarray]) -> np.ndarray:
        """The path (N, 2) from the rear axle along the lane's middle, as far as the cones
        go."""
        start = np.array([self.rear_axle_x, 0.0])
        left, right = self._sides(cones)
        if not len(left) or not len(right):
            return start[None, :]
        mids = []
        for these, those in ((left, right), (right, left)):
            gap = np.hypot(*(these[:, None, :] - those[None, :, :]).transpose(2, 0, 1))
            nearest = np.argmin(gap, axis=1)
            ok = (gap[np.arange(len(these)), nearest] >= LANE_MIN_M) \
                & (gap[np.arange(len(these)), nearest] <= LANE_MAX_M)
            mids.append(0.5 * (these[ok] + those[nearest[ok]]))
        return self._chain(start, np.vstack(mids))

    @staticmethod
    def _sides(cones: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Left and right edge cones, but those well behind the car: cones beside the rear
        axle still pair up for the path's first midpoint."""
        def group(names: tuple[str, ...]) -> np.ndarray:
            parts = [np.reshape(cones[n], (-1, 2)) for n in names if n in cones]
            return np.vstack(parts) if parts else np.zeros((0, 2))

        either = group(BY_SIDE)
        left = np.vstack([group(LEFT), either[either[:, 1] > 0.0]])
        right = np.vstack([group(RIGHT), either[either[:, 1] <= 0.0]])
        return left[left[:, 0] > -2.0], right[right[:, 0] > -2.0]

    @staticmethod
    def _chain(start: np.ndarray, mids: np.ndarray) -> np.ndarray:
        """Order midpoints into a path: from ``start``, each step to the nearest midpoint
        that is close and does not bend back, so cones of another part of the track stay
        out."""
        path = [start]
        heading = 0.0
        left = mids
        while len(left):
            d = left - path[-1]
            dist = np.hypot(d[:, 0], d[:, 1])
            bend = np.abs((np.arctan2(d[:, 1], d[:, 0]) - heading + math.pi) % math.tau - math.pi)
            ok = (dist <= STEP_MAX_M) & (bend <= TURN_MAX_RAD) & (dist > 0.2)
            if not ok.any():
                break
            k = int(np.flatnonzero(ok)[np.argmin(dist[ok])])
            heading = math.atan2(d[k, 1], d[k, 0])
            path.append(left[k])
            left = left[np.hypot(*(left - left[k]).T) > SAME_POINT_M]
        return np.array(path)

    def _count_gate(self, big: np.ndarray) -> None:
        """A pass: the gate's big orange cones beside the car go from ahead to behind it (or
        out of sight just ahead, for a sensor that sees only forwards)."""
        near = big[(np.abs(big[:, 1]) < GATE_HALF_WIDTH_M) & (np.abs(big[:, 0]) < GATE_RANGE_M)]
        gate_x = float(near[:, 0].mean()) if len(near) else None
        if gate_x is not None and gate_x > 0.0:
            self._gate_ahead = gate_x
            return
        if self._gate_ahead is not None and (gate_x is not None
                                             or self._gate_ahead < GATE_LOST_M):
            self.gates_passed += 1
        self._gate_ahead = None


class PathFollower(_Driving):
    """Pure pursuit along a world-frame path, stopping at its end.

    ``step(x, y, yaw, speed)`` takes the car's base_link pose and speed and returns (speed
    target [m/s], steering angle [rad]). The car's progress is kept along the path and the
    nearest point is looked for only a little ahead, so a path that crosses itself (the
    skidpad's figure of eight) is followed in order. ``stop_short`` [m] stops the rear axle
    that far before the end, so the front of the car stays inside a stop area that ends
    there.
    """

    def __init__(self, path: np.ndarray, wheelbase: float, max_steer: float, max_speed: float,
                 *, rear_axle_x: float | None = None, stop_short: float = 0.0,
                 lateral_accel: float = 8.0, braking: float = 4.0) -> None:
        super().__init__(wheelbase, max_steer, max_speed, rear_axle_x, lateral_accel, braking)
        self.points = resample(np.asarray(path, dtype=float), 0.25)
        self.arc = np.arange(len(self.points)) * 0.25
        self.end = max(float(self.arc[-1]) - stop_short, 0.0)
        self.index = 0

    @property
    def done(self) -> bool:
        """At (or past) the stopping point."""
        return float(self.arc[self.index]) >= self.end - 0.3

    def step(self, x: float, y: float, yaw: float, speed: float) -> tuple[float, float]:
        c, sn = math.cos(yaw), math.sin(yaw)
        # Progress is the rear axle's: pure pursuit keeps the rear axle on the path, so a
        # circle is driven on its own radius instead of cut by the lookahead.
        rear = np.array([x + self.rear_axle_x * c, y + self.rear_axle_x * sn])
        window = self.points[self.index:self.index + 80]  # 20 m ahead
        self.index += int(np.argmin(np.hypot(*(window - rear).T)))
        s = float(self.arc[self.index])
        gx, gy = point_at(self.points, self.arc, s + self.lookahead(speed)) - (x, y)
        steer = self.steer_to(np.array([c * gx + sn * gy, -sn * gx + c * gy]))
        if self.done:
            return 0.0, steer
        horizon = (self.arc >= s) & (self.arc <= min(s + 40.0, self.end))
        points, arc = self.points[horizon], self.arc[horizon] - s
        if len(points) < 2:
            return 0.0, steer
        to_end = s + 40.0 >= self.end  # else the path goes on beyond the horizon
        return self.speed_for(points, arc, None if to_end else self.max_speed), steer
