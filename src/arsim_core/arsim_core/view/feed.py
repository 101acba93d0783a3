"""What a live view shows, taken from the stepping loop without slowing it.

The loop offers every frame it fans out (:meth:`ViewFeed.offer`); that keeps references to the
newest scans and camera images (no copy) and, at most every ``period_s`` of wall time, a
snapshot of the cars and the race. Readers in other threads (the web server) take the newest
snapshot when they are ready for one, so a slow page drops frames and the loop never waits for
it. A simulation kept to a real-time factor sleeps between frames, so its view may refresh
often; one running as fast as it can shares the cores with the page that draws the view, so
then the view refreshes half as often. Race control (the event's flag and timing tower, the
stewards' incidents) comes as a board of its own (:mod:`arsim_core.view.race_board`), made
only where the engine has an event or stewards.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from arsim_core.config.scenario import Scenario
from arsim_core.config.sensors import CameraSpec, Lidar2DSpec
from arsim_core.engine.engine import Engine
from arsim_core.engine.pacing import Pacing
from arsim_core.engine.state import CarState
from arsim_core.engine.world import TrackWorld
from arsim_core.protocol import framing
from arsim_core.view.race_board import BOARD_PERIOD_S, RaceBoard

PERIOD_S = 0.1  # snapshots at up to 10 Hz of wall time: enough to watch, light on the cores
FLAT_OUT_PERIOD_S = 0.2  # while the simulation runs as fast as it can
SCAN_POINTS = 360  # beams shown per scan, at most


@dataclass(frozen=True)
class ScanSample:
    """A 2D scan as rendered, and where its sensor was (world frame) when it was taken."""

    ranges: np.ndarray
    sensor_pose: tuple[float, float, float]
    spec: Lidar2DSpec

    def points(self, limit: int = SCAN_POINTS) -> list[list[float]]:
        """Up to ``limit`` hit points [x, y] in the world frame, to the centimetre."""
        spec, ranges = self.spec, np.asarray(self.ranges, np.float64).ravel()
        every = max(1, -(-ranges.size // limit))
        index = np.arange(0, ranges.size, every)
        r = ranges[index]
        hit = np.isfinite(r) & (r >= spec.range_min) & (r < spec.range_max)
        x, y, yaw = self.sensor_pose
        angles = yaw + spec.angle_min + spec.angle_increment * index[hit]
        xy = np.column_stack((x + r[hit] * np.cos(angles), y + r[hit] * np.sin(angles)))
        return np.round(xy, 2).tolist()


@dataclass
class Snapshot:
    """The view's state at one frame: JSON-ready except the scans, which readers turn into
    points in their own thread."""

    version: int
    time_s: float
    cars: list[dict[str, Any]]
    standings: list[dict[str, Any]]
    scans: dict[str, ScanSample] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {'type': 'frame', 'time': self.time_s, 'cars': self.cars,
                'standings': self.standings,
                'scans': {key: scan.points() for key, scan in self.scans.items()}}


@dataclass(frozen=True)
class RaceSnapshot:
    """The newest ``race`` message (:class:`RaceBoard`), JSON-ready, and its number."""

    version: int
    data: dict[str, Any]


class ViewFeed:
    """The loop's side of a live view: cheap to offer to, safe to read from any thread."""

    def __init__(self, scenario: Scenario, engine: Engine, pacing: Pacing,
                 period_s: float = PERIOD_S, flat_out_period_s: float = FLAT_OUT_PERIOD_S,
                 clock: Callable[[], float] = time.monotonic,
                 board_period_s: float = BOARD_PERIOD_S) -> None:
        self.scenario, self.engine, self.pacing = scenario, engine, pacing
        self.period_s, self.flat_out_period_s, self._clock = period_s, flat_out_period_s, clock
        self.scan_specs = {f'{car.name}/{spec.name}': (car.name, spec)
                           for car in scenario.cars for spec in car.profile.sensors
                           if isinstance(spec, Lidar2DSpec)}
        self.cameras = {f'{car.name}/{spec.name}/rgb': (car.name, spec)
                        for car in scenario.cars for spec in car.profile.sensors
                        if isinstance(spec, CameraSpec) and 'rgb' in spec.outputs}
        self._scans: dict[str, ScanSample] = {}
        self._images: dict[str, np.ndarray] = {}  # camera key -> newest rgb8 image
        self._due = 0.0
        self._snapshot: Snapshot | None = None
        self._board = RaceBoard(board_period_s)
        self._board_world: TrackWorld | None = None  # the track its incidents are on
        self._race: RaceSnapshot | None = None

    # --- the loop's side -----------------------------------------------------------------
    def offer(self, time_ns: int, states: Mapping[str, CarState],
              reply: framing.Message) -> None:
        """A frame the loop fans out: keep its scans and images, snapshot when due."""
        arrays = reply.arrays
        for key, (car, spec) in self.scan_specs.items():
            ranges = arrays.get(key)
            if ranges is not None and car in states:
                self._scans[key] = ScanSample(ranges, _sensor_pose(states[car], spec), spec)
        for key in self.cameras:
            image = arrays.get(key)
            if image is not None:
                self._images[key] = image
        stewards = self.engine.stewards
        if stewards is not None:
            if self.engine.world is not self._board_world:  # a new track: its own incidents
                self._board_world = self.engine.world
                self._board = RaceBoard(self._board.period_s)
            self._board.watch(time_ns, states, stewards)
        now = self._clock()
        if now >= self._due:
            paced = self.pacing.status().real_time_factor > 0.0
            self._due = now + (self.period_s if paced else self.flat_out_period_s)
            self._publish(time_ns, states)
            if self.engine.event is not None or stewards is not None:
                self._publish_race(now)

    def _publish(self, time_ns: int, states: Mapping[str, CarState]) -> None:
        """Replace the snapshot readers see (one reference swap: they need no lock)."""
        metrics = self.engine.metrics
        previous = self._snapshot
        self._snapshot = Snapshot(
            version=1 if previous is None else previous.version + 1, time_s=time_ns / 1e9,
            cars=[{'name': name, 'x': round(s.x, 3), 'y': round(s.y, 3),
                   'yaw': round(s.yaw, 4), 'speed': round(s.vx, 2),
                   'steering': round(s.steering_angle, 3)} for name, s in states.items()],
            standings=[_standing(st._asdict()) for st in metrics.standings()]
            if metrics is not None else [],
            scans=dict(self._scans))

    def _publish_race(self, now: float) -> None:
        """Replace the race message readers see, when the board has a new one."""
        event, metrics = self.engine.event, self.engine.metrics
        data = self._board.board(now, None if event is None else event.state,
                                 metrics.standings if metrics is not None else list)
        if data is not None:
            previous = self._race
            self._race = RaceSnapshot(1 if previous is None else previous.version + 1, data)

    # --- readers (any thread) ----------------------------------------------------------------
    def latest(self) -> Snapshot | None:
        return self._snapshot

    def race(self) -> RaceSnapshot | None:
        """The newest race message; None in a simulation without an event or stewards."""
        return self._race

    def image(self, key: str) -> np.ndarray | None:
        return self._images.get(key)

    def world(self) -> TrackWorld | None:
        return self.engine.world


def _sensor_pose(state: CarState, spec: Lidar2DSpec) -> tuple[float, float, float]:
    c, s = math.cos(state.yaw), math.sin(state.yaw)
    mount = spec.mount
    return (state.x + c * mount.x - s * mount.y, state.y + s * mount.x + c * mount.y,
            state.yaw + mount.yaw)


STANDING_FIELDS = ('name', 'position', 'laps', 'lap_time', 'last_lap', 'best_lap',
                   'lap_fraction', 'off_track', 'collisions')


def _standing(status: Mapping[str, Any]) -> dict[str, Any]:
    return {key: round(v, 3) if isinstance(v, float) else v
            for key, v in status.items() if key in STANDING_FIELDS}
