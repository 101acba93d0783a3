"""``arsim/Race-v0``'s vector environment with its races in Ray actors, on one machine or a
cluster: the spaces, the autoreset (Gymnasium's next step) and the ``info`` of
:class:`arsim_gym.vector.RaceVectorEnv`, so training code written for one runs on the other.

Each actor holds one in-process ``RaceVectorEnv`` for a contiguous share of the environments.
A step is one remote call per actor, all in flight together: the actor gets its rows of the
action array and answers with its observation arrays, rewards and flags, its ``info`` sparse
(the object entries only where their mask is set) and the warnings its step raised, which are
raised again here. Environment i is seeded as the in-process env seeds environment i, so both
run the same episodes bit for bit; on the packed path two things follow the car's index in its
actor's engine instead: sensor noise and the car's name in race records and events (see
docs/gym.md).

Ray is imported when an environment is made, not with this module. Ray runs whatever it is
sent: read docs/security.md before a cluster's ports are reachable by anyone else.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space

from arsim_gym.core import ResetOptions
from arsim_gym.options import RaceOptions
from arsim_gym.vector import RaceVectorEnv, _seeds

Caught = list[tuple[str, type[Warning]]]
#: One ``info`` entry as an actor sends it: (values, mask) arrays, or (indices, objects) where
#: the values are Python objects (race records, events), sent only where the mask is set.
PackedInfo = dict[str, tuple[np.ndarray, Any]]


class RaceActor:
    """What runs in one Ray actor: a ``RaceVectorEnv`` of its share of the environments."""

    def __init__(self, num_envs: int, keywords: Mapping[str, Any]) -> None:
        self.env = RaceVectorEnv(num_envs, **keywords)

    def spaces(self) -> tuple[Any, Any]:
        return self.env.single_observation_space, self.env.single_action_space

    def reset(self, seeds: list[int | None], options: Mapping[str, Any] | None
              ) -> tuple[dict[str, np.ndarray], PackedInfo, Caught]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            obs, info = self.env.reset(seed=seeds, options=options)
        return obs, pack_info(info), _messages(caught)

    def step(self, rows: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray,
                                              np.ndarray, PackedInfo, Caught]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            obs, rewards, terminated, truncated, info = self.env.step(rows)
        return obs, rewards, terminated, truncated, pack_info(info), _messages(caught)

    def render(self) -> tuple[Any, ...] | None:
        return self.env.render()

    def close(self) -> None:
        self.env.close()


class RayRaceVectorEnv(VectorEnv):
    """``num_envs`` races shared by ``num_actors`` Ray actors (default: as many as the Ray
    cluster has free CPUs for, at most one per environment), each reserving ``actor_cpus``
    CPUs (default ``threads``; a fraction packs more actors on a machine, 0 reserves none).
    ``address``: the Ray cluster to connect to when this process has not joined one yet
    (None: the one ``ray start`` made on this machine, else a new local one); the other
    keywords are ``RaceVectorEnv``'s. Files the keywords name (tracks, profiles, randomisation
    YAML) must be readable at the same path on every machine of the cluster."""

    metadata = RaceVectorEnv.metadata

    def __init__(self, num_envs: int, track: Any = None, num_cars: int | None = None,
                 timestep: float = 0.01, *, num_actors: int | None = None,
                 actor_cpus: float | None = None, address: str | None = None,
                 **keywords: Any) -> None:
        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
            msg = f'num_envs: expected a whole number >= 1, got {num_envs!r}'
            raise ValueError(msg)
        keywords.pop('max_episode_steps', None)
        built = {'track': track, 'num_cars': num_cars, 'timestep': timestep, **keywords}
        self.options = RaceOptions.from_keywords(**built)  # bad keywords fail before Ray starts
        self.num_envs = num_envs
        self.render_mode = self.options.render_mode
        self.actors: list[Any] = []
        ray = _ray()
        if not ray.is_initialized():
            ray.init(address=address, include_dashboard=False, logging_level=logging.WARNING,
                     log_to_driver=False)
        cpus = _actor_cpus(actor_cpus, self.options.threads)
        count = _actor_count(num_actors, num_envs, cpus, ray.available_resources())
        self.shares = _shares(num_envs, count)
        remote = ray.remote(num_cpus=cpus, max_restarts=0)(RaceActor)
        self.actors = [remote.remote(stop - start, built) for start, stop in self.shares]
        try:  # every actor built, or the first error of one
            (single_observation, single_action), *_ = ray.get(
                [actor.spaces.remote() for actor in self.actors])
        except BaseException:
            self._end_actors()
            self.actors = []
            raise
        self.single_observation_space = single_observation
        self.single_action_space = single_action
        self.observation_space = batch_space(single_observation, num_envs)
        self.action_space = batch_space(single_action, num_envs)

    def reset(self, *, seed: int | list[int | None] | None = None,
              options: Mapping[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict]:
        seeds = _seeds(seed, self.num_envs)
        if not isinstance(seed, list):
            super().reset(seed=seed)
        poses = ResetOptions.parse(options, self.num_envs).poses  # checked here, once
        ray = _ray()
        parts = ray.get([
            actor.reset.remote(seeds[start:stop],
                               None if poses is None else {'poses': list(poses[start:stop])})
            for actor, (start, stop) in zip(self.actors, self.shares, strict=True)])
        _warn_again([part[-1] for part in parts])
        return (_concatenate([part[0] for part in parts]),
                self._info([part[1] for part in parts]))

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray,
                                          np.ndarray, dict]:
        rows = np.asarray(actions, dtype=np.float64).reshape(self.num_envs, -1)
        ray = _ray()
        parts = ray.get([actor.step.remote(rows[start:stop]) for actor, (start, stop)
                         in zip(self.actors, self.shares, strict=True)])
        _warn_again([part[-1] for part in parts])
        # concatenated, even from one actor: fresh arrays the caller may write to
        return (_concatenate([part[0] for part in parts]),
                np.concatenate([part[1] for part in parts]),
                np.concatenate([part[2] for part in parts]),
                np.concatenate([part[3] for part in parts]),
                self._info([part[4] for part in parts]))

    def _info(self, parts: Sequence[PackedInfo]) -> dict[str, Any]:
        """The actors' packed ``info`` as ``RaceVectorEnv`` gives it: each key beside its
        ``_key`` mask, object entries None where the mask is clear."""
        info: dict[str, Any] = {}
        for key, (_, rest) in parts[0].items():
            if isinstance(rest, list):
                values = np.full(self.num_envs, None, dtype=object)
                mask = np.zeros(self.num_envs, dtype=bool)
                for (start, _), part in zip(self.shares, parts, strict=True):
                    where, objects = part[key]
                    for i, item in zip((where + start).tolist(), objects, strict=True):
                        values[i] = item  # one by one: a tuple must not become a row
                    mask[where + start] = True
            else:
                values = np.concatenate([part[key][0] for part in parts])
                mask = np.concatenate([part[key][1] for part in parts])
            info[key], info[f'_{key}'] = values, mask
        return info

    def render(self) -> tuple[Any, ...] | None:
        if self.render_mode is None:
            return None
        pictures = _ray().get([actor.render.remote() for actor in self.actors])
        return tuple(picture for part in pictures for picture in part)

    def close_extras(self, **kwargs: Any) -> None:
        """Close every actor's environments and end the actors (Ray itself stays up)."""
        ray = _ray()
        if self.actors and ray.is_initialized():
            try:
                ray.get([actor.close.remote() for actor in self.actors])
            finally:
                self._end_actors()
        self.actors = []

    def _end_actors(self) -> None:
        ray = _ray()
        for actor in self.actors:
            ray.kill(actor)


