"""The built-in drivers of a field of cars, driven from what the engine knows each frame: the
one loop an in-process race (``league.race``) and a ROS run's lockstep (``engine.lockstep``)
both run, so a driver of the zoo drives the same wherever it races.

Each frame the cars' speeds update the ``Field`` (every car along the track, from the race
metrics), and every pilot still racing gets its ``Seen``: its car's state, its latest 2D scan,
the field and its row of the progress table. A driver that fails (``DriverError``: a policy
that raises or answers nonsense) is handed back to the caller, which retires its car.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from arsim_core.config.drivers import LINE_DRIVERS, ZOO_NAMES
from arsim_core.config.scenario import CarSpec
from arsim_core.drivers.field import Field
from arsim_core.drivers.gym_policy import DriverError
from arsim_core.drivers.lines import RacingLine
from arsim_core.drivers.racer import LineDriver
from arsim_core.drivers.seen import Driver, Seen
from arsim_core.drivers.zoo import build_driver
from arsim_core.engine import Engine, Placement, TrackWorld
from arsim_core.engine.race_event import DNF, DSQ, LIGHTS, EventState
from arsim_core.engine.race_metrics import RaceMetrics
from arsim_core.engine.referee import Judgement
from arsim_core.engine.state import CarState
from arsim_core.errors import ConfigError
from arsim_core.track import Track

PARK_OUT_M = 100.0  # cars out of the race are parked this far beyond the track's bounds
PARK_SPACING = 5.0  # [m] between them


class Pilot:
    """One car's built-in driver and where it stands in the race (``index``: the car's row
    in the field)."""

    def __init__(self, name: str, index: int, driver_name: str, driver: Driver) -> None:
        self.name = name
        self.index = index
        self.driver_name = driver_name
        self.driver = driver
        self.scan_key = None if driver.scan is None else f'{name}/{driver.scan.name}'
        self.scan: np.ndarray | None = None
        self.racing = True  # driven; False once out of the session
        self.failed = False  # its driver failed: out of every session that follows too
        self.why = ''

    def fail(self, why: str) -> None:
        self.why, self.failed, self.racing = why, True, False


class Command(NamedTuple):
    """A pilot's Ackermann command: steering angle [rad, + left] and speed [m/s]."""

    pilot: Pilot
    steering: float
    speed: float


class Pilots:
    """The drivers ``drivers`` names (car -> a zoo name or ``module:callable``) of some of
    ``cars``, on ``line``, acting every ``period_s``; ``metrics`` measures every car of the
    field and the track's edges are ``width_left``/``width_right`` per centerline point."""

    def __init__(self, cars: Sequence[CarSpec], drivers: Mapping[str, str], line: RacingLine,
                 metrics: RaceMetrics, width_left: np.ndarray, width_right: np.ndarray,
                 period_s: float) -> None:
        self.metrics = metrics
        self.names = [car.name for car in cars]
        self.field = Field(metrics, [c.profile.footprint.length for c in cars],
                           [c.profile.footprint.width for c in cars], width_left, width_right)
        self.pilots = [Pilot(car.name, index, drivers[car.name],
                             build_driver(car, drivers[car.name], line, index, period_s))
                       for index, car in enumerate(cars) if car.name in drivers]
        self.by_name = {pilot.name: pilot for pilot in self.pilots}

    def start(self, states: Mapping[str, CarState], speeds: np.ndarray) -> None:
        """Each driver from where its car stands (a line driver in the lane of its slot)."""
        self.field.update(speeds)
        for pilot in self.pilots:
            pilot.driver.reset(states[pilot.name])
            if isinstance(pilot.driver, LineDriver):
                pilot.driver.start_lane(float(self.field.lateral[pilot.index]))

    def take_scans(self, sensors: Mapping[str, np.ndarray]) -> None:
        """The latest scans of the drivers that drive by one, from a frame's sensors."""
        for pilot in self.pilots:
            if pilot.scan_key is not None:
                ranges = sensors.get(pilot.scan_key)
                if ranges is not None:
                    pilot.scan = ranges

    def act(self, states: Mapping[str, CarState], speeds: np.ndarray
            ) -> tuple[list[Command], list[Pilot]]:
        """Every racing pilot's command this frame (``speeds``: every car's, in field
        order), and the pilots whose drivers failed (now out: their cars to be retired)."""
        self.field.update(speeds)
        table = self.metrics.progress_table(self.names).tolist()
        commands, failed = [], []
        for pilot in self.pilots:
            if not pilot.racing:
                continue
            seen = Seen(states[pilot.name], pilot.scan, self.field, tuple(table[pilot.index]))
            try:
                steering, speed = pilot.driver.act(seen)
            except DriverError as exc:
                pilot.fail(str(exc))
                failed.append(pilot)
                continue
            commands.append(Command(pilot, steering, speed))
        return commands, failed


