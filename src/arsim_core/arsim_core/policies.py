"""Built-in drivers: the gym's opponents and the simulation's autopilot. Each ``act`` returns
an Ackermann command ``(steering_angle [rad, + left], speed [m/s])`` and runs every step for
every car it drives, so the per-call work is a few small array operations, never a pass over
the track.
"""

from __future__ import annotations

import math
from bisect import bisect_right

import numpy as np

from arsim_core.config.scenario import CarSpec
from arsim_core.config.sensors import Lidar2DSpec
from arsim_core.engine.state import CarState
from arsim_core.errors import ArsimError

GRAVITY = 9.81  # [m/s^2]


def _positive(name: str, value: float) -> float:
    value = float(value)
    if not (math.isfinite(value) and value > 0.0):
        msg = f'{name}: expected a positive finite number, got {value!r}'
        raise ValueError(msg)
    return value


def _closed_curvature(points: np.ndarray, stencil: int) -> np.ndarray:
    """Curvature (N,) of a closed polyline from the circle through points ``stencil`` apart on
    each side: a stencil about one wheelbase wide ignores the jitter of densely sampled lines,
    which would otherwise make the speed limit flicker."""
    a = np.roll(points, stencil, axis=0)
    c = np.roll(points, -stencil, axis=0)
    ab, bc, ca = points - a, c - points, a - c
    cross = ab[:, 0] * bc[:, 1] - ab[:, 1] * bc[:, 0]
    denom = np.hypot(*ab.T) * np.hypot(*bc.T) * np.hypot(*ca.T)
    out = np.zeros(points.shape[0])
    ok = denom > 1e-12
    out[ok] = 2.0 * cross[ok] / denom[ok]
    return out


