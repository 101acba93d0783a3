"""Triangle meshes of tracks for ray casting (LiDAR) and rendering.

Barriers are swept along every wall polyline with a cross-section profile. Consecutive
segments share their vertices and closed walls wrap onto their first vertices, so the barrier
surface has no cracks for a horizontal ray to slip through. Thin walls get both faces so a
ray hits them from either side whatever the backend's culling.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from arsim_core.errors import TrackError
from arsim_core.geometry import rotation_matrix
from arsim_core.track import polylines
from arsim_core.track.model import (
    LABEL_BARRIER,
    LABEL_CONE_BIG_ORANGE,
    LABEL_CONE_BLUE,
    LABEL_CONE_ORANGE,
    LABEL_CONE_YELLOW,
    LABEL_GROUND,
    LABEL_KERB,
    LABEL_ROAD,
    Cones,
    Track,
    TrackMesh,
)


@dataclass(frozen=True)
class CrossSection:
    """Barrier cross-section: points ``(lateral, z)`` and whether the outline is closed."""

    points: np.ndarray
    closed: bool


def _wall_section(height: float, thickness: float) -> CrossSection:
    """A zero-thickness vertical wall from the ground to ``height``."""
    del thickness
    return CrossSection(np.array([[0.0, 0.0], [0.0, height]]), closed=False)


def _beam_section(height: float, thickness: float) -> CrossSection:
    """A solid rectangular beam (concrete block, Armco with posts) of ``thickness``."""
    h = 0.5 * thickness
    return CrossSection(np.array([[-h, 0.0], [h, 0.0], [h, height], [-h, height]]), closed=True)


def _pipe_section(height: float, thickness: float, sides: int = 12) -> CrossSection:
    """A round pipe lying on the ground, its diameter equal to the barrier height.

    The polygon is circumscribed about the circle so the pipe is never thinner than asked.
    """
    del thickness
    r = 0.5 * height / np.cos(np.pi / sides)
    ang = np.linspace(0.0, 2.0 * np.pi, sides, endpoint=False) - 0.5 * np.pi + np.pi / sides
    pts = np.stack([r * np.cos(ang), 0.5 * height + r * np.sin(ang)], axis=1)
    pts[:, 1] = np.clip(pts[:, 1], 0.0, None)
    return CrossSection(pts, closed=True)


BARRIER_PROFILES: Mapping[str, Callable[[float, float], CrossSection]] = MappingProxyType(
    {'wall': _wall_section, 'beam': _beam_section, 'pipe': _pipe_section}
)
"""Cross-section builders by profile name: ``(height, thickness) -> CrossSection``."""


@dataclass
class _Builder:
    """Accumulates vertex and triangle blocks; merged once at the end."""

    vertices: list[np.ndarray]
    triangles: list[np.ndarray]
    labels: list[np.ndarray]
    count: int = 0

    def add(self, verts: np.ndarray, tris: np.ndarray, label: int | np.ndarray) -> None:
        """Append a block whose triangle indices are local to ``verts``, with one label for
        all its triangles or one each."""
        if tris.size == 0:
            return
        self.vertices.append(verts)
        self.triangles.append(tris + self.count)
        self.labels.append(np.broadcast_to(np.asarray(label, np.uint8), (tris.shape[0],)))
        self.count += verts.shape[0]

    def build(self) -> TrackMesh:
        """One ``TrackMesh`` of all blocks."""
        if not self.vertices:
            return TrackMesh(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0))
        return TrackMesh(
            np.concatenate(self.vertices),
            np.concatenate(self.triangles),
            np.concatenate(self.labels),
        )


def _clean_polyline(points: np.ndarray) -> tuple[np.ndarray, bool]:
    """Drop repeated points; returns the points and whether the polyline is closed."""
    pts = np.asarray(points, dtype=float)
    closed = polylines.is_closed_wall(pts)
    if closed:
        pts = pts[:-1]
    keep = np.ones(pts.shape[0], dtype=bool)
    keep[1:] = np.hypot(*np.diff(pts, axis=0).T) > 1e-9
    pts = pts[keep]
    if closed and pts.shape[0] > 1 and np.hypot(*(pts[-1] - pts[0])) <= 1e-9:
        pts = pts[:-1]
    if closed and pts.shape[0] < 3:
        closed = False
    return pts, closed


def _miter_normals(pts: np.ndarray, closed: bool) -> np.ndarray:
    """Left normals at vertices, scaled so offset edges stay parallel to the segments."""
    d = np.diff(np.vstack([pts, pts[:1]]) if closed else pts, axis=0)
    d /= np.hypot(*d.T)[:, None]
    seg_n = np.stack([-d[:, 1], d[:, 0]], axis=1)
    if closed:
        prev_n, next_n = np.roll(seg_n, 1, axis=0), seg_n
    else:
        prev_n = np.vstack([seg_n[:1], seg_n])
        next_n = np.vstack([seg_n, seg_n[-1:]])
    n = prev_n + next_n
    norm = np.hypot(*n.T)
    norm[norm < 1e-9] = 1.0
    n /= norm[:, None]
    cos_half = np.clip(np.einsum('ij,ij->i', n, next_n), 0.25, 1.0)
    return n / cos_half[:, None]


def _sweep(points: np.ndarray, section: CrossSection) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and triangles of ``section`` swept along a wall polyline."""
    pts, closed = _clean_polyline(points)
    if pts.shape[0] < 2:
        return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64)
    normals = _miter_normals(pts, closed)
    k, m = pts.shape[0], section.points.shape[0]
    lateral, z = section.points[:, 0], section.points[:, 1]
    xy = pts[:, None, :] + normals[:, None, :] * lateral[None, :, None]
    verts = np.concatenate([xy, np.broadcast_to(z, (k, m))[:, :, None]], axis=2).reshape(-1, 3)
    i = np.arange(k if closed else k - 1)
    j = np.arange(m if section.closed else m - 1)
    grid_i, grid_j = np.meshgrid(i, j, indexing='ij')
    ii, jj = grid_i.ravel(), grid_j.ravel()
    a = ii * m + jj
    b = ((ii + 1) % k) * m + jj
    c = ((ii + 1) % k) * m + (jj + 1) % m
    d = ii * m + (jj + 1) % m
    tris = np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])
    if not section.closed:
        tris = np.concatenate([tris, tris[:, ::-1]])
    elif not closed:
        fan = np.stack([np.zeros(m - 2, int), np.arange(1, m - 1), np.arange(2, m)], axis=1)
        tris = np.concatenate([tris, fan[:, ::-1], fan + (k - 1) * m])
    return verts, tris


