"""``arsim/Race-v0`` as a native vector environment: N independent races in one process.

With one car per race on one track (the common RL set-up), the N races are N cars of a single
engine that neither see nor touch each other (``ghost`` collisions, cars invisible): one loop
integrates every vehicle, the referee and the race metrics handle all cars in one call, and
each car's episode restarts on its own. Anything else (opponents, a randomised track or
opponent count) runs N ordinary environments side by side.

Autoreset follows Gymnasium 1.x's default (next step): the step after an episode ends
returns that sub-environment's first observation, with reward 0 and neither flag set.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array

from arsim_core.engine import Engine, InProcessRenderer
from arsim_core.rows import stacked
from arsim_gym.env import RaceEnv, clip_ranges, parse_pose
from arsim_gym.rewards import LapReward, ProgressReward
from arsim_gym.setup import build_race


class RaceVectorEnv(VectorEnv):
    metadata = {'autoreset_mode': AutoresetMode.NEXT_STEP, 'render_modes': ['rgb_array']}

    def __init__(self, num_envs: int, **kwargs: Any) -> None:
        if not isinstance(num_envs, int) or num_envs < 1:
            msg = f'num_envs: expected a whole number >= 1, got {num_envs!r}'
            raise ValueError(msg)
        kwargs.pop('max_episode_steps', None)
        self.num_envs = num_envs
        self.template = RaceEnv(**kwargs)
        self.single_observation_space = self.template.observation_space
        self.single_action_space = self.template.action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.render_mode = self.template.render_mode
        self._batched = self._batchable(self.template)
        if self._batched:
            self._build_batch()
        else:
            self.envs = [self.template, *(RaceEnv(**kwargs) for _ in range(num_envs - 1))]
        self._autoreset = np.zeros(num_envs, dtype=bool)

    @staticmethod
    def _batchable(env: RaceEnv) -> bool:
        r = env.randomization
        return len(env.names) == 1 and not r.tracks and r.random_seeds is None \
            and r.opponents is None and not env.observe \
            and type(env.reward_fn) in (ProgressReward, LapReward)

    # --- one engine, N ghost cars -----------------------------------------------------------
    def _build_batch(self) -> None:
        t = self.template
        request = t._request
        setup = build_race(scenario=request.scenario, track=t.setup.track,
                           num_cars=self.num_envs, profile=request.profile,
                           timestep=request.timestep, observe=(), scan_all=True,
                           collisions={'response': 'ghost', 'cars_visible': False})
        self.setup = setup
        self.renderer = InProcessRenderer(t.threads, scan_intensity=False)
        self.engine = Engine(setup.scenario, self.renderer, sectors=t.sectors)
        self.engine.load_track(setup.world)
        metrics = self.engine.metrics
        if metrics is None:  # progress and laps need a centerline
            msg = f'track {setup.world.name!r} has no centerline to measure progress on'
            raise ValueError(msg)
        self.metrics = metrics
        self.cars = self.engine.names
        self.scan_keys = tuple(f'{car}/{setup.scan[car].name}' for car in self.cars)
        self.start = self.engine.start_poses[self.cars[0]]
        self.base_configs = dict(self.engine.configs)
        reward = t.reward_fn
        assert isinstance(reward, (ProgressReward, LapReward))  # as _batchable checked
        self.reward_kind = type(reward)
        self.penalty = reward.collision_penalty
        self._progress = np.zeros(self.num_envs)
        self._laps = np.zeros(self.num_envs)
        self._episode_start = np.zeros(self.num_envs)
        # the actions RaceEnv applies
        self._action_low, self._action_high = (np.array(bound) for bound in t._action_bounds)

    def reset(self, *, seed: int | list[int | None] | None = None,
              options: Mapping[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict]:
        seeds = _seeds(seed, self.num_envs)
        if not self._batched:
            rows = self._pose_rows(options) or [None] * self.num_envs
            results = [env.reset(seed=s, options=None if row is None else {'poses': row})
                       for env, s, row in zip(self.envs, seeds, rows, strict=True)]
            self._autoreset[:] = False
            return self._stack([o for o, _ in results]), self._merge([i for _, i in results])
        if not isinstance(seed, list):
            super().reset(seed=seed)
        self._rngs = [np.random.default_rng(s) for s in seeds]
        self.engine.reset({car: self.start for car in self.cars})
        self._restart(np.ones(self.num_envs, dtype=bool), options)
        self._autoreset[:] = False
        obs = self._batch_observation(self._scans)
        return obs, self._batch_info(np.zeros(self.num_envs, dtype=bool))

    def _restart(self, which: np.ndarray, options: Mapping[str, Any] | None = None
                 ) -> None:
        """New episodes for the envs in ``which``: randomised car and sensor, start pose."""
        t = self.template
        poses = {}
        given = self._pose_rows(options)
        for i in np.flatnonzero(which):
            car = self.cars[i]
            draw = t.randomization.draw(self._rngs[i])
            draw.apply(self.engine, self.base_configs, cars=(car,))
            self.renderer.reseed(int(self._rngs[i].integers(2 ** 31)), cars=(car,))
            if given is not None:
                poses[car] = given[i]
            else:
                poses[car] = draw.start_poses({car: self.start}, self.setup.track)[car]
        self._scans = self.engine.restart(poses)
        table = self.metrics.progress_table([self.cars[i] for i in np.flatnonzero(which)])
        self._progress[which] = table[:, 1]
        self._laps[which] = table[:, 2]
        self._episode_start[which] = self.engine.time_ns * 1e-9

    def _pose_rows(self, options: Mapping[str, Any] | None) -> list[Any] | None:
        """The ``poses`` reset option, one entry per environment (that environment's poses,
        as RaceEnv takes them), or None."""
        options = dict(options or {})
        unknown = sorted(set(options) - {'poses'})
        if unknown:
            msg = f'reset options: unknown key(s) {unknown}; expected "poses"'
            raise ValueError(msg)
        if options.get('poses') is None:
            return None
        rows = options['poses']
        if isinstance(rows, (str, bytes, Mapping)) or not hasattr(rows, '__len__') \
                or len(rows) != self.num_envs:
            msg = (f'reset option poses: expected one entry per environment ({self.num_envs}), '
                   f'each the poses RaceEnv takes, got {rows!r}')
            raise ValueError(msg)
        if not self._batched:
            return list(rows)
        return [parse_pose(row, f'poses[{i}]') for i, row in enumerate(rows)]

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray,
                                          np.ndarray, dict]:
        if not self._batched:
            return self._step_envs(actions)
        t = self.template
        rows = np.asarray(actions, dtype=np.float64).reshape(self.num_envs, 2)
        usable = np.asarray(((rows >= self._action_low) & (rows <= self._action_high))
                            .all(axis=1))
        if not usable.all():  # NaN fails both comparisons
            for i in np.flatnonzero(~usable):
                t._valid(*rows[i].tolist())  # warns, as RaceEnv does
        restarting = self._autoreset
        any_restarting = bool(restarting.any())
        if any_restarting:
            usable &= ~restarting
        if t.action_mode == 'speed':
            self.engine.drive_all(rows[:, 1], rows[:, 0], usable)
        else:
            self.engine.set_inputs_all(rows[:, 0], rows[:, 1], usable)
        frame = self.engine.advance()
        scans = frame.sensors
        if any_restarting:
            self._restart(restarting)
            scans = {**scans, **self._scans}
        table = self.metrics.progress_table(self.cars)
        collided = self._collided()
        if self.reward_kind is ProgressReward:
            rewards = table[:, 1] - self._progress
        else:
            rewards = table[:, 2] - self._laps
        if collided.any():
            rewards -= self.penalty * collided
        self._progress, self._laps = table[:, 1], table[:, 2]
        terminated = collided
        truncated = np.zeros(self.num_envs, dtype=bool)
        if t.max_time is not None:
            truncated |= self.engine.time_ns * 1e-9 - self._episode_start >= t.max_time - 1e-9
        if t.max_laps is not None:
            truncated |= table[:, 2] >= t.max_laps
        if any_restarting:
            terminated = terminated & ~restarting
            truncated &= ~restarting
            rewards[restarting] = 0.0
        self._autoreset = terminated | truncated
        obs = self._batch_observation(scans, table)
        return obs, rewards, terminated, truncated, self._batch_info(terminated)

    def _collided(self) -> np.ndarray:
        """Which envs' cars touch something in this frame."""
        contacts = self.engine.referee.in_contact
        if not contacts:
            return np.zeros(self.num_envs, dtype=bool)
        touching = {car for car, _ in contacts}
        return np.array([car in touching for car in self.cars], dtype=bool)

    def _batch_observation(self, scans: Mapping[str, np.ndarray],
                           table: np.ndarray | None = None) -> dict[str, np.ndarray]:
        if table is None:
            table = self.metrics.progress_table(self.cars)
        low, high = self.template._scan_range
        ranges = stacked(scans, self.scan_keys)  # this frame's own array: clipped in place
        clip_ranges(ranges, low, high, out=ranges)
        states = self.engine.planar_states().astype(np.float32)
        lap = table.astype(np.float32)
        return {
            'scan': ranges,
            'pose': states[:, 0:3],
            'velocity': states[:, 3:6],
            'steering': states[:, 6:7],
            'lap_fraction': lap[:, 0:1],
            'progress': lap[:, 1:2],
            'laps': table[:, 2:3].astype(np.int32),
            'lap_time': lap[:, 3:4],
        }

    def _batch_info(self, collided: np.ndarray) -> dict[str, Any]:
        return {'time': self.engine.time_ns * 1e-9 - self._episode_start,
                'collision': collided}

    # --- N separate environments ------------------------------------------------------------
    def _step_envs(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray,
                                                np.ndarray, dict]:
        actions = np.asarray(actions)
        observations, infos = [], []
        rewards = np.zeros(self.num_envs)
        terminated = np.zeros(self.num_envs, dtype=bool)
        truncated = np.zeros(self.num_envs, dtype=bool)
        for i, env in enumerate(self.envs):
            if self._autoreset[i]:
                obs, info = env.reset()
            else:
                obs, rewards[i], terminated[i], truncated[i], info = env.step(actions[i])
            observations.append(obs)
            infos.append(info)
        self._autoreset = terminated | truncated
        return self._stack(observations), rewards, terminated, truncated, self._merge(infos)

    def _stack(self, observations: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
        out: Any = create_empty_array(self.single_observation_space, self.num_envs)
        batched: Any = concatenate(self.single_observation_space, observations, out)
        return batched  # a Dict space's: a dict of arrays

    def _merge(self, infos: list[dict[str, Any]]) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for i, info in enumerate(infos):
            merged = self._add_info(merged, info, i)
        return merged

    def render(self) -> tuple[Any, ...] | None:
        if self.render_mode is None:
            return None
        if not self._batched:
            return tuple(env.render() for env in self.envs)
        from arsim_gym.topdown import TopDownView

        if getattr(self, '_view', None) is None:
            self._view = TopDownView(self.setup.world)
        states = self.engine.states
        car = self.setup.scenario.cars[0].profile.footprint
        return tuple(self._view.draw({name: states[name]}, {name: (car.length, car.width)},
                                     ego=name) for name in self.cars)

    def close_extras(self, **kwargs: Any) -> None:
        if self._batched:
            self.engine.close()
        else:
            for env in self.envs:
                env.close()


def _seeds(seed: int | list[int | None] | None, n: int) -> list[int | None]:
    """Per-environment seeds in Gymnasium's convention: an int s gives s, s+1, ..."""
    if seed is None:
        return [None] * n
    if isinstance(seed, int):
        return [seed + i for i in range(n)]
    if len(seed) != n:
        msg = f'reset seed: expected {n} seeds, one per environment, got {len(seed)}'
        raise ValueError(msg)
    return list(seed)

