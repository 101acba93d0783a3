"""Autocross and trackdrive: one closed track from a seed, within the limits of the rules.

The course comes from the random track generator (``arsim_core.track.generator``) with
Formula Student limits: a 3 m lane, turns no tighter than a 9 m outside diameter, inside an
area that keeps the lap within 200-500 m. Each draw is measured with
``validate.track_violations``; a draw outside the limits is replaced by the next one, so a seed
always gives the same valid track.

The timekeeping line sits in the middle of the longest straight, marked by two big orange
cones on each side. The car is staged 6 m before it, with small orange cones along both edges
of the start area; blue cones line the left edge and yellow the right everywhere else. The
centerline starts at the staging point.
"""

from __future__ import annotations

import numpy as np

from arsim_core.errors import TrackError
from arsim_core.track import polylines
from arsim_core.track.fs import layout, rules
from arsim_core.track.fs.mission import Mission
from arsim_core.track.fs.validate import straight_runs, track_violations
from arsim_core.track.generator import RandomTrackParams, random_track
from arsim_core.track.model import (
    LABEL_CONE_BIG_ORANGE,
    LABEL_CONE_BLUE,
    LABEL_CONE_ORANGE,
    LABEL_CONE_YELLOW,
    Track,
)

COURSE = RandomTrackParams(
    waypoints=12,
    area=(100.0, 65.0),
    min_radius=5.0,  # centerline; outside diameter 2 x (5 + 1.5) = 13 m >= 9 m
    min_width=rules.TRACK_MIN_WIDTH,
    width_variation=0.0,
    spacing=layout.LANE_SPACING,
)
"""Generator limits of the course; ``seed`` is set per draw."""
ATTEMPTS = 64
"""Draws tried per seed before giving up (draw ``k`` of seed ``n`` uses generator seed
``n * ATTEMPTS + k``)."""
LAPS = {'autocross': rules.AUTOCROSS_LAPS, 'trackdrive': rules.TRACKDRIVE_LAPS}


def _interp(center: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Points of a closed centerline at arc positions ``s`` (wrapped)."""
    closed = np.vstack([center, center[:1]])
    arc = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(closed, axis=0).T))])
    s = np.mod(s, arc[-1])
    return np.column_stack([np.interp(s, arc, closed[:, 0]), np.interp(s, arc, closed[:, 1])])


def _longest_straight_middle(center: np.ndarray) -> float:
    """Arc position of the middle of the longest stretch of low curvature."""
    kappa = np.abs(polylines.curvature(center))
    straight = kappa < 2.0 / rules.TRACK_MAX_TURN_DIAMETER
    if straight.all() or not straight.any():
        return 0.0
    first = int(np.flatnonzero(~straight)[0])
    n = len(straight)
    best, best_len, run_start, run_len = 0, 0, 0, 0
    for k in range(1, n + 1):
        i = (first + k) % n
        if straight[i]:
            if not run_len:
                run_start = k
            run_len += 1
            if run_len > best_len:
                best, best_len = run_start, run_len
        else:
            run_len = 0
    middle = (first + best + best_len // 2) % n
    return float(polylines.arc_length(center)[middle])


def _course_track(kind: str, name: str, center: np.ndarray, half: np.ndarray) -> Track:
    """Lay out the cones, lines and mission on a generated course."""
    line_s = _longest_straight_middle(center)
    length = polylines.closed_length(center)
    count = int(round(length / layout.LANE_SPACING))
    # Resample so the staging point is point 0.
    s = line_s - rules.TRACK_STAGING + np.arange(count) * (length / count)
    center = _interp(center, s)
    half_w = np.full(count, float(half.mean()))
    line_at = rules.TRACK_STAGING
    normals = polylines.left_normals(center)
    offset = half_w + rules.CONE_EDGE_OFFSET
    parts: list[tuple[np.ndarray, int]] = []
    for side, label in ((1.0, LABEL_CONE_BLUE), (-1.0, LABEL_CONE_YELLOW)):
        edge = polylines.offset(center, side * offset)
        pts, _ = polylines.resample_closed(edge, rules.TRACK_CONE_SPACING)
        # Arc position along the centerline of each cone: that of its nearest point.
        d = np.hypot(*(pts[:, None, :] - center[None, :, :]).transpose(2, 0, 1))
        cone_s = np.argmin(d, axis=1) * (length / count)
        from_line = (cone_s - line_at + 0.5 * length) % length - 0.5 * length
        near_line = np.abs(from_line) < 1.0 + 0.5 * rules.BIG_CONE_PAIR_GAP
        start_area = (from_line < 0.0) & (from_line >= -rules.TRACK_START_AREA)
        parts.append((pts[~near_line & ~start_area], label))
        parts.append((pts[~near_line & start_area], LABEL_CONE_ORANGE))
        gap = 0.5 * rules.BIG_CONE_PAIR_GAP
        at = _interp(center, np.array([line_at - gap, line_at + gap]))
        nrm = normals[np.round((line_at + np.array([-gap, gap])) / (length / count))
                      .astype(int) % count]
        parts.append((at + side * offset[0] * nrm, LABEL_CONE_BIG_ORANGE))
    left = polylines.offset(center, half_w)
    right = polylines.offset(center, -half_w)
    i_line = int(round(line_at / (length / count)))
    i_stop = int(round((line_at + rules.TRACK_STOP_LENGTH) / (length / count)))
    stop_zone = np.vstack([right[i_line:i_stop + 1], left[i_line:i_stop + 1][::-1]])
    timekeeping = np.array([right[i_line], left[i_line]])
    mission = Mission(kind=kind, laps=LAPS[kind], start_line=timekeeping,
                      finish_line=timekeeping, stop_zone=stop_zone,
                      timed_laps=tuple(range(1, LAPS[kind] + 1)))
    return layout.assemble(name, center, half_w, half_w, 0, layout.cones(parts), mission)


def course_track(kind: str, seed: int = 0, name: str | None = None) -> Track:
    """The ``autocross`` or ``trackdrive`` track of ``seed``: the same course for both, with
    the mission's laps (1 and 10)."""
    if kind not in LAPS:
        msg = f'unknown closed-course mission {kind!r}; choose one of: {", ".join(LAPS)}'
        raise TrackError(msg)
    last: list[str] = []
    for attempt in range(ATTEMPTS):
        made = random_track(COURSE, seed=seed * ATTEMPTS + attempt)
        track = _course_track(kind, name or f'fs_{kind}_{seed}', made.centerline,
                              0.5 * (made.width_left + made.width_right))
        last = track_violations(track)
        if not last:
            return track
    msg = f'no {kind} track within the limits for seed {seed}: {"; ".join(last)}'
    raise TrackError(msg)


__all__ = ['ATTEMPTS', 'COURSE', 'course_track', 'straight_runs', 'track_violations']
