"""Colours of ray-cast camera pixels, by the appearance model the raster uses (``appearance``,
``materials``), in NumPy: sun, sky and ground light on each face, the same textures read
nearest at the same coordinates and faded with distance alike, and the sky's gradient.

A ray that hits the track needs the triangle it hit (for the face's normal, material and cone),
so the track gets a caster of its own here whose indices name the input triangles; the light on
each side of each triangle is worked out once per appearance. Other cars stay boxes, their faces
found from where the ray met them, textured by world position (the raster draws the car model,
textured in its own frame).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arsim_core import labels
from arsim_core.backend.boxes import BoxLayer
from arsim_core.backend.materials import (
    CAR_PAINT,
    DEFAULT_MATERIAL,
    FADE_PIXELS,
    LABEL_MATERIAL,
    MATERIALS,
    SIZE,
    cone_axes,
    cone_band,
    texture_uv,
    textures,
    tints,
)
from arsim_core.backend.raycast import triangle_normals
from arsim_core.backend.raycasters import make_raycaster
from arsim_core.protocol.appearance import Appearance, face_light, sky_colors

_LAYER = np.array([m.layer for m in MATERIALS])
_TEXEL_M = np.array([0.0 if m.stripes else m.scale_m / SIZE for m in MATERIALS])


@dataclass
class Surfaces:
    """What each ray hit: distance along it, class id, material, the face's unit normal (any
    side), the light on its side towards the eye (display values), and the point's place along
    a cone (-1 off cones)."""

    distance: np.ndarray
    label: np.ndarray
    material: np.ndarray
    normal: np.ndarray
    light: np.ndarray
    band: np.ndarray


class TrackSurfaces:
    """The track as the ray renderer casts it: its own caster and per-triangle tables, each
    with an extra last row for a miss (index -1)."""

    def __init__(self, vertices: np.ndarray, triangles: np.ndarray,
                 triangle_labels: np.ndarray) -> None:
        vertices = np.asarray(vertices, np.float32).reshape(-1, 3)
        triangles = np.asarray(triangles, np.int64).reshape(-1, 3)
        triangle_labels = np.asarray(triangle_labels, np.uint8)
        self.raycaster = make_raycaster(vertices, triangles.astype(np.uint32))
        self.labels = np.append(triangle_labels, np.uint8(labels.NONE))
        self.normals = np.vstack([triangle_normals(vertices, triangles),
                                  np.zeros((1, 3), np.float32)])
        self.materials = np.append(LABEL_MATERIAL[triangle_labels], DEFAULT_MATERIAL)
        base, axis = cone_axes(vertices, triangles, triangle_labels)
        self.cone_base = np.vstack([base, np.zeros((1, 3))])
        self.cone_axis = np.vstack([axis, np.zeros((1, 3))])
        self.on_cone = np.any(self.cone_axis != 0.0, axis=1)
        self._light: tuple[Appearance, np.ndarray] | None = None

    def light(self, appearance: Appearance) -> np.ndarray:
        """Display light (T + 1, 2, 3) on each triangle's side its normal points to and on
        the other, for ``appearance`` (kept until it changes)."""
        if self._light is None or self._light[0] != appearance:
            sides = np.stack([face_light(self.normals, appearance),
                              face_light(-self.normals, appearance)], axis=1)
            self._light = (appearance, sides.astype(np.float32))
        return self._light[1]

    def cast(self, origin: np.ndarray, directions: np.ndarray, max_distance: float,
             appearance: Appearance) -> Surfaces:
        distance, triangle, _ = self.raycaster.cast(origin[None], directions, max_distance)
        normal = self.normals[triangle]
        away = np.einsum('ij,ij->i', normal, directions) > 0.0  # lit on the other side
        band = np.full(len(triangle), -1.0)
        cone = self.on_cone[triangle]
        if cone.any():
            chosen = triangle[cone]
            points = origin + directions[cone] * distance[cone, None]
            band[cone] = cone_band(points, self.cone_base[chosen], self.cone_axis[chosen])
        return Surfaces(distance, self.labels[triangle], self.materials[triangle], normal,
                        self.light(appearance)[triangle, away.astype(np.intp)], band)


def with_cars(track: Surfaces, cars: BoxLayer | None, origin: np.ndarray,
              directions: np.ndarray, max_distance: float,
              appearance: Appearance) -> Surfaces:
    """``track``'s hits, replaced by a car's box where that is nearer."""
    if cars is None:
        return track
    hits = cars.cast(origin[None], directions, max_distance)
    nearer = hits.distance < track.distance
    if not nearer.any():
        return track
    normal = _box_normals(cars.frames, origin + directions[nearer]
                          * hits.distance[nearer, None])
    track.distance = np.where(nearer, hits.distance, track.distance)
    track.label = np.where(nearer, hits.label, track.label)
    track.material = np.where(nearer, CAR_PAINT, track.material)
    track.band = np.where(nearer, -1.0, track.band)
    track.normal[nearer] = normal
    track.light[nearer] = face_light(normal, appearance)  # outward: towards the eye
    return track


def _box_normals(frames: np.ndarray, points: np.ndarray) -> np.ndarray:
    """For points on the surface of one of the boxes (``boxes.box_frames``), the outward
    normal of the face each lies on."""
    axes = frames[:, 3:12].reshape(-1, 3, 3)  # rows: the box's x, y, z axes in the world
    half = frames[:, 12:15]
    offset = points[:, None, :] - frames[None, :, :3]
    local = np.einsum('nbj,bkj->nbk', offset, axes)  # (n, boxes, 3)
    scaled = np.abs(local) / half[None]
    box = np.argmin(np.abs(scaled.max(axis=2) - 1.0), axis=1)
    rows = np.arange(len(points))
    face = np.argmax(scaled[rows, box], axis=1)
    sign = np.sign(local[rows, box, face])
    return axes[box, face] * sign[:, None]


def shade(surfaces: Surfaces, origin: np.ndarray, directions: np.ndarray,
          depth: np.ndarray, focal: float, appearance: Appearance) -> np.ndarray:
    """Display colours (n, 3) in [0, 1] of rays of unit ``directions`` from ``origin`` with
    optical ``depth`` (inf where they hit nothing: the sky)."""
    missed = ~np.isfinite(depth)
    color = np.empty((len(directions), 3), np.float32)
    color[missed] = sky_colors(directions[missed], appearance)
    hit = ~missed
    material = surfaces.material[hit]
    tint = tints(appearance.texture_seed, appearance.color_jitter).astype(np.float32)
    color[hit] = _albedo(surfaces, hit, origin + directions[hit] * surfaces.distance[hit, None],
                         depth[hit], focal, appearance) * surfaces.light[hit] * tint[material]
    return color


def _albedo(surfaces: Surfaces, hit: np.ndarray, points: np.ndarray, depth: np.ndarray,
            focal: float, appearance: Appearance) -> np.ndarray:
    """The texture read nearest at each hit, faded to 0.5 as the raster does."""
    if appearance.texture_contrast <= 0.0:
        return np.full((len(points), 3), 0.5, np.float32)
    material = surfaces.material[hit]
    uv = texture_uv(points, surfaces.normal[hit], material, surfaces.band[hit])
    texel = np.floor(uv * SIZE).astype(np.int64) % SIZE
    layers = textures(appearance.texture_seed, appearance.texture_contrast)
    sample = layers[_LAYER[material], texel[:, 1], texel[:, 0], :3] * np.float32(1.0 / 255.0)
    texel_m = _TEXEL_M[material]
    fade = np.where(texel_m > 0.0, np.minimum(texel_m * (focal / FADE_PIXELS) / depth, 1.0),
                    1.0).astype(np.float32)
    return 0.5 + fade[:, None] * (sample - np.float32(0.5))
