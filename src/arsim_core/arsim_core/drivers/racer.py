"""The line drivers of the zoo: pure pursuit on the racing line at a share of its speed
profile, with the racecraft their skill allows (docs/race-control.md, "The driver zoo").

Every line driver, each frame:

1. **Keeps its distance.** The nearest car ahead in the band of lateral offsets it drives
   through (where it is and where it is heading, its own width added) caps its speed at
   sqrt(v_ahead^2 + 2 b (gap - margin)), b half the tyres' grip, so it can always brake to
   the speed of that car before reaching it, and at (gap - margin) / ``HEADWAY_S``, so it
   can stop behind a car that stops dead (a contact stops a car where it is).
2. **Overtakes** (club, expert, racer; every driver passes a car that has stopped): a car
   ahead in its lane within ``PASS_REACH_S`` of travel (at least four car lengths) that has
   held it up (kept it ``CLOSING_MIN`` of its top speed below its pace) for ``HELD_S`` is
   passed on the side with more room beside it, if that room is at least the driver's
   width, its ``CLEARANCE`` and a margin, and no other car is there: it aims its clearance
   beside the other car's flank until it is a fifth of a length clear ahead (or gives up
   after ``PASS_GIVE_UP_S``, or when the other car pulls away), then drifts back to the line.
3. **Defends** (racer): with a car within one of its lengths behind, not yet alongside and
   at least as fast, and a bend tighter than ``DEFEND_CURVATURE`` per wheelbase within one
   second of travel, it moves once towards the inside of that bend, ``DEFEND_SHARE`` of the
   way from the centerline to the inside edge, and holds that until the bend is passed or the
   car behind falls back. One move, never back across: weaving is what the stewards penalise
   (``side_by_side``, ``forcing_off_track``).

Lateral moves off the line and back are rate-limited to ``LATERAL_RATE`` of the car's width
per second and kept a margin and a half inside the track's edges, and a driver never moves
over onto a car alongside it (within ``CLEARANCE``): it holds the lane it aimed at (its
offset from the centerline) instead. A driver stuck against a wall or a car (asked to drive,
standing still for a second) backs out, steering the other way (``drivers.unstick``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from arsim_core.config.sensors import Lidar2DSpec
from arsim_core.drivers.field import Field
from arsim_core.drivers.lines import RacingLine
from arsim_core.drivers.seen import Seen
from arsim_core.drivers.unstick import STOPPED, Unstick
from arsim_core.engine.state import CarState
from arsim_core.policies import GRAVITY, PurePursuit

PASS_REACH_S = 1.0  # look this far ahead for a car to pass [s of travel]
CLOSING_MIN = 0.03  # held up: kept this much below the own pace [share of top speed]
HELD_S = 1.0  # pass a car that has held it up this long
PASS_GIVE_UP_S = 6.0
DEFEND_CURVATURE = 0.05  # a bend worth defending: curvature times wheelbase
DEFEND_SHARE = 0.6
LATERAL_RATE = 2.0  # widths per second
MARGIN = 0.5  # of the car's width: to the car ahead when stopped, and to the track's edges
CLEARANCE = 1.0  # of the car's width, kept to a car alongside (a yawed car is wider, and a
                 # car moving across overshoots its lane)
HEADWAY_S = 0.3  # the least time gap to the car ahead: it may stop dead (a contact)


@dataclass(frozen=True)
class Skill:
    """How a line driver races: ``pace`` is its share of the line's speed profile."""

    pace: float
    overtakes: bool
    defends: bool


