"""The one core behind every face of ``arsim/Race-v0``: N independent races, stepped and read as
arrays with one row per controlled car.

The single environment is this core with one race, the vector environment with N, the
multi-agent environment with one race whose every car is controlled. The core turns actions
into drive commands, steps the engines and builds, once for every face, the observations,
rewards, terminations, truncations and the race records of ``info``; what a car did (contacts,
placements, laps) it reads from the engine's frame and race metrics.

Two layouts carry the races. *Packed*: with one car per race on one fixed track, the N races
are N cars of one engine that neither see nor touch each other (``ghost`` collisions, cars
invisible), so one compiled call integrates every vehicle, casts every scan and measures every
car. *Separate*: anything else (opponents, a randomised track or opponent count, extra sensors)
gives each race an engine of its own.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from gymnasium import spaces

from arsim_core.engine import CarRaceStatus, Engine, Frame, InProcessRenderer
from arsim_core.engine.race_metrics import RaceMetrics
from arsim_core.engine.randomization import Draw
from arsim_core.engine.referee import Event
from arsim_core.policies import FollowTheGap, PurePursuit
from arsim_core.rows import stacked
from arsim_core.sensors.computed import LAYOUTS
from arsim_core.sensors.scan_ranges import clip_ranges
from arsim_core.track import Track
from arsim_core.track.polylines import left_normals, offset
from arsim_gym.options import RaceOptions
from arsim_gym.rewards import RaceRows, make_reward
from arsim_gym.setup import COMPUTED, RaceSetup, build_race

ACTION_TOLERANCE = 1e-6  # beyond the action space's bounds, still applied (float32 rounding)
Pose = tuple[float, float, float]


@dataclass(frozen=True)
class ResetOptions:
    """``reset(options=...)`` checked: ``poses``, one entry per race (None: the grid)."""

    poses: tuple[Any, ...] | None = None

    @classmethod
    def parse(cls, options: Mapping[str, Any] | None, races: int | None,
              strict: bool = True) -> ResetOptions:
        """From the options of one race (``races`` None) or of ``races`` races, one pose entry
        each; unknown keys (a warning unless ``strict``) and a wrong count are a
        ``ValueError`` naming them."""
        given = dict(options or {})
        unknown = sorted(set(given) - {'poses'})
        if unknown:
            msg = f'reset options: unknown key(s) {unknown}; expected "poses"'
            if strict:
                raise ValueError(msg)
            warnings.warn(f'{msg}: ignored', stacklevel=3)
        rows = given.get('poses')
        if rows is None:
            return cls()
        if races is None:
            return cls((rows,))
        if isinstance(rows, (str, bytes, Mapping)) or not hasattr(rows, '__len__') \
                or len(rows) != races:
            msg = (f'reset option poses: expected one entry per environment ({races}), '
                   f'each the poses RaceEnv takes, got {rows!r}')
            raise ValueError(msg)
        return cls(tuple(rows))


class RaceStep(NamedTuple):
    """What one step of the core gives every face, one row per controlled car (``rows``)
    or one per race (``races``)."""

    observation: dict[str, np.ndarray]  # rows; one car's, without the row axis: ``unbatched``
    rewards: np.ndarray  # rows
    collided: np.ndarray  # rows
    terminated: np.ndarray  # races: a controlled car of the race collided
    truncated: np.ndarray  # races: max_time or max_laps reached
    time: np.ndarray  # races: seconds since the race's episode began


class Sim:
    """One engine and the race set-up it runs: its cars, the controlled ones, the opponents'
    drivers and the keys of the sensor frames the observations read."""

    def __init__(self, options: RaceOptions, setup: RaceSetup, track: str | Track | None,
                 controlled: int | None) -> None:
        self.setup = setup
        self.built_track = track.name if isinstance(track, Track) else track
        # Observations hold ranges only: scans skip the intensities.
        self.renderer = InProcessRenderer(options.threads, scan_intensity=False)
        self.engine = Engine(setup.scenario, self.renderer, sectors=options.sectors,
                             threads=options.threads)
        self.engine.load_track(setup.world)
        metrics = self.engine.metrics
        if metrics is None:  # progress and laps need a centerline
            msg = f'track {setup.world.name!r} has no centerline to measure progress on'
            raise ValueError(msg)
        self.metrics: RaceMetrics = metrics
        self.names = self.engine.names
        self.index = {name: i for i, name in enumerate(self.names)}
        self.controlled = self.names if controlled is None else self.names[:controlled]
        self.base_configs = dict(self.engine.configs)
        self.scan_keys = tuple(f'{car}/{setup.scan[car].name}' for car in self.controlled
                               if car in setup.scan)  # none without the scan observation
        self.policies = _policies(options, self)
        self.frame: Frame | None = None
        self.sensors: Mapping[str, np.ndarray] = {}
        self.start_ns = np.zeros(len(self.controlled), dtype=np.int64)  # per controlled car
        self.latency = self.engine.latency  # its ``active``: a sensor of a car is late

    def arrive(self, frame: Frame) -> Frame:
        """Take ``frame`` as the current one. Observations read each sensor's latest sample
        that has arrived: with a latency, a frame may bring none of a sensor's."""
        self.frame = frame
        self.sensors = {**self.sensors, **frame.sensors} if self.latency.active \
            else frame.sensors
        return frame

    def close(self) -> None:
        self.engine.close()


