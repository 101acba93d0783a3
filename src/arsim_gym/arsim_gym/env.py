"""``arsim/Race-v0``: a race on any track, stepped in process by the arsim engine.

One step is one engine frame of ``timestep`` seconds: the controlled cars take the action,
the others their built-in policy, every vehicle integrates, the referee judges, the race
metrics advance and the observed sensors render. No ROS, no sockets.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from arsim_core._jit import kernel
from arsim_core.engine import CarRaceStatus, Engine, Frame, InProcessRenderer
from arsim_core.engine.randomization import Draw, Randomization
from arsim_core.policies import FollowTheGap, PurePursuit
from arsim_core.track import Track
from arsim_core.track.geometry import left_normals, offset
from arsim_gym.rewards import Reward, make_reward
from arsim_gym.setup import RaceSetup, build_race

CONTROLS = ('ego', 'all')
ACTIONS = ('speed', 'accel')  # [steering angle, speed] | [steering velocity, acceleration]
OPPONENT_POLICIES = ('pure_pursuit', 'follow_the_gap', 'none')
KEYWORDS = ('track', 'num_cars', 'timestep', 'scenario', 'profile', 'control', 'action',
            'opponents', 'opponent_speed', 'observe', 'reward', 'max_time', 'max_laps',
            'randomization', 'collisions', 'sectors', 'threads', 'render_mode')
RACE_KEYS = ('lap_fraction', 'progress', 'laps', 'lap_time')
ACTION_TOLERANCE = 1e-6  # beyond the action space's bounds, still applied (float32 rounding)


@dataclass(frozen=True)
class RaceRequest:
    """What the user asked ``gymnasium.make`` for, kept to build the race again (a randomised
    track or opponent count) and for a vector env's own race."""

    scenario: str | None
    track: str | Track | None
    num_cars: int | None
    profile: str | None
    timestep: float
    collisions: Mapping[str, Any] | None


