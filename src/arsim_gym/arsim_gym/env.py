"""``arsim/Race-v0``: a race on any track, stepped in process by the arsim engine.

One step is one engine frame of ``timestep`` seconds: the controlled cars take the action,
the others their built-in policy, every vehicle integrates, the referee judges, the race
metrics advance and the observed sensors render. No ROS, no sockets. The environment is the
one-race view of :class:`arsim_gym.core.RaceCore`, which the vector and multi-agent
environments share.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from arsim_core.dynamics import VehicleConfig
from arsim_core.engine import CarRaceStatus, Engine
from arsim_core.engine.randomization import Randomization
from arsim_gym.core import RaceCore, RaceStep, ResetOptions, clip_ranges, parse_pose
from arsim_gym.options import KEYWORDS, RaceOptions
from arsim_gym.setup import RaceSetup

RACE_KEYS = ('lap_fraction', 'progress', 'laps', 'lap_time')
__all__ = ['KEYWORDS', 'RACE_KEYS', 'RaceEnv', 'clip_ranges', 'parse_pose']


class RaceEnv(gymnasium.Env):
    """See docs/gym.md. Observation: a Dict of ``scan``, ``pose``, ``velocity``,
    ``steering`` and the race keys, plus any opted-in sensor; with ``control='all'`` every
    entry has a leading car axis and the action one row per car."""

    metadata = {'render_modes': ['rgb_array'], 'render_fps': 30}

    def __init__(self, track: str | None = None, num_cars: int | None = None,
                 timestep: float = 0.01, **keywords: Any) -> None:
        self.options = RaceOptions.from_keywords(track=track, num_cars=num_cars,
                                                 timestep=timestep, **keywords)
        self.render_mode = self.options.render_mode
        self.core = RaceCore(self.options, 1)
        self.core.rngs[0] = self.np_random
        self.core.unbatched = self.options.control != 'all'
        lead = (self.core.per_race,) if self.options.control == 'all' else ()
        self.action_space = _lead(self.core.car_action_space, lead)
        self.observation_space = spaces.Dict({
            key: _lead(space, lead) for key, space in self.core.car_space.spaces.items()})
        self._picture = Picture()
        self._started = False

    # --- what users and tests read ------------------------------------------------------------
    @property
    def engine(self) -> Engine:
        return self.core.sims[0].engine

    @property
    def setup(self) -> RaceSetup:
        return self.core.sims[0].setup

    @property
    def names(self) -> tuple[str, ...]:
        return self.core.sims[0].names

    @property
    def controlled(self) -> tuple[str, ...]:
        return self.core.sims[0].controlled

    @property
    def base_configs(self) -> Mapping[str, VehicleConfig]:
        """The cars' vehicles as the profiles give them, before any randomisation."""
        return self.core.sims[0].base_configs

    @property
    def randomization(self) -> Randomization:
        return self.options.randomization

    @property
    def reward(self) -> Any:
        """The reward in use: this environment's own copy of the one asked for."""
        return self.core.reward

    @property
    def _policies(self) -> Mapping[str, Any]:
        return self.core.sims[0].policies

    # --- the Gymnasium API ------------------------------------------------------------------
    def reset(self, *, seed: int | None = None,
              options: Mapping[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict]:
        super().reset(seed=seed)
        self.core.rngs[0] = self.np_random
        result = self.core.reset(np.ones(1, dtype=bool), ResetOptions.parse(options, None))
        self._started = True
        return self._observation(result), self._info(result)

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict]:
        result = self.core.step(action)
        return (self._observation(result), float(result.rewards[0]),
                bool(result.terminated[0]), bool(result.truncated[0]), self._info(result))

    def _observation(self, result: RaceStep) -> dict[str, np.ndarray]:
        """Rows of every car with ``control='all'``, else the ego's alone (``unbatched``)."""
        return result.observation

    def _info(self, result: RaceStep) -> dict[str, Any]:
        statuses = self.core.statuses()
        race: CarRaceStatus | dict[str, CarRaceStatus] = statuses[0]
        if self.options.control == 'all':
            race = dict(zip(self.controlled, statuses, strict=True))
        info: dict[str, Any] = {'time': float(result.time[0]), 'race': race,
                                'collision': bool(result.terminated[0]),
                                'events': self.core.events(0)}
        frame = self.core.sims[0].frame
        if frame is not None and frame.event is not None:  # the scenario's race.event
            info['event'] = frame.event
        return info

    def render(self) -> np.ndarray | None:
        if self.render_mode is None or not self._started:
            return None
        return self._picture.draw(self.core)

    def close(self) -> None:
        self.core.close()


def _lead(space: spaces.Space[Any], lead: tuple[int, ...]) -> spaces.Box:
    """``space`` (a Box) with a leading axis ``lead`` (none: itself)."""
    assert isinstance(space, spaces.Box)
    if not lead:
        return space
    return spaces.Box(np.broadcast_to(space.low, (*lead, *space.shape)).copy(),
                      np.broadcast_to(space.high, (*lead, *space.shape)).copy(),
                      dtype=space.dtype)


class Picture:
    """The top-down picture of a one-race core: track, cars, scans and the ego's lap."""

    def __init__(self) -> None:
        self._view: Any = None

    def draw(self, core: RaceCore) -> np.ndarray | None:
        sim = core.sims[0]
        if sim.frame is None:
            return None
        from arsim_gym.topdown import TopDownView

        if self._view is None or self._view.world is not sim.setup.world:
            self._view = TopDownView(sim.setup.world)
        footprints = {c.name: (c.profile.footprint.length, c.profile.footprint.width)
                      for c in sim.setup.scenario.cars}
        scans = {name: sim.sensors[f'{name}/{spec.name}']
                 for name, spec in sim.setup.scan.items()
                 if f'{name}/{spec.name}' in sim.sensors}
        geometry = {name: (spec.angle_min, spec.angle_increment,
                           (spec.mount.x, spec.mount.y, spec.mount.yaw))
                    for name, spec in sim.setup.scan.items()}
        status = core.statuses()[0]
        text = [f't {sim.engine.time_ns * 1e-9:6.2f} s  lap {status.laps}  '
                f'{status.lap_fraction * 100:5.1f} %']
        picture: np.ndarray = self._view.draw(sim.engine.states, footprints, scans, geometry,
                                              ego=sim.names[0], text=text)
        return picture