def _strip(left: np.ndarray, right: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Upward-facing triangle strip between two closed edges with matching points."""
    n = left.shape[0]
    verts = np.concatenate([left, right])
    verts = np.column_stack([verts, np.full(2 * n, z)])
    i = np.arange(n)
    j = (i + 1) % n
    tris = np.concatenate([np.stack([n + i, n + j, j], 1), np.stack([n + i, j, i], 1)])
    return verts, _face_up(verts, tris)


KERB_ROAD_WIDTH = 6.0  # m: a road this wide (median) is a full-scale circuit's, with kerbs
KERB_WIDTH = 1.0  # m, from the road edge inwards (at most a fifth of that half of the road)
KERB_HEIGHT = 0.02  # m above the road: a kerb is a slab a camera sees clear of the asphalt
KERB_RADIUS = 150.0  # m: where the track curves tighter than this, both edges get kerbs...
KERB_WINDOW = 30.0  # m ...its curvature averaged over this much track...
KERB_RUN_ON = 15.0  # m ...and the kerbs reach this far before and after the corner


def has_kerbs(track: Track) -> bool:
    """Whether the track is a full-scale circuit, whose corners get kerbs: a wide road and no
    cones (a Formula Student layout is marked by its cones alone, an F1TENTH map by walls)."""
    if track.cones is not None and len(track.cones):
        return False
    return float(np.median(track.width_left + track.width_right)) >= KERB_ROAD_WIDTH


def kerb_mask(track: Track) -> np.ndarray:
    """Per centerline point: whether the track's edges carry kerbs there (the corners)."""
    tight = (np.abs(track.smoothed_curvature(KERB_WINDOW)) > 1.0 / KERB_RADIUS).astype(float)
    reach = 2 * track.points_along(KERB_RUN_ON) + 1
    return polylines.closed_moving_average(tight, reach) > 0.0


def _kerbs(track: Track) -> tuple[np.ndarray, np.ndarray]:
    """Slabs along both road edges wherever ``kerb_mask`` holds, ``KERB_HEIGHT`` up."""
    mask = kerb_mask(track)
    centre = track.centerline
    n = centre.shape[0]
    verts, tris = [], []
    count = 0
    for edge, width in ((track.left_boundary, track.width_left),
                        (track.right_boundary, track.width_right)):
        share = np.minimum(KERB_WIDTH, 0.2 * width) / np.maximum(width, 1e-9)
        inner = edge + (centre - edge) * share[:, None]
        for run in polylines.closed_runs(mask):
            idx = np.append(run, (run[-1] + 1) % n)  # up to the next point: no gap
            k = idx.size
            strip = np.concatenate([edge[idx], inner[idx]])
            i = np.arange(k - 1)
            quads = np.concatenate([np.stack([i, i + 1, k + i + 1], 1),
                                    np.stack([i, k + i + 1, k + i], 1)])
            v = np.column_stack([strip, np.full(2 * k, KERB_HEIGHT)])
            verts.append(v)
            tris.append(_face_up(v, quads) + count)
            count += 2 * k
    if not verts:
        return np.zeros((0, 3)), np.zeros((0, 3), np.int64)
    return np.concatenate(verts), np.concatenate(tris)


def _face_up(verts: np.ndarray, tris: np.ndarray) -> np.ndarray:
    """Flip triangles whose normal points down, so surfaces face the sky."""
    p = verts[tris]
    e1, e2 = p[:, 1, :2] - p[:, 0, :2], p[:, 2, :2] - p[:, 0, :2]
    nz = e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0]
    tris = tris.copy()
    tris[nz < 0] = tris[nz < 0][:, ::-1]
    return tris


