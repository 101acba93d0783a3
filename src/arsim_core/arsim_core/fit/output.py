"""What a fit writes: the fitted profile and the domain-randomisation file.

The profile is the starting one with the identified values replaced, every other key as it
was (a model path made absolute, since the file may land elsewhere); it is loaded back with
``load_profile`` before it counts as written, so a profile that would not load is never left.
The randomisation file draws each identified value within three standard deviations of the
fit, in the keys of ``arsim_core.engine.randomization``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import yaml

from arsim_core.config.profile import CarProfile, load_profile
from arsim_core.errors import ArsimError
from arsim_core.fit import FitError
from arsim_core.fit.identify import Verdict
from arsim_core.fit.parameters import Parameter

# The randomisation keys' physical limits (engine.randomization.LIMITS), kept in sync by a test.
MAX_ACTUATOR_TIME_S: Final = 10.0
MIN_HALF_WIDTH: Final = 0.01  # of the value: a range is never a single point


def write_profile(start: Path, out: Path, params: list[Parameter],
                  verdicts: Mapping[str, Verdict], bag: str) -> CarProfile:
    """``start`` with the identified values of ``params``, written to ``out`` and loaded back."""
    document = yaml.safe_load(start.read_text())
    if not isinstance(document, dict):
        msg = f'{start}: not a car profile (expected a mapping)'
        raise FitError(msg)
    model = document.get('model')
    if isinstance(model, str) and ':' in model and not Path(model.split(':')[0]).is_absolute():
        file, _, name = model.partition(':')
        document['model'] = f'{(start.parent / file).resolve()}:{name}'
    for p in params:
        verdict = verdicts[p.name]
        if verdict.value == verdict.start:
            continue
        for path, sign in p.paths:
            node = document
            for key in path[:-1]:
                node = node.setdefault(key, {})
            node[path[-1]] = _plain(sign * verdict.value)
    fitted = [p.name for p in params if verdicts[p.name].identified]
    guessed = [p.name for p in params if not verdicts[p.name].identified
               and verdicts[p.name].value != verdicts[p.name].start]
    header = (f'# Fitted by arsim-fit to {os.path.basename(bag)} from {start.name}.\n'
              f'# Identified: {", ".join(fitted) or "nothing"}.\n'
              + (f'# Best guesses the drive did not pin down (see the report): '
                 f'{", ".join(guessed)}.\n' if guessed else ''))
    write_text(out, header + yaml.safe_dump(document, sort_keys=False))
    try:
        return load_profile(out)
    except ArsimError as exc:
        msg = f'{out}: the fitted profile does not load ({exc})'
        raise FitError(msg) from exc


def randomization(params: list[Parameter], values: Mapping[str, float],
                  verdicts: Mapping[str, Verdict], friction: float) -> dict[str, list[float]]:
    """The randomisation ranges: each identified value +- 3 sigma within its key's limits;
    friction from the cornering stiffnesses' uncertainty, which it scales alike."""
    ranges: dict[str, list[float]] = {}
    for p in params:
        v = verdicts[p.name]
        if p.randomization is None or not v.identified or p.name == 'friction':
            continue
        value = values[p.name]
        half = max(MIN_HALF_WIDTH * abs(value), (v.high - v.low) / 2 if math.isfinite(
            v.high - v.low) else 0.0)
        centre = (v.low + v.high) / 2 if p.discrete else value
        lo, hi = centre - half, centre + half
        top = MAX_ACTUATOR_TIME_S if p.name.endswith(('dead_time', 'lag')) else math.inf
        floor = 0.0 if p.name.endswith(('dead_time', 'lag')) else value * 0.5
        ranges[p.randomization] = [_plain(max(lo, floor)), _plain(min(hi, top))]
    stiff = [verdicts[n] for n in ('cornering_stiffness_front', 'cornering_stiffness_rear')
             if n in verdicts and verdicts[n].identified]
    if stiff:
        relative = max(3 * v.std / abs(v.value) for v in stiff if v.value)
        relative = max(relative, MIN_HALF_WIDTH)
        ranges['friction'] = [_plain(friction * (1 - min(relative, 0.5))),
                              _plain(friction * (1 + relative))]
    return ranges


def write_randomization(out: Path, ranges: Mapping[str, list[float]], bag: str) -> None:
    header = (f'# Domain randomisation from arsim-fit on {os.path.basename(bag)}: each fitted '
              f'value within 3 standard deviations (docs/gym.md).\n')
    write_text(out, header + yaml.safe_dump(dict(ranges), sort_keys=False, default_flow_style=None))


def _plain(value: float) -> float:
    """A float YAML writes short and reads back the same."""
    return float(f'{value:.6g}')


def write_text(path: Path, text: str) -> None:
    """Replace ``path`` whole (a reader never sees half a file)."""
    staged = path.with_name(f'.{path.name}.partial')
    try:
        staged.unlink(missing_ok=True)
        staged.write_text(text)
        staged.replace(path)
    except OSError as exc:
        msg = f'{path}: cannot write it ({exc.strerror or exc})'
        raise FitError(msg) from exc


def profile_document(profile: CarProfile) -> Any:
    """What a loaded profile says, for the tests."""
    return yaml.safe_load(Path(profile.source).read_text())
