"""Deciding which candidate objects are built: keep-out test, overlap test, sampling spots.

Objects are proposed in batches (more than wanted) and the ones whose footprint touches the
keep-out region, leaves the allowed area or overlaps an object already placed are dropped.
All tests are shapely's vectorised predicates, so a batch of thousands costs milliseconds.
"""

from __future__ import annotations

import numpy as np
import shapely
from shapely.geometry.base import BaseGeometry

from arsim_core.errors import TrackError
from arsim_core.track import polylines
from arsim_core.track.model import Track
from arsim_core.track.scene.instances import Instances


class Placer:
    """Accepts objects outside ``keep_out`` (and inside ``allowed``, when given) that do not
    overlap each other; remembers what it accepted."""

    def __init__(self, keep_out: BaseGeometry, allowed: BaseGeometry | None = None) -> None:
        """Prepare the regions once; every batch is then tested against them."""
        self.keep_out = keep_out
        self.allowed = allowed
        shapely.prepare(keep_out)
        if allowed is not None:
            shapely.prepare(allowed)
        self._placed: list[np.ndarray] = []
        self._tree: shapely.STRtree | None = None

    def clear_of_keep_out(self, footprints: np.ndarray) -> np.ndarray:
        """Mask of footprints that stay outside the keep-out region (and inside the allowed
        area)."""
        ok = ~shapely.intersects(footprints, self.keep_out)
        if self.allowed is not None:
            ok &= shapely.contains(self.allowed, footprints)
        return ok

    def place(self, objects: Instances, clearance: float = 0.0, limit: int | None = None,
              overlap: bool = False) -> Instances:
        """The objects that fit, in order of preference, at most ``limit`` of them.

        ``clearance`` is the free gap kept to other objects; ``overlap`` lets the objects of
        this batch touch each other (panels of a fence, the boxes of a wall).
        """
        if not len(objects):
            return objects
        foot = objects.footprints()
        ok = self.clear_of_keep_out(foot)
        grown = shapely.buffer(foot, clearance, quad_segs=1) if clearance > 0 else foot
        if self._tree is not None and ok.any():
            hits = self._tree.query(grown[ok], predicate='intersects')[0]
            ok[np.flatnonzero(ok)[hits]] = False
        if not overlap and np.count_nonzero(ok) > 1:
            idx = np.flatnonzero(ok)
            mine, other = shapely.STRtree(grown[idx]).query(grown[idx], predicate='intersects')
            later = mine > other  # drop the later one of each overlapping pair
            ok[idx[mine[later]]] = False
        keep = np.flatnonzero(ok)
        if limit is not None:
            keep = keep[:max(int(limit), 0)]
        self._remember(foot[keep])
        return objects.subset(keep)

    def place_all(self, objects: Instances, what: str) -> Instances:
        """Place objects the scene cannot do without (they may touch what is placed, as
        the walls of a hall meet at its corners), or say why they do not fit."""
        foot = objects.footprints()
        bad = ~self.clear_of_keep_out(foot)
        if bad.any():
            msg = (f'the {what} cannot be built clear of the track: {np.count_nonzero(bad)} '
                   f'of {len(objects)} parts would stand on the road or its margin')
            raise TrackError(msg)
        self._remember(foot)
        return objects

    def _remember(self, footprints: np.ndarray) -> None:
        """Add placed footprints to the ones later objects must keep clear of."""
        if footprints.size:
            self._placed.append(footprints)
            self._tree = shapely.STRtree(np.concatenate(self._placed))


def near_track(track: Track, rng: np.random.Generator, count: int, near: float,
               far: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``count`` spots beside the track, uniform along it, ``near`` to ``far`` metres beyond
    the road edge on a random side: positions (K, 2), the track heading there (K,) and the
    side (K,: +1 left, -1 right)."""
    center = track.centerline
    seg = np.hypot(*np.diff(np.vstack([center, center[:1]]), axis=0).T)
    idx = rng.choice(center.shape[0], size=count, p=seg / seg.sum())
    side = np.where(rng.random(count) < 0.5, 1.0, -1.0)
    edge = np.where(side > 0, track.width_left[idx], track.width_right[idx])
    dist = edge + rng.uniform(near, far, count)
    normals = polylines.left_normals(center)[idx]
    return center[idx] + normals * (side * dist)[:, None], track.heading[idx], side