def _cone_solids(
    centres: np.ndarray, radius: float, height: float
) -> tuple[np.ndarray, np.ndarray]:
    """Closed eight-sided cones standing at ``centres`` (K, 2) on z = 0."""
    local, tris = _cone_solid(radius, height)
    count = centres.shape[0]
    placed = local[None].repeat(count, axis=0)
    placed[:, :, :2] += centres[:, None, :]
    stride = local.shape[0]
    return placed.reshape(-1, 3), (tris[None] + (np.arange(count) * stride)[:, None, None]
                                   ).reshape(-1, 3)


def _cone_solid(radius: float, height: float) -> tuple[np.ndarray, np.ndarray]:
    """One closed eight-sided cone, its base centred on the origin and its tip at z = height."""
    sides = 8
    ang = np.linspace(0.0, 2.0 * np.pi, sides, endpoint=False)
    base = np.stack([np.cos(ang) * radius, np.sin(ang) * radius, np.zeros(sides)], axis=1)
    verts = np.concatenate([base, [[0.0, 0.0, height]]])
    k = np.arange(sides)
    side = np.stack([k, (k + 1) % sides, np.full(sides, sides)], axis=1)
    cap = np.stack([np.zeros(sides - 2, int), np.arange(2, sides), np.arange(1, sides - 1)], 1)
    return verts, np.concatenate([side, cap])


def _lying_cone(x: float, y: float, yaw: float, radius: float,
                height: float) -> tuple[np.ndarray, np.ndarray]:
    """A cone knocked over: on its side, one line of its surface on the ground, its tip
    pointing along ``yaw`` from its base centre at (x, y)."""
    verts, tris = _cone_solid(radius, height)
    # Tip the axis from +z past the horizontal by the half angle, so a side lies flat.
    pitch = 0.5 * np.pi + np.arctan2(radius, height)
    verts = verts @ rotation_matrix(0.0, float(pitch), yaw).T
    verts[:, 2] -= verts[:, 2].min()
    verts[:, :2] += (x, y)
    return verts, tris


def placed_cones_mesh(cones: Cones, lying: np.ndarray | None = None) -> TrackMesh:
    """The mesh of a track's placed cones, each with its label and size: standing at
    ``cones.positions``, or knocked over where ``lying`` (K, 3: x, y, yaw of the tip
    direction, NaN rows for standing cones) says."""
    out = _Builder([], [], [])
    down = np.zeros(len(cones), bool) if lying is None else np.isfinite(lying[:, 0])
    for label, (radius, height) in PLACED_CONE_SIZES.items():
        standing = (cones.labels == label) & ~down
        if np.any(standing):
            out.add(*_cone_solids(cones.positions[standing], radius, height), label)
    if lying is not None:
        for index in np.flatnonzero(down):
            radius, height = PLACED_CONE_SIZES[int(cones.labels[index])]
            x, y, yaw = lying[index]
            out.add(*_lying_cone(float(x), float(y), float(yaw), radius, height),
                    int(cones.labels[index]))
    return out.build()


