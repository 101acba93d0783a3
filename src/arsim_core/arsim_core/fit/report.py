"""The fit's report: one self-contained HTML page, plots drawn as inline SVG (no plotting
library, nothing fetched when it opens).

It shows what was read (topics, duration, damage), the error figures before and after the
fit, every parameter with its start, its fitted value and uncertainty or why the drive could
not identify it, the recorded and replayed speed, yaw rate, lateral acceleration and path
(the starting profile's replay and the fitted one's over the recording), and the
domain-randomisation file. Every text from the bag (topic names) is escaped.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import yaml
from numpy.typing import NDArray

from arsim_core.fit.figures import ReplayErrors
from arsim_core.fit.identify import Verdict
from arsim_core.fit.output import write_text
from arsim_core.fit.parameters import Parameter
from arsim_core.fit.recording import Recording
from arsim_core.fit.replay import CHANNELS, Replay, Simulated

COLOURS: Final = {'recorded': '#555555', 'start': '#e07b00', 'fitted': '#1f5fbf'}
UNITS: Final = {'speed': 'm/s', 'yaw_rate': 'rad/s', 'lateral_acceleration': 'm/s^2'}
MAX_POINTS: Final = 4000  # per line: a long drive is thinned for the page
WIDTH, HEIGHT, PAD = 920, 230, 46


@dataclass(frozen=True)
class ReportData:
    recording: Recording
    replay: Replay
    params: list[Parameter]
    verdicts: Mapping[str, Verdict]
    start_sim: Simulated
    fitted_sim: Simulated
    start_errors: ReplayErrors
    fitted_errors: ReplayErrors
    randomization: Mapping[str, list[float]]
    profile: str
    fitted_profile: str
    seconds: float


def _number(value: float, unit: str = '') -> str:
    if not math.isfinite(value):
        return '-'
    return f'{value:.4g}{" " + unit if unit and unit != "-" else ""}'


def _polyline(xs: NDArray[np.float64], ys: NDArray[np.float64], sx: float, ox: float,
              sy: float, oy: float, colour: str, width: float = 1.2) -> str:
    """One line, split where values are missing."""
    keep = np.arange(len(xs))
    if len(xs) > MAX_POINTS:
        keep = np.linspace(0, len(xs) - 1, MAX_POINTS).astype(int)
    parts, current = [], []
    for i in keep:
        x, y = xs[i], ys[i]
        if math.isfinite(x) and math.isfinite(y):
            current.append(f'{ox + (x * sx):.1f},{oy - (y * sy):.1f}')
        elif current:
            parts.append(current)
            current = []
    if current:
        parts.append(current)
    return ''.join(f'<polyline fill="none" stroke="{colour}" stroke-width="{width}" '
                   f'points="{" ".join(p)}"/>' for p in parts if len(p) > 1)


def _frame(x0: float, x1: float, y0: float, y1: float, xlabel: str, ylabel: str) -> str:
    ticks = []
    for value in np.linspace(y0, y1, 5):
        y = HEIGHT - PAD - (value - y0) / (y1 - y0) * (HEIGHT - 2 * PAD)
        ticks.append(f'<text x="{PAD - 4}" y="{y + 4:.1f}" text-anchor="end">{value:.3g}</text>'
                     f'<line x1="{PAD}" x2="{WIDTH - 10}" y1="{y:.1f}" y2="{y:.1f}" '
                     f'stroke="#eee"/>')
    for value in np.linspace(x0, x1, 7):
        x = PAD + (value - x0) / (x1 - x0) * (WIDTH - PAD - 10)
        ticks.append(f'<text x="{x:.1f}" y="{HEIGHT - PAD + 16}" text-anchor="middle">'
                     f'{value:.3g}</text>')
    return (''.join(ticks) + f'<text x="{WIDTH / 2}" y="{HEIGHT - 8}" text-anchor="middle">'
            f'{html.escape(xlabel)}</text><text x="12" y="{HEIGHT / 2}" transform="rotate(-90 '
            f'12 {HEIGHT / 2})" text-anchor="middle">{html.escape(ylabel)}</text>')


def _time_plot(t: NDArray[np.float64], lines: Sequence[tuple[str, NDArray[np.float64]]],
               label: str) -> str:
    values = np.concatenate([v[np.isfinite(v)] for _, v in lines] or [np.zeros(1)])
    lo, hi = (float(np.percentile(values, 0.5)), float(np.percentile(values, 99.5))) \
        if len(values) else (0.0, 1.0)
    if hi - lo < 1e-9:
        lo, hi = lo - 1.0, hi + 1.0
    pad = 0.05 * (hi - lo)
    lo, hi = lo - pad, hi + pad
    sx = (WIDTH - PAD - 10) / max(float(t[-1] - t[0]), 1e-9)
    sy = (HEIGHT - 2 * PAD) / (hi - lo)
    body = ''.join(_polyline(t - t[0], np.clip(v, lo, hi) - lo, sx, PAD, sy, HEIGHT - PAD,
                             COLOURS[name]) for name, v in lines)
    axes = _frame(float(t[0]), float(t[-1]), lo, hi, 'time [s]', label)
    return (f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" font-size="11" '
            f'font-family="sans-serif">{axes}{body}</svg>')


def _path_plot(data: ReportData) -> str:
    pose = data.recording.pose
    sims = [('start', data.start_sim), ('fitted', data.fitted_sim)]
    points = [pose[:, :2]] + [p for _, s in sims for p in s.path]
    stacked = np.concatenate([p[np.all(np.isfinite(p), axis=1)] for p in points])
    lo, hi = stacked.min(axis=0), stacked.max(axis=0)
    size = 520
    span = max(float(np.max(hi - lo)), 1e-6) * 1.05
    scale = (size - 2 * PAD) / span
    centre = (lo + hi) / 2
    ox, oy = size / 2 - centre[0] * scale, size / 2 + centre[1] * scale
    body = _polyline(pose[:, 0], pose[:, 1], scale, ox, scale, oy, COLOURS['recorded'], 2.0)
    for name, sim in sims:
        for path in sim.path:
            body += _polyline(path[:, 0], path[:, 1], scale, ox, scale, oy, COLOURS[name])
    return (f'<svg viewBox="0 0 {size} {size}" width="{size}" font-size="11" '
            f'font-family="sans-serif"><rect width="{size}" height="{size}" fill="none" '
            f'stroke="#ccc"/><text x="8" y="16">{span:.1f} m across; each replayed piece '
            f'starts where the car was</text>{body}</svg>')


def _legend() -> str:
    names = {'recorded': 'recorded', 'start': 'starting profile', 'fitted': 'fitted profile'}
    return ' '.join(f'<span style="color:{COLOURS[k]}">&#9644; {v}</span>'
                    for k, v in names.items())


def render(data: ReportData) -> str:
    rec = data.recording
    e0, e1 = data.start_errors, data.fitted_errors
    ratio = e0.replay_error / e1.replay_error if e1.replay_error > 0 else math.inf
    rows = ''.join(
        f'<tr><td>{name.replace("_", " ")}</td><td>{_number(e0.rms[name], UNITS[name])}</td>'
        f'<td>{_number(e1.rms[name], UNITS[name])}</td></tr>' for name in CHANNELS)
    rows += (f'<tr><td>path, at the end of each window</td><td>{_number(e0.path_error, "m")}'
             f'</td><td>{_number(e1.path_error, "m")}</td></tr>')
    rows += (f'<tr><th>replay error (RMS of the channels\' errors over their RMS)</th>'
             f'<th>{e0.replay_error:.2%}</th><th>{e1.replay_error:.2%} ({ratio:.1f} times '
             f'lower)</th></tr>')
    params = ''
    for p in data.params:
        v = data.verdicts[p.name]
        if v.identified:
            verdict = f'identified, &plusmn; {_number(3 * v.std, p.unit)} (3&sigma;)'
            fitted = _number(v.value, p.unit)
        else:
            verdict = 'not identified: ' + html.escape(v.why)
            fitted = '-' if v.value == v.start else f'({_number(v.value, p.unit)}, a guess)'
        params += (f'<tr><td>{html.escape(p.label)}</td><td>{_number(v.start, p.unit)}</td>'
                   f'<td>{fitted}</td><td>{verdict}</td></tr>')
    topics = ''.join(f'<li>{html.escape(role)}: <code>{html.escape(topic)}</code></li>'
                     for role, topic in rec.topics.items())
    notes = ''.join(f'<li>{html.escape(note)}</li>' for note in rec.notes) or '<li>none</li>'
    plots = ''
    measured = {'speed': rec.speed if rec.erpm is None else None, 'yaw_rate': rec.yaw_rate,
                'lateral_acceleration': rec.lateral_acceleration}
    sims = {'speed': (data.start_sim.speed, data.fitted_sim.speed),
            'yaw_rate': (data.start_sim.yaw_rate, data.fitted_sim.yaw_rate),
            'lateral_acceleration': (data.start_sim.lateral_acceleration,
                                     data.fitted_sim.lateral_acceleration)}
    for name in CHANNELS:
        recorded = measured[name]
        if name == 'speed' and recorded is None:
            recorded = rec.speed
        if recorded is None:
            continue
        before, after = sims[name]
        plots += (f'<h3>{name.replace("_", " ")}</h3>'
                  + _time_plot(rec.t, [('recorded', recorded), ('start', before),
                                       ('fitted', after)], f'{name} [{UNITS[name]}]'))
    dr = html.escape(yaml.safe_dump(dict(data.randomization), sort_keys=False,
                                    default_flow_style=None)) or '(nothing identified)'
    return f'''<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>arsim-fit report</title>
<style>body{{font-family:sans-serif;max-width:980px;margin:2em auto;color:#222}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:3px 8px;text-align:left;
vertical-align:top}}code{{background:#f4f4f4}}</style></head><body>
<h1>arsim-fit: {html.escape(Path(rec.bag).name)}</h1>
<p>Bag <code>{html.escape(rec.bag)}</code>, {rec.duration:.1f} s at {1 / rec.period:.1f} Hz,
{len(data.replay.windows)} windows; starting profile <code>{html.escape(data.profile)}</code>,
fitted profile <code>{html.escape(data.fitted_profile)}</code>; fitted in
{data.seconds:.1f} s.</p>
<h2>Topics</h2><ul>{topics}</ul><h2>Notes on the data</h2><ul>{notes}</ul>
<h2>Errors</h2><table><tr><th></th><th>starting profile</th><th>fitted profile</th></tr>
{rows}</table>
<h2>Parameters</h2><table><tr><th>parameter</th><th>start</th><th>fitted</th><th>verdict</th>
</tr>{params}</table>
<p>Uncertainties from the Jacobian of the replay at the fit (covariance s&sup2; f
(J<sup>T</sup>J)<sup>-1</sup>, f for residuals correlated in time); a parameter counts as
identified within 3 % (or its resolution). A value the drive did not pin down stays at the
start's, or, where the fit moved it, is the best guess, not a measurement.</p>
<h2>Replay</h2><p>{_legend()}</p>{plots}
<h3>path</h3>{_path_plot(data)}
<h2>Domain randomisation</h2><pre>{dr}</pre>
</body></html>
'''


def write(path: Path, data: ReportData) -> None:
    write_text(path, render(data))