class PurePursuit:
    """Follows a closed line (the raceline, else the centerline) with pure pursuit.

    The car's reference point is its base_link: the nearest line point, the lookahead distance
    and the steering geometry are all measured from it, so a car on a circle of radius R
    through its base_link steers atan(L / R) in steady state.
    """

    def __init__(self, line: np.ndarray, *, wheelbase: float, max_steering: float,
                 max_speed: float, speeds: np.ndarray | None = None, friction: float = 1.0,
                 speed_scale: float = 1.0, lookahead: float | None = None) -> None:
        pts = np.array(line, dtype=np.float64).reshape(-1, 2)
        self.wheelbase = _positive('wheelbase', wheelbase)
        self.max_steering = _positive('max_steering', max_steering)
        self.max_speed = _positive('max_speed', max_speed)
        self.friction = _positive('friction', friction)
        self.speed_scale = float(speed_scale)
        if not (math.isfinite(self.speed_scale) and self.speed_scale >= 0.0):
            msg = f'speed_scale: expected a finite number >= 0, got {speed_scale!r}'
            raise ValueError(msg)
        self.lookahead = None if lookahead is None else _positive('lookahead', lookahead)
        vel = None
        if speeds is not None:
            vel = np.array(speeds, dtype=np.float64).reshape(-1)
            if vel.shape != (pts.shape[0],) or not np.all(np.isfinite(vel)):
                msg = f'speeds: expected {pts.shape[0]} finite values, got shape {vel.shape}'
                raise ValueError(msg)
        if not np.all(np.isfinite(pts)):
            msg = 'line: contains NaN or infinite values'
            raise ValueError(msg)
        # a closed line may repeat its first point at the end; repeated points have no heading
        keep = np.hypot(*(np.roll(pts, -1, axis=0) - pts).T) > 1e-9
        pts = pts[keep]
        vel = None if vel is None else vel[keep]
        if pts.shape[0] < 3:
            msg = f'line: expected at least 3 distinct points, got {pts.shape[0]}'
            raise ValueError(msg)
        n = pts.shape[0]
        seg = np.roll(pts, -1, axis=0) - pts
        seglen = np.hypot(*seg.T)
        s = np.concatenate([[0.0], np.cumsum(seglen[:-1])])
        self.length = float(seglen.sum())
        self.line = pts
        self._n = n
        # plain lists: indexing one float out of a list costs a tenth of a numpy scalar read
        self._x, self._y = pts[:, 0].tolist(), pts[:, 1].tolist()
        self._sx, self._sy, self._len = seg[:, 0].tolist(), seg[:, 1].tolist(), seglen.tolist()
        # left unit normal of each segment: where ``offset`` moves the target
        self._nx, self._ny = (-seg[:, 1] / seglen).tolist(), (seg[:, 0] / seglen).tolist()
        self._s = s.tolist()
        self._s_ext = np.concatenate([s, s + self.length, [2.0 * self.length]]).tolist()

        spacing = self.length / n
        self._ahead_m = max(20.0 * self.wheelbase, 3.0)  # farther than a car moves per step
        self._relocate_m = 0.5 * self._ahead_m
        self._ahead = max(2, min(n // 2, math.ceil(self._ahead_m / spacing)))
        self._behind = max(2, self._ahead // 8)

        if vel is not None:
            self._speeds: list[float] | None = vel.tolist()
            self.speed_profile = np.minimum(vel * self.speed_scale, self.max_speed)
        else:
            self._speeds = None
            self.speed_profile = self._curvature_profile(pts, seglen, spacing)
        self._profile_ext = np.concatenate([self.speed_profile, self.speed_profile]).tolist()

        # metres left (+) or right of the line to aim at: a racing driver's lane while it
        # passes or defends (arsim_core.drivers.racer); 0 follows the line itself
        self.offset = 0.0
        self._index = -1
        self._last_xy = (math.nan, math.nan)
        self._target = (math.nan, math.nan)
        self.full_searches = 0

    def _curvature_profile(self, pts: np.ndarray, seglen: np.ndarray,
                           spacing: float) -> np.ndarray:
        """Cornering speed sqrt(mu g / |kappa|) capped at max_speed, lowered wherever the car
        could not brake from it to the next corner's speed: the minimum over a short lookahead
        window alone would reach a hairpin too fast. Braking is planned at half the grip, as
        the car still turns while it brakes; at full grip it slides wide at the tyre limit."""
        stencil = int(min(max(1, round(self.wheelbase / spacing)), max(1, self._n // 6)))
        kappa = np.abs(_closed_curvature(pts, stencil))
        lateral = self.friction * GRAVITY
        with np.errstate(divide='ignore'):
            v = np.minimum(np.sqrt(lateral / kappa), self.max_speed)
        out = v.tolist()
        ds = seglen.tolist()
        n = self._n
        for k in range(2 * n - 1, -1, -1):  # twice round, so the wrap sees the first corner
            i = k % n
            limit = math.sqrt(out[(i + 1) % n] ** 2 + lateral * ds[i])
            if limit < out[i]:
                out[i] = limit
        return np.asarray(out) * self.speed_scale

    @property
    def nearest_index(self) -> int:
        """The line point nearest the car at the last ``reset`` or ``act`` (-1 before)."""
        return self._index

    @property
    def target(self) -> tuple[float, float]:
        """The lookahead point the last ``act`` steered towards (world frame)."""
        return self._target

    def lookahead_distance(self, speed: float) -> float:
        """The fixed lookahead, else 0.2 s of travel but at least three wheelbases, so a
        0.33 m F1TENTH car and a 3 m car alike look about a car length ahead when slow and
        further the faster they go; longer lookaheads cut the corners of tight tracks."""
        if self.lookahead is not None:
            ld = self.lookahead
        else:
            ld = max(3.0 * self.wheelbase, 0.2 * abs(speed))
        return min(ld, 0.5 * self.length)

    def reset(self, pose: tuple[float, float, float]) -> None:
        """Start tracking from ``pose`` (base_link x, y, yaw): a search over the whole line."""
        x, y = float(pose[0]), float(pose[1])
        self._full_search(x, y)
        self._last_xy = (x, y)

    def _full_search(self, x: float, y: float) -> None:
        self.full_searches += 1
        d2 = (self.line[:, 0] - x) ** 2 + (self.line[:, 1] - y) ** 2
        self._index = int(np.argmin(d2))

    def _local_search(self, x: float, y: float) -> None:
        """Nearest point by walking along the line from the last one (a step or two per call,
        and never further than a few metres ahead, or a little behind); a full search when
        the car left that window (a reset, a teleport, a very long step)."""
        lx, ly = self._last_xy
        i = self._index
        if i < 0 or not (abs(x - lx) + abs(y - ly) < self._relocate_m):
            self._full_search(x, y)
            return
        n, px, py = self._n, self._x, self._y
        d = (px[i] - x) ** 2 + (py[i] - y) ** 2
        moved = bound = 0
        for step in (1, -1):
            bound = self._ahead if step > 0 else self._behind
            moved = 0
            while moved < bound:
                # compare two points on, so a kink of a noisy line does not stop the walk
                j = (i + step) % n
                dj = (px[j] - x) ** 2 + (py[j] - y) ** 2
                if dj >= d:
                    j = (i + 2 * step) % n
                    dj = (px[j] - x) ** 2 + (py[j] - y) ** 2
                    if dj >= d:
                        break
                    moved += 1
                i, d = j, dj
                moved += 1
            if moved:
                break
        if moved >= bound or d > self._relocate_m * self._relocate_m:
            self._full_search(x, y)
            return
        self._index = i

    def act(self, state: CarState) -> tuple[float, float]:
        """Steer towards the line point one lookahead distance ahead of the car's projection
        on the line; the speed comes from the line's profile."""
        x, y, yaw = state.x, state.y, state.yaw
        self._local_search(x, y)
        self._last_xy = (x, y)
        n = self._n
        i = self._index
        px, py = self._x, self._y
        t = ((x - px[i]) * self._sx[i] + (y - py[i]) * self._sy[i]) / (self._len[i] ** 2)
        if t < 0.0:  # the car is before point i: project on the segment that ends there
            i = (i - 1) % n
            t = ((x - px[i]) * self._sx[i] + (y - py[i]) * self._sy[i]) / (self._len[i] ** 2)
        t = 0.0 if t < 0.0 else min(t, 1.0)
        s_car = self._s[i] + t * self._len[i]

        s_goal = s_car + self.lookahead_distance(state.vx)
        j = bisect_right(self._s_ext, s_goal) - 1
        jm = j % n
        f = (s_goal - self._s_ext[j]) / self._len[jm]
        tx = px[jm] + f * self._sx[jm]
        ty = py[jm] + f * self._sy[jm]
        if self.offset:
            tx += self.offset * self._nx[jm]
            ty += self.offset * self._ny[jm]
        self._target = (tx, ty)

        c, s = math.cos(yaw), math.sin(yaw)
        dx, dy = tx - x, ty - y
        ahead = c * dx + s * dy
        left = c * dy - s * dx
        limit = self.max_steering
        if ahead < 0.0:  # the target is behind (a spin, a wrong-way reset): full lock round
            steer = limit if left >= 0.0 else -limit
        else:  # delta = atan2(2 L sin(alpha), Ld) with sin(alpha) = left / Ld
            steer = math.atan2(2.0 * self.wheelbase * left, ahead * ahead + left * left)
            steer = -limit if steer < -limit else min(steer, limit)

        if self._speeds is not None:
            v = self._speeds[i] + t * (self._speeds[(i + 1) % n] - self._speeds[i])
            speed = min(v * self.speed_scale, self.max_speed)
        else:
            last = j if j >= i else j + n
            speed = min(self._profile_ext[i:last + 2])
        return steer, speed


class FollowTheGap:
    """Reactive driver on a 2D scan: steer to the middle of the widest gap after a safety bubble.

    A gap is a run of beams longer than ``free_range`` (room to drive, five bubble radii by
    default), or than ``gap_fraction`` of the longest beam when that is shorter. Gaps measured
    against the longest beam alone chase narrow slits seen down a far straight and cut
    corners. Only the beams within 90 degrees of straight ahead count, so the car never turns
    round. The speed drops with a narrow gap, a large steering angle and less than
    ``headway`` seconds of free range straight ahead.

    REP-117 values: +inf (nothing within range) is far, -inf (closer than range_min) is an
    obstacle at the sensor. NaN (no valid return) is unknown and treated as closed, never as a
    gap, since a blind direction may hide a wall; but it sets no safety bubble, and a single
    NaN beam takes the shorter of its neighbours' ranges, so sparse dropouts neither split
    gaps nor push the car about.
    """

    def __init__(self, *, angle_min: float, angle_increment: float, max_steering: float,
                 max_speed: float, bubble_radius: float = 0.3, speed_scale: float = 1.0,
                 range_max: float = 30.0, free_range: float | None = None,
                 gap_fraction: float = 0.5, headway: float = 0.5) -> None:
        self.angle_min = float(angle_min)
        self.angle_increment = _positive('angle_increment', angle_increment)
        self.max_steering = _positive('max_steering', max_steering)
        self.max_speed = _positive('max_speed', max_speed)
        self.bubble_radius = _positive('bubble_radius', bubble_radius)
        self.speed_scale = float(speed_scale)
        self.range_max = _positive('range_max', range_max)
        self.gap_fraction = float(gap_fraction)
        if not 0.0 < self.gap_fraction < 1.0:
            msg = f'gap_fraction: expected a number in (0, 1), got {gap_fraction!r}'
            raise ValueError(msg)
        self.headway = _positive('headway', headway)
        self.free_range = (5.0 * self.bubble_radius if free_range is None
                           else _positive('free_range', free_range))
        self._beams = -1
        self._lo = self._hi = self._ahead = 0
        self._edges = np.zeros(2, dtype=bool)
        self._padded = np.zeros(2)

    def _layout(self, beams: int) -> None:
        """Index range of the forward half-plane and of the beam straight ahead, per scan
        length (computed once, as scans keep their length)."""
        inc, a0 = self.angle_increment, self.angle_min
        self._lo = min(beams, max(0, math.ceil((-0.5 * math.pi - a0) / inc - 1e-9)))
        self._hi = min(beams, max(self._lo, math.floor((0.5 * math.pi - a0) / inc + 1e-9) + 1))
        self._ahead = min(beams - 1, max(0, round(-a0 / inc)))
        self._edges = np.zeros(self._hi - self._lo + 2, dtype=bool)
        self._padded = np.zeros(self._hi - self._lo + 2)
        self._beams = beams

    def _widest(self, r: np.ndarray, threshold: float) -> tuple[int, int]:
        """First and one-past-last index of the longest run of ``r > threshold``."""
        edges = self._edges[:r.size + 2]
        edges[1:-1] = r > threshold
        edges[r.size + 1] = False
        change = np.flatnonzero(edges[1:] != edges[:-1])
        starts, ends = change[::2], change[1::2]
        g = int((ends - starts).argmax())
        return int(starts[g]), int(ends[g])

    def act(self, ranges: np.ndarray) -> tuple[float, float]:
        """Steering and speed for one scan (``angle_min + i * angle_increment``, + left)."""
        raw = np.asarray(ranges).reshape(-1)
        if raw.dtype.kind != 'f':
            raw = raw.astype(np.float64)
        if raw.size != self._beams:
            self._layout(raw.size)
        lo, hi = self._lo, self._hi
        if hi <= lo:
            return 0.0, 0.0
        # +inf becomes range_max and -inf 0; NaN survives both and shows in the sum
        padded = self._padded  # a closed beam either side, so every beam has two neighbours
        r = padded[1:-1]
        np.minimum(raw[lo:hi], self.range_max, out=r)
        np.maximum(r, 0.0, out=r)
        probe = r
        if math.isnan(r.sum()):
            idx = np.flatnonzero(np.isnan(r))
            r[idx] = 0.0
            fill = np.minimum(padded[idx], padded[idx + 2])
            r[idx] = fill
            blind = idx[fill == 0.0]
            if blind.size:
                probe = r.copy()
                probe[blind] = np.inf
        ahead = float(r[min(max(self._ahead - lo, 0), r.size - 1)])

        c = int(probe.argmin())
        d = float(probe[c])
        if d < math.inf:  # clear every beam whose ray passes within the bubble of that point
            half = math.asin(self.bubble_radius / d) if d > self.bubble_radius else math.pi / 2
            k = int(half / self.angle_increment)
            r[max(0, c - k):c + k + 1] = 0.0

        top = float(r.max())
        if top <= 0.0:
            return 0.0, 0.0
        start, end = self._widest(r, min(self.gap_fraction * top, self.free_range))
        middle = lo + 0.5 * (start + end - 1)
        angle = self.angle_min + middle * self.angle_increment
        limit = self.max_steering
        steer = -limit if angle < -limit else min(angle, limit)

        width = (end - start) * self.angle_increment
        narrow = min(1.0, max(0.25, width / (0.25 * math.pi)))
        turning = 1.0 - 0.5 * abs(steer) / limit
        speed = self.max_speed * self.speed_scale * narrow * turning
        speed = min(speed, ahead / self.headway)
        return steer, speed


# of the car's top speed: fast enough to race, slow enough to stay on the track
AUTOPILOT_SPEED_SCALE = 0.4


def autopilot(car: CarSpec) -> tuple[Lidar2DSpec, FollowTheGap]:
    """The built-in driver of ``car`` (``autopilot: follow_the_gap``, ``arsim-dataset
    generate``): follow the gap on its first 2D LiDAR, at its steering limit and a share of its
    top speed."""
    scan = next((s for s in car.profile.sensors if isinstance(s, Lidar2DSpec)), None)
    if scan is None:
        msg = f'autopilot: car {car.name!r} ({car.profile.source}) has no 2D LiDAR to drive by'
        raise ArsimError(msg)
    params = car.profile.vehicle.params
    return scan, FollowTheGap(angle_min=scan.angle_min, angle_increment=scan.angle_increment,
                              max_steering=params.steering.max_angle,
                              max_speed=params.longitudinal.max_speed,
                              range_max=scan.range_max, speed_scale=AUTOPILOT_SPEED_SCALE)
