"""The web page's commands as they arrive: bounded in size (by the socket), nesting and rate
before anything reads them.

A command is a flat JSON object (``{"op": "step", "frames": 1}``). Nesting is checked before the
parse: ``json.loads`` recurses once per level, and 2,000 levels, which fit in a few kilobytes,
end in a RecursionError instead of an answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

from arsim_core.log_limit import TokenBucket, clip

MAX_COMMAND_BYTES = 4096
MAX_COMMAND_DEPTH = 4  # of arrays and objects in one command; the page sends 1
COMMANDS_PER_S = 20  # that one page may send, after a burst of COMMAND_BURST
COMMAND_BURST = 40
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')  # no backtracking: the two branches never overlap


def depth(text: str) -> int:
    """How deep arrays and objects nest in the JSON ``text`` (brackets in strings aside)."""
    deepest = level = 0
    for char in _STRING.sub('""', text):
        if char in '[{':
            level += 1
            deepest = max(deepest, level)
        elif char in ']}':
            level -= 1
    return deepest


def parse(text: str) -> dict[str, Any]:
    """The command in ``text``; ValueError says what is wrong with one that is not."""
    nested = depth(text)
    if nested > MAX_COMMAND_DEPTH:
        msg = (f'a command nested {nested} levels deep; expected a JSON object of at most '
               f'{MAX_COMMAND_DEPTH} levels')
        raise ValueError(msg)
    try:
        command = json.loads(text)
    except ValueError as exc:
        msg = f'a command that is not JSON ({exc})'
        raise ValueError(msg) from exc
    if not isinstance(command, dict):
        msg = f'expected a JSON object with an "op", got {clip(repr(text), 80)}'
        raise ValueError(msg)
    return command


class CommandRate:
    """How many commands one page may send: a burst, then COMMANDS_PER_S. The excess is
    dropped; :meth:`admit` says when dropping starts, so the page hears of it once per run of
    dropped commands instead of once per command."""

    def __init__(self, per_s: float = COMMANDS_PER_S, burst: int = COMMAND_BURST) -> None:
        self._bucket = TokenBucket(burst=burst, period_s=1.0 / per_s)
        self._dropping = False
        self.per_s = per_s

    def admit(self) -> tuple[bool, bool]:
        """(whether to carry out the next command, whether dropping starts with it)."""
        admitted = self._bucket.take()
        starts = not admitted and not self._dropping
        self._dropping = not admitted
        return admitted, starts
