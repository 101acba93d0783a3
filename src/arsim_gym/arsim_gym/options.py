"""The keywords of ``arsim/Race-v0``, checked once into one frozen record that every face (the
single, vector and multi-agent environments) builds its race from."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from arsim_core.engine.randomization import Randomization
from arsim_core.track import Track
from arsim_gym.rewards import RewardSpec, check_reward

CONTROLS = ('ego', 'all')
ACTIONS = ('speed', 'accel')  # [steering angle, speed] | [steering velocity, acceleration]
OPPONENT_POLICIES = ('pure_pursuit', 'follow_the_gap', 'none')
RENDER_MODES = ('rgb_array',)


@dataclass(frozen=True)
class RaceOptions:
    """What the user asked ``gymnasium.make`` for; see docs/gym.md for each field."""

    track: str | Track | None = None
    num_cars: int | None = None
    timestep: float = 0.01
    scenario: str | None = None
    profile: str | None = None
    control: str = 'ego'
    action: str = 'speed'
    opponents: str = 'pure_pursuit'
    opponent_speed: float = 0.7
    observe: tuple[str, ...] = ()
    scan: bool = True
    reward: RewardSpec = 'progress'
    max_time: float | None = None
    max_laps: int | None = None
    randomization: Randomization = dataclasses.field(
        default_factory=lambda: Randomization.load(None))
    collisions: str | None = None
    sectors: tuple[float, ...] | None = None
    threads: int = 1
    render_mode: str | None = None

    @classmethod
    def from_keywords(cls, **keywords: Any) -> RaceOptions:
        """Checked options from ``gymnasium.make``'s keywords: an unknown keyword is a
        ``TypeError`` listing the valid ones, a bad value a ``ValueError`` naming its key."""
        unknown = sorted(set(keywords) - set(KEYWORDS))
        if unknown:
            msg = f'unknown keyword(s) {unknown}; arsim/Race-v0 takes {", ".join(KEYWORDS)}'
            raise TypeError(msg)
        given = {key: value for key, value in keywords.items() if value is not None
                 or key in ('track', 'num_cars')}
        for key, choices in (('control', CONTROLS), ('action', ACTIONS),
                             ('opponents', OPPONENT_POLICIES)):
            if key in given and given[key] not in choices:
                msg = f'{key}: expected one of {list(choices)}, got {given[key]!r}'
                raise ValueError(msg)
        if given.get('render_mode') not in (None, *RENDER_MODES):
            msg = f'render_mode: expected one of {list(RENDER_MODES)} or None, ' \
                  f'got {given["render_mode"]!r}'
            raise ValueError(msg)
        threads = given.get('threads', 1)
        if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
            msg = f'threads: expected a whole number >= 1, got {threads!r}'
            raise ValueError(msg)
        if not isinstance(given.get('scan', True), bool):
            msg = f'scan: expected True or False, got {given["scan"]!r}'
            raise ValueError(msg)
        if 'observe' in given:
            observe = given['observe']
            if isinstance(observe, str) or not all(isinstance(s, str) for s in observe):
                msg = f'observe: expected a sequence of sensor names, got {observe!r}'
                raise ValueError(msg)
            given['observe'] = tuple(observe)
        for key in ('timestep', 'opponent_speed', 'max_time'):
            if key in given:
                given[key] = _number(key, given[key])
        if 'sectors' in given:
            given['sectors'] = tuple(_number('sectors', s) for s in given['sectors'])
        if 'reward' in given:
            check_reward(given['reward'])
        given['randomization'] = Randomization.load(given.get('randomization'))
        options = cls(**given)
        if options.control == 'all' and options.randomization.opponents is not None:
            msg = ("randomization: opponents cannot vary with control='all': the action and "
                   'observation spaces have one row per car and must not change')
            raise ValueError(msg)
        return options

    @property
    def collision_overrides(self) -> Mapping[str, Any] | None:
        """The scenario's ``collisions`` section as these options change it."""
        return None if self.collisions is None else {'response': self.collisions}


KEYWORDS = tuple(field.name for field in dataclasses.fields(RaceOptions))


def _number(key: str, value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        msg = f'{key}: expected a number, got {value!r}'
        raise ValueError(msg) from None