class RaceEnv(gymnasium.Env):
    """See docs/gym.md. Observation: a Dict of ``scan``, ``pose``, ``velocity``,
    ``steering`` and the race keys, plus any opted-in sensor; with ``control='all'`` every
    entry has a leading car axis and the action one row per car."""

    metadata = {'render_modes': ['rgb_array'], 'render_fps': 30}
    engine: Engine

    def __init__(self, track: str | None = None, num_cars: int | None = None,
                 timestep: float = 0.01, **options: Any) -> None:
        unknown = sorted(set(options) - set(KEYWORDS))
        if unknown:
            msg = f'unknown keyword(s) {unknown}; arsim/Race-v0 takes {", ".join(KEYWORDS)}'
            raise TypeError(msg)
        self.render_mode = options.get('render_mode')
        if self.render_mode not in (None, *self.metadata['render_modes']):
            msg = f'render_mode: expected one of {self.metadata["render_modes"]} or None, ' \
                  f'got {self.render_mode!r}'
            raise ValueError(msg)
        self.control = _choice(options, 'control', 'ego', CONTROLS)
        self.action_mode = _choice(options, 'action', 'speed', ACTIONS)
        self.opponent_policy = _choice(options, 'opponents', 'pure_pursuit', OPPONENT_POLICIES)
        self.opponent_speed = float(options.get('opponent_speed', 0.7))
        self.observe = tuple(options.get('observe', ()))
        self.max_time = options.get('max_time')
        self.max_laps = options.get('max_laps')
        self.reward_fn: Reward = make_reward(options.get('reward', 'progress'))
        self.randomization = Randomization.load(options.get('randomization'))
        if self.control == 'all' and self.randomization.opponents is not None:
            msg = ("randomization: opponents cannot vary with control='all': the action and "
                   'observation spaces have one row per car and must not change')
            raise ValueError(msg)
        self._request = RaceRequest(
            scenario=options.get('scenario'), track=track, num_cars=num_cars,
            profile=options.get('profile'), timestep=float(timestep),
            collisions=None if options.get('collisions') is None
            else {'response': options['collisions']})
        self.sectors = None if options.get('sectors') is None else tuple(options['sectors'])
        self.threads = int(options.get('threads', 1))
        if self.threads < 1:
            msg = f'threads: expected a whole number >= 1, got {options["threads"]!r}'
            raise ValueError(msg)
        self.timestep = float(timestep)
        self._build(track, num_cars)
        self._view: Any = None
        self._last: Frame | None = None

    # --- construction -----------------------------------------------------------------------
    def _build(self, track: str | Track | None, num_cars: int | None) -> None:
        """Set the race up; a randomised track or opponent count builds it again."""
        request = self._request
        setup = build_race(scenario=request.scenario, track=track, num_cars=num_cars,
                           profile=request.profile, timestep=request.timestep,
                           observe=self.observe, collisions=request.collisions,
                           scan_all=self.control == 'all'
                           or self.opponent_policy == 'follow_the_gap')
        if getattr(self, 'engine', None) is not None:
            self.engine.close()
        self.built_track = track.name if isinstance(track, Track) else track
        self.setup: RaceSetup = setup
        # Observations hold ranges only: scans skip the intensities.
        self.engine = Engine(setup.scenario, InProcessRenderer(self.threads,
                                                               scan_intensity=False),
                             sectors=self.sectors)
        self.engine.load_track(setup.world)
        self.names = self.engine.names
        self.controlled = self.names if self.control == 'all' else self.names[:1]
        self.base_configs = dict(self.engine.configs)
        self._policies = self._make_policies()
        self._make_spaces()

    def _make_policies(self) -> dict[str, PurePursuit | FollowTheGap]:
        policies: dict[str, PurePursuit | FollowTheGap] = {}
        track = self.setup.track
        for name in self.names:
            if name in self.controlled or self.opponent_policy == 'none':
                continue
            p = self.engine.configs[name].params
            if self.opponent_policy == 'pure_pursuit':
                line = track.raceline if track.raceline is not None else track.centerline
                speeds = track.raceline_speed if track.raceline is not None else None
                policies[name] = PurePursuit(
                    lane(line, self.engine.start_poses[name]), wheelbase=p.body.wheelbase,
                    max_steering=p.steering.max_angle, max_speed=p.longitudinal.max_speed,
                    speeds=speeds,
                    friction=p.tyre.friction, speed_scale=self.opponent_speed)
            else:
                scan = self.setup.scan[name]
                policies[name] = FollowTheGap(
                    angle_min=scan.angle_min, angle_increment=scan.angle_increment,
                    max_steering=p.steering.max_angle, max_speed=p.longitudinal.max_speed,
                    speed_scale=self.opponent_speed)
        return policies

    def _make_spaces(self) -> None:
        n = len(self.controlled)
        lead = (n,) if self.control == 'all' else ()
        ego = self.names[0]
        params = self.engine.configs[ego].params
        if self.action_mode == 'speed':
            low = [params.steering.min_angle, params.longitudinal.min_speed]
            high = [params.steering.max_angle, params.longitudinal.max_speed]
        else:
            low = [params.steering.min_rate, -params.longitudinal.max_acceleration]
            high = [params.steering.max_rate, params.longitudinal.max_acceleration]
        self._action_low = np.array(low, np.float32)
        self._action_high = np.array(high, np.float32)
        # what ``_valid`` accepts: the space's bounds widened by a tolerance, as Python floats
        self._action_bounds = (
            (self._action_low.astype(np.float64) - ACTION_TOLERANCE).tolist(),
            (self._action_high.astype(np.float64) + ACTION_TOLERANCE).tolist())
        self.action_space = spaces.Box(np.tile(self._action_low, (*lead, 1)).reshape(*lead, 2),
                                       np.tile(self._action_high, (*lead, 1)).reshape(*lead, 2),
                                       dtype=np.float32)
        scan = self.setup.scan[ego]
        self._scan_keys = {car: f'{car}/{spec.name}' for car, spec in self.setup.scan.items()}
        self._scan_range = (np.float32(scan.range_min), np.float32(scan.range_max))
        inf = np.inf
        entries: dict[str, spaces.Space[Any]] = {
            'scan': spaces.Box(scan.range_min, scan.range_max, (*lead, scan.beams), np.float32),
            'pose': spaces.Box(-inf, inf, (*lead, 3), np.float32),
            'velocity': spaces.Box(-inf, inf, (*lead, 3), np.float32),
            'steering': spaces.Box(-inf, inf, (*lead, 1), np.float32),
            'lap_fraction': spaces.Box(0.0, 1.0, (*lead, 1), np.float32),
            'progress': spaces.Box(-inf, inf, (*lead, 1), np.float32),
            'laps': spaces.Box(0, np.iinfo(np.int32).max, (*lead, 1), np.int32),
            'lap_time': spaces.Box(0.0, inf, (*lead, 1), np.float32),
        }
        self._extra: dict[str, str] = {}
        if self.observe:
            frame = self.engine.reset()
            for name, array in frame.sensors.items():
                car, _, rest = name.partition('/')
                sensor = rest.split('/')[0]
                if car == ego and sensor in self.observe:
                    key = rest.replace('/', '_')
                    self._extra[key] = rest
                    lowest, highest = ((0, 255) if array.dtype == np.uint8 else (-inf, inf))
                    entries[key] = spaces.Box(lowest, highest, (*lead, *array.shape),
                                              array.dtype)
        self.observation_space = spaces.Dict(entries)

    # --- the Gymnasium API ------------------------------------------------------------------
    def reset(self, *, seed: int | None = None,
              options: Mapping[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict]:
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = sorted(set(options) - {'poses'})
        if unknown:
            msg = f'reset options: unknown key(s) {unknown}; expected "poses"'
            raise ValueError(msg)
        draw = self.randomization.draw(self.np_random)
        if draw.rebuild(self.built_track, len(self.names)):
            self._build(draw.track if draw.track is not None else self._request.track,
                        draw.num_cars if draw.num_cars is not None
                        else self._request.num_cars)
        draw.apply(self.engine, self.base_configs)
        poses = self._poses(options.get('poses'), draw)
        frame = self.engine.reset(poses, seed=int(self.np_random.integers(2 ** 31)))
        for name, policy in self._policies.items():
            if isinstance(policy, PurePursuit):
                policy.reset(frame.states[name].pose)
        self._statuses = self._race()
        for name in self.controlled[:1]:
            self.reward_fn.reset(self._statuses[name])
        self._last = frame
        return self._observe(frame), self._info(frame, set())

    def _poses(self, given: Any, draw: Draw) -> dict[str, tuple[float, float, float]]:
        """Start poses: the option's, else the grid moved by the randomisation's jitter."""
        if given is None:
            return draw.start_poses(self.engine.start_poses, self.setup.track)
        if isinstance(given, Mapping):
            unknown = sorted(set(map(str, given)) - set(self.names))
            if unknown:
                msg = (f'reset option poses: unknown car(s) {unknown}; the cars are '
                       f'{list(self.names)}')
                raise ValueError(msg)
            return {str(k): parse_pose(v, f'poses[{k!r}]') for k, v in given.items()}
        try:
            rows = np.asarray(given, dtype=np.float64)
        except (TypeError, ValueError):
            rows = np.empty(0)
        if rows.shape == (3,):  # the first car's pose alone
            rows = rows[None]
        if rows.ndim != 2 or rows.shape[1] != 3 or len(rows) > len(self.names):
            msg = (f'reset option poses: expected an array of shape (n <= {len(self.names)}, 3) '
                   f'of x, y, yaw (or one pose), or a mapping car -> pose; got {given!r}')
            raise ValueError(msg)
        return {self.names[i]: parse_pose(row, f'poses[{i}]') for i, row in enumerate(rows)}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict]:
        actions = np.asarray(action, dtype=np.float64).reshape(len(self.controlled), 2)
        vehicles = self.engine.vehicles
        for name, (a0, a1) in zip(self.controlled, actions.tolist(), strict=True):
            if self._valid(a0, a1):
                if self.action_mode == 'speed':
                    vehicles[name].set_ackermann(a1, a0)
                else:
                    vehicles[name].set_inputs(a0, a1)
        if self._policies:
            self._drive_opponents()
        frame = self.engine.advance()
        self._last = frame
        self._statuses = self._race()
        contact = {car for car, _ in self.engine.referee.in_contact}
        collided = any(name in contact for name in self.controlled)
        status = self._statuses[self.controlled[0]]
        reward = self.reward_fn(status, collided)
        time_s = frame.time_ns * 1e-9
        truncated = (self.max_time is not None and time_s >= self.max_time - 1e-9) or \
            (self.max_laps is not None and status.laps >= self.max_laps)
        return self._observe(frame), reward, collided, bool(truncated), \
            self._info(frame, contact)

    def _valid(self, a0: float, a1: float) -> bool:
        """Whether an action row can be applied. NaN and out-of-range actions are ignored
        with a warning, as on the ROS drive topics: the car keeps its last command."""
        if not (math.isfinite(a0) and math.isfinite(a1)):
            warnings.warn(f'ignoring a non-finite action ({a0}, {a1})', stacklevel=3)
            return False
        (low0, low1), (high0, high1) = self._action_bounds
        if not (low0 <= a0 <= high0 and low1 <= a1 <= high1):
            low, high = self._action_low, self._action_high
            warnings.warn(f'ignoring an action ({a0:g}, {a1:g}) outside the action space '
                          f'[{low.tolist()}, {high.tolist()}]', stacklevel=3)
            return False
        return True

    def _drive_opponents(self) -> None:
        assert self._last is not None
        states, sensors = self._last.states, self._last.sensors
        for name, policy in self._policies.items():
            if isinstance(policy, PurePursuit):
                steer, speed = policy.act(states[name])
            else:
                steer, speed = policy.act(sensors[self._scan_keys[name]])
            self.engine.vehicles[name].set_ackermann(speed, steer)

    def _race(self) -> dict[str, CarRaceStatus]:
        metrics = self.engine.metrics
        assert metrics is not None
        return metrics.statuses(self.controlled)

    def _observe(self, frame: Frame) -> dict[str, np.ndarray]:
        if self.control == 'all':
            rows = [self._observe_car(frame, name) for name in self.controlled]
            return {key: np.stack([row[key] for row in rows]) for key in rows[0]}
        return self._observe_car(frame, self.controlled[0])

    def _observe_car(self, frame: Frame, car: str) -> dict[str, np.ndarray]:
        s = frame.states[car]
        status = self._statuses[car]
        low, high = self._scan_range
        scan = frame.sensors[self._scan_keys[car]]
        # One buffer for the scalars, handed out as views: a third of the allocations.
        values = np.array((s.x, s.y, s.yaw, s.vx, s.vy, s.yaw_rate, s.steering_angle,
                           status.lap_fraction, status.progress, status.lap_time), np.float32)
        obs = {
            'scan': clip_ranges(scan, low, high),
            'pose': values[0:3],
            'velocity': values[3:6],
            'steering': values[6:7],
            'lap_fraction': values[7:8],
            'progress': values[8:9],
            'laps': np.array((status.laps,), np.int32),
            'lap_time': values[9:10],
        }
        for key, frame_name in self._extra.items():  # renderers reuse their image buffers
            obs[key] = frame.sensors[f'{car}/{frame_name}'].copy()
        return obs

    def _info(self, frame: Frame, contact: set[str]) -> dict[str, Any]:
        race = self._statuses if self.control == 'all' else self._statuses[self.controlled[0]]
        return {'time': frame.time_ns * 1e-9, 'race': race, 'collision': bool(contact),
                'events': frame.judgement.events}

    def render(self) -> np.ndarray | None:
        if self.render_mode is None or self._last is None:
            return None
        from arsim_gym.topdown import TopDownView

        if self._view is None or self._view.world is not self.setup.world:
            self._view = TopDownView(self.setup.world)
        footprints = {c.name: (c.profile.footprint.length, c.profile.footprint.width)
                      for c in self.setup.scenario.cars}
        scans = {name: self._last.sensors[f'{name}/{spec.name}']
                 for name, spec in self.setup.scan.items()
                 if f'{name}/{spec.name}' in self._last.sensors}
        geometry = {name: (spec.angle_min, spec.angle_increment,
                           (spec.mount.x, spec.mount.y, spec.mount.yaw))
                    for name, spec in self.setup.scan.items()}
        status = self._statuses[self.controlled[0]]
        text = [f't {self._last.time_ns * 1e-9:6.2f} s  lap {status.laps}  '
                f'{status.lap_fraction * 100:5.1f} %']
        return self._view.draw(self._last.states, footprints, scans, geometry,
                               ego=self.names[0], text=text)

    def close(self) -> None:
        self.engine.close()


