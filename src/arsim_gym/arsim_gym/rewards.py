"""Rewards as small plug-ins that take arrays: one row per controlled car (per environment of
a vector env, per agent of the multi-agent env), so a reward of your own keeps the batched path.
A stateful reward keeps one value per row, and ``reset(race, mask)`` starts the rows in ``mask``
afresh: each environment's episode has its own state.

Per-car rewards (``reset(status)``, ``__call__(status, collided) -> float``) keep working:
the environment gives every row its own copy (``PerCar``). ``progress`` is the default."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeAlias, runtime_checkable

import numpy as np

from arsim_core.engine import CarRaceStatus


class RaceRows:
    """Every controlled car's race at the latest step, one row each (float64 unless said):
    ``lap_fraction`` (0 to 1), ``progress`` [m along the centerline since the start line],
    ``laps`` (int64, completed), ``lap_time`` [s, the current lap so far], ``collided`` (bool:
    began touching a barrier or a car in this step), and ``statuses()``, every row's full
    ``CarRaceStatus``, made on demand. A plain class with slots: made every step."""

    __slots__ = ('collided', 'lap_fraction', 'lap_time', 'laps', 'progress', 'statuses')

    def __init__(self, lap_fraction: np.ndarray, progress: np.ndarray, laps: np.ndarray,
                 lap_time: np.ndarray, collided: np.ndarray,
                 statuses: Callable[[], Sequence[CarRaceStatus]]) -> None:
        self.lap_fraction, self.progress, self.laps = lap_fraction, progress, laps
        self.lap_time, self.collided, self.statuses = lap_time, collided, statuses

    def __len__(self) -> int:
        return len(self.progress)


@runtime_checkable
class Reward(Protocol):
    """A batched reward: subclass ``BatchReward`` (or write the two methods) to get it."""

    def reset(self, race: RaceRows, mask: np.ndarray) -> None:
        """New episodes start for the rows where ``mask`` is true, at ``race``."""
        ...

    def __call__(self, race: RaceRows) -> np.ndarray:
        """One float64 reward per row for the step that ended at ``race``."""
        ...


class BatchReward:
    """Base of batched rewards: the marker the environments recognise them by."""

    def reset(self, race: RaceRows, mask: np.ndarray) -> None:
        """Nothing to keep by default."""

    def __call__(self, race: RaceRows) -> np.ndarray:
        raise NotImplementedError


class CarReward(Protocol):
    """A reward of one car, as arsim_gym took it before rewards took arrays."""

    def reset(self, status: CarRaceStatus) -> None: ...

    def __call__(self, status: CarRaceStatus, collided: bool) -> float: ...


class ProgressReward(BatchReward):
    """Metres gained along the centerline this step (negative when driving backwards), minus
    ``collision_penalty`` on a collision: dense, and its sum over a lap is the track length."""

    def __init__(self, collision_penalty: float = 1.0) -> None:
        self.collision_penalty = collision_penalty
        self._last = np.zeros(0)

    def reset(self, race: RaceRows, mask: np.ndarray) -> None:
        self._last = _kept(self._last, race.progress, mask)

    def __call__(self, race: RaceRows) -> np.ndarray:
        gained = race.progress - self._last
        self._last = race.progress  # a fresh array every step: kept as it is
        return np.subtract(gained, self.collision_penalty, out=gained, where=race.collided)


class LapReward(BatchReward):
    """1 for every completed lap, minus ``collision_penalty`` on a collision: sparse."""

    def __init__(self, collision_penalty: float = 1.0) -> None:
        self.collision_penalty = collision_penalty
        self._last = np.zeros(0)

    def reset(self, race: RaceRows, mask: np.ndarray) -> None:
        self._last = _kept(self._last, race.laps.astype(np.float64), mask)

    def __call__(self, race: RaceRows) -> np.ndarray:
        laps = race.laps.astype(np.float64)
        gained, self._last = laps - self._last, laps
        return np.subtract(gained, self.collision_penalty, out=gained, where=race.collided)


def _kept(last: np.ndarray, now: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``last`` with the rows in ``mask`` taken from ``now`` (all of them when the row count
    changed: a first reset)."""
    if last.shape != now.shape:
        return np.array(now, dtype=np.float64)
    out = last.copy()
    out[mask] = now[mask]
    return out


class PerCar(BatchReward):
    """A per-car reward for every row: each row gets its own deep copy of ``reward``, so a
    stateful one (progress since the last step) keeps one state per environment and car."""

    def __init__(self, reward: CarReward) -> None:
        self.template = reward
        self.rewards: list[CarReward] = []

    def reset(self, race: RaceRows, mask: np.ndarray) -> None:
        if len(self.rewards) != len(race):
            self.rewards = [copy.deepcopy(self.template) for _ in range(len(race))]
        statuses = race.statuses()
        for i in np.flatnonzero(mask).tolist():
            self.rewards[i].reset(statuses[i])

    def __call__(self, race: RaceRows) -> np.ndarray:
        statuses = race.statuses()
        collided = race.collided.tolist()
        return np.array([float(reward(status, hit)) for reward, status, hit
                         in zip(self.rewards, statuses, collided, strict=True)])


RewardSpec: TypeAlias = 'str | Reward | CarReward | Callable[[], Reward | CarReward]'
REWARDS: Mapping[str, Callable[[], Reward]] = {'progress': ProgressReward, 'lap': LapReward}


def check_reward(reward: Any) -> None:
    """Raise the error ``make_reward`` would, without making one."""
    if isinstance(reward, str):
        if reward not in REWARDS:
            msg = f'reward: unknown reward {reward!r}; expected one of {sorted(REWARDS)} or an ' \
                  f'object with reset() and __call__()'
            raise ValueError(msg)
    elif not (callable(reward) and hasattr(reward, 'reset')):
        msg = f'reward: expected a name in {sorted(REWARDS)} or an object with reset() and ' \
              f'__call__(), got {reward!r}'
        raise TypeError(msg)


def make_reward(reward: Any) -> BatchReward | Reward:
    """A batched reward of its own for one core: a name in REWARDS, a class (called with no
    arguments), or an object; a batched object is deep-copied, so two environments made from
    the same options never share state, and a per-car one is wrapped in ``PerCar``."""
    check_reward(reward)
    if isinstance(reward, str):
        return REWARDS[reward]()
    made = reward() if isinstance(reward, type) else copy.deepcopy(reward)
    if isinstance(made, BatchReward):
        return made
    return PerCar(made)