class RaceCore:
    """``races`` independent races of ``options``; see the module docstring."""

    def __init__(self, options: RaceOptions, races: int = 1) -> None:
        if not isinstance(races, int) or races < 1:
            msg = f'num_envs: expected a whole number >= 1, got {races!r}'
            raise ValueError(msg)
        self.options = options
        self.races = races
        first = self._setup(options.track, options.num_cars)
        r = options.randomization
        self.packed = races > 1 and len(first.scenario.cars) == 1 and not r.tracks \
            and r.random_seeds is None and r.opponents is None and not options.observe
        if self.packed:
            packed = build_race(
                scenario=options.scenario, track=first.track, num_cars=races,
                profile=options.profile, timestep=options.timestep, observe=(),
                scan_all=True, scan=options.scan,
                collisions={'response': 'ghost', 'cars_visible': False})
            self.sims = [Sim(options, packed, options.track, None)]
        else:
            self.sims = [Sim(options, first, options.track, self._controlled(first))]
            self.sims += [Sim(options, self._setup(options.track, options.num_cars),
                              options.track, self._controlled(first))
                          for _ in range(races - 1)]
        sim = self.sims[0]
        self.per_race = 1 if self.packed else len(sim.controlled)
        self.rows = races * self.per_race
        self.names = sim.names  # of one race
        self.reward = make_reward(options.reward)
        self.rngs = [np.random.default_rng() for _ in range(races)]
        self._make_spaces()
        self._status_cache: list[CarRaceStatus] | None = None
        # One race of one controlled car (the single environment's usual case): stepped in
        # Python floats, as the arrays of the general path cost more than the rest of the
        # step's Python. The same arithmetic, so the same values, as a row of the general path.
        # (Its Sim is sims[0], read each step: a reset may build the race anew.)
        self.lone = self.rows == 1 and not self.packed
        self._speed = options.action == 'speed'
        # Set by a face that reads a lone race's observation without the row axis (the single
        # environment): the observation is then made that way, not made and then unwrapped.
        self.unbatched = False

    # --- construction -----------------------------------------------------------------------
    def _setup(self, track: str | Track | None, num_cars: int | None) -> RaceSetup:
        o = self.options
        gap = o.control != 'all' and o.opponents == 'follow_the_gap'
        return build_race(scenario=o.scenario, track=track, num_cars=num_cars, profile=o.profile,
                          timestep=o.timestep, observe=o.observe,
                          collisions=o.collision_overrides,
                          scan_all=o.control == 'all' or gap, scan=o.scan, gap_opponents=gap)

    def _controlled(self, setup: RaceSetup) -> int:
        return len(setup.scenario.cars) if self.options.control == 'all' else 1

    def _make_spaces(self) -> None:
        """``car_space``: one controlled car's observation; ``car_action_space`` its action."""
        sim = self.sims[0]
        ego = sim.names[0]
        params = sim.engine.configs[ego].params
        if self.options.action == 'speed':
            low = [params.steering.min_angle, params.longitudinal.min_speed]
            high = [params.steering.max_angle, params.longitudinal.max_speed]
        else:
            low = [params.steering.min_rate, -params.longitudinal.max_acceleration]
            high = [params.steering.max_rate, params.longitudinal.max_acceleration]
        self.action_low = np.array(low, np.float32)
        self.action_high = np.array(high, np.float32)
        # what ``step`` applies: the space's bounds widened by a tolerance
        self._bounds = (self.action_low.astype(np.float64) - ACTION_TOLERANCE,
                        self.action_high.astype(np.float64) + ACTION_TOLERANCE)
        self._bounds_floats = (self._bounds[0].tolist(), self._bounds[1].tolist())
        self.car_action_space = spaces.Box(self.action_low, self.action_high, dtype=np.float32)
        inf = np.inf
        entries: dict[str, spaces.Space[Any]] = {}
        self.scan_range = (np.float32(0.0), np.float32(inf))
        if self.options.scan:
            scan = sim.setup.scan[ego]
            self.scan_range = (np.float32(scan.range_min), np.float32(scan.range_max))
            entries['scan'] = spaces.Box(scan.range_min, scan.range_max, (scan.beams,),
                                         np.float32)
        entries |= {
            'pose': spaces.Box(-inf, inf, (3,), np.float32),
            'velocity': spaces.Box(-inf, inf, (3,), np.float32),
            'steering': spaces.Box(-inf, inf, (1,), np.float32),
            'lap_fraction': spaces.Box(0.0, 1.0, (1,), np.float32),
            'progress': spaces.Box(-inf, inf, (1,), np.float32),
            'laps': spaces.Box(0, np.iinfo(np.int32).max, (1,), np.int32),
            'lap_time': spaces.Box(0.0, inf, (1,), np.float32),
        }
        self.extra: dict[str, str] = {}  # observation key -> frame name after the car
        for key, (name, kind) in sim.setup.computed.items():  # the layouts LAYOUTS gives
            self.extra[key] = name
            entries[key] = spaces.Box(-inf, inf, (len(LAYOUTS[kind]),), np.float64)
        if any(key not in COMPUTED for key in self.options.observe):
            frame = sim.engine.reset()
            for name, array in frame.sensors.items():
                car, _, rest = name.partition('/')
                if car == ego and rest.split('/')[0] in self.options.observe \
                        and rest not in self.extra.values():
                    key = rest.replace('/', '_')
                    self.extra[key] = rest
                    lowest, highest = (0, 255) if array.dtype == np.uint8 else (-inf, inf)
                    entries[key] = spaces.Box(lowest, highest, array.shape, array.dtype)
        self.car_space = spaces.Dict(entries)

    # --- episodes ---------------------------------------------------------------------------
    def reset(self, which: np.ndarray, poses: ResetOptions = ResetOptions()) -> RaceStep:
        """New episodes for the races in ``which``, each from its own generator
        (``rngs[i]``): the randomisation's draw, the start poses and the sensor noise."""
        chosen = np.flatnonzero(which)
        given = poses.poses
        if self.packed:
            sim = self.sims[0]
            if sim.frame is None or chosen.size == self.races:
                sim.frame = sim.engine.reset({car: sim.engine.start_poses[sim.names[0]]
                                              for car in sim.names})
                sim.sensors = sim.frame.sensors
            self._restart_packed(chosen, given)
        else:
            for i in chosen.tolist():
                self._reset_race(i, None if given is None else given[i])
        mask = np.repeat(which, self.per_race)
        self._status_cache = None
        race = self.race_rows(np.zeros(self.rows, dtype=bool))
        self.reward.reset(race, mask)
        return self._result(race, np.zeros(self.rows), np.zeros(self.races, dtype=bool),
                            np.zeros(self.races, dtype=bool))

    def _reset_race(self, i: int, given: Any) -> None:
        sim, rng = self.sims[i], self.rngs[i]
        draw = self.options.randomization.draw(rng)
        if draw.rebuild(sim.built_track, len(sim.names)):
            track = draw.track if draw.track is not None else self.options.track
            setup = self._setup(track, draw.num_cars if draw.num_cars is not None
                                else self.options.num_cars)
            sim.close()
            sim = self.sims[i] = Sim(self.options, setup, track, self._controlled(setup))
        draw.apply(sim.engine, sim.base_configs)
        poses = self._poses(sim, given, draw)
        sim.frame = sim.engine.reset(poses, seed=int(rng.integers(2 ** 31)))
        sim.sensors = sim.frame.sensors
        sim.start_ns[:] = 0
        for name, policy in sim.policies.items():
            if isinstance(policy, PurePursuit):
                policy.reset(sim.frame.states[name].pose)

    def _restart_packed(self, chosen: np.ndarray, given: Sequence[Any] | None) -> None:
        """Put the cars of the races ``chosen`` back on the grid, each race drawing from its
        own generator, while the others drive on."""
        sim = self.sims[0]
        start = sim.engine.start_poses[sim.names[0]]
        poses = {}
        for i in chosen.tolist():
            car, rng = sim.names[i], self.rngs[i]
            draw = self.options.randomization.draw(rng)
            draw.apply(sim.engine, sim.base_configs, cars=(car,))
            seed = int(rng.integers(2 ** 31))  # as a single race's engine.reset(seed=...)
            sim.renderer.reseed(seed, cars=(car,), car_index=0)  # its race's only car
            sim.engine.vehicles[car].reseed(seed, 0)
            poses[car] = parse_pose(given[i], f'poses[{i}]') if given is not None else \
                draw.start_poses({car: start}, sim.setup.track)[car]
        restarted = sim.engine.restart(poses)
        sim.sensors = {**sim.sensors, **restarted} if len(chosen) < self.races else restarted
        sim.start_ns[chosen] = sim.engine.time_ns

    def _poses(self, sim: Sim, given: Any, draw: Draw) -> dict[str, Pose]:
        """Start poses: the option's, else the grid moved by the randomisation's jitter."""
        names = sim.names
        if given is None:
            return draw.start_poses(sim.engine.start_poses, sim.setup.track)
        if isinstance(given, Mapping):
            unknown = sorted(set(map(str, given)) - set(names))
            if unknown:
                msg = (f'reset option poses: unknown car(s) {unknown}; the cars are '
                       f'{list(names)}')
                raise ValueError(msg)
            return {str(k): parse_pose(v, f'poses[{k!r}]') for k, v in given.items()}
        try:
            rows = np.asarray(given, dtype=np.float64)
        except (TypeError, ValueError):
            rows = np.empty(0)
        if rows.shape == (3,):  # the first car's pose alone
            rows = rows[None]
        if rows.ndim != 2 or rows.shape[1] != 3 or len(rows) > len(names):
            msg = (f'reset option poses: expected an array of shape (n <= {len(names)}, 3) '
                   f'of x, y, yaw (or one pose), or a mapping car -> pose; got {given!r}')
            raise ValueError(msg)
        return {names[i]: parse_pose(row, f'poses[{i}]') for i, row in enumerate(rows)}

    # --- stepping ---------------------------------------------------------------------------
    def step(self, actions: Any, restart: np.ndarray | None = None,
             hold: np.ndarray | None = None) -> RaceStep:
        """One frame of every race with ``actions`` (one row per controlled car); the races in
        ``restart`` (a vector env's autoreset) ignore theirs and begin new episodes instead,
        with reward 0 and neither flag set. The cars in ``hold`` keep their last command."""
        rows = np.asarray(actions, dtype=np.float64).reshape(self.rows, 2)
        if self.lone and restart is None and hold is None:
            return self._step_lone(self.sims[0], rows)
        if hold is not None:
            rows = np.where(hold[:, None], 0.0, rows)
        usable = self._usable(rows)
        if hold is not None:
            usable &= ~hold
        restarting = restart is not None and bool(restart.any())
        if restarting:
            assert restart is not None
            usable &= ~np.repeat(restart, self.per_race)
        if self.packed:
            sim = self.sims[0]
            self._command(sim, rows, usable)
            sim.arrive(sim.engine.advance())
            if restarting:
                assert restart is not None
                self._restart_packed(np.flatnonzero(restart), None)
        else:
            k = self.per_race
            for i, sim in enumerate(self.sims):
                if restarting and restart is not None and restart[i]:
                    self._reset_race(i, None)
                    continue
                self._command(sim, rows[i * k:(i + 1) * k], usable[i * k:(i + 1) * k])
                if sim.policies:
                    _drive_opponents(sim)
                sim.arrive(sim.engine.advance())
        self._status_cache = None
        collided = self._collided()
        if restarting:
            assert restart is not None
            collided &= ~np.repeat(restart, self.per_race)
        race = self.race_rows(collided)
        rewards = self.reward(race)
        if type(rewards) is not np.ndarray or rewards.dtype != np.float64:
            rewards = np.asarray(rewards, dtype=np.float64)
        rewards = rewards.reshape(self.rows)
        terminated = collided.copy() if self.per_race == 1 else \
            np.asarray(collided.reshape(self.races, self.per_race).any(axis=1))
        truncated = self._truncated(race)
        if restarting:
            assert restart is not None
            mask = np.repeat(restart, self.per_race)
            self.reward.reset(race, mask)
            rewards[mask] = 0.0
            truncated &= ~restart
        return self._result(race, rewards, terminated, truncated)

    def _step_lone(self, sim: Sim, rows: np.ndarray) -> RaceStep:
        """``step`` of a lone race (``self.lone``, ``sim``) with no restart or hold: the
        general path's steps in the same order, on Python floats and one-element arrays."""
        (a0, a1), = rows.tolist()
        (low0, low1), (high0, high1) = self._bounds_floats
        if low0 <= a0 <= high0 and low1 <= a1 <= high1:  # NaN fails: ignored below
            vehicle = sim.engine.vehicles[sim.controlled[0]]
            if self._speed:
                vehicle.set_ackermann(a1, a0)
            else:
                vehicle.set_inputs(a0, a1)
        else:
            self._usable(rows, depth=5)  # the warning, at the caller of the env's step
        if sim.policies:
            _drive_opponents(sim)
        frame = sim.arrive(sim.engine.advance())
        self._status_cache = None
        touching = frame.judgement.new_contacts
        hit = bool(touching) and sim.controlled[0] in touching
        collided = np.array((hit,))
        race = self.race_rows(collided)
        rewards = self.reward(race)
        if type(rewards) is not np.ndarray or rewards.dtype != np.float64:
            rewards = np.asarray(rewards, dtype=np.float64)
        rewards = rewards.reshape(1)
        o = self.options
        time = sim.engine.time_ns * 1e-9
        truncated = (o.max_time is not None and time >= o.max_time - 1e-9) or \
            (o.max_laps is not None and int(race.laps[0]) >= o.max_laps)
        return RaceStep(self._observe(), rewards, collided, np.array((hit,)),
                        np.array((truncated,)), np.array((time,)))

    def _usable(self, rows: np.ndarray, depth: int = 4) -> np.ndarray:
        """Which action rows can be applied. NaN and out-of-range rows are ignored with a
        warning, as on the ROS drive topics: the car keeps its last command."""
        low, high = self._bounds
        if len(rows) <= 2:  # a row or two: Python floats cost less than the arrays
            (low0, low1), (high0, high1) = self._bounds_floats
            usable = np.array([low0 <= a0 <= high0 and low1 <= a1 <= high1
                               for a0, a1 in rows.tolist()])
        else:
            usable = np.asarray(((rows >= low) & (rows <= high)).all(axis=1))  # NaN: False
        if usable.all():
            return np.asarray(usable)
        for i in np.flatnonzero(~usable).tolist():
            a0, a1 = rows[i].tolist()
            if not (math.isfinite(a0) and math.isfinite(a1)):
                warnings.warn(f'ignoring a non-finite action ({a0}, {a1})', stacklevel=depth)
            else:
                warnings.warn(f'ignoring an action ({a0:g}, {a1:g}) outside the action space '
                              f'[{self.action_low.tolist()}, {self.action_high.tolist()}]',
                              stacklevel=depth)
        return np.asarray(usable)

    def _command(self, sim: Sim, rows: np.ndarray, usable: np.ndarray) -> None:
        """The controlled cars' drive commands, as the engine takes them for all its cars."""
        count = len(sim.names)
        if len(rows) == 1:  # one car: its own call costs less than the arrays, which win
            # from two cars on (two: 2.5 us of calls against 1.5; twenty: 18.6 against 1.6)
            if bool(usable[0]):
                vehicle = sim.engine.vehicles[sim.controlled[0]]
                (a0, a1), = rows.tolist()
                if self.options.action == 'speed':
                    vehicle.set_ackermann(a1, a0)
                else:
                    vehicle.set_inputs(a0, a1)
            return
        if len(rows) < count:
            rows = np.concatenate([rows, np.zeros((count - len(rows), 2))])
            usable = np.concatenate([usable, np.zeros(count - len(usable), dtype=bool)])
        if self.options.action == 'speed':
            sim.engine.drive_all(rows[:, 1], rows[:, 0], usable)
        else:
            sim.engine.set_inputs_all(rows[:, 0], rows[:, 1], usable)

    def _collided(self) -> np.ndarray:
        """Which controlled cars began a contact in this frame, from the frames' verdicts."""
        out = np.zeros(self.rows, dtype=bool)
        k = len(self.sims[0].controlled)
        for i, sim in enumerate(self.sims):
            assert sim.frame is not None
            touching = sim.frame.judgement.new_contacts
            if touching:
                out[i * k:(i + 1) * k] = [car in touching for car in sim.controlled]
        return out

    def _truncated(self, race: RaceRows) -> np.ndarray:
        o = self.options
        truncated = np.zeros(self.races, dtype=bool)
        if o.max_time is not None:
            truncated |= self.episode_time() >= o.max_time - 1e-9
        if o.max_laps is not None:
            truncated |= race.laps[::self.per_race] >= o.max_laps
        return truncated

    def episode_time(self) -> np.ndarray:
        """Seconds since each race's episode began, from whole nanoseconds: the same float
        whichever layout carries the race."""
        if self.packed:
            sim = self.sims[0]
            return (sim.engine.time_ns - sim.start_ns) * 1e-9
        return np.array([sim.engine.time_ns * 1e-9 for sim in self.sims])

    # --- what the faces read ----------------------------------------------------------------
    def race_rows(self, collided: np.ndarray) -> RaceRows:
        if self.rows == 1:  # the record info needs anyway: no second call into the metrics
            st = self.statuses()[0]
            table = np.array(((st.lap_fraction, st.progress, st.laps, st.lap_time),))
        else:
            tables = [sim.metrics.progress_table(sim.controlled) for sim in self.sims]
            table = tables[0] if len(tables) == 1 else np.concatenate(tables)
        self._table = table
        return RaceRows(table[:, 0], table[:, 1], table[:, 2].astype(np.int64), table[:, 3],
                        collided, self.statuses)

    def statuses(self) -> list[CarRaceStatus]:
        """Every controlled car's race record, one per row; in a packed race each car races
        alone (position 1)."""
        if self._status_cache is None:
            if self.lone:
                sim = self.sims[0]
                self._status_cache = [sim.metrics.status(sim.controlled[0])]
            elif self.packed:
                sim = self.sims[0]
                self._status_cache = [sim.metrics.status(name, alone=True)
                                      for name in sim.names]
            else:
                self._status_cache = [status for sim in self.sims for status in
                                      sim.metrics.statuses(sim.controlled).values()]
        return self._status_cache

    def race_statuses(self, race: int) -> list[CarRaceStatus]:
        """The race records of ``race``'s controlled cars alone, without every row's."""
        if self._status_cache is not None:
            k = self.per_race
            return self._status_cache[race * k:(race + 1) * k]
        if self.packed:
            sim = self.sims[0]
            return [sim.metrics.status(sim.names[race], alone=True)]
        sim = self.sims[race]
        return list(sim.metrics.statuses(sim.controlled).values())

    def races_with_events(self) -> dict[int, tuple[Event, ...]]:
        """The races that have referee events in this frame, with them: one look at each
        frame's verdict, where asking every race would cost a call each."""
        found: dict[int, tuple[Event, ...]] = {}
        if self.packed:
            frame = self.sims[0].frame
            assert frame is not None
            if frame.judgement.events:
                index = self.sims[0].index
                for event in frame.judgement.events:
                    i = index[event.car]
                    found[i] = (*found.get(i, ()), event)
            return found
        for i, sim in enumerate(self.sims):
            assert sim.frame is not None
            if sim.frame.judgement.events:
                found[i] = sim.frame.judgement.events
        return found

    def events(self, race: int) -> tuple[Event, ...]:
        """The referee's events of this frame for ``race``'s cars."""
        if self.packed:
            frame, car = self.sims[0].frame, self.sims[0].names[race]
            assert frame is not None
            return tuple(e for e in frame.judgement.events if e.car == car)
        frame = self.sims[race].frame
        assert frame is not None
        return frame.judgement.events

    def _result(self, race: RaceRows, rewards: np.ndarray, terminated: np.ndarray,
                truncated: np.ndarray) -> RaceStep:
        return RaceStep(self._observe(), rewards, race.collided, terminated, truncated,
                        self.episode_time())

    def _observe(self) -> dict[str, np.ndarray]:
        sims = self.sims
        low, high = self.scan_range
        if len(sims) == 1 and len(sims[0].controlled) == 1:
            return self._observe_one(sims[0])
        scanning = self.options.scan
        if len(sims) == 1:
            sim = sims[0]
            sensors = sim.sensors
            if scanning:
                ranges = np.array([sensors[key] for key in sim.scan_keys]) \
                    if type(sensors) is dict else stacked(sensors, sim.scan_keys)
            states = sim.engine.planar_states()[:len(sim.controlled)]
        else:
            if scanning:
                ranges = np.concatenate([stacked(s.sensors, s.scan_keys) for s in sims])
            states = np.concatenate([s.engine.planar_states()[:len(s.controlled)]
                                     for s in sims])
        obs = {}
        if scanning:
            obs['scan'] = clip_ranges(ranges, low, high, out=ranges)  # fresh: clipped in place
        planar = states.astype(np.float32)
        table = self._table
        lap = table.astype(np.float32)
        obs |= {
            'pose': planar[:, 0:3],
            'velocity': planar[:, 3:6],
            'steering': planar[:, 6:7],
            'lap_fraction': lap[:, 0:1],
            'progress': lap[:, 1:2],
            'laps': table[:, 2:3].astype(np.int32),
            'lap_time': lap[:, 3:4],
        }
        for key, name in self.extra.items():  # renderers reuse their buffers: copied
            obs[key] = np.stack([s.sensors[f'{car}/{name}'] for s in sims
                                 for car in s.controlled])
        return obs

    def _observe_one(self, sim: Sim) -> dict[str, np.ndarray]:
        """``_observe`` of a race of one controlled car, from its state record: a third of
        the array calls, the same values; without the row axis where ``unbatched``."""
        low, high = self.scan_range
        car = sim.controlled[0]
        s = sim.engine.states[car]
        lap_fraction, progress, laps, lap_time = self._table[0].tolist()
        # One buffer for the scalars, handed out as views.
        values = np.array((s.x, s.y, s.yaw, s.vx, s.vy, s.yaw_rate, s.steering_angle,
                           lap_fraction, progress, lap_time), np.float32)
        one = {'scan': clip_ranges(sim.sensors[sim.scan_keys[0]], low, high)} \
            if self.options.scan else {}
        one |= {
            'pose': values[0:3],
            'velocity': values[3:6],
            'steering': values[6:7],
            'lap_fraction': values[7:8],
            'progress': values[8:9],
            'laps': np.array((laps,), np.int32),
            'lap_time': values[9:10],
        }
        for key, name in self.extra.items():  # renderers reuse their buffers: copied
            one[key] = sim.sensors[f'{car}/{name}'].copy()
        if self.unbatched:
            return one
        return {key: value[None] for key, value in one.items()}

    def close(self) -> None:
        for sim in self.sims:
            sim.close()


