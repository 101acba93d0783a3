"""What a drive can tell apart, and how exactly.

From the Jacobian J of the weighted residuals at the fit (weights: each channel's noise, so a
residual of 1 is one noise level), for the parameters the optimiser moved:

- **no effect**: a 10 % change of the parameter moves the replay by less than the noise of one
  sample (the drive never did what shows it: the limit was never reached, no steps);
- **flat direction**: the columns of J of several parameters are (nearly) dependent, so the
  cost does not change along a combination of them (in the single-track model friction only
  scales the cornering stiffnesses);
- **uncertainty**: the covariance ``s^2 f (J^T J)^-1``, s^2 the residual variance and f the
  inflation for residuals correlated from sample to sample ((1 + rho) / (1 - rho), rho their
  lag-1 autocorrelation): a parameter counts as identified when its standard deviation is
  within 3 % of its value (or its ``resolution``).

A dead time moves the replay in whole physics steps, so it is judged from its cost profile
instead: the values whose cost lies within 4 (2 sigma) of the best.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray

from arsim_core.fit.parameters import DRIVE_CHANNEL, Parameter
from arsim_core.fit.recording import Recording

RELATIVE_STD: Final = 0.03
FLAT: Final = 0.02  # singular value of the column-normalised J, relative to the largest
DELTA_COST: Final = 4.0  # 2 sigma, in units of s^2 f
MIN_DRIVING_S: Final = 10.0
STEERING_STEP: Final = 0.05  # [rad] in one sample
SPEED_STEP: Final = 0.3  # [m/s] in one sample


@dataclass(frozen=True)
class Verdict:
    """What the fit says about one parameter. ``value`` is what the profile gets: the fit's
    best where the optimiser moved it, else the start's; ``identified`` whether the report
    may claim it."""

    identified: bool
    value: float
    start: float
    std: float  # NaN where not known
    low: float  # the range the data allow
    high: float
    why: str = ''


@dataclass(frozen=True)
class Excitation:
    """How hard and how long the drive was, to say why a parameter did not show."""

    driving_s: float
    max_speed: float
    max_lateral: float  # [m/s^2]
    peak_acceleration: float  # [m/s^2], from the recorded speed
    steering_steps: int
    speed_steps: int

    @classmethod
    def of(cls, recording: Recording) -> Excitation:
        t, v = recording.t, recording.speed
        moving = np.abs(v) > 0.3
        driving = float(np.sum(np.diff(t)[moving[1:]]))
        lateral = recording.lateral_acceleration
        if lateral is None:
            lateral = v * recording.yaw_rate
        smooth = np.convolve(v, np.ones(5) / 5, mode='same')
        accel = np.diff(smooth) / np.maximum(np.diff(t), 1e-6)
        cmd = recording.commands.ackermann
        if cmd is not None and len(cmd) > 1:
            steering = int(np.sum(np.abs(np.diff(cmd[:, 1])) > STEERING_STEP))
            speed = int(np.sum(np.abs(np.diff(cmd[:, 0])) > SPEED_STEP))
        else:
            steering = speed = 0
            vesc = recording.commands.vesc
            if vesc is not None:
                for channel, count_as in ((1.0, 'steering'), (0.0, 'speed')):
                    values = vesc[vesc[:, 0] == channel, 1]
                    jumps = np.abs(np.diff(values)) if len(values) > 1 else np.zeros(0)
                    size = np.percentile(np.abs(values - np.median(values)), 90) \
                        if len(values) else 0.0
                    count = int(np.sum(jumps > 0.3 * size)) if size > 0 else 0
                    if count_as == 'steering':
                        steering = count
                    else:
                        speed = count
        return cls(driving, float(np.max(np.abs(v), initial=0.0)),
                   float(np.nanmax(np.abs(lateral), initial=0.0)),
                   float(np.max(np.abs(accel[5:-5]), initial=0.0)) if len(accel) > 10 else 0.0,
                   steering, speed)

    def why_not(self, param: Parameter, start: float) -> str:
        """Why the drive did not show ``param``: too short, or too gentle for it."""
        if self.driving_s < MIN_DRIVING_S:
            return (f'too short: {self.driving_s:.1f} s of driving (record at least '
                    f'{MIN_DRIVING_S:g} s of {param.needs})')
        steps = self.speed_steps if param.channel == DRIVE_CHANNEL else self.steering_steps
        if param.name.endswith(('dead_time', 'lag')):
            kind = 'speed' if param.channel == DRIVE_CHANNEL else 'steering'
            return f'too gentle: {steps} steps in the {kind} commands; record {param.needs}'
        if param.name == 'max_acceleration':
            return (f'too gentle: the speed never changed faster than '
                    f'{self.peak_acceleration:.1f} m/s^2 (limit {start:.3g}); record '
                    f'{param.needs}')
        if param.name.startswith('cornering_stiffness') or param.name == 'friction':
            return (f'too gentle: lateral acceleration up to {self.max_lateral:.2f} m/s^2, '
                    f'speed up to {self.max_speed:.1f} m/s; record {param.needs}')
        if param.name == 'max_steering_rate':
            return (f'too gentle: the wheels never turned at their rate limit '
                    f'({self.steering_steps} steering steps); record {param.needs}')
        return f'the drive does not show it; record {param.needs}'


def inflation(residuals: NDArray[np.float64]) -> float:
    """(1 + rho) / (1 - rho) for the lag-1 autocorrelation rho of ``residuals`` (one
    channel's, in time order), within [1, 100]."""
    r = residuals[np.isfinite(residuals)]
    if len(r) < 3 or not np.any(r):
        return 1.0
    r = r - r.mean()
    rho = float(np.dot(r[1:], r[:-1]) / max(np.dot(r, r), 1e-300))
    rho = min(max(rho, 0.0), 0.98)
    return min(100.0, (1.0 + rho) / (1.0 - rho))


def flat_directions(jacobian: NDArray[np.float64], names: list[str]) -> list[list[str]]:
    """Groups of parameters along whose combination the cost is flat."""
    norms = np.linalg.norm(jacobian, axis=0)
    live = [i for i in range(len(names)) if norms[i] > 0]
    if len(live) < 2:
        return []
    normalised = jacobian[:, live] / norms[live]
    _, sigma, vt = np.linalg.svd(normalised, full_matrices=False)
    groups = []
    for s, v in zip(sigma, vt, strict=True):
        if s < FLAT * sigma[0]:
            groups.append([names[live[i]] for i in range(len(live)) if abs(v[i]) > 0.2])
    return groups


def continuous(params: list[Parameter], values: NDArray[np.float64], starts: dict[str, float],
               jacobian: NDArray[np.float64], cost_scale: float, moved: list[str],
               excitation: Excitation) -> dict[str, Verdict]:
    """Verdicts on ``params`` (values in their units, J per unit of value) from the fit:
    ``cost_scale`` is s^2 f, ``moved`` the parameters the optimiser was free to move."""
    verdicts: dict[str, Verdict] = {}
    names = [p.name for p in params]
    flats = flat_directions(jacobian * [p.scale for p in params], names)
    in_flat = {name: group for group in flats for name in group}
    free = [i for i, p in enumerate(params) if p.name in moved]
    sub = jacobian[:, free]
    information = sub.T @ sub
    try:
        covariance = cost_scale * np.linalg.pinv(information, rcond=1e-12)
    except np.linalg.LinAlgError:
        covariance = np.full((len(free), len(free)), np.inf)
    std = {params[i].name: math.sqrt(max(covariance[k, k], 0.0)) for k, i in enumerate(free)}
    for i, p in enumerate(params):
        value, start = float(values[i]), starts[p.name]
        effect = np.linalg.norm(jacobian[:, i]) * 0.1 * max(abs(value), p.scale * 0.1)
        sd = std.get(p.name, math.nan)
        kept = start
        if effect ** 2 < cost_scale:
            why = excitation.why_not(p, start)
        elif p.name in in_flat and (p.name not in moved or len(in_flat[p.name]) > 1
                                    and all(n in moved for n in in_flat[p.name])):
            others = [n for n in in_flat[p.name] if n != p.name]
            why = (f'flat cost direction with {", ".join(others)}: the drive fixes only '
                   f'their combination' + ('' if p.name in moved else
                                           '; kept at the profile\'s value'))
        elif p.name not in moved:
            why = 'not fitted'
        elif not sd <= max(RELATIVE_STD * abs(value), p.resolution):
            why = (f'weakly determined: {value:.4g} +- {3 * sd:.2g} {p.unit} (3 sigma); '
                   f'record {p.needs}')
            kept = value  # the best guess stays in the profile
        else:
            verdicts[p.name] = Verdict(True, value, start, sd, value - 3 * sd, value + 3 * sd)
            continue
        verdicts[p.name] = Verdict(False, kept, start, sd, math.nan, math.nan, why)
    return verdicts


def dead_time(param: Parameter, profile: dict[float, float], best: float, start: float,
              cost_scale: float, step: float, excitation: Excitation) -> Verdict:
    """The verdict on a dead time from its cost ``profile`` (value -> cost): identified when
    the best value is clearly better than values a frame or more away on either side."""
    values = np.array(sorted(profile))
    costs = np.array([profile[v] for v in values])
    low_cost = costs.min()
    allowed = values[(costs - low_cost) / cost_scale < DELTA_COST]
    low = max(0.0, float(allowed.min()) - step / 2)
    high = float(allowed.max()) + step / 2
    spread = high - low
    clear = best < values.max() - 1e-9 and spread <= max(0.25 * best, 3 * step)
    if clear:
        return Verdict(True, best, start, spread / 4, low, high)
    if len(values) > 1 and np.ptp(costs) / cost_scale < DELTA_COST:
        return Verdict(False, start, start, math.nan, math.nan, math.nan,
                       excitation.why_not(param, start))
    why = (f'weakly determined: between {low:.3f} and {high:.3f} s fit alike; record '
           f'{param.needs}')
    return Verdict(False, best, start, math.nan, math.nan, math.nan, why)