def parking_spot(x_max: float, y_max: float, slot: int) -> tuple[float, float, float]:
    """Where a car out of the race waits (x, y, yaw), as marshals push it away: beyond the
    track's bounds (``x_max``, ``y_max``), ``PARK_SPACING`` apart by ``slot``, blocking nobody."""
    return (x_max + PARK_OUT_M + PARK_SPACING * slot, y_max + PARK_OUT_M, 0.0)


#: Makes a piloted car's command go out: car, steering angle [rad], speed [m/s], sim time [ns].
Send = Callable[[str, float, float, int], None]


class LockstepPilots:
    """The built-in drivers of a run whose cars are integrated outside the engine (a ROS run's
    lockstep, ``engine.lockstep.Piloting``). After the engine judges each frame, every car
    whose ``driver`` is a line driver (``LINE_DRIVERS``) gets its command through ``send``,
    as a stack's would go out on the car's drive topic; they hold their slots while a
    standing start's lights are on. Where the zoo races (any car with a built-in driver), a
    car the event retires or disqualifies is parked off the track (``parking_spot``), as in a
    race in process, so no wreck blocks the field.

    The pilots start afresh on each track and whenever the event puts every car on a new
    grid. ``track`` gives the first track's raceline; a track switched to at run time is
    driven along its centerline."""

    def __init__(self, engine: Engine, send: Send, track: Track | None = None) -> None:
        self.engine = engine
        self.send = send
        self.track = track
        self.drivers = {car.name: car.driver for car in engine.cars
                        if car.driver in LINE_DRIVERS}
        self.cars = frozenset(self.drivers)
        self.zoo = any(car.driver in ZOO_NAMES for car in engine.cars)
        self._world: TrackWorld | None = None
        self._pilots: Pilots | None = None
        self._fresh = True
        self._parked: set[str] = set()  # out of this session, off the track

    def frame(self, judgement: Judgement) -> tuple[Placement, ...]:
        """Drive the piloted cars from the frame the engine has just judged; the cars it
        parks, for the caller to send to their dynamics."""
        engine = self.engine
        if engine.world is not self._world:
            self._pilots = self._build()
        pilots = self._pilots
        state = None if engine.event is None else engine.event.state
        parked = self._take_out(state)
        if pilots is None:
            return parked
        states = engine.states
        speeds = np.array([states[name].vx if name in states else 0.0
                           for name in engine.names])
        if self._fresh:
            pilots.start(states, speeds)
            self._fresh = False
        if state is not None and state.flag == LIGHTS:
            commands = [Command(pilot, 0.0, 0.0) for pilot in pilots.pilots if pilot.racing]
        else:
            commands, failed = pilots.act(states, speeds)
            for pilot in failed:
                if engine.event is not None:
                    engine.event.retire(pilot.name, pilot.why)
                parked += (self._park(pilot.name),)
        for command in commands:
            self.send(command.pilot.name, command.steering, command.speed, engine.time_ns)
        everyone = {placement.car for placement in judgement.placements}
        if len(everyone) == len(engine.names):
            self._fresh = True  # a new session's grid: start again from the slots
            self._parked.clear()
            for pilot in pilots.pilots:
                pilot.racing = not pilot.failed
                if pilot.failed and engine.event is not None:
                    engine.event.retire(pilot.name, pilot.why)
                    parked += (self._park(pilot.name),)
        return parked

    def _build(self) -> Pilots | None:
        engine, world = self.engine, self.engine.world
        self._world, self._fresh = world, True
        if world is None or not self.drivers:
            return None
        if engine.metrics is None or world.width_left is None or world.width_right is None:
            msg = (f'{engine.scenario.source}: cars {sorted(self.drivers)} have built-in '
                   f'drivers, which need a track with a centerline; {world.name!r} has none')
            raise ConfigError(msg)
        track = self.track
        line = RacingLine.of(track) if track is not None and track.name == world.name \
            else RacingLine.along(np.asarray(world.centerline))
        return Pilots(engine.cars, self.drivers, line, engine.metrics, world.width_left,
                      world.width_right, engine.period_ns * 1e-9)

    def _take_out(self, state: EventState | None) -> tuple[Placement, ...]:
        """Park every car the event has just retired or disqualified, where the zoo races."""
        if state is None or not self.zoo:
            return ()
        return tuple(self._park(row.car) for row in state.results
                     if row.status in (DNF, DSQ) and row.car not in self._parked)

    def _park(self, car: str) -> Placement:
        """Stop ``car`` if a pilot drives it, and take it off the track."""
        engine, world = self.engine, self.engine.world
        assert world is not None
        pilot = None if self._pilots is None else self._pilots.by_name.get(car)
        if pilot is not None:
            pilot.racing = False
            self.send(car, 0.0, 0.0, engine.time_ns)
        x_max, y_max = np.asarray(world.vertices)[:, :2].max(axis=0)
        placement = Placement(car, parking_spot(float(x_max), float(y_max),
                                                engine.names.index(car)), 0.0)
        engine.place([placement])
        self._parked.add(car)
        return placement
