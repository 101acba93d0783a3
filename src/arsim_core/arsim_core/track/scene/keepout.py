"""Where scenery may never go: the drivable area, the barriers and a margin around them.

Scenery must not change what a car drives on or what its 2D LiDAR sees of the barriers, so
every scenery object's footprint stays outside this region. For tracks made from occupancy
maps the walls are outlines of occupied cells; the whole area inside the outermost outline is
kept clear, so scenery stands beyond the map's walls and ``/map`` stays the track's.
"""

from __future__ import annotations

import numpy as np
import shapely
from shapely.geometry.base import BaseGeometry

from arsim_core.track import polylines
from arsim_core.track.model import Track

SMALL_MARGIN = 0.5  # m, around F1TENTH-scale tracks
FULL_MARGIN = 3.0  # m, around full-scale circuits
SMALL_LONG_SIDE = 150.0  # m: a track whose bounds are shorter than this is F1TENTH-scale...
SMALL_WIDTH = 5.0  # m: ...and so is one whose median road width is below this


def is_small_scale(track: Track) -> bool:
    """Whether a track is F1TENTH-scale (a room or hall) rather than a full-scale circuit."""
    xmin, ymin, xmax, ymax = track.bounds()
    width = float(np.median(track.width_left + track.width_right))
    return max(xmax - xmin, ymax - ymin) < SMALL_LONG_SIDE or width < SMALL_WIDTH


def default_margin(track: Track) -> float:
    """The clearance kept around road and barriers: larger for full-scale circuits."""
    return SMALL_MARGIN if is_small_scale(track) else FULL_MARGIN


def road_area(track: Track) -> BaseGeometry:
    """The strip between the left and right track edges, as the union of its quads."""
    left, right = track.left_boundary, track.right_boundary
    nxt = np.roll(np.arange(left.shape[0]), -1)
    quads = np.stack([left, left[nxt], right[nxt], right], axis=1)
    polys = shapely.make_valid(shapely.polygons(quads))
    return shapely.union_all(np.append(polys, shapely.LinearRing(track.centerline)))


def _filled(geom: BaseGeometry) -> BaseGeometry:
    """The geometry with every hole filled in."""
    parts = shapely.get_parts(shapely.get_parts(geom))
    polys = parts[shapely.get_type_id(parts) == shapely.GeometryType.POLYGON]
    return shapely.union_all(shapely.polygons(shapely.get_exterior_ring(polys)))


def _wall_outlines(track: Track) -> BaseGeometry:
    """The area inside the outermost outlines of an occupancy map's walls."""
    rings = [w for w in track.walls if w.shape[0] >= 4 and polylines.is_closed_wall(w)]
    polys = shapely.make_valid([shapely.Polygon(r) for r in rings])
    return _filled(shapely.union_all(polys))


def track_area(track: Track) -> BaseGeometry:
    """Road, barriers, placed cones and (for maps) the occupied area, without any margin.

    Formula Student layouts have cones but no barriers and may give no road width; the convex
    hull of their cones covers the area driven between them.
    """
    parts = [road_area(track)]
    parts += [shapely.LineString(w) for w in track.walls if w.shape[0] >= 2]
    if track.walls_are_outlines:
        parts.append(_wall_outlines(track))
    if track.cones is not None and len(track.cones):
        parts.append(shapely.MultiPoint(track.cones.positions).convex_hull)
    return shapely.union_all(parts)


def keep_out(track: Track, margin: float | None = None) -> BaseGeometry:
    """The region no scenery footprint may touch: :func:`track_area` grown by ``margin``
    (by default 0.5 m around F1TENTH-scale tracks, 3 m around full-scale ones)."""
    m = default_margin(track) if margin is None else float(margin)
    area = track_area(track)
    if track.walls_are_outlines:
        area = _filled(area)
    return shapely.buffer(area, m, quad_segs=4)


def outer_area(track: Track) -> BaseGeometry:
    """The track area with its infield filled: points outside it are outside the track."""
    return _filled(track_area(track))
