"""Checking an autocross or trackdrive track against the limits of the rules.

``track_violations`` measures the track itself (its centerline, widths and placed cones) and
returns one sentence per limit broken; an empty list means the track is within the limits.
"""

from __future__ import annotations

import numpy as np
import shapely

from arsim_core.track import polylines
from arsim_core.track.fs import rules
from arsim_core.track.model import (
    LABEL_CONE_BIG_ORANGE,
    LABEL_CONE_BLUE,
    LABEL_CONE_ORANGE,
    LABEL_CONE_YELLOW,
    Track,
)

TOLERANCE = 1e-6


def straight_runs(track: Track) -> np.ndarray:
    """Lengths of the stretches wider than the widest allowed turn (the straights), m.

    A stretch counts as straight where the centerline's radius exceeds half
    ``TRACK_MAX_TURN_DIAMETER``: a constant turn wider than that is not allowed as a turn, so
    it has to meet the straight limit instead.
    """
    kappa = np.abs(track.curvature)
    straight = kappa < 2.0 / rules.TRACK_MAX_TURN_DIAMETER
    seg = np.hypot(*polylines.segments_closed(track.centerline).T)
    if straight.all():
        return np.array([float(seg.sum())])
    # Start counting at a curved point so no run wraps around the end of the arrays.
    first = int(np.flatnonzero(~straight)[0])
    flags, lengths = np.roll(straight, -first), np.roll(seg, -first)
    runs, current = [], 0.0
    for flag, length in zip(flags, lengths, strict=True):
        if flag:
            current += float(length)
        elif current:
            runs.append(current)
            current = 0.0
    if current:
        runs.append(current)
    return np.array(runs)


def _cone_sides(track: Track) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Arc position along the centerline, side (+1 left, -1 right) and distance from the
    centerline of every cone."""
    assert track.cones is not None
    center = track.centerline
    pos = track.cones.positions
    d = np.hypot(*(pos[:, None, :] - center[None, :, :]).transpose(2, 0, 1))
    nearest = np.argmin(d, axis=1)
    tangent = polylines.tangents(center)[nearest]
    rel = pos - center[nearest]
    along = np.einsum('ij,ij->i', rel, tangent)
    cross = tangent[:, 0] * rel[:, 1] - tangent[:, 1] * rel[:, 0]
    s = (track.s[nearest] + along) % track.length
    dist = polylines.point_to_polyline_distance(pos, center)
    return s, np.sign(cross), dist


def _max_gap(s: np.ndarray, points: np.ndarray) -> float:
    """Largest distance between cones that follow each other along the track (closed)."""
    if len(points) < 2:
        return float('inf')
    ordered = points[np.argsort(s)]
    return float(np.hypot(*(np.roll(ordered, -1, axis=0) - ordered).T).max())


def track_violations(track: Track) -> list[str]:
    """The limits of the rules that an autocross or trackdrive track breaks (empty: none)."""
    problems: list[str] = []
    center = track.centerline
    if not shapely.LinearRing(center).is_simple:
        problems.append('centerline crosses itself')
    lap = track.length
    if not rules.TRACK_MIN_LAP - TOLERANCE <= lap <= rules.TRACK_MAX_LAP + TOLERANCE:
        problems.append(f'lap {lap:.1f} m outside {rules.TRACK_MIN_LAP:g}..'
                        f'{rules.TRACK_MAX_LAP:g} m')
    width = track.width_left + track.width_right
    if width.min() < rules.TRACK_MIN_WIDTH - TOLERANCE:
        problems.append(f'width {width.min():.2f} m < {rules.TRACK_MIN_WIDTH:g} m')
    left = shapely.LinearRing(track.left_boundary)
    right = shapely.LinearRing(track.right_boundary)
    if not (left.is_simple and right.is_simple) or left.intersects(right):
        problems.append('track edges cross')
    runs = straight_runs(track)
    if runs.size and runs.max() > rules.TRACK_MAX_STRAIGHT + TOLERANCE:
        problems.append(f'straight of {runs.max():.1f} m > {rules.TRACK_MAX_STRAIGHT:g} m '
                        f'(radius above {0.5 * rules.TRACK_MAX_TURN_DIAMETER:g} m counts as '
                        'straight)')
    kappa = track.curvature
    turning = np.abs(kappa) > 1e-9
    if turning.any():
        outside = np.where(kappa > 0, track.width_right, track.width_left)
        diameter = 2.0 * (1.0 / np.abs(kappa[turning]) + outside[turning])
        if diameter.min() < rules.TRACK_MIN_HAIRPIN_OUTSIDE_DIAMETER - TOLERANCE:
            problems.append(f'hairpin outside diameter {diameter.min():.2f} m < '
                            f'{rules.TRACK_MIN_HAIRPIN_OUTSIDE_DIAMETER:g} m')
    problems.extend(cone_violations(track))
    return problems


def cone_violations(track: Track) -> list[str]:
    """The cone limits a closed track breaks: colours on their sides, spacing, the lane free."""
    if track.cones is None or not len(track.cones):
        return ['no cones']
    problems = []
    labels = track.cones.labels
    s, side, dist = _cone_sides(track)
    if np.any(side[labels == LABEL_CONE_BLUE] < 0):
        problems.append('blue cones on the right of the track')
    if np.any(side[labels == LABEL_CONE_YELLOW] > 0):
        problems.append('yellow cones on the left of the track')
    for name, sign in (('left', 1.0), ('right', -1.0)):
        on = side == sign
        gap = _max_gap(s[on], track.cones.positions[on])
        if gap > rules.TRACK_MAX_CONE_SPACING + TOLERANCE:
            problems.append(f'{name} cones {gap:.2f} m apart > {rules.TRACK_MAX_CONE_SPACING:g} m')
    if dist.min() < 0.5 * rules.TRACK_MIN_WIDTH - TOLERANCE:
        problems.append(f'a cone stands {dist.min():.2f} m from the centerline, inside the '
                        f'{rules.TRACK_MIN_WIDTH:g} m lane')
    big = int(np.count_nonzero(labels == LABEL_CONE_BIG_ORANGE))
    if big != 4:
        problems.append(f'{big} big orange cones at the timekeeping line, expected 4')
    if not np.any(labels == LABEL_CONE_ORANGE):
        problems.append('no small orange cones at the start')
    return problems
