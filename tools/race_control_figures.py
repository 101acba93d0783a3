"""Draw the figures of docs/race-control.md: one constructed situation per incident rule, the
cars now (filled) and ``lookback_s`` earlier (dashed), on a straight piece of track seen from
above, with the verdict the rule gives it (computed here by the rules themselves, so a figure
cannot disagree with the code).

Run from the repository root: ``python3 tools/race_control_figures.py`` (writes
``docs/images/race-control-*.svg``).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'src' / 'arsim_core'))

from arsim_core.config.stewards import StewardSettings  # noqa: E402
from arsim_core.engine.incidents import (  # noqa: E402
    Along,
    Call,
    Contact,
    forcing_off_track,
    judge_contact,
    time_gained,
    track_limits,
)

SCALE = 110.0  # pixels per metre
HALF_WIDTH = 1.0  # of the drawn track [m]
LENGTH, WIDTH = 0.58, 0.31  # an F1TENTH car's footprint [m]
TRACK = 100.0
RULES = StewardSettings()
COLOURS = {'a': '#d62728', 'b': '#1f77b4'}


def car(s: float, lateral: float, speed: float = 3.0, off: bool = False) -> Along:
    return Along(s, lateral, speed, off, LENGTH, WIDTH)


class Figure:
    """An SVG of a straight track from ``start`` to ``end`` m along it."""

    def __init__(self, start: float, end: float) -> None:
        self.start, self.end = start, end
        self.width = (end - start) * SCALE + 40
        self.height = 2 * (HALF_WIDTH + 0.6) * SCALE + 70
        self.parts: list[str] = []
        top, bottom = self.y(HALF_WIDTH), self.y(-HALF_WIDTH)
        self.parts.append(f'<rect x="0" y="{top:.1f}" width="{self.width:.1f}" '
                          f'height="{bottom - top:.1f}" fill="#e8e8e8"/>')
        for edge in (top, bottom):
            self.parts.append(f'<line x1="0" y1="{edge:.1f}" x2="{self.width:.1f}" '
                              f'y2="{edge:.1f}" stroke="#fff" stroke-width="4"/>')
        mid = self.y(0.0)
        self.parts.append(f'<line x1="0" y1="{mid:.1f}" x2="{self.width:.1f}" y2="{mid:.1f}" '
                          f'stroke="#999" stroke-dasharray="8 8"/>')
        self.text(10, top - 8, 'track edge (left)', 12, '#666')
        self.text(10, bottom + 18, 'track edge (right)', 12, '#666')
        self.text(self.width - 150, bottom - 8, 'centerline: driving →', 12, '#666')

    def x(self, s: float) -> float:
        return 20 + (s - self.start) * SCALE

    def y(self, lateral: float) -> float:
        return 20 + (HALF_WIDTH + 0.6 - lateral) * SCALE

    def text(self, x: float, y: float, text: str, size: int = 14,
             colour: str = '#222') -> None:
        self.parts.append(f'<text x="{x:.1f}" y="{y:.1f}" font-family="sans-serif" '
                          f'font-size="{size}" fill="{colour}">{text}</text>')

    def car(self, along: Along, name: str, colour: str, before: bool = False,
            yaw: float = 0.0) -> None:
        w, h = along.length * SCALE, along.width * SCALE
        cx, cy = self.x(along.s), self.y(along.lateral)
        style = (f'fill="none" stroke="{colour}" stroke-dasharray="5 4" stroke-width="2"'
                 if before else f'fill="{colour}" fill-opacity="0.85" stroke="#000"')
        self.parts.append(f'<rect x="{cx - w / 2:.1f}" y="{cy - h / 2:.1f}" width="{w:.1f}" '
                          f'height="{h:.1f}" rx="4" {style} transform="rotate('
                          f'{-math.degrees(yaw):.1f} {cx:.1f} {cy:.1f})"/>')
        label = f'{name} 1 s before' if before else f'{name} {along.speed:g} m/s'
        below = along.lateral < 0.0 and not before
        self.text(cx - w / 2, cy + h / 2 + 14 if below else cy - h / 2 - 4, label, 12, colour)

    def arrow(self, a: tuple[float, float], b: tuple[float, float], colour: str) -> None:
        (x0, y0), (x1, y1) = (self.x(a[0]), self.y(a[1])), (self.x(b[0]), self.y(b[1]))
        self.parts.append(f'<line x1="{x0:.1f}" y1="{y0:.1f}" x2="{x1:.1f}" y2="{y1:.1f}" '
                          f'stroke="{colour}" stroke-width="2" marker-end="url(#head)"/>')

    def caption(self, text: str) -> None:
        self.text(10, self.height - 12, text, 15)

    def svg(self) -> str:
        head = ('<defs><marker id="head" markerWidth="10" markerHeight="8" refX="9" refY="4" '
                'orient="auto"><path d="M0,0 L10,4 L0,8 z" fill="#333"/></marker></defs>')
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width:.0f}" '
                f'height="{self.height:.0f}" viewBox="0 0 {self.width:.0f} '
                f'{self.height:.0f}">\n{head}\n' + '\n'.join(self.parts) + '\n</svg>\n')


def verdict(call: Call | None) -> str:
    if call is None:
        return 'no ruling'
    fault = f' for {call.car}' if call.car else ''
    return f'{call.rule}: {call.verdict}{fault}'


def contact_figure(name: str, now_a: Along, now_b: Along, before_a: Along | None,
                   before_b: Along | None, title: str, off_a: float = math.inf) -> str:
    c = Contact('a', 'b', now_a, now_b, before_a, before_b, off_a, math.inf, TRACK)
    call = judge_contact(c, RULES)
    figure = Figure(min(x.s for x in (now_a, now_b, before_a or now_a, before_b or now_b)) - 1,
                    max(now_a.s, now_b.s) + 1.2)
    for label, now, before in (('a', now_a, before_a), ('b', now_b, before_b)):
        if before is not None:
            figure.car(before, label, COLOURS[label], before=True)
            figure.arrow((before.s, before.lateral), (now.s - 0.35, now.lateral), '#555')
        figure.car(now, label, COLOURS[label])
    figure.text(10, 16, title, 14)
    figure.caption(verdict(call) + f' ({call.why})')
    return figure.svg()


def figures() -> dict[str, str]:
    made = {}
    made['rear-end'] = contact_figure(
        'rear-end', car(10.0, 0.0, 4.0), car(10.0 + LENGTH, 0.0, 1.0), car(7.0, 0.0),
        car(9.0, 0.0), 'Rear-end: a clearly behind b (overlap < 0.3 lengths), closing at 3 m/s')
    made['side-by-side'] = contact_figure(
        'side-by-side', car(10.0, 0.17), car(10.1, -0.17), car(7.0, 0.17), car(7.1, -0.45),
        'Side by side: b moved 0.28 m (0.9 widths) towards a within the last second')
    made['side-by-side-both-moving'] = contact_figure(
        'side-by-side-both-moving', car(10.0, 0.17), car(10.1, -0.17), car(7.0, 0.45),
        car(7.1, -0.45), 'Side by side, both moving towards each other')
    gap = 1.5 * LENGTH + LENGTH
    made['dive-bomb'] = contact_figure(
        'dive-bomb', car(10.0, 0.2, 6.0), car(10.1, -0.15, 3.0), car(7.0 - gap, 0.2),
        car(7.0, -0.15), 'Dive-bomb: a was 1.5 car lengths clear behind b one second before')
    made['unsafe-rejoin'] = contact_figure(
        'unsafe-rejoin', car(10.0 + LENGTH, 0.75, 1.5), car(10.0, 0.55, 4.0),
        car(8.5, 1.3, 1.5, off=True), car(6.5, 0.55),
        'Unsafe rejoin: a came back onto the track 0.4 s ago, b runs into it', off_a=0.4)
    # forcing off track
    now = {'a': car(10.0, -0.55), 'b': car(10.1, -1.05, off=True)}
    before = {'a': car(7.0, -0.2), 'b': car(7.1, -0.85)}
    call = forcing_off_track('b', now, dict(before), TRACK, RULES)
    figure = Figure(5.5, 11.3)
    for label in ('a', 'b'):
        figure.car(before[label], label, COLOURS[label], before=True)
        figure.arrow((before[label].s, before[label].lateral),
                     (now[label].s - 0.35, now[label].lateral), '#555')
        figure.car(now[label], label, COLOURS[label])
    figure.text(10, 16, 'Forcing off track: a moved 1.1 widths towards b alongside; b left the '
                        'track', 14)
    figure.caption(verdict(call) + (f' ({call.why})' if call else ''))
    made['forcing-off-track'] = figure.svg()
    made['track-limits'] = track_limits_figure()
    return made


def track_limits_figure() -> str:
    """A left-hand corner of radius 5 m cut on a chord, with the time it gains."""
    radius, half, cut = 5.0, HALF_WIDTH, 2.2
    scale, cx, cy = 45.0, 40.0, 420.0
    parts = []

    def point(r: float, angle: float) -> tuple[float, float]:
        return cx + scale * (r * math.cos(angle) + radius + half + 1), cy - scale * r * math.sin(
            angle)

    def arc(r: float, colour: str, width: float, dash: str = '') -> str:
        pts = ' '.join(f'{x:.1f},{y:.1f}' for x, y in
                       (point(r, k * math.pi / 60) for k in range(61)))
        extra = f' stroke-dasharray="{dash}"' if dash else ''
        return (f'<polyline points="{pts}" fill="none" stroke="{colour}" '
                f'stroke-width="{width}"{extra}/>')

    parts.append(arc(radius, '#e8e8e8', 2 * half * scale))
    for r in (radius - half, radius + half):
        parts.append(arc(r, '#555', 2))
    parts.append(arc(radius, '#999', 1, '8 8'))
    lane = radius - half + 0.2
    a0 = math.pi / 2 - cut / 2
    (x0, y0), (x1, y1) = point(lane, a0), point(lane, a0 + cut)
    parts.append(f'<line x1="{x0:.1f}" y1="{y0:.1f}" x2="{x1:.1f}" y2="{y1:.1f}" '
                 f'stroke="#d62728" stroke-width="3" marker-end="url(#head)"/>')
    edge = radius - half
    closest = lane * math.cos(cut / 2)
    half_angle = math.acos(closest / edge)
    edge_m, driven_m = edge * 2 * half_angle, 2 * math.sqrt(edge**2 - closest**2)
    speed = 4.0
    gain = time_gained(edge_m, driven_m, driven_m / speed)
    call = track_limits(gain, driven_m / speed, 0, RULES)
    text = (f'cut: {driven_m:.2f} m driven off the track where the inner edge is '
            f'{edge_m:.2f} m; at {speed:g} m/s that gains {gain:.2f} s')
    width, height = round(2 * (cx + scale * (radius + half + 1))), 480
    parts.append('<text x="10" y="20" font-family="sans-serif" font-size="14">Track limits: '
                 'a corner cut across the infield (red)</text>')
    parts.append(f'<text x="10" y="{height - 30}" font-family="sans-serif" font-size="13">'
                 f'{text}</text>')
    parts.append(f'<text x="10" y="{height - 10}" font-family="sans-serif" font-size="15">'
                 f'{verdict(call)} (first offence; a time penalty from the third)</text>')
    head = ('<defs><marker id="head" markerWidth="10" markerHeight="8" refX="9" refY="4" '
            'orient="auto"><path d="M0,0 L10,4 L0,8 z" fill="#333"/></marker></defs>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}">\n{head}\n' + '\n'.join(parts) + '\n</svg>\n')


def main() -> None:
    out = ROOT / 'docs' / 'images'
    out.mkdir(parents=True, exist_ok=True)
    for name, svg in figures().items():
        (out / f'race-control-{name}.svg').write_text(svg)
        print(out / f'race-control-{name}.svg')


if __name__ == '__main__':
    main()
