"""``arsim/Race-v0`` as a native vector environment: N independent races in one process, the
N-race view of :class:`arsim_gym.core.RaceCore` (which packs one-car races into the cars of a
single engine; see there).

Autoreset follows Gymnasium 1.x's default (next step): the step after an episode ends
returns that sub-environment's first observation, with reward 0 and neither flag set.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from arsim_gym.core import RaceCore, RaceStep, ResetOptions
from arsim_gym.env import _lead
from arsim_gym.options import RaceOptions


class RaceVectorEnv(VectorEnv):
    metadata = {'autoreset_mode': AutoresetMode.NEXT_STEP, 'render_modes': ['rgb_array']}

    def __init__(self, num_envs: int, track: str | None = None, num_cars: int | None = None,
                 timestep: float = 0.01, **keywords: Any) -> None:
        if not isinstance(num_envs, int) or num_envs < 1:
            msg = f'num_envs: expected a whole number >= 1, got {num_envs!r}'
            raise ValueError(msg)
        keywords.pop('max_episode_steps', None)
        self.options = RaceOptions.from_keywords(track=track, num_cars=num_cars,
                                                 timestep=timestep, **keywords)
        self.num_envs = num_envs
        self.core = RaceCore(self.options, num_envs)
        self.render_mode = self.options.render_mode
        lead = (self.core.per_race,) if self.options.control == 'all' else ()
        self.single_action_space = _lead(self.core.car_action_space, lead)
        self.single_observation_space = spaces.Dict({
            key: _lead(space, lead) for key, space in self.core.car_space.spaces.items()})
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._autoreset = np.zeros(num_envs, dtype=bool)
        self._view: Any = None

    def reset(self, *, seed: int | list[int | None] | None = None,
              options: Mapping[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict]:
        seeds = _seeds(seed, self.num_envs)
        if not isinstance(seed, list):
            super().reset(seed=seed)
        for i, s in enumerate(seeds):
            if s is not None:
                self.core.rngs[i] = np.random.default_rng(s)
        parsed = ResetOptions.parse(options, self.num_envs)
        result = self.core.reset(np.ones(self.num_envs, dtype=bool), parsed)
        self._autoreset[:] = False
        return self._observation(result), self._info(result, np.ones(self.num_envs, bool))

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray,
                                          np.ndarray, dict]:
        restart = self._autoreset if self._autoreset.any() else None
        result = self.core.step(actions, restart)
        self._autoreset = result.terminated | result.truncated
        k = self.core.per_race
        rewards = result.rewards if k == 1 else result.rewards[::k].copy()
        return (self._observation(result), rewards, result.terminated, result.truncated,
                self._info(result))

    def _observation(self, result: RaceStep) -> dict[str, np.ndarray]:
        if self.options.control == 'all':
            n = self.num_envs
            return {key: value.reshape(n, -1, *value.shape[1:])
                    for key, value in result.observation.items()}
        return result.observation

    def _info(self, result: RaceStep, ended: np.ndarray | None = None) -> dict[str, Any]:
        """Gymnasium's vector info, each key with its ``_key`` mask: ``time`` and
        ``collision`` of every environment; ``race`` of the environments whose episode ended
        in this step (their final record; every one's at a reset), and ``events`` of those
        that have any. Making every environment's record every step would cost more than the
        rest of the step's Python."""
        n = self.num_envs
        if ended is None:
            ended = result.terminated | result.truncated
        race = np.full(n, None, dtype=object)
        for i in np.flatnonzero(ended).tolist():
            statuses = self.core.race_statuses(i)
            race[i] = dict(zip(self.core.sims[0 if self.core.packed else i].controlled,
                               statuses, strict=True)) \
                if self.options.control == 'all' else statuses[0]
        events = np.full(n, None, dtype=object)
        has_events = np.zeros(n, dtype=bool)
        for i, found in self.core.races_with_events().items():
            events[i], has_events[i] = found, True
        every = np.ones(n, dtype=bool)
        return {'time': result.time, '_time': every, 'race': race, '_race': ended.copy(),
                'collision': result.terminated, '_collision': every,
                'events': events, '_events': has_events}

    def render(self) -> tuple[Any, ...] | None:
        if self.render_mode is None:
            return None
        from arsim_gym.topdown import TopDownView

        pictures = []
        for sim in self.core.sims:
            if self._view is None or self._view.world is not sim.setup.world:
                self._view = TopDownView(sim.setup.world)
            footprints = {c.name: (c.profile.footprint.length, c.profile.footprint.width)
                          for c in sim.setup.scenario.cars}
            states = sim.engine.states
            if self.core.packed:  # each race is one of the engine's cars
                pictures += [self._view.draw({name: states[name]}, {name: footprints[name]},
                                             ego=name) for name in sim.names]
            else:
                pictures.append(self._view.draw(dict(states), footprints, ego=sim.names[0]))
        return tuple(pictures)

    def close_extras(self, **kwargs: Any) -> None:
        self.core.close()


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


__all__ = ['RaceVectorEnv', 'RaceOptions']
