"""Domain randomisation, declared in YAML (a file or a mapping): drawn on every reset of the
Gymnasium environment, and once per run of ``arsim-dataset generate``::

    friction: [0.8, 1.1]          # tyre friction mu, uniform in the range
    mass_scale: [0.9, 1.1]        # mass and yaw inertia, scaled together
    max_acceleration: [7.0, 9.51] # motor limit [m/s^2]
    max_steering: [0.35, 0.42]    # steering limit [rad], both sides
    max_steering_rate: [2.5, 3.2] # [rad/s]
    max_speed: [8.0, 20.0]        # [m/s]
    steering_dead_time: [0.0, 0.03]  # actuator dead times and lags [s] (car profile: Actuators)
    steering_lag: [0.0, 0.05]
    drive_dead_time: [0.0, 0.03]
    drive_lag: [0.0, 0.1]
    steering_noise_std: [0.0, 0.01] # command noise [rad]; drive: in the command's unit
    drive_noise_std: [0.0, 0.1]
    scan_noise_std: [0.0, 0.02]   # [m], every car's 2D LiDAR
    scan_dropout: [0.0, 0.01]     # share of beams dropped (NaN)
    scan_latency: [0.0, 0.05]     # [s] from capture to arrival (sensor latency, docs/sensors.md)
    start: {along: [0.0, 2.0], lateral: [-0.2, 0.2], yaw: [-0.1, 0.1]}  # [m], [m], [rad]
    opponents: [0, 3]             # number of other cars, whole numbers, inclusive
    tracks: [arsim_ring, /path/to/track]           # one picked per reset, or
    random_track: {seeds: [0, 1000]}               # the random track generator
    conditions:                   # light and weather, as a scenario's conditions section
      time: [2026-06-21T06:00:00, 2026-06-21T22:00:00]  # (docs/scenes.md); in process only
      latitude_deg: 48.26
      longitude_deg: 11.67
      cloud_cover: [0.0, 1.0]
      fog: {visibility_m: [60, 2000]}
      rain: {rate_mm_h: [0, 10]}

Every value is drawn from the environment's seeded generator, so ``reset(seed=s)`` gives the
same episode every time. Vehicle limits apply to every car.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from arsim_core.config.conditions import ConditionsRanges, light_and_weather, load_conditions
from arsim_core.config.sensors import MAX_SENSOR_LATENCY_S, Lidar2DSpec
from arsim_core.dynamics import VehicleConfig
from arsim_core.dynamics.actuators import MAX_ACTUATOR_TIME_S, MAX_COMMAND_NOISE
from arsim_core.engine.engine import Engine
from arsim_core.geometry import Pose2D
from arsim_core.track import Track, track_from_centerline
from arsim_core.track.loaders import TrackOptions
from arsim_core.yaml_fields import Section, load_section

ACTUATOR_TIME_KEYS = ('steering_dead_time', 'steering_lag', 'drive_dead_time', 'drive_lag')
ACTUATOR_NOISE_KEYS = ('steering_noise_std', 'drive_noise_std')
ACTUATOR_KEYS = (*ACTUATOR_TIME_KEYS, *ACTUATOR_NOISE_KEYS)
VEHICLE_KEYS = ('friction', 'mass_scale', 'max_acceleration', 'max_steering',
                'max_steering_rate', 'max_speed', *ACTUATOR_KEYS)
RANGE_KEYS = (*VEHICLE_KEYS, 'scan_noise_std', 'scan_dropout', 'scan_latency')
KEYS = (*RANGE_KEYS, 'start', 'opponents', 'tracks', 'random_track', 'conditions')
#: Physical limits of each range: lowest, highest, and whether the lowest is excluded.
LIMITS = {'friction': (0.0, math.inf, True), 'mass_scale': (0.0, math.inf, True),
          'max_acceleration': (0.0, math.inf, True), 'max_steering': (0.0, math.pi / 2, True),
          'max_steering_rate': (0.0, math.inf, True), 'max_speed': (0.0, math.inf, True),
          'scan_noise_std': (0.0, math.inf, False), 'scan_dropout': (0.0, 1.0, False),
          'scan_latency': (0.0, MAX_SENSOR_LATENCY_S, False),
          **{key: (0.0, MAX_ACTUATOR_TIME_S, False) for key in ACTUATOR_TIME_KEYS},
          **{key: (0.0, MAX_COMMAND_NOISE, False) for key in ACTUATOR_NOISE_KEYS}}
Range = tuple[float, float]


@dataclass(frozen=True)
class Draw:
    """The values drawn for one episode (None: not randomised)."""

    values: Mapping[str, float]
    start: Mapping[str, float]  # along, lateral, yaw offsets for every car
    opponents: int | None
    track: str | Track | None
    conditions: ConditionsRanges | None = None  # drawn with conditions_seed when applied
    conditions_seed: int = 0

    def rebuild(self, built_track: str | None, cars: int) -> bool:
        """Whether the race must be built anew: another track than the one it was built from
        (a name or path as given, a generated track's name), or another number of cars."""
        track = self.track.name if isinstance(self.track, Track) else self.track
        return track is not None and track != built_track or \
            self.opponents is not None and self.opponents + 1 != cars

    @property
    def num_cars(self) -> int | None:
        return None if self.opponents is None else self.opponents + 1

    def apply(self, engine: Engine, base: Mapping[str, VehicleConfig],
              cars: Collection[str] | None = None) -> None:
        """Vehicle parameters and sensor noise of ``cars`` (default: every car), from the
        profile's values."""
        vehicle_keys = set(VEHICLE_KEYS) & set(self.values)
        chosen = engine.vehicles if cars is None else cars
        for name in chosen:
            if vehicle_keys:
                engine.set_vehicle(name, _vary(base[name], self.values))
            if 'scan_latency' in self.values:
                for spec in engine.scenario.car(name).profile.sensors:
                    if isinstance(spec, Lidar2DSpec):
                        engine.latency.set_latency(name, spec.name, self.values['scan_latency'])
        backend = getattr(engine.renderer, 'backend', None)
        if backend is None:
            return
        if self.conditions is not None:  # the scenario's appearance under these conditions
            backend.set_conditions(*light_and_weather(engine.scenario.appearance,
                                                      self.conditions, self.conditions_seed))
        for (car, _), sensor in backend.sensors.items():
            if sensor.kind != 'lidar2d' or car not in chosen:
                continue
            if 'scan_noise_std' in self.values:
                sensor.model.noise_std = self.values['scan_noise_std']
            if 'scan_dropout' in self.values:
                sensor.model.dropout = self.values['scan_dropout']

    def start_poses(self, grid: Mapping[str, Pose2D], track: Track) -> dict[str, Pose2D]:
        """The grid moved along and across the track and turned by the drawn offsets."""
        if not self.start:
            return dict(grid)
        along, lateral, dyaw = (self.start.get(k, 0.0) for k in ('along', 'lateral', 'yaw'))
        poses = {}
        for name, (x, y, yaw) in grid.items():
            c, s = math.cos(yaw), math.sin(yaw)
            poses[name] = (x + along * c - lateral * s, y + along * s + lateral * c, yaw + dyaw)
        return poses


NOTHING = Draw({}, {}, None, None)


def _vary(config: VehicleConfig, values: Mapping[str, float]) -> VehicleConfig:
    p = config.params
    body, tyre, steering, longitudinal = p.body, p.tyre, p.steering, p.longitudinal
    if 'mass_scale' in values:
        k = values['mass_scale']
        body = dataclasses.replace(body, mass=body.mass * k, yaw_inertia=body.yaw_inertia * k)
    if 'friction' in values:
        tyre = dataclasses.replace(tyre, friction=values['friction'])
    if 'max_steering' in values:
        a = values['max_steering']
        steering = dataclasses.replace(steering, min_angle=-a, max_angle=a)
    if 'max_steering_rate' in values:
        r = values['max_steering_rate']
        steering = dataclasses.replace(steering, min_rate=-r, max_rate=r)
    if 'max_acceleration' in values:
        longitudinal = dataclasses.replace(longitudinal,
                                           max_acceleration=values['max_acceleration'])
    if 'max_speed' in values:
        longitudinal = dataclasses.replace(longitudinal, max_speed=values['max_speed'])
    params = dataclasses.replace(p, body=body, tyre=tyre, steering=steering,
                                 longitudinal=longitudinal)
    actuators = dataclasses.replace(config.actuators, **{
        key: values[key] for key in ACTUATOR_KEYS if key in values})
    return dataclasses.replace(config, params=params, actuators=actuators)


@dataclass(frozen=True)
class Randomization:
    ranges: Mapping[str, Range]
    start: Mapping[str, Range]
    opponents: tuple[int, int] | None
    tracks: tuple[str, ...]
    random_seeds: tuple[int, int] | None
    conditions: ConditionsRanges | None = None

    @classmethod
    def load(cls, source: Section | Mapping[str, Any] | str | Path | None) -> Randomization:
        """From a mapping, a YAML file or a section of one; errors name the file (or
        'randomization') and key."""
        if source is None:
            return cls({}, {}, None, (), None)
        if isinstance(source, Section):
            root = source
        elif isinstance(source, (str, Path)):
            root = load_section(Path(source))
        else:
            root = Section(dict(source), 'randomization')
        root.reject_unknown(KEYS)
        ranges = {key: _range(root, key, LIMITS[key]) for key in RANGE_KEYS if root.has(key)}
        start: dict[str, Range] = {}
        if root.has('start'):
            section = root.section('start')
            section.reject_unknown(('along', 'lateral', 'yaw'))
            start = {key: _range(section, key) for key in ('along', 'lateral', 'yaw')
                     if section.has(key)}
        opponents = None
        if root.has('opponents'):
            lo, hi = _range(root, 'opponents')
            if lo < 0 or lo != int(lo) or hi != int(hi):
                root.fail(f'expected two whole numbers >= 0, got {[lo, hi]}', 'opponents')
            opponents = (int(lo), int(hi))
        tracks: tuple[str, ...] = ()
        if root.has('tracks'):
            raw = root.raw('tracks')
            if not isinstance(raw, list) or not raw or not all(isinstance(t, str) for t in raw):
                root.fail('expected a non-empty list of track names or paths', 'tracks')
            tracks = tuple(raw)
        seeds = None
        if root.has('random_track'):
            section = root.section('random_track')
            section.reject_unknown(('seeds',))
            lo, hi = _range(section, 'seeds')
            seeds = (int(lo), int(hi))
        if tracks and seeds:
            root.fail('give either tracks or random_track, not both', 'random_track')
        conditions = load_conditions(root.section('conditions'), root.child({}, 'appearance')) \
            if root.has('conditions') else None
        return cls(ranges, start, opponents, tracks, seeds, conditions)

    def draw(self, rng: np.random.Generator) -> Draw:
        """This episode's values, drawn in a fixed order so a seed fixes all of them."""
        values = {key: float(rng.uniform(*bounds)) for key, bounds in self.ranges.items()}
        start = {key: float(rng.uniform(*bounds)) for key, bounds in self.start.items()}
        opponents = None if self.opponents is None else \
            int(rng.integers(self.opponents[0], self.opponents[1] + 1))
        track: str | Track | None = None
        if self.tracks:
            track = self.tracks[int(rng.integers(len(self.tracks)))]
        elif self.random_seeds is not None:
            track = random_track(int(rng.integers(self.random_seeds[0],
                                                  self.random_seeds[1] + 1)))
        seed = int(rng.integers(2**31)) if self.conditions is not None else 0
        if not (values or start or opponents is not None or track is not None
                or self.conditions is not None):
            return NOTHING
        return Draw(values, start, opponents, track, self.conditions, seed)


def random_track(seed: int) -> Track:
    """The generator's track for ``seed`` (F1TENTH scale), as a loaded track."""
    from arsim_core.track.generator import random_track as generate

    made = generate(seed=seed)
    name = f'random_{seed}'
    return track_from_centerline(name, made.centerline, made.width_right, made.width_left,
                                 TrackOptions(name=name))


def _range(section: Section, key: str, limits: tuple[float, float, bool] | None = None
           ) -> Range:
    """[low, high] with low <= high, inside ``limits`` (lowest, highest, whether the lowest
    itself is excluded) where the value has physical limits."""
    value = section.raw(key)
    if not (isinstance(value, list) and len(value) == 2 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            for v in value) and value[0] <= value[1]):
        section.fail(f'expected [low, high], two finite numbers with low <= high, got {value!r}',
                     key)
    if limits is not None:
        lowest, highest, open_low = limits
        if value[0] < lowest or (open_low and value[0] == lowest) or value[1] > highest:
            bound = f'{"above" if open_low else "at least"} {lowest:g}'
            if highest < math.inf:
                bound += f' and at most {highest:g}'
            section.fail(f'expected values {bound}, got {value!r}', key)
    return float(value[0]), float(value[1])