def _policies(options: RaceOptions, sim: Sim) -> dict[str, PurePursuit | FollowTheGap]:
    """The built-in drivers of the cars nobody controls."""
    policies: dict[str, PurePursuit | FollowTheGap] = {}
    track = sim.setup.track
    for name in sim.names:
        if name in sim.controlled or options.opponents == 'none':
            continue
        p = sim.engine.configs[name].params
        if options.opponents == 'pure_pursuit':
            line = track.raceline if track.raceline is not None else track.centerline
            speeds = track.raceline_speed if track.raceline is not None else None
            policies[name] = PurePursuit(
                lane(line, sim.engine.start_poses[name]), wheelbase=p.body.wheelbase,
                max_steering=p.steering.max_angle, max_speed=p.longitudinal.max_speed,
                speeds=speeds, friction=p.tyre.friction, speed_scale=options.opponent_speed)
        else:
            scan = sim.setup.scan[name]
            policies[name] = FollowTheGap(
                angle_min=scan.angle_min, angle_increment=scan.angle_increment,
                max_steering=p.steering.max_angle, max_speed=p.longitudinal.max_speed,
                speed_scale=options.opponent_speed)
    return policies


def _drive_opponents(sim: Sim) -> None:
    frame = sim.frame
    assert frame is not None
    for name, policy in sim.policies.items():
        if isinstance(policy, PurePursuit):
            steer, speed = policy.act(frame.states[name])
        else:
            steer, speed = policy.act(sim.sensors[f'{name}/{sim.setup.scan[name].name}'])
        sim.engine.vehicles[name].set_ackermann(speed, steer)


def lane(line: np.ndarray, start: tuple[float, float, float]) -> np.ndarray:
    """``line`` moved sideways to where ``start`` lies beside it: cars that start side by side
    keep their lanes instead of converging onto one line and into each other."""
    points = np.asarray(line, dtype=np.float64)
    nearest = int(np.argmin(np.hypot(*(points - start[:2]).T)))
    side = float(np.dot(np.asarray(start[:2]) - points[nearest], left_normals(points)[nearest]))
    return offset(points, side)


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
