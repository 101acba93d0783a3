"""Formula Student driverless events: the track layouts of the four dynamic missions.

``generate(kind, seed)`` returns a ``Track`` with its cones (blue left, yellow right, small and
big orange) and its ``Mission`` (lines, stop zone, laps). The numbers come from ``rules``, each
with its source; ``validate.track_violations`` checks a closed course against the limits.
"""

from __future__ import annotations

from arsim_core.errors import TrackError
from arsim_core.track.fs.mission import KINDS, Mission
from arsim_core.track.model import Track


def generate(kind: str, seed: int = 0, name: str | None = None) -> Track:
    """The layout of mission ``kind`` (one of ``KINDS``); ``seed`` picks the autocross and
    trackdrive course and is ignored by the fixed layouts."""
    if kind == 'acceleration':
        from arsim_core.track.fs.acceleration import acceleration_track

        return acceleration_track(name or 'fs_acceleration')
    if kind == 'skidpad':
        from arsim_core.track.fs.skidpad import skidpad_track

        return skidpad_track(name or 'fs_skidpad')
    if kind in ('autocross', 'trackdrive'):
        from arsim_core.track.fs.autocross import course_track

        return course_track(kind, seed, name)
    msg = f'unknown mission {kind!r}; choose one of: {", ".join(KINDS)}'
    raise TrackError(msg)


__all__ = ['KINDS', 'Mission', 'generate']
