"""What a required process's end looks like to the user, the same under both launchers.

A simulation is only useful whole: without its backend, bridge, track loader, a car's dynamics
or its sensors, the others would wait or publish stale data. So when a required process ends,
or lives on without a sign of life, the launcher stops every other one and says once which
process it was, what happened and what it printed last (its own last words are usually the
reason).
"""

from __future__ import annotations

import signal
from collections import deque

from arsim_launch.node_spec import NodeSpec

LAST_LINES = 12  # lines of a failed process's output repeated in the failure message


class LastLines:
    """The last ``LAST_LINES`` lines a process printed, fed with chunks as they arrive."""

    def __init__(self, size: int = LAST_LINES) -> None:
        self.lines: deque[str] = deque(maxlen=size)
        self._partial = ''

    def feed(self, chunk: bytes | str) -> None:
        text = chunk.decode(errors='replace') if isinstance(chunk, bytes) else chunk
        *complete, self._partial = (self._partial + text).split('\n')
        self.lines.extend(line.rstrip('\r') for line in complete if line.strip())

    def last(self) -> list[str]:
        tail = [self._partial] if self._partial.strip() else []
        return [*self.lines, *tail][-self.lines.maxlen:] if self.lines.maxlen else []


def describe(spec: NodeSpec) -> str:
    """The process and, for a container, the nodes it hosts: the user knows the node names."""
    if spec.members:
        return f'{spec.name} (hosting {", ".join(m.name for m in spec.members)})'
    return spec.name


def how_it_ended(code: int | None) -> str:
    """``exited with code 1`` or ``was killed by SIGKILL`` (negative codes are signals)."""
    if code is not None and code < 0:
        try:
            return f'was killed by {signal.Signals(-code).name}'
        except ValueError:
            return f'was killed by signal {-code}'
    return f'exited with code {code}'


def failure_message(spec: NodeSpec, code: int | None, last: list[str]) -> str:
    """The one message a launcher prints when required process ``spec`` ended by itself."""
    return _stopping_because(spec, how_it_ended(code), last)


def silence_message(spec: NodeSpec, seconds: float, last: list[str]) -> str:
    """The one message a launcher prints when required process ``spec`` lives on but has
    shown no sign of life for ``seconds`` (``arsim_core.process.heartbeat``)."""
    return _stopping_because(spec, f'stopped answering (no sign of life for {seconds:.1f} s '
                                   f'of wall time)', last)


def _stopping_because(spec: NodeSpec, what: str, last: list[str]) -> str:
    text = f'[arsim] required process {describe(spec)} {what}; stopping the simulation'
    if not last:
        return f'{text} (it printed nothing)'
    return text + '. Its last lines:\n' + '\n'.join(f'    | {line}' for line in last)