def pack_info(info: Mapping[str, Any]) -> PackedInfo:
    """``info`` of a ``RaceVectorEnv`` to send: arrays of numbers with their masks as they
    are, object arrays as the indices where their mask is set and the objects there."""
    packed: PackedInfo = {}
    for key, values in info.items():
        if key.startswith('_'):
            continue
        mask = info[f'_{key}']
        if values.dtype == object:
            where = np.flatnonzero(mask)
            packed[key] = (where, [values[i] for i in where.tolist()])
        else:
            packed[key] = (values, mask)
    return packed


def _concatenate(parts: Sequence[Mapping[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}


def _messages(caught: list[warnings.WarningMessage]) -> Caught:
    return [(str(w.message), w.category) for w in caught]


def _warn_again(caught: Sequence[Caught]) -> None:
    """The actors' warnings, raised at the caller of ``step`` or ``reset`` as the
    in-process environment raises them."""
    for messages in caught:
        for message, category in messages:
            warnings.warn(message, category, stacklevel=3)


def _shares(num_envs: int, actors: int) -> list[tuple[int, int]]:
    """The environments [start, stop) of each actor: contiguous, sizes differing by one."""
    base, extra = divmod(num_envs, actors)
    shares, start = [], 0
    for i in range(actors):
        stop = start + base + (1 if i < extra else 0)
        shares.append((start, stop))
        start = stop
    return shares


def _actor_cpus(asked: float | None, threads: int) -> float:
    if asked is None:
        return float(threads)
    if isinstance(asked, bool) or not isinstance(asked, (int, float)) or not asked >= 0.0:
        msg = f'actor_cpus: expected a number >= 0, got {asked!r}'
        raise ValueError(msg)
    return float(asked)


def _actor_count(asked: int | None, num_envs: int, cpus: float,
                 free: Mapping[str, float]) -> int:
    """How many actors: ``asked``, checked, or one per ``cpus`` of the cluster's ``free``
    CPUs. Actors that find no free CPUs wait for some (an autoscaler's new machines)."""
    available = float(free.get('CPU', 0.0))
    if asked is None:
        fit = num_envs if cpus == 0.0 else int(available // cpus)
        return max(1, min(num_envs, fit))
    if not isinstance(asked, int) or isinstance(asked, bool) or not 1 <= asked <= num_envs:
        msg = f'num_actors: expected a whole number from 1 to num_envs ({num_envs}), got {asked!r}'
        raise ValueError(msg)
    if asked * cpus > available:
        warnings.warn(f'num_actors: {asked} actors of {cpus:g} CPU(s) each need '
                      f'{asked * cpus:g} CPUs, the Ray cluster has {available:g} free: the rest '
                      'wait until CPUs are freed or added', stacklevel=3)
    return asked


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        msg = ("RayRaceVectorEnv needs Ray on this machine and on every machine of the "
               "cluster: pip install 'ray>=2.9'")
        raise ImportError(msg) from exc
    return ray


__all__ = ['RayRaceVectorEnv', 'RaceActor', 'pack_info']
