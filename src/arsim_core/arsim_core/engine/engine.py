"""The simulation engine: one object that owns a whole simulation, without ROS or sockets.

It holds sim time, the cars (their vehicle models, or states handed in from outside), the
referee, the sensor schedule, a renderer and the race metrics. Two ways to drive it:

- in process (``reset``/``drive``/``advance``): the engine integrates its own vehicles and
  renders the due sensors synchronously; the Gymnasium environment works this way;
- with car states from outside (``judge``): dynamics run elsewhere (the ROS dynamics nodes,
  a user's node), the engine referees and measures, and a lockstep loop
  (:mod:`arsim_core.engine.lockstep`) pipelines the renders; the ROS bridge works this way.

Either way the engine also computes the sensors no backend renders (IMU, GNSS, wheel
odometry, and the objects ground truth from every car's state and the track's cones:
:mod:`arsim_core.sensors.computed`), their noise seeded from the run ``seed``:
``advance`` and ``reset`` put them in ``Frame.sensors``, the lockstep loop gets them from
:meth:`Engine.sense` and fans them out with the rendered frames.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from arsim_core.config.scenario import Scenario
from arsim_core.dynamics import Vehicle, VehicleConfig, drive_command_problem
from arsim_core.dynamics.fleet import Fleet
from arsim_core.engine import car_steps
from arsim_core.engine.collisions import CollisionWorld
from arsim_core.engine.cones import CONE_DOWN, ConeField
from arsim_core.engine.missions import MissionControl
from arsim_core.engine.race_event import EventNews, EventState, RaceEvent, race_event
from arsim_core.engine.race_metrics import RaceMetrics
from arsim_core.engine.referee import (
    INVALID_STATE,
    NO_JUDGEMENT,
    Event,
    Judgement,
    Placement,
    Referee,
)
from arsim_core.engine.render import InProcessRenderer, Renderer, RenderPoses, initial_settings
from arsim_core.engine.schedule import SensorSchedule
from arsim_core.engine.start_grid import Lane
from arsim_core.engine.state import (
    AX,
    AY,
    COLUMNS,
    PLANAR,
    CarState,
    StateTable,
    state_rows,
)
from arsim_core.engine.stewards import Stewards, race_control
from arsim_core.engine.world import TrackWorld
from arsim_core.errors import ArsimError
from arsim_core.geometry import Pose2D
from arsim_core.sensors.computed import ComputedSensors
from arsim_core.sensors.latency import SensorLatency

# A state faster than this many times the car's top speed is not a car's: refused.
ABSURD_SPEED_FACTOR = 3.0


class Frame(NamedTuple):
    """What one in-process frame produced: every car's state, the referee's verdict (events
    include resets and model errors) and the sensor data due in this frame by frame name.

    ``sensors`` holds rendered and computed sensors alike: rendered outputs as
    ``<car>/<sensor><suffix>`` (``arsim_core.backend.outputs.frame_name``) and the computed
    IMU, GNSS, wheel odometry and objects as ``<car>/<sensor>``, float64 arrays whose layouts
    ``arsim_core.sensors.computed`` documents (``LAYOUTS``; ``Engine.computed.sensors`` says
    which names are computed). Each is there only in the frames it is due
    (``step % frames_per_sample(rate_hz, frame period) == 0``), or, for a sensor with a
    latency, in the frame it arrives (``arsim_core.sensors.latency``); ``stamps`` then holds
    its capture time, which ``stamp_ns`` gives for every frame name."""

    step: int
    time_ns: int
    states: Mapping[str, CarState]
    judgement: Judgement
    sensors: Mapping[str, np.ndarray]
    stamps: Mapping[str, int] = MappingProxyType({})
    event: EventState | None = None  # the race event's state; None without ``race.event``

    def stamp_ns(self, name: str) -> int:
        """When sensor frame ``name`` was captured [ns of sim time]."""
        return self.stamps.get(name, self.time_ns)


class Engine:
    """One simulation of ``scenario``. ``dynamics=False`` leaves integrating the cars to
    someone else, who hands their states to :meth:`judge` every frame. ``sectors`` replace
    the scenario's ``race.sectors``. ``threads`` > 1 steps a fleet of many cars, and updates
    their race metrics, over numba's threads, for in-process users with cores to spare
    (``_jit.threads_for``)."""

    def __init__(self, scenario: Scenario, renderer: Renderer | None = None, *,
                 dynamics: bool = True, sectors: Sequence[float] | None = None,
                 seed: int = 0, threads: int = 1) -> None:
        self.scenario = scenario
        self.threads = threads
        self.cars = scenario.cars
        self.names = tuple(car.name for car in scenario.cars)
        self._name_index = {name: i for i, name in enumerate(self.names)}
        self.period_ns = scenario.frame_period_ns
        self.step = 0
        self.time_ns = 0
        self.seed = seed
        self.sectors = scenario.race.sectors if sectors is None else tuple(sectors)
        self.referee = Referee(scenario.cars, scenario.collisions)
        self.schedule = SensorSchedule(scenario.cars, self.period_ns)
        self.renderer: Renderer = renderer if renderer is not None else InProcessRenderer()
        self.computed = ComputedSensors(scenario, seed)
        self.latency: SensorLatency[int] = SensorLatency(scenario.cars, seed)
        # An IMU measures the car's acceleration as its dynamics give it (as in ROS, where the
        # dynamics nodes hand their states in with it): read from the vehicles where one is.
        self._imu = any(spec.kind == 'imu' for car in scenario.cars
                        for spec in car.profile.sensors)
        self.configs: dict[str, VehicleConfig] = {
            car.name: car.profile.vehicle for car in scenario.cars}
        self.max_speed = {name: ABSURD_SPEED_FACTOR * max(
            abs(c.params.longitudinal.min_speed), c.params.longitudinal.max_speed)
            for name, c in self.configs.items()}
        self.command_seed = seed  # the run seed the vehicles' command noise draws from
        self.vehicles: dict[str, Vehicle] = {
            car.name: Vehicle(self.configs[car.name], seed, self._name_index[car.name])
            for car in scenario.cars if dynamics and not car.external_dynamics}
        self._group_vehicles()
        self.world: TrackWorld | None = None
        self.ready: Mapping[str, object] = {}  # the backend's and the track's names
        self.metrics: RaceMetrics | None = None
        self.stewards: Stewards | None = None  # race control (docs/race-control.md)
        self.event: RaceEvent | None = None  # the sessions of ``race.event``
        self.race_start_ns = 0  # sim time the metrics count from: the reset or track switch
        self.states: MutableMapping[str, CarState] = {}
        self.pending: dict[str, Placement] = {}  # placements the vehicles take next frame
        self.cones: ConeField | None = None  # the track's placed cones, as objects
        self._cones_shown = 0  # the cones' version the renderer has
        self.missions: MissionControl | None = None
        self._half_extents = {car.name: (car.profile.footprint.length / 2.0,
                                         car.profile.footprint.width / 2.0)
                              for car in scenario.cars}

    # --- the track --------------------------------------------------------------------------
    def load_track(self, world: TrackWorld, timeout_s: float = 60.0) -> tuple[Placement, ...]:
        """Make ``world`` the track, for the referee, the metrics and the renderer (started on
        the first track). Every car goes to its start pose on it: the placements returned."""
        if self.world is None:
            settings = initial_settings(self.scenario, world, self.seed)
            self.ready = self.renderer.start(settings, timeout_s)
        else:
            self.renderer.switch_track(self.step, self.time_ns, world.track_request())
        self.world = world
        self.computed.set_track(world.vertices, world.triangles, world.labels)
        self.referee.set_track(CollisionWorld(world.vertices, world.triangles.astype(np.int64),
                                              world.labels), world.start_pose,
                               staged_front=world.mission is not None, lane=Lane.of(world))
        self.metrics = None
        self.race_start_ns = self.time_ns
        if world.centerline is not None:
            self.metrics = RaceMetrics.for_track(world, self.names, self.sectors, self.threads)
        self.stewards = race_control(self.scenario, self.metrics, world)
        self.event = race_event(self.scenario.race.event, self.metrics, self.stewards,
                                self.scenario.race.stewards,
                                [self.referee.start_pose[name] for name in self.names],
                                [car.profile.footprint.length for car in self.cars])
        self.cones = ConeField(world.cones) if world.cones is not None and len(world.cones) \
            else None
        self._cones_shown = 0
        self.missions = None
        if world.mission is not None and world.centerline is not None:
            self.missions = MissionControl(world, {car.name: car.profile.footprint
                                                   for car in self.cars})
        placements = self.referee.reset_to_start(self.names)
        self._place(placements)
        return placements

    @property
    def start_poses(self) -> dict[str, Pose2D]:
        return self.referee.start_pose

    # --- shared by both ways of driving -----------------------------------------------------
    def judge(self, states: Mapping[str, CarState], events: Iterable[Event] = (),
              trusted: bool = False) -> Judgement:
        """Referee and measure one frame's car states (at ``self.time_ns``).

        A state no car can have (NaN, absurd speed) is refused: the car is sent back to its
        start pose and an event says why, so one bad dynamics node never stops the run. The
        engine's own vehicles are ``trusted``: they raise on divergence instead.
        """
        events = list(events)
        valid: Mapping[str, CarState] = states
        refused: list[str] = []
        if not trusted:
            valid = {}
            for name, state in states.items():
                problem = state.problem(self.max_speed[name])
                if problem is None:
                    valid[name] = state
                else:
                    refused.append(name)
                    events.append(Event(name, INVALID_STATE, f'{name}: refused a state '
                                                             f'({problem}); back to the start'))
        if isinstance(valid, StateTable) and len(valid) == len(self.names):
            self.states = valid.copy()  # every car: no record per car
        else:
            self.states.update(valid)
        rows = state_rows(valid)
        verdict = self.referee.judge(valid, rows[:, :3])
        placements = verdict.placements + self.referee.reset_to_start(refused)
        if self.metrics is not None:
            self.metrics.update((self.time_ns - self.race_start_ns) * 1e-9, valid,
                                verdict.new_contacts, rows[:, :2])
        rulings = () if self.stewards is None else self.stewards.observe(
            (self.time_ns - self.race_start_ns) * 1e-9, valid, rows, verdict.events)
        if self.cones is not None or self.missions is not None:
            events.extend(self._formula_student(list(valid), rows))
        if self.event is not None:
            news = self.event.update((self.time_ns - self.race_start_ns) * 1e-9, self.states,
                                     bool(rulings))
            if news is not None:
                events.extend(news.events)
                placements += news.placements
                self._event_news(news)
        if placements:
            self._place(placements)
        if refused and self.stewards is not None:
            self.stewards.void(refused)
        if not events and verdict is NO_JUDGEMENT and not placements and not rulings:
            return NO_JUDGEMENT
        return Judgement((*events, *verdict.events, *rulings), placements)

    def _event_news(self, news: EventNews) -> None:
        """A new session or a standing start's lights out starts the race clock again; the
        cars the event places start afresh with the referee and the stewards."""
        if news.restart:
            self.race_start_ns = self.time_ns
        for placement in news.placements:
            self.referee.forget(placement.car)
        if news.placements and self.stewards is not None:
            self.stewards.void(p.car for p in news.placements)

    def _formula_student(self, names: list[str], rows: np.ndarray) -> list[Event]:
        """Cones the cars knocked over, and the mission referees' verdicts."""
        hits = []
        if self.cones is not None and names:
            yaw, vx, vy = rows[:, 2], rows[:, 3], rows[:, 4]
            velocities = np.column_stack([vx * np.cos(yaw) - vy * np.sin(yaw),
                                          vx * np.sin(yaw) + vy * np.cos(yaw)])
            extents = np.array([self._half_extents[name] for name in names])
            hits = self.cones.strike(names, rows[:, :3], extents, velocities)
        events = [Event(hit.car, CONE_DOWN, hit.describe()) for hit in hits]
        if self.missions is not None:
            events.extend(self.missions.update((self.time_ns - self.race_start_ns) * 1e-9,
                                               names, rows, hits))
        return events

    def show_cones(self) -> None:
        """Hand the renderer the cones as they stand and lie now, if that changed since it
        last got them: sensors see a knocked cone where it fell (a Track request, so the
        protocol needs nothing new)."""
        if self.cones is None or self.world is None or self.cones.version == self._cones_shown:
            return
        self._cones_shown = self.cones.version
        self.renderer.switch_track(self.step, self.time_ns,
                                   self.world.track_request(self.cones.mesh()))

    def reset_to_start(self, cars: Iterable[str]) -> tuple[Placement, ...]:
        placements = self.referee.reset_to_start(cars)
        self._place(placements)
        if self.stewards is not None:
            self.stewards.void(p.car for p in placements)
        return placements

    def place(self, placements: Iterable[Placement]) -> None:
        """Move cars where the caller says in the next frame, their race records kept (a
        marshal pushing a retired car off the track); the referee and the stewards forget
        where they were, as after a reset to the start."""
        placements = tuple(placements)
        self._place(placements)
        for placement in placements:
            self.referee.forget(placement.car)
        if self.stewards is not None:
            self.stewards.void(p.car for p in placements)

    def _place(self, placements: Iterable[Placement]) -> None:
        """Placements land in the next frame: in-process vehicles take them then, and the
        metrics re-project the cars so the jump is not counted as driving."""
        for placement in placements:
            if placement.car in self.vehicles:
                self.pending[placement.car] = placement
            if self.metrics is not None:
                self.metrics.place(placement.car, placement.pose)

    def render_poses(self, states: Mapping[str, CarState]) -> RenderPoses:
        """x, y, z, roll, pitch, yaw of each car, as the renderers take them."""
        if isinstance(states, StateTable):
            return states.render_poses()
        return {name: state.render_pose() for name, state in states.items()}

    # --- in process -------------------------------------------------------------------------
    def reset(self, poses: Mapping[str, Pose2D] | None = None,
              seed: int | None = None) -> Frame:
        """Time 0: every car at rest at ``poses`` (default: the start poses), metrics
        cleared, sensor noise from ``seed`` (else it runs on), and frame 0 rendered and
        computed."""
        if self.world is None:
            msg = 'load a track before resetting the engine'
            raise ArsimError(msg)
        unknown = sorted(set(poses or {}) - set(self.names))
        if unknown:
            msg = f'unknown car(s) {unknown} in the reset poses; the cars are {list(self.names)}'
            raise ArsimError(msg)
        if seed is not None and isinstance(self.renderer, InProcessRenderer):
            self.renderer.reseed(seed)
        self.computed.reset(seed)
        self.latency.reset(seed)
        if seed is not None:
            self.command_seed = seed
            for name, vehicle in self.vehicles.items():
                vehicle.reseed(seed, self._name_index[name])
        self.step, self.time_ns, self.race_start_ns = 0, 0, 0
        start = {**self.referee.start_pose, **(poses or {})}
        self.referee.restart()
        self.pending.clear()
        for name, vehicle in self.vehicles.items():
            vehicle.reset(*start[name])
        self.states = {name: read_state(v) for name, v in self.vehicles.items()}
        if self.metrics is not None:
            self.metrics.reset({name: s.pose for name, s in self.states.items()})
        if self.stewards is not None:
            self.stewards.reset()
        if self.event is not None:
            self.event.reset()
        if self.cones is not None:
            self.cones.reset()
        if self.missions is not None:
            self.missions.restart(self.names, 0.0)
        judgement = self.referee.judge(self.states)
        self.show_cones()
        # Frame 0 arrives at once, also from late sensors: the car stood there before.
        return Frame(0, 0, dict(self.states), judgement, self._captured(self.states),
                     event=None if self.event is None else self.event.state)

    def restart(self, poses: Mapping[str, Pose2D]) -> Mapping[str, np.ndarray]:
        """Put some in-process cars back at rest at ``poses`` with fresh race records while
        the others run on (independent episodes sharing one engine, as in a vector
        environment); returns their sensors due in this frame, rendered and computed where
        they now are (their computed sensors start afresh, as after ``reset``)."""
        self.latency.forget(poses)
        for name, pose in poses.items():
            self.vehicles[name].reset(*pose)
            self.pending.pop(name, None)
            self.referee.forget(name)
            self.states[name] = read_state(self.vehicles[name], self._imu)
            if self.metrics is not None:
                self.metrics.restart(name, pose)
            if self.stewards is not None:
                self.stewards.restart(name)
        if self.missions is not None:
            self.missions.restart(poses, (self.time_ns - self.race_start_ns) * 1e-9)
        due = [key for key in self.schedule.due(self.step) if key[0] in poses]
        rendered = self._render_sensors(self.states, due) if due else {}
        self.computed.reset(cars=poses)
        computed = self.computed.compute(self.step, self.time_ns,
                                         {name: self.states[name] for name in poses},
                                         accelerations=self._imu, cars=self.states,
                                         placed_cones=self.cones)
        return {**rendered, **computed} if computed else rendered

    def drive(self, car: str, speed: float, steering_angle: float) -> str | None:
        """Ackermann target for ``car``. A command that ``drive_command_problem`` refuses (NaN,
        beyond the car's limits) is ignored, the car keeping its last one, as on the ROS drive
        topics; the reason is returned for the caller to warn with."""
        vehicle = self.vehicles[car]
        problem = drive_command_problem(vehicle.config.params, speed, steering_angle)
        if problem is None:
            vehicle.set_ackermann(speed, steering_angle)
        return problem

    def set_vehicle(self, car: str, config: VehicleConfig) -> None:
        """Give ``car`` a vehicle built from ``config`` (randomised parameters, say); it is at
        rest at the origin until ``reset`` or ``restart`` places it."""
        self.configs[car] = config
        self.vehicles[car] = Vehicle(config, self.command_seed, self._name_index[car])
        self._group_vehicles()

    def _group_vehicles(self) -> None:
        """Fleets of the vehicles that step together in one call, and the others (solo)."""
        self.fleets = Fleet.group(self.vehicles, self.threads)
        grouped = {name for fleet in self.fleets for name in fleet.names}
        self._solo = [name for name in self.vehicles if name not in grouped]
        # where each fleet's cars are in ``names``; None where that is every car, in order
        self._positions = [None if fleet.names == self.names else
                           np.array([self.names.index(n) for n in fleet.names], dtype=np.intp)
                           for fleet in self.fleets]

    def drive_all(self, speed: np.ndarray, steering_angle: np.ndarray,
                  active: np.ndarray) -> None:
        """``drive`` for every car in ``names`` order where ``active``: one call for a grid of
        cars (values must be finite; targets are clipped to each car's limits)."""
        self._command_all(speed, steering_angle, active, direct=False)

    def set_inputs_all(self, steering_rate: np.ndarray, acceleration: np.ndarray,
                       active: np.ndarray) -> None:
        """``Vehicle.set_inputs`` for every car in ``names`` order where ``active``."""
        self._command_all(steering_rate, acceleration, active, direct=True)

    def _command_all(self, first: np.ndarray, second: np.ndarray, active: np.ndarray,
                     direct: bool) -> None:
        for fleet, positions in zip(self.fleets, self._positions, strict=True):
            if positions is None:
                chosen, one, two = active, first, second
            else:
                chosen, one, two = active[positions], first[positions], second[positions]
            if direct:
                fleet.set_inputs(chosen, one, two)
            else:
                fleet.set_ackermann(chosen, one, two)
        for name in self._solo:
            i = self._name_index[name]
            if active[i]:
                vehicle = self.vehicles[name]
                if direct:
                    vehicle.set_inputs(float(first[i]), float(second[i]))
                else:
                    vehicle.set_ackermann(float(first[i]), float(second[i]))

    def advance(self) -> Frame:
        """One frame: integrate every vehicle (or apply its placement), judge, render."""
        self.step += 1
        self.time_ns += self.period_ns
        dt = self.period_ns * 1e-9
        events: list[Event] = []
        pending, self.pending = self.pending, {}
        for name, placement in pending.items():
            events.append(car_steps.place(self.vehicles[name], name, placement.pose,
                                          placement.speed))
        start_pose = self.referee.start_pose
        diverged: list[str] = []
        for fleet in self.fleets:
            for name, error in fleet.advance(dt, pending).items():
                events.extend(car_steps.recover(self.vehicles[name], name, error,
                                                start_pose[name]))
                diverged.append(name)
        for name in self._solo:
            if name not in pending:
                happened = car_steps.advance(self.vehicles[name], name, dt, start_pose[name])
                events.extend(happened)
                if happened:
                    diverged.append(name)
        for name in diverged:
            start = start_pose[name]
            self.referee.forget(name)
            if self.metrics is not None:
                self.metrics.place(name, start)
        if diverged and self.stewards is not None:
            self.stewards.void(diverged)
        states = self._read_states()
        judgement = self.judge(states, events, trusted=True)
        self.show_cones()
        sensors = self._captured(states)
        if not self.latency.active:
            if self.event is not None:
                return Frame(self.step, self.time_ns, states, judgement, sensors,
                             event=self.event.state)
            return Frame(self.step, self.time_ns, states, judgement, sensors)
        captured = dict.fromkeys(sensors, self.time_ns)
        arrived, stamps = self.latency.release(self.time_ns, sensors, captured)
        return Frame(self.step, self.time_ns, states, judgement, arrived, stamps,
                     None if self.event is None else self.event.state)

    def planar_states(self) -> np.ndarray:
        """(cars, 7) float64 rows of x, y, yaw, vx, vy, yaw rate and steering angle of the
        in-process cars in ``names`` order, this frame: ``states`` as one array."""
        states = self.states
        if not (isinstance(states, StateTable) and states.names == tuple(self.vehicles)):
            states = {name: states[name] for name in self.vehicles}
        return state_rows(states)[:, PLANAR]

    def _read_states(self) -> Mapping[str, CarState]:
        """Every in-process vehicle's state, a fleet at a time: as a ``StateTable`` when one
        fleet holds every car, in order; with their accelerations where a car has an IMU."""
        if len(self.fleets) == 1 and self._positions[0] is None:
            planar = self.fleets[0].planar()
            rows = np.zeros((len(self.names), len(COLUMNS)))
            rows[:, :6] = planar[:, :6]  # x, y, yaw, vx, vy, yaw rate
            rows[:, COLUMNS.index('steering_angle')] = planar[:, 6]
            if self._imu:
                rows[:, [AX, AY]] = [self.vehicles[name].body_acceleration
                                     for name in self.names]
            return StateTable(self.names, rows, self._name_index)
        if not self.fleets:
            return {name: read_state(vehicle, self._imu)
                    for name, vehicle in self.vehicles.items()}
        states = {}
        for fleet in self.fleets:
            for name, (x, y, yaw, vx, vy, wz, steering) in zip(
                    fleet.names, fleet.planar().tolist(), strict=True):
                ax, ay = self.vehicles[name].body_acceleration if self._imu else (0.0, 0.0)
                states[name] = CarState(x, y, yaw, vx, vy, wz, ax, ay, steering)
        for name in self._solo:
            states[name] = read_state(self.vehicles[name], self._imu)
        return {name: states[name] for name in self.vehicles}

    def sense(self, states: Mapping[str, CarState],
              accelerations: bool = True) -> dict[str, np.ndarray]:
        """The computed sensors due in this frame (``self.step``, ``self.time_ns``) of the cars
        in ``states``, by frame name; once per frame, in order. ``accelerations``: the states
        carry the cars' ax, ay (a dynamics node's), else the IMU differences them. Objects
        sensors see the cars of ``states`` and the track's cones as they stand or lie now, and
        cones sensors the placed cones."""
        return self.computed.compute(self.step, self.time_ns, states, accelerations,
                                     placed_cones=self.cones)

    def _captured(self, states: Mapping[str, CarState]) -> Mapping[str, np.ndarray]:
        """This frame's rendered and computed sensors, as captured now (the IMU's from the
        accelerations the states carry, read where a car has one)."""
        due = self.schedule.due(self.step)
        rendered = self._render_sensors(self.states, due) if due else {}
        computed = self.sense(states, accelerations=self._imu)
        return {**rendered, **computed} if computed else rendered

    def _render_sensors(self, states: Mapping[str, CarState],
                        due: Sequence[tuple[str, str]]) -> Mapping[str, np.ndarray]:
        renderer = self.renderer
        poses = self.render_poses(states)
        if isinstance(renderer, InProcessRenderer):
            return renderer.render(self.time_ns, poses, due)
        renderer.send(self.step, self.time_ns, poses, due)
        return dict(renderer.receive().arrays)

    def close(self) -> None:
        self.renderer.close()


def read_state(vehicle: Vehicle, accelerations: bool = False) -> CarState:
    """A vehicle's state as the engine passes it on; its acceleration only if asked for (it
    costs a model evaluation, which only an IMU needs)."""
    x, y, yaw, vx, vy, wz, steering = vehicle.planar_state()
    ax, ay = vehicle.body_acceleration if accelerations else (0.0, 0.0)
    return CarState(x, y, yaw, vx, vy, wz, ax, ay, steering_angle=steering)
