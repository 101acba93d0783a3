"""The mission referee of a Formula Student driverless event: the autonomous system's states,
the go signal, run time from the timekeeping lines, laps, cones down or out and off-course
penalties, the DNF conditions and the result.

Plain state in, plain events out: whoever runs the simulation (the engine, a test, a
notebook) calls ``update`` with the car's position and speed at each frame, ``cone_down`` when
a cone falls and ``off_course`` when the car leaves the track; the referee decides. Numbers
come from ``rules``.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

import numpy as np
from shapely.geometry import Point, Polygon

from arsim_core.track.fs import rules
from arsim_core.track.fs.mission import Mission


class AsState(enum.Enum):
    """The autonomous system's states (FS Rules T14.8)."""

    OFF = 'AS Off'
    READY = 'AS Ready'
    DRIVING = 'AS Driving'
    FINISHED = 'AS Finished'
    EMERGENCY = 'AS Emergency'


@dataclass
class MissionResult:
    """How a run went: the state it ended in, its laps and their times, the penalties, and
    why it did not finish (``dnf``, empty if it did)."""

    kind: str
    state: AsState
    lap_times: list[float] = field(default_factory=list)
    cones_down: int = 0
    off_courses: int = 0
    cone_penalty_s: float = rules.CONE_DOWN_PENALTY_S
    dnf: str = ''
    timed_laps: tuple[int, ...] = ()

    @property
    def run_time(self) -> float | None:
        """The run's time before penalties: the skidpad's the mean of its timed laps, the
        others' the sum of all laps; None until the laps are done."""
        if not self.lap_times:
            return None
        if self.kind == 'skidpad':
            timed = [self.lap_times[i - 1] for i in self.timed_laps if i <= len(self.lap_times)]
            return sum(timed) / len(timed) if len(timed) == len(self.timed_laps) else None
        return sum(self.lap_times)

    @property
    def penalty_s(self) -> float:
        return self.cones_down * self.cone_penalty_s + self.off_courses * rules.OFF_COURSE_PENALTY_S

    @property
    def total_time(self) -> float | None:
        """Run time plus penalties; None for a run that did not finish."""
        run = self.run_time
        return None if self.dnf or run is None or self.state != AsState.FINISHED \
            else run + self.penalty_s

    def table(self) -> str:
        """The result as a few printed lines."""
        laps = ', '.join(f'{t:.3f}' for t in self.lap_times) or '-'
        run = self.run_time
        total = self.total_time
        return '\n'.join([
            f'{self.kind}: {self.state.value}' + (f', DNF ({self.dnf})' if self.dnf else ''),
            f'laps (s): {laps}',
            f'run time (s): {"-" if run is None else f"{run:.3f}"}',
            f'penalties: {self.cones_down} DOO x {self.cone_penalty_s:g} s, '
            f'{self.off_courses} OC x {rules.OFF_COURSE_PENALTY_S:g} s = {self.penalty_s:g} s',
            f'total (s): {"DNF" if total is None else f"{total:.3f}"}'])


def _crossed(a: tuple[float, float], b: tuple[float, float], line: np.ndarray) -> float | None:
    """Where along the step a -> b the car crosses the segment ``line`` (2 x 2, its right
    end first as the car sees it) forwards, as a fraction in [0, 1], or None: a car that
    backs over a line does not cross it."""
    (px, py), (qx, qy) = a, b
    (ux, uy), (vx, vy) = line.tolist()
    rx, ry, sx, sy = qx - px, qy - py, vx - ux, vy - uy
    denominator = rx * sy - ry * sx
    if denominator <= 0.0:  # parallel, or from the line's left side to its right
        return None
    t = ((ux - px) * sy - (uy - py) * sx) / denominator
    u = ((ux - px) * ry - (uy - py) * rx) / denominator
    return t if 0.0 <= t <= 1.0 and 0.0 <= u <= 1.0 else None


