"""Who drives a car in a race run in process (``cars[i].driver`` in a scenario, an entry of a
league spec): a built-in driver of the zoo by name, or a user's Gym policy by import path
``package.module:callable`` (docs/race-control.md, "The driver zoo").

Only the names live here, so that a misspelt driver stops the start with the file, line and
key; the drivers themselves are ``arsim_core.drivers``.
"""

from __future__ import annotations

import re

from arsim_core.yaml_fields import Section

NOVICE = 'novice'
CLUB = 'club'
EXPERT = 'expert'
FOLLOW_THE_GAP = 'follow_the_gap'
RACER = 'racer'
#: The zoo, slowest first (``arsim_core.drivers.zoo.ZOO`` builds each).
ZOO_NAMES = (NOVICE, CLUB, EXPERT, FOLLOW_THE_GAP, RACER)
#: The zoo's drivers of the racing line: they drive by the race's ground truth, no sensor.
LINE_DRIVERS = (NOVICE, CLUB, EXPERT, RACER)
NO_DRIVER = ''  # the car's own stack drives it (a ROS node, the gym's action)
_IDENTIFIERS = r'[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*'
IMPORT_PATH = re.compile(rf'^{_IDENTIFIERS}:{_IDENTIFIERS}$')


def is_policy(driver: str) -> bool:
    """Whether ``driver`` names a Gym policy by import path rather than a zoo driver."""
    return IMPORT_PATH.match(driver) is not None


def load_driver(section: Section, key: str, default: str | None = NO_DRIVER) -> str:
    """``key`` of ``section`` as a driver: a zoo name or ``module:callable``."""
    value = section.string(key) if default is None else section.string(key, default)
    if value != NO_DRIVER and value not in ZOO_NAMES and not is_policy(value):
        section.fail(f'unknown driver {value!r}; expected one of {list(ZOO_NAMES)} or a Gym '
                     f'policy as package.module:callable', key)
    return value
