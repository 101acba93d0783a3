"""``arsim/Race-v0`` for multi-agent learning: a PettingZoo ``ParallelEnv`` in which every car
of the scenario is an agent, on the same core as the Gymnasium environments (one race, every
car controlled).

Each agent observes what a single environment's ego observes and acts as it does. Its reward
is its own (the ``reward`` keyword, one row per car); ``info`` holds its own race record and
events. The race is one episode: it ends for every agent when a car touches a barrier or
another car (terminated), or at ``max_time``/``max_laps`` of the first car (truncated), as
with ``control="all"`` in the single environment. Unknown reset options are ignored with a
warning, not refused: PettingZoo's API test resets with a made-up option.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv  # type: ignore[import-untyped]

from arsim_gym.core import RaceCore, RaceStep, ResetOptions
from arsim_gym.env import Picture
from arsim_gym.options import RaceOptions

AgentID = str


class RaceParallelEnv(ParallelEnv[AgentID, dict[str, np.ndarray], np.ndarray]):
    """See docs/gym.md. Takes ``arsim/Race-v0``'s keywords but ``control`` (every car is
    an agent) and ``opponents`` (there are none)."""

    metadata = {'name': 'arsim_race_v0', 'render_modes': ['rgb_array'], 'render_fps': 30,
                'is_parallelizable': True}

    def __init__(self, track: str | None = None, num_cars: int | None = None,
                 timestep: float = 0.01, **keywords: Any) -> None:
        for fixed in ('control', 'opponents'):
            if fixed in keywords:
                msg = f'{fixed}: the multi-agent environment controls every car; leave it out'
                raise TypeError(msg)
        self.options = RaceOptions.from_keywords(track=track, num_cars=num_cars,
                                                 timestep=timestep, control='all',
                                                 **keywords)
        self.render_mode = self.options.render_mode
        self.core = RaceCore(self.options, 1)
        self.possible_agents = list(self.core.sims[0].controlled)
        self.agents: list[AgentID] = []
        self.observation_spaces = {a: self.core.car_space for a in self.possible_agents}
        self.action_spaces = {a: self.core.car_action_space for a in self.possible_agents}
        self._rng = np.random.default_rng()
        self._picture = Picture()

    def observation_space(self, agent: AgentID) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: AgentID) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None
              ) -> tuple[dict[AgentID, dict[str, np.ndarray]], dict[AgentID, dict]]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.core.rngs[0] = self._rng
        parsed = ResetOptions.parse(options, None, strict=False)
        result = self.core.reset(np.ones(1, dtype=bool), parsed)
        self.agents = list(self.possible_agents)
        return self._observations(result), self._infos(result)

    def step(self, actions: Mapping[AgentID, Any]) -> tuple[
            dict[AgentID, dict[str, np.ndarray]], dict[AgentID, float], dict[AgentID, bool],
            dict[AgentID, bool], dict[AgentID, dict]]:
        if not self.agents:
            msg = 'step after the episode ended: call reset() first'
            raise RuntimeError(msg)
        unknown = sorted(set(actions) - set(self.agents))
        if unknown:
            msg = f'actions for unknown or finished agent(s) {unknown}; the agents are ' \
                  f'{self.agents}'
            raise KeyError(msg)
        rows = np.zeros((len(self.possible_agents), 2))
        hold = np.ones(len(self.possible_agents), dtype=bool)  # no action: last command
        for i, agent in enumerate(self.possible_agents):
            if agent in actions:
                rows[i] = np.asarray(actions[agent], dtype=np.float64).reshape(2)
                hold[i] = False
        result = self.core.step(rows, hold=hold)
        observations, infos = self._observations(result), self._infos(result)
        rewards = dict(zip(self.agents, result.rewards.tolist(), strict=True))
        terminated, truncated = bool(result.terminated[0]), bool(result.truncated[0])
        terminations = {agent: terminated for agent in self.agents}
        truncations = {agent: truncated for agent in self.agents}
        if terminated or truncated:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _observations(self, result: RaceStep) -> dict[AgentID, dict[str, np.ndarray]]:
        obs = result.observation
        return {agent: {key: value[i] for key, value in obs.items()}
                for i, agent in enumerate(self.possible_agents)}

    def _infos(self, result: RaceStep) -> dict[AgentID, dict]:
        time = float(result.time[0])
        events = self.core.events(0)
        statuses = self.core.statuses()
        return {agent: {'time': time, 'race': statuses[i],
                        'collision': bool(result.collided[i]),
                        'events': tuple(e for e in events if e.car == agent)}
                for i, agent in enumerate(self.possible_agents)}

    def render(self) -> np.ndarray | None:
        if self.render_mode is None:
            return None
        return self._picture.draw(self.core)

    def close(self) -> None:
        self.core.close()


def parallel_env(**keywords: Any) -> RaceParallelEnv:
    """PettingZoo's conventional constructor name."""
    return RaceParallelEnv(**keywords)
