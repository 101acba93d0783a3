"""The referee: finds collisions each frame, reports them and decides where cars go.

It places cars too (start poses, the reset service, a track switch): only the latest placement
a car receives before a frame counts, so collision responses and placing must come from one
place that knows which wins. It returns what happened instead of acting, so the ROS bridge
turns the result into messages and the in-process engine applies it to its vehicles.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from arsim_core.config.scenario import CarSpec, CollisionSettings
from arsim_core.engine.collisions import BARRIER, CollisionWorld
from arsim_core.engine.start_grid import Lane, start_poses
from arsim_core.engine.state import CarState
from arsim_core.geometry import Pose2D

BOUNCE_RESTITUTION = 0.5  # share of the speed a car keeps, reversed, after a bounce

COLLISION = 'collision'
RESET = 'reset'
MODEL_ERROR = 'model_error'
INVALID_STATE = 'invalid_state'
RULING = 'ruling'  # a steward's verdict (arsim_core.engine.stewards.Ruling)


@dataclass(frozen=True)
class Event:
    """Something a user should know about one car (``arsim_msgs/SimEvent`` on ROS)."""

    car: str
    kind: str
    detail: str
    other: str = ''


@dataclass(frozen=True)
class Placement:
    """Put ``car`` at ``pose`` with speed ``speed`` [m/s] along its heading, in the next frame."""

    car: str
    pose: Pose2D
    speed: float = 0.0


@dataclass(frozen=True)
class Judgement:
    """One frame's verdict: contacts that began in it, and where cars must go."""

    events: tuple[Event, ...]
    placements: tuple[Placement, ...]

    @property
    def new_contacts(self) -> set[str]:
        return {e.car for e in self.events if e.kind == COLLISION}


NO_JUDGEMENT = Judgement((), ())


class Referee:
    def __init__(self, cars: Sequence[CarSpec], collisions: CollisionSettings) -> None:
        self.cars = {car.name: car for car in cars}
        self.response = collisions.response
        self.world: CollisionWorld | None = None
        self.start_pose: dict[str, Pose2D] = {}
        self._free_pose: dict[str, Pose2D] = {}  # last pose of each car without contact
        # the latest frame in which no car touched anything (names, (n, 3) poses), kept as
        # it came: it reaches ``free_pose`` only when someone reads that, not every frame
        self._free_rows: tuple[Sequence[str], np.ndarray] | None = None
        self.in_contact: set[tuple[str, str]] = set()
        self._names = [car.name for car in cars]
        self._half_extents = np.array([[c.profile.footprint.length / 2.0,
                                        c.profile.footprint.width / 2.0] for c in cars])

    def set_track(self, world: CollisionWorld, track_start: Pose2D,
                  staged_front: bool = False, lane: Lane | None = None) -> None:
        """Judge on a new track from now on; its start poses are where resets send cars
        (``race.start_poses``): the grid on ``lane`` (``engine.start_grid``)."""
        self.world = world
        self.restart()
        self.start_pose = start_poses(list(self.cars.values()), track_start, staged_front,
                                      lane)

    @property
    def free_pose(self) -> dict[str, Pose2D]:
        """The last pose of each car in which it touched nothing."""
        self._keep_free_rows()
        return self._free_pose

    def _keep_free_rows(self) -> None:
        if self._free_rows is not None:
            names, poses = self._free_rows
            self._free_rows = None
            self._free_pose.update(zip(names, map(tuple, poses.tolist()), strict=True))

    def restart(self) -> None:
        """Forget every contact and free pose, as at the start of a run."""
        self._free_rows = None
        self._free_pose.clear()
        self.in_contact.clear()

    def judge(self, states: Mapping[str, CarState],
              poses: np.ndarray | None = None) -> Judgement:
        """New contacts, and the placements the collision response asks for. ``poses`` may
        give the states' x, y, yaw as an (n, 3) array in their order, if the caller has it."""
        if self.world is None:
            return NO_JUDGEMENT
        if list(states) == self._names:  # every car, in order: the usual frame
            names = self._names
            extents = self._half_extents
            if poses is None:
                poses = np.array([state.pose for state in states.values()], np.float64)
        else:
            names = [name for name in self._names if name in states]
            extents = self._half_extents[[self._names.index(n) for n in names]]
            poses = np.array([states[name].pose for name in names], np.float64)
        contacts = self.world.contacts_at(names, poses, extents,
                                          car_to_car=self.response != 'ghost')
        if not contacts and not self.in_contact:  # the usual frame: nothing touches
            if self._free_rows is not None and self._free_rows[0] != names:
                self._keep_free_rows()  # a frame of other cars: theirs stay
            self._free_rows = (names, poses.copy())
            return NO_JUDGEMENT
        touching = {(c.car, c.other) for c in contacts}
        events = tuple(Event(car, COLLISION, f'{car} touched '
                                             f'{"a barrier" if other == BARRIER else other}',
                             other) for car, other in sorted(touching - self.in_contact))
        self.in_contact = touching
        hit = {car for car, _ in touching}
        placements = []
        for name in names:
            state = states[name]
            if name not in hit:
                self.free_pose[name] = state.pose
            elif name in self.free_pose:
                speed = -BOUNCE_RESTITUTION * state.vx if self.response == 'bounce' else 0.0
                placements.append(Placement(name, self.free_pose[name], speed))
        return Judgement(events, tuple(placements))

    def forget(self, car: str) -> None:
        """Drop ``car``'s contacts and free pose: it starts afresh elsewhere."""
        self.free_pose.pop(car, None)
        self.in_contact = {pair for pair in self.in_contact if car not in pair}

    def reset_to_start(self, cars: Iterable[str]) -> tuple[Placement, ...]:
        """Send ``cars`` to their start poses on the current track, at rest.

        Their last free poses are forgotten, so a contact seen before the placement lands
        cannot send a car back there: the start pose is the last placement it receives.
        """
        placements = []
        for car in cars:
            self.free_pose.pop(car, None)
            placements.append(Placement(car, self.start_pose[car], 0.0))
        return tuple(placements)