def _cones(
    edge: np.ndarray, spacing: float, radius: float, height: float, inward: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Cones every ``spacing`` metres along a closed edge, set ``radius`` towards the road."""
    pts, values = polylines.resample_closed(edge, spacing, inward)
    assert values is not None
    return _cone_solids(pts + values * radius, radius, height)


# Base radius and height per placed cone label: the small cones and the big orange one.
PLACED_CONE_SIZES = {
    LABEL_CONE_BLUE: (0.114, 0.325),
    LABEL_CONE_YELLOW: (0.114, 0.325),
    LABEL_CONE_ORANGE: (0.114, 0.325),
    LABEL_CONE_BIG_ORANGE: (0.1425, 0.505),
}


def track_mesh(
    track: Track,
    height: float | None = None,
    profile: str = 'wall',
    thickness: float | None = None,
    road: bool = True,
    ground: bool = True,
    ground_margin: float | None = None,
    cones: bool = False,
    cone_spacing: float | None = None,
    cone_radius: float | None = None,
    cone_height: float | None = None,
    placed_cones: bool = True,
    kerbs: bool | None = None,
) -> TrackMesh:
    """Build the 3D mesh of a track: barriers, road surface, ground and optional cones.

    ``height`` defaults to the track's barrier height. ``profile`` is a key of
    ``BARRIER_PROFILES``; ``thickness`` (beam width) defaults to half the height. The road is
    the strip between the track edges at z = 0; the ground lies 1 mm below it so a camera never
    sees the two fight. ``cones`` adds Formula Student cones along the edges (blue left,
    yellow right), by default the real 228 x 325 mm cone every 5 m; pass smaller values for a
    1:10 track. Cones the track places itself (``track.cones``) are always built, each with
    its label and size (the big orange cone 285 x 505 mm), unless ``placed_cones`` is false
    (the engine adds them itself, as objects that can fall). ``kerbs`` lays red and white
    kerbs along both edges through the corners, by default on full-scale circuits only
    (``has_kerbs``). A track loaded from a 3D mesh file returns that mesh unchanged.
    """
    if track.mesh is not None:
        return track.mesh
    h = float(height if height is not None else track.barrier_height)
    if h <= 0:
        msg = f'barrier height must be positive, got {h}'
        raise TrackError(msg)
    if profile not in BARRIER_PROFILES:
        msg = f'unknown barrier profile {profile!r}; known: {", ".join(BARRIER_PROFILES)}'
        raise TrackError(msg)
    section = BARRIER_PROFILES[profile](h, float(thickness if thickness else 0.5 * h))
    out = _Builder([], [], [])
    for wall in track.walls:
        verts, tris = _sweep(wall, section)
        out.add(verts, tris, LABEL_BARRIER)
    if road:
        verts, tris = _strip(track.left_boundary, track.right_boundary, 0.0)
        out.add(verts, tris, LABEL_ROAD)
    if has_kerbs(track) if kerbs is None else kerbs:
        verts, tris = _kerbs(track)
        out.add(verts, tris, LABEL_KERB)
    if ground:
        xmin, ymin, xmax, ymax = track.bounds()
        margin = ground_margin if ground_margin is not None else 0.1 * max(xmax - xmin, ymax - ymin)
        corners = np.array(
            [
                [xmin - margin, ymin - margin, -0.001],
                [xmax + margin, ymin - margin, -0.001],
                [xmax + margin, ymax + margin, -0.001],
                [xmin - margin, ymax + margin, -0.001],
            ]
        )
        out.add(corners, np.array([[0, 1, 2], [0, 2, 3]]), LABEL_GROUND)
    if cones:
        radius = cone_radius if cone_radius is not None else 0.114
        c_height = cone_height if cone_height is not None else 0.325
        spacing = cone_spacing if cone_spacing is not None else 5.0
        normals = polylines.left_normals(track.centerline)
        verts, tris = _cones(track.left_boundary, spacing, radius, c_height, -normals)
        out.add(verts, tris, LABEL_CONE_BLUE)
        verts, tris = _cones(track.right_boundary, spacing, radius, c_height, normals)
        out.add(verts, tris, LABEL_CONE_YELLOW)
    mesh = out.build()
    if track.cones is not None and placed_cones:
        return join_meshes(mesh, placed_cones_mesh(track.cones))
    return mesh


def join_meshes(*meshes: TrackMesh) -> TrackMesh:
    """One mesh of several, their triangles in order."""
    out = _Builder([], [], [])
    for mesh in meshes:
        out.add(np.asarray(mesh.vertices, np.float64), np.asarray(mesh.triangles, np.int64),
                mesh.labels)
    return out.build()
