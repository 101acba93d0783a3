"""Formula Student missions in the engine: a mission referee per car, fed each frame with
where the car is, the cones it knocked over and whether it left the course.

The engine gives the go signal itself, ``rules.READY_BEFORE_GO_S`` after the run starts in AS
Ready (as EUFS sim's state machine does); a car that moves before it does not finish. A car
is off course when its whole footprint (all four wheels) is outside the course, once per
excursion; ``rules.LEFT_COURSE_M`` beyond it the car has left the track and the run ends.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import shapely

from arsim_core.engine.collisions import footprint_polygon
from arsim_core.engine.cones import ConeHit
from arsim_core.engine.referee import Event
from arsim_core.engine.world import TrackWorld
from arsim_core.geometry import Footprint
from arsim_core.track.fs import rules
from arsim_core.track.fs.referee import AsState, MissionReferee, MissionResult
from arsim_core.track.polylines import left_normals

MISSION = 'mission'  # an AS state change or a lap
OFF_COURSE = 'off_course'
ENDED = (AsState.FINISHED, AsState.EMERGENCY)


def course_area(world: TrackWorld) -> shapely.Geometry:
    """Where a car is on course: the strip between the track's edges (where it has width)
    and, for a mission with a path of its own (the skidpad's circles), the lane along it."""
    assert world.centerline is not None and world.width_left is not None
    assert world.width_right is not None
    centre = np.asarray(world.centerline, np.float64)
    normals = left_normals(centre)
    left = centre + normals * np.asarray(world.width_left)[:, None]
    right = centre - normals * np.asarray(world.width_right)[:, None]
    nxt = np.roll(np.arange(len(centre)), -1)
    wide = (np.asarray(world.width_left) + np.asarray(world.width_right)) > 0
    quads = np.stack([left, left[nxt], right[nxt], right], axis=1)[wide & wide[nxt]]
    parts = [shapely.unary_union(shapely.polygons(quads).tolist())]
    mission = world.mission
    if mission is not None and mission.path is not None:
        widths = np.asarray(world.width_left)[wide]
        half_lane = float(np.median(widths)) if len(widths) else 1.5
        parts.append(shapely.LineString(mission.path).buffer(half_lane))
    area = shapely.unary_union(parts)
    shapely.prepare(area)
    return area


class MissionControl:
    """Referees every car's run of ``world.mission``, by their ``footprints``. Cone hits
    count as cones down or out (the engine reports them as events itself)."""

    def __init__(self, world: TrackWorld, footprints: Mapping[str, Footprint]) -> None:
        assert world.mission is not None
        self.mission = world.mission
        self.course = course_area(world)
        self.footprints = dict(footprints)
        self.referees: dict[str, MissionReferee] = {}
        self._off: set[str] = set()
        self.restart(self.footprints, 0.0)

    def restart(self, names: Iterable[str], time_s: float) -> None:
        """A fresh run for ``names``, in AS Ready from ``time_s``."""
        for name in names:
            referee = MissionReferee(self.mission)
            referee.ready(time_s)
            self.referees[name] = referee
            self._off.discard(name)

    @property
    def results(self) -> dict[str, MissionResult]:
        return {name: referee.result for name, referee in self.referees.items()}

    def update(self, time_s: float, names: Sequence[str], rows: np.ndarray,
               hits: Sequence[ConeHit] = ()) -> list[Event]:
        """One frame: ``rows`` (n, >= 5) hold each car's x, y, yaw, vx, vy (body frame)."""
        events: list[Event] = []
        hit_by: dict[str, list[ConeHit]] = {}
        for hit in hits:
            hit_by.setdefault(hit.car, []).append(hit)
        for i, name in enumerate(names):
            referee = self.referees.get(name)
            if referee is None:
                continue
            x, y, yaw, vx, vy = (float(v) for v in rows[i, :5])
            events.extend(self._judge(name, referee, time_s, (x, y, yaw), float(np.hypot(vx, vy)),
                                      hit_by.get(name, ())))
        return events

    def _judge(self, name: str, referee: MissionReferee, time_s: float,
               pose: tuple[float, float, float], speed: float,
               hits: Iterable[ConeHit]) -> list[Event]:
        before, laps_before = referee.state, len(referee.result.lap_times)
        events: list[Event] = []
        if referee.state == AsState.READY:
            if speed >= rules.STANDSTILL_SPEED:
                referee.emergency('moved before the go signal')
            elif referee.go(time_s):
                events.append(Event(name, MISSION, f'{name}: go signal, {AsState.DRIVING.value}'))
        for hit in hits:
            referee.cone_down(hit.index)
        events.extend(self._course(name, referee, pose))
        half_length = self.footprints[name].length / 2.0
        x, y, yaw = pose
        referee.update(time_s, x + half_length * np.cos(yaw), y + half_length * np.sin(yaw),
                       speed)
        laps = referee.result.lap_times
        for lap in range(laps_before, len(laps)):
            events.append(Event(name, MISSION, f'{name}: lap {lap + 1} in {laps[lap]:.3f} s'))
        if referee.state != before and referee.state in ENDED:
            table = referee.result.table().replace('\n', '; ')
            events.append(Event(name, MISSION, f'{name}: {table}'))
        return events

    def _course(self, name: str, referee: MissionReferee,
                pose: tuple[float, float, float]) -> list[Event]:
        """Off course (once per excursion), or off the track entirely."""
        footprint = footprint_polygon(pose, self.footprints[name])
        if self.course.intersects(footprint):
            self._off.discard(name)
            return []
        if self.course.distance(footprint) > rules.LEFT_COURSE_M:
            referee.emergency('left the course')
        if name in self._off or referee.state != AsState.DRIVING:
            return []
        self._off.add(name)
        referee.off_course()
        return [Event(name, OFF_COURSE, f'{name} went off course: OC '
                                        f'{referee.result.off_courses}')]


def as_results(results: Mapping[str, MissionResult]) -> str:
    """Every car's result table, one after the other."""
    return '\n'.join(f'[{name}] ' + result.table().replace('\n', '\n    ')
                     for name, result in results.items())
