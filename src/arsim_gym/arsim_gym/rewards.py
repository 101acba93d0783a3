"""Rewards as small plug-ins: a class with ``reset`` and ``__call__``, chosen by name or
passed as an object. ``progress`` is the default."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from arsim_core.engine import CarRaceStatus


class Reward(Protocol):
    def reset(self, status: CarRaceStatus) -> None:
        """A new episode starts with the car at ``status``."""
        ...

    def __call__(self, status: CarRaceStatus, collided: bool) -> float:
        """The reward of one step that ended at ``status``."""
        ...


class ProgressReward:
    """Metres gained along the centerline this step (negative when driving backwards), minus
    ``collision_penalty`` on a collision: dense, and its sum over a lap is the track length."""

    def __init__(self, collision_penalty: float = 1.0) -> None:
        self.collision_penalty = collision_penalty
        self._progress = 0.0

    def reset(self, status: CarRaceStatus) -> None:
        self._progress = status.progress

    def __call__(self, status: CarRaceStatus, collided: bool) -> float:
        gained, self._progress = status.progress - self._progress, status.progress
        return gained - (self.collision_penalty if collided else 0.0)


class LapReward:
    """1 for every completed lap, minus ``collision_penalty`` on a collision: sparse."""

    def __init__(self, collision_penalty: float = 1.0) -> None:
        self.collision_penalty = collision_penalty
        self._laps = 0

    def reset(self, status: CarRaceStatus) -> None:
        self._laps = status.laps

    def __call__(self, status: CarRaceStatus, collided: bool) -> float:
        laps, self._laps = status.laps - self._laps, status.laps
        return float(laps) - (self.collision_penalty if collided else 0.0)


REWARDS: Mapping[str, Callable[[], Reward]] = {'progress': ProgressReward, 'lap': LapReward}


def make_reward(reward: str | Reward) -> Reward:
    """A reward from its name in REWARDS, or the object itself."""
    if isinstance(reward, str):
        if reward not in REWARDS:
            msg = f'reward: unknown reward {reward!r}; expected one of {sorted(REWARDS)} or an ' \
                  f'object with reset() and __call__()'
            raise ValueError(msg)
        return REWARDS[reward]()
    if not (callable(reward) and hasattr(reward, 'reset')):
        msg = f'reward: expected a name in {sorted(REWARDS)} or an object with reset() and ' \
              f'__call__(), got {reward!r}'
        raise TypeError(msg)
    return reward