class LineDriver:
    """One car's line driver of ``skill`` on ``line``; ``index`` is its row in the field."""

    scan: Lidar2DSpec | None = None  # it drives by the field, not by a sensor

    def __init__(self, line: RacingLine, pursuit: PurePursuit, skill: Skill, index: int, *,
                 length: float, width: float, friction: float, period_s: float) -> None:
        self.line = line
        self.pursuit = pursuit
        self.skill = skill
        self.index = index
        self.length = length
        self.width = width
        self.margin = MARGIN * width
        self.clearance = CLEARANCE * width
        self.braking = 0.5 * friction * GRAVITY
        self.max_offset_step = LATERAL_RATE * width * period_s
        self.period_s = period_s
        self.top_speed = pursuit.max_speed
        spacing = pursuit.length / len(pursuit.line)
        self._points_per_m = 1.0 / spacing
        self._bend_min = DEFEND_CURVATURE / pursuit.wheelbase
        self._passing = -1  # the car being passed
        self._side = 0.0  # and on which side (+1 left, -1 right)
        self._passing_s = 0.0
        self._defending = 0.0  # the side defended (+1 left, -1 right), 0: none
        self._pace = 0.0  # the line's speed here, at this driver's pace, last frame
        self._aim = 0.0  # the lateral offset it aimed at last frame [m left of the centerline]
        self._held_s, self._held_by = 0.0, -1  # how long which car ahead has held it up
        self.unstick = Unstick(period_s, self.top_speed)

    def reset(self, state: CarState) -> None:
        """A new race from ``state``: start in the lane the car stands in."""
        self.pursuit.reset(state.pose)
        self._passing, self._passing_s, self._defending = -1, 0.0, 0.0
        self.unstick.reset()
        self._held_s, self._held_by = 0.0, -1
        self.pursuit.offset = 0.0
        self._pace = 0.0
        self._aim = float(self.line.lateral[max(self.pursuit.nearest_index, 0)])

    def start_lane(self, lateral: float) -> None:
        """Aim at the car's own grid lane (``lateral`` left of the centerline) first, so cars
        side by side on the grid do not converge onto the line into each other."""
        self._aim = lateral
        self.pursuit.offset = lateral - self._line_lateral(0.0)

    def act(self, seen: Seen) -> tuple[float, float]:
        """Steering and speed for this frame."""
        state, field = seen.state, seen.field
        i = self.index
        here = float(field.lateral[i])
        target = self._plan(field, state, here)
        line_lateral = self._line_lateral(state.vx)
        wanted = 0.0 if target is None else target - line_lateral
        step = wanted - self.pursuit.offset
        limit = self.max_offset_step
        offset = self.pursuit.offset + (-limit if step < -limit else min(step, limit))
        left_edge, right_edge = field.edges(i)
        inner = 0.5 * self.width + 1.5 * self.margin
        aim = min(max(line_lateral + offset, -right_edge + inner), left_edge - inner)
        if self._blocked(field, here, aim):
            aim = self._aim  # hold the lane it aimed at: a car alongside is in the way
        self._aim = aim
        self.pursuit.offset = aim - line_lateral
        steer, speed = self.pursuit.act(state)
        self._pace = speed
        low, high = min(here, aim), max(here, aim)
        reach = max(3.0 * self.length,
                    state.vx * state.vx / (2.0 * self.braking) + 2.0 * self.length)
        ahead = field.ahead(i, low, high, reach)
        if ahead is not None:
            room = ahead.gap - self.margin
            v_ahead = max(ahead.speed, 0.0)
            cap = min(math.sqrt(v_ahead * v_ahead + 2.0 * self.braking * room),
                      room / HEADWAY_S) if room > 0.0 else 0.0
            if cap < speed - CLOSING_MIN * self.top_speed:  # held up by it
                self._held_s = self._held_s + self.period_s if self._held_by == ahead.car \
                    else self.period_s
                self._held_by = ahead.car
            else:
                self._held_s = 0.0
            speed = min(speed, cap)
        else:
            self._held_s = 0.0
        return self.unstick.command(steer, speed, state.vx, speed > STOPPED)

    def _line_lateral(self, speed: float) -> float:
        """Where the line lies, left of the centerline, one lookahead ahead of the car: where
        the pursuit's target point is, which ``offset`` moves."""
        ahead = self.pursuit.lookahead_distance(speed) * self._points_per_m
        k = (max(self.pursuit.nearest_index, 0) + round(ahead)) % len(self.line.lateral)
        return float(self.line.lateral[k])

    def _blocked(self, field: Field, here: float, there: float) -> bool:
        """Whether moving from ``here`` to ``there`` runs into a car alongside."""
        return field.beside(self.index, min(here, there), max(here, there),
                            0.9 * self.clearance)

    # --- racecraft --------------------------------------------------------------------------
    def _plan(self, field: Field, state: CarState, here: float) -> float | None:
        """The lateral offset to aim at this frame (None: the line)."""
        if self._passing >= 0:
            kept = self._keep_passing(field)
            if kept is not None:
                return kept
        reach = max(4.0 * self.length, PASS_REACH_S * max(state.vx, self._pace))
        ahead = field.ahead(self.index, here, here, reach)
        if ahead is not None:
            stopped = ahead.speed < STOPPED
            held = self._held_s > HELD_S and self._held_by == ahead.car
            if stopped or (self.skill.overtakes and held):
                side = self._room(field, ahead.car, ahead.lateral, ahead.width)
                if side:
                    self._passing, self._passing_s, self._defending = ahead.car, 0.0, 0.0
                    self._side = side
                    return self._beside(field, ahead.car)
        if self.skill.defends:
            return self._defend(field, state)
        return self._target_none()

    def _target_none(self) -> float | None:
        """The line, no defence."""
        self._defending = 0.0
        return None

    def _keep_passing(self, field: Field) -> float | None:
        j = self._passing
        self._passing_s += self.period_s
        gap = field.gap(self.index, j)
        done = gap < -1.2 * self.length  # a fifth of a length clear ahead of it
        lost = gap > 8.0 * self.length or self._passing_s > PASS_GIVE_UP_S
        if done or lost:
            self._passing = -1
            return None
        return self._beside(field, j)

    def _room(self, field: Field, j: int, lateral: float, width: float) -> float:
        """The side (+1 left, -1 right) with room to pass car ``j``, 0: none."""
        left_edge, right_edge = field.edges(j)
        needed = self.width + self.clearance + self.margin
        left = left_edge - (lateral + 0.5 * width)
        right = right_edge + (lateral - 0.5 * width)
        best = 1.0 if left >= right else -1.0
        if max(left, right) < needed:
            return 0.0
        aim = lateral + best * (0.5 * (width + self.width) + self.clearance)
        if field.beside(self.index, aim - 0.5 * self.width, aim + 0.5 * self.width):
            return 0.0
        return best

    def _beside(self, field: Field, j: int) -> float:
        """Where to be to pass car ``j`` on ``self._side``: its clearance off its flank, within
        the track."""
        side = self._side
        aim = float(field.lateral[j]) + side * (
            0.5 * (float(field.widths[j]) + self.width) + self.clearance)
        left_edge, right_edge = field.edges(self.index)
        inner = 0.5 * (self.width + self.margin)
        return min(max(aim, -right_edge + inner), left_edge - inner)

    def _defend(self, field: Field, state: CarState) -> float | None:
        behind = field.behind(self.index, self.length)
        speed = float(field.speed[self.index])
        if behind is None or behind.gap < 0.0 or behind.speed < speed - 0.1:
            return self._target_none()
        bend = self._bend_ahead(max(state.vx, 1.0))
        if abs(bend) < self._bend_min:
            return self._target_none()
        side = 1.0 if bend > 0.0 else -1.0
        if self._defending and side != self._defending:
            return self._target_none()  # one move: never back across
        self._defending = side
        left_edge, right_edge = field.edges(self.index)
        edge = left_edge if side > 0 else right_edge
        return side * DEFEND_SHARE * max(0.0, edge - 0.5 * self.width - self.margin)

    def _bend_ahead(self, speed: float) -> float:
        """The tightest signed curvature of the line within one second of travel ahead."""
        n = len(self.line.curvature)
        first = max(self.pursuit.nearest_index, 0)
        count = max(2, min(n, round(speed * self._points_per_m)))
        window = np.take(self.line.curvature, np.arange(first, first + count), mode='wrap')
        return float(window[int(np.argmax(np.abs(window)))])
