"""The optimiser: the parameters that make the replay match the recording.

The speed of the single-track models does not depend on the steering, so the drive's
parameters are fitted first on the speed alone, then the steering's on yaw rate and lateral
acceleration, then all together. Dead times move the replay in whole physics steps (the cost
is flat between them), so each is chosen on a grid, a frame apart and then a step apart
around the best frame, in turn with the others; every other parameter is fitted with scipy's
``least_squares`` (trust region, bounds, finite differences), in units of its typical size.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import least_squares

from arsim_core.dynamics import VehicleConfig
from arsim_core.fit.identify import Excitation, Verdict, continuous, dead_time, inflation
from arsim_core.fit.parameters import DRIVE_CHANNEL, STEERING_CHANNEL, Parameter
from arsim_core.fit.recording import Recording
from arsim_core.fit.replay import DIVERGED, Replay, Simulated, measured, simulated_channels

DEAD_TIME_MAX_S: Final = 0.3
CHANNEL_ROWS: Final = {DRIVE_CHANNEL: (0,), STEERING_CHANNEL: (1, 2), 'all': (0, 1, 2)}
FLOORS: Final = (0.005, 0.002, 0.02)  # smallest noise taken per channel
RELATIVE_FLOOR: Final = 0.005  # of the channel's RMS: what a model can be expected to match
DIFF_STEP: Final = 0.01  # of a parameter's typical size


def noise_level(signal: NDArray[np.float64]) -> float:
    """The sample-to-sample noise of a smooth signal, from its second differences (robust)."""
    x = signal[np.isfinite(signal)]
    if len(x) < 5:
        return 0.0
    d2 = x[2:] - 2 * x[1:-1] + x[:-2]
    return float(1.4826 * np.median(np.abs(d2 - np.median(d2))) / math.sqrt(6.0))


@dataclass
class Objective:
    """Weighted residuals of a candidate profile; counts its replays for the progress bar."""

    replay: Replay
    base: VehicleConfig
    params: list[Parameter]
    tick: Callable[[], None]
    erpm_gain: float | None = None
    sigma: NDArray[np.float64] = field(init=False)
    target: NDArray[np.float64] = field(init=False)
    mask: NDArray[np.bool_] = field(init=False)

    def __post_init__(self) -> None:
        self.target = measured(self.replay.recording, self.erpm_gain)
        self.mask = self.replay.scored[:, None] & np.isfinite(self.target)
        sigma = []
        for c in range(3):
            column = self.target[self.mask[:, c], c]
            rms = float(np.sqrt(np.mean(column ** 2))) if len(column) else 1.0
            sigma.append(math.sqrt(noise_level(column) ** 2 + (RELATIVE_FLOOR * rms) ** 2
                                   + FLOORS[c] ** 2))
        self.sigma = np.array(sigma)

    def config(self, values: dict[str, float]) -> VehicleConfig:
        config = self.base
        for p in self.params:
            if p.name in values:
                config = p.with_value(config, values[p.name])
        return config

    def simulate(self, values: dict[str, float]) -> Simulated:
        self.tick()
        return self.replay.simulate(self.config(values))

    def weighted(self, sim: Simulated) -> NDArray[np.float64]:
        """(samples, 3) residuals over the noise; 0 where not compared, large where the model
        diverged."""
        res = (simulated_channels(sim, self.erpm_gain) - self.target) / self.sigma
        res = np.where(np.isfinite(res), res, DIVERGED)
        return np.where(self.mask, res, 0.0)

    def vector(self, values: dict[str, float], rows: tuple[int, ...]) -> NDArray[np.float64]:
        res = self.weighted(self.simulate(values))
        return res[:, rows][self.mask[:, rows]]


@dataclass(frozen=True)
class Fit:
    """The outcome: values for every parameter (the start's where not identified)."""

    start: dict[str, float]
    values: dict[str, float]
    verdicts: dict[str, Verdict]
    start_sim: Simulated
    fitted_sim: Simulated
    objective: Objective
    evaluations: int


def _bounds(p: Parameter, start: float) -> tuple[float, float]:
    if p.lower < 0.0:  # a gain of either sign: the same sign, within a factor of 5
        lo, hi = sorted((start / 5.0, start * 5.0))
        return lo, hi
    return p.lower, p.upper


def _least_squares(objective: Objective, values: dict[str, float], free: list[Parameter],
                   rows: tuple[int, ...], max_nfev: int, step: float) -> dict[str, float]:
    """``free`` fitted; a dead time among them is differenced over a physics step ``step``
    (below, the cost does not change), and is rounded to whole steps afterwards."""
    if not free:
        return values
    scales = np.array([p.scale for p in free])
    diff = np.array([step / p.scale if p.discrete else DIFF_STEP for p in free])
    bounds = [_bounds(p, values[p.name]) for p in free]
    lower = np.array([b[0] for b in bounds]) / scales
    upper = np.array([b[1] for b in bounds]) / scales
    x0 = np.clip(np.array([values[p.name] for p in free]) / scales, lower, upper)

    def residuals(x: NDArray[np.float64]) -> NDArray[np.float64]:
        trial = dict(values)
        trial.update({p.name: float(v * s) for p, v, s in zip(free, x, scales, strict=True)})
        return objective.vector(trial, rows)

    result = least_squares(residuals, x0, bounds=(lower, upper), diff_step=diff,
                           x_scale=1.0, max_nfev=max_nfev, xtol=1e-4, ftol=1e-5)
    out = dict(values)
    out.update({p.name: float(v * s) for p, v, s in zip(free, result.x, scales, strict=True)})
    for p in free:
        if p.discrete:
            out[p.name] = round(out[p.name] / step) * step
    return out


def _grid(objective: Objective, values: dict[str, float], p: Parameter, rows: tuple[int, ...],
          candidates: list[float], profile: dict[float, float]) -> dict[str, float]:
    for candidate in candidates:
        key = round(candidate, 9)
        if key not in profile:
            trial = dict(values)
            trial[p.name] = candidate
            r = objective.vector(trial, rows)
            profile[key] = float(r @ r)
    best = min((v for v in profile if v in {round(c, 9) for c in candidates}),
               key=lambda v: profile[v])
    out = dict(values)
    out[p.name] = best
    return out


def _dead_time(objective: Objective, values: dict[str, float], p: Parameter,
               rows: tuple[int, ...], frame: float, step: float,
               profile: dict[float, float]) -> dict[str, float]:
    """A frame apart over [0, DEAD_TIME_MAX_S], then a physics step apart around the best."""
    frames = [k * frame for k in range(int(DEAD_TIME_MAX_S / frame + 1e-9) + 1)]
    values = _grid(objective, values, p, rows, frames, profile)
    best = values[p.name]
    fine = [best + k * step for k in range(-int(round(frame / step)) + 1,
                                           int(round(frame / step)))]
    return _grid(objective, values, p, rows, [v for v in fine if v >= 0.0], profile)


def _debug(what: str, channel: str, objective: Objective, values: dict[str, float],
           rows: tuple[int, ...]) -> None:
    import os
    if os.environ.get('FITDEBUG'):
        r = objective.vector(values, rows)
        print(what, channel, float(r @ r) / len(r), {k: round(v, 4) for k, v in values.items()})


def _split_delay(objective: Objective, values: dict[str, float], p: Parameter,
                 mine: list[Parameter], rows: tuple[int, ...], frame: float
                 ) -> dict[str, float]:
    """A dead time found with the lag at its start stands for both: the delay of a lag is
    about its time constant, so try sharing the dead time between the two."""
    lag = next((q for q in mine if q.name == p.name.replace('dead_time', 'lag')), None)
    if lag is None:
        return values
    total = values[p.name] + values[lag.name]
    best, best_cost = values, math.inf
    for k in range(int(total / frame + 1e-9) + 1):
        trial = dict(values)
        trial[p.name] = k * frame
        trial[lag.name] = min(max(total - k * frame, lag.lower), lag.upper)
        r = objective.vector(trial, rows)
        if float(r @ r) < best_cost:
            best, best_cost = trial, float(r @ r)
    return best


def fit(recording: Recording, replay: Replay, base: VehicleConfig, params: list[Parameter],
        tick: Callable[[], None], erpm_gain: float | None = None) -> Fit:
    """Fit ``params`` of ``base`` to ``recording``."""
    objective = Objective(replay, base, params, tick, erpm_gain)
    start = {p.name: p.value(base) for p in params}
    start_sim = objective.simulate(start)
    frame = recording.period
    step = frame / max(1, math.ceil(frame * base.physics_rate_hz - 1e-9))
    # friction only scales the cornering stiffness of the single-track model: not moved
    tied = {'friction'} if base.model_name == 'st' else set()
    values = dict(start)
    for channel in (DRIVE_CHANNEL, STEERING_CHANNEL):
        rows = CHANNEL_ROWS[channel]
        mine = [p for p in params if p.channel == channel and p.name not in tied]
        for p in mine:
            if p.discrete:
                values = _dead_time(objective, values, p, rows, frame, step, {})
                values = _split_delay(objective, values, p, mine, rows, frame)
        _debug('after grid', channel, objective, values, rows)
        values = _least_squares(objective, values, mine, rows, 12, step)
        _debug('after lsq', channel, objective, values, rows)
    moved = [p for p in params if p.name not in tied]
    values = _least_squares(objective, values, moved, CHANNEL_ROWS['all'], 6, step)
    _debug('after joint', 'all', objective, values, CHANNEL_ROWS['all'])
    profiles: dict[str, dict[float, float]] = {}
    for p in moved:
        if p.discrete:
            profiles[p.name] = {}
            near = [values[p.name] + k * step for k in range(-3, 4)]
            values = _grid(objective, values, p, CHANNEL_ROWS[p.channel],
                           [v for v in near if v >= -1e-9], profiles[p.name])
    moved = [p for p in moved if not p.discrete]
    verdicts = _judge(objective, recording, values, start, params, moved, profiles, step)
    fitted_sim = objective.simulate(values)
    return Fit(start, values, verdicts, start_sim, fitted_sim, objective, 0)


def _judge(objective: Objective, recording: Recording, values: dict[str, float],
           start: dict[str, float], params: list[Parameter], moved: list[Parameter],
           profiles: dict[str, dict[float, float]], step: float) -> dict[str, Verdict]:
    """Verdicts from the Jacobian at ``values`` (forward differences) and the dead times'
    cost profiles."""
    rows = CHANNEL_ROWS['all']
    sim = objective.simulate(values)
    weighted = objective.weighted(sim)
    r0 = weighted[:, rows][objective.mask[:, rows]]
    analysed = [p for p in params if not p.discrete]
    columns = []
    for p in analysed:
        h = DIFF_STEP * p.scale
        trial = dict(values)
        trial[p.name] = values[p.name] + h if values[p.name] + h <= p.upper \
            else values[p.name] - h
        columns.append((objective.vector(trial, rows) - r0) / (trial[p.name] - values[p.name]))
    jacobian = np.column_stack(columns) if columns else np.zeros((len(r0), 0))
    dof = max(1, len(r0) - len(moved))
    s2 = float(r0 @ r0) / dof
    f = max(inflation(weighted[objective.mask[:, c], c]) for c in rows
            if np.any(objective.mask[:, c]))
    excitation = Excitation.of(recording)
    verdicts = continuous(analysed, np.array([values[p.name] for p in analysed]), start,
                          jacobian, s2 * f, [p.name for p in moved], excitation)
    for p in params:
        if p.discrete:
            profile = profiles.get(p.name, {})
            channel_rows = CHANNEL_ROWS[p.channel]
            n = int(np.sum(objective.mask[:, channel_rows]))
            scale = max(min(profile.values(), default=1.0) / max(1, n), 1e-12) * f
            verdicts[p.name] = dead_time(p, profile, values[p.name], start[p.name], scale,
                                         step, excitation) if profile else \
                Verdict(False, start[p.name], start[p.name], math.nan, math.nan, math.nan,
                        'not fitted')
    return verdicts
