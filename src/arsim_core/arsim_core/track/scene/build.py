"""``build_scene``: procedural scenery around any track, as a labelled triangle mesh.

LiDAR odometry and SLAM need features around the track and cameras need a place that looks
like one. The scenery is a ``TrackMesh`` of its own, joined to the track's mesh so every
sensor sees it without any change to the wire protocol. It never touches the drivable area
or its margin (``keepout.keep_out``), so driving, collisions and the 2D LiDAR's view of the
barriers are the same with and without it.
"""

from __future__ import annotations

import math

import numpy as np

from arsim_core.errors import TrackError
from arsim_core.track.model import Track, TrackMesh
from arsim_core.track.scene.circuit import build_circuit
from arsim_core.track.scene.hall import MAX_SIZE, build_hall
from arsim_core.track.scene.instances import to_mesh
from arsim_core.track.scene.keepout import default_margin, is_small_scale, keep_out, outer_area
from arsim_core.track.scene.placement import Placer

SCENE_KINDS = ('auto', 'hall', 'circuit', 'none')
"""What ``build_scene`` can build: ``auto`` picks ``hall`` or ``circuit`` from the scale."""

MAX_DENSITY = 20.0  # beyond this a full-scale circuit takes seconds and millions of triangles
_STREAMS = 6  # independent random streams, one per kind of object


def scene_kind(track: Track) -> str:
    """The scenery ``auto`` builds: a hall around F1TENTH-scale tracks, else a circuit (a
    Formula Student layout, small as it is, is an outdoor event)."""
    if track.cones is not None and len(track.cones):
        return 'circuit'
    return 'hall' if is_small_scale(track) and _fits_hall(track) else 'circuit'


def scene_problem(track: Track, kind: str) -> str | None:
    """Why scenery of ``kind`` cannot be built around ``track``, or None: checked when a
    simulation starts, before anything is built."""
    if kind == 'hall' and not _fits_hall(track):
        xmin, ymin, xmax, ymax = track.bounds()
        return (f'a hall fits tracks up to {MAX_SIZE:.0f} m across; {track.name!r} spans '
                f'{xmax - xmin:.0f} m x {ymax - ymin:.0f} m (use circuit or auto)')
    return None


def _fits_hall(track: Track) -> bool:
    """Whether the track's bounds are small enough for a hall."""
    xmin, ymin, xmax, ymax = track.bounds()
    return max(xmax - xmin, ymax - ymin) <= MAX_SIZE


def build_scene(track: Track, kind: str = 'auto', seed: int = 0,
                density: float = 1.0) -> TrackMesh:
    """Scenery around ``track``: ``'hall'`` (walls with doors, pillars, furniture),
    ``'circuit'`` (grandstands, fences, buildings, trees, poles, signs), ``'none'`` (an empty
    mesh) or ``'auto'`` (hall for F1TENTH-scale tracks, circuit otherwise).

    ``seed`` picks the variant, the same seed giving the same mesh. ``density`` scales how many
    optional objects there are: 0 leaves only a hall's walls (and no circuit scenery at all).
    Triangles carry the labels ``LABEL_SCENERY_STRUCTURE``, ``_VEGETATION`` and ``_OBJECT``;
    join the result to the track's mesh with ``arsim_core.track.mesh.join_meshes``.
    """
    if kind not in SCENE_KINDS:
        msg = f'unknown scene kind {kind!r}; expected one of {", ".join(SCENE_KINDS)}'
        raise TrackError(msg)
    try:
        value = float(density)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and 0 <= value <= MAX_DENSITY):
        msg = f'scene density must be a number >= 0 and <= {MAX_DENSITY:g}, got {density!r}'
        raise TrackError(msg)
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        msg = f'scene seed must be an integer >= 0, got {seed!r}'
        raise TrackError(msg)
    if kind == 'auto':
        kind = scene_kind(track)
    if kind == 'none':
        return to_mesh([])
    margin = default_margin(track)
    placer = Placer(keep_out(track, margin))
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(_STREAMS)]
    if kind == 'hall':
        objects = build_hall(track, placer, margin, value, rngs)
    else:
        objects = build_circuit(track, placer, margin, value, outer_area(track), rngs)
    return to_mesh(objects)