class MissionReferee:
    """Referees one car's run of ``mission``."""

    def __init__(self, mission: Mission) -> None:
        self.mission = mission
        self.state = AsState.OFF
        self.result = MissionResult(
            mission.kind, self.state, timed_laps=mission.timed_laps,
            cone_penalty_s=rules.SKIDPAD_CONE_DOWN_PENALTY_S if mission.kind == 'skidpad'
            else rules.CONE_DOWN_PENALTY_S)
        self._stop_zone = Polygon(mission.stop_zone)
        self._ready_at: float | None = None
        self._last: tuple[float, float, float] | None = None  # time, x, y
        self._started_at: float | None = None  # crossing of the start line
        self._lap_started_at: float | None = None
        self._still_since: float | None = None
        self._downed: set[int] = set()

    # --- the autonomous system -------------------------------------------------------------
    def ready(self, time_s: float) -> None:
        """AS Off -> AS Ready (mission selected, the car on the start)."""
        if self.state == AsState.OFF:
            self._set(AsState.READY)
            self._ready_at = time_s

    def go(self, time_s: float) -> bool:
        """The go signal: AS Ready -> AS Driving, taken only after READY_BEFORE_GO_S in AS
        Ready; whether it was taken."""
        if self.state != AsState.READY or self._ready_at is None \
                or time_s - self._ready_at < rules.READY_BEFORE_GO_S:
            return False
        self._set(AsState.DRIVING)
        return True

    def emergency(self, reason: str) -> None:
        """AS Emergency: the run ends and does not finish."""
        if self.state not in (AsState.FINISHED, AsState.EMERGENCY):
            self._set(AsState.EMERGENCY)
            self.result.dnf = self.result.dnf or reason

    # --- what happens on track -------------------------------------------------------------
    def cone_down(self, cone: int) -> None:
        """A cone down or out; each cone counts once, and not after the run has ended."""
        if self.state == AsState.DRIVING and cone not in self._downed:
            self._downed.add(cone)
            self.result.cones_down += 1

    def off_course(self) -> None:
        """All four wheels left the track once more."""
        if self.state == AsState.DRIVING:
            self.result.off_courses += 1

    def update(self, time_s: float, x: float, y: float, speed: float) -> None:
        """The car's foremost point at ``(x, y)``, moving at ``speed``, at ``time_s``: timing
        lines (crossed by the foremost part, as the rules time it), laps, standstill."""
        if not all(math.isfinite(v) for v in (time_s, x, y, speed)):
            return  # a bad sample decides nothing
        last, self._last = self._last, (time_s, x, y)
        if self.state != AsState.DRIVING:
            return
        if last is not None:
            self._timing(last, (time_s, x, y))
        self._standstill(time_s, x, y, speed)

    def _timing(self, last: tuple[float, float, float], now: tuple[float, float, float]) -> None:
        mission, a, b = self.mission, last[1:], now[1:]
        laps = self.result.lap_times
        if self._started_at is None:
            fraction = _crossed(a, b, mission.start_line)
            if fraction is not None:
                self._started_at = self._lap_started_at = last[0] + fraction * (now[0] - last[0])
            return
        if len(laps) >= mission.laps:
            return
        fraction = _crossed(a, b, mission.finish_line)
        if fraction is not None and self._lap_started_at is not None:
            at = last[0] + fraction * (now[0] - last[0])
            if at > self._lap_started_at:
                laps.append(at - self._lap_started_at)
                self._lap_started_at = at

    def _standstill(self, time_s: float, x: float, y: float, speed: float) -> None:
        if speed >= rules.STANDSTILL_SPEED:
            self._still_since = None
            return
        if self._still_since is None:
            self._still_since = time_s
        done = len(self.result.lap_times) >= self.mission.laps
        if done and self._stop_zone.covers(Point(x, y)):
            self._set(AsState.FINISHED)
        elif time_s - self._still_since >= rules.STOPPED_IN_COURSE_S:
            self.emergency('stopped outside the stop zone' if done else 'stopped in the course')

    def _set(self, state: AsState) -> None:
        self.state = self.result.state = state