def lane(line: np.ndarray, start: tuple[float, float, float]) -> np.ndarray:
    """``line`` moved sideways to where ``start`` lies beside it: cars that start side by side
    keep their lanes instead of converging onto one line and into each other."""
    points = np.asarray(line, dtype=np.float64)
    nearest = int(np.argmin(np.hypot(*(points - start[:2]).T)))
    side = float(np.dot(np.asarray(start[:2]) - points[nearest], left_normals(points)[nearest]))
    return offset(points, side)


def clip_ranges(ranges: np.ndarray, low: np.float32, high: np.float32,
                out: np.ndarray | None = None) -> np.ndarray:
    """REP-117 ranges as an observation in [low, high], as f1tenth_gym's: no return (+inf)
    and a dropped beam (NaN) read ``high``, too close (-inf) reads ``low``. Into ``out`` if
    given (which may be ``ranges``)."""
    if out is None or not (out.flags.c_contiguous and out.dtype == np.float32):
        result = np.array(ranges, dtype=np.float32, order='C')
    else:
        result = out
        if out is not ranges:
            result[...] = ranges
    _clip_in_place(result.reshape(-1), np.float32(low), np.float32(high))
    if out is not None and result is not out:
        out[...] = result
        return out
    return result


@kernel
def _clip_in_place(values: np.ndarray, low: float, high: float) -> None:
    """One compiled pass; in place, because the compiler only vectorises the loop when it can
    tell that what it reads is not what it writes."""
    for i in range(values.shape[0]):
        v = values[i]
        v = v if v <= high else high  # NaN fails the test: high
        values[i] = v if v >= low else low


def _choice(options: Mapping[str, Any], key: str, default: str,
            choices: tuple[str, ...]) -> str:
    value = options.get(key, default)
    if value not in choices:
        msg = f'{key}: expected one of {list(choices)}, got {value!r}'
        raise ValueError(msg)
    return str(value)


def parse_pose(value: Any, where: str) -> tuple[float, float, float]:
    """x, y, yaw from a reset option, or a ValueError naming the option."""
    try:
        pose = np.asarray(value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        pose = np.empty(0)
    if pose.shape != (3,) or not np.all(np.isfinite(pose)):
        msg = f'reset option {where}: expected 3 finite numbers x, y, yaw, got {value!r}'
        raise ValueError(msg)
    return float(pose[0]), float(pose[1]), float(pose[2])


