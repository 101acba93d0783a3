"""Surface materials of camera images: small tileable textures made once, and what each
semantic class (and each part of a car) is made of.

Noise computed per pixel in a shader costs more on llvmpipe than the rest of the shading, so
the textures are images made up front with NumPy (a few tens of milliseconds, seeded) and
sampled by world position: planar projection on the face's dominant axis, at a scale in metres
per material. Each surface's layer holds a pattern averaging 0.5 (which reads as the
material's own colour); the renderers multiply it by twice the material's colour. A cone's
layer holds its colours and stripes instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from arsim_core import labels

SIZE = 256  # texels a side of every layer
# Renderers read textures nearest, without mipmaps (on llvmpipe a filtered or mipmapped read
# costs two to five times as much): instead of a coarser level, a texture fades to its mean,
# 0.5, as a texel shrinks below this many pixels, so distant surfaces do not shimmer.
FADE_PIXELS = 1.0
PLAIN_BAND = 0.05  # where a face labelled a cone but not shaped as one reads a cone's layer
Color = tuple[float, float, float]
WHITE: Color = (0.95, 0.95, 0.95)
BLACK: Color = (0.05, 0.05, 0.05)


@dataclass(frozen=True)
class Stripes:
    """A cone's bands: where each starts and ends along the cone (base 0, tip 1), and their
    colour."""

    spans: tuple[tuple[float, float], ...]
    color: Color = WHITE


@dataclass(frozen=True)
class Material:
    """A layer of the texture array, the display colour it is tinted to, and how many metres
    one tile of it spans. A cone's layer is its own, colour and stripes painted in, its rows
    running from the base to the tip: so a stripe costs a pixel nothing more."""

    layer: int
    color: Color
    scale_m: float
    stripes: Stripes | None = None

    @property
    def tint(self) -> Color:
        """The colour the renderers multiply the layer by (twice it: layers centre on 0.5)."""
        return (1.0, 1.0, 1.0) if self.stripes is not None else self.color


# The texture array's layers: one per kind of surface, then one per kind of cone.
ASPHALT, GRASS, PAINT, CONCRETE, FOLIAGE, WOOD, SMOOTH, RUBBER, CARBON, KERB = range(10)
BLUE_CONE, YELLOW_CONE, ORANGE_CONE, BIG_ORANGE_CONE = range(10, 14)
LAYERS = 14
_ORANGE = labels.COLORS[labels.CONE_ORANGE]
_KERB_RED = labels.COLORS[labels.KERB]
# A kerb's layer is red and white blocks; the material's colour is their mean, which is what a
# kerb fades to in the distance.
_KERB_MEAN: Color = (0.5 * (_KERB_RED[0] + WHITE[0]), 0.5 * (_KERB_RED[1] + WHITE[1]),
                     0.5 * (_KERB_RED[2] + WHITE[2]))
KERB_BLOCK_M = 1.0  # [m] the side of a kerb's red or white block
FLAT_PRINT_M = 1e-4  # [m] a tile of a calibration board's print: its texture never shows
#: Every material, by the index meshes carry per vertex.
MATERIALS: tuple[Material, ...] = (
    Material(ASPHALT, labels.COLORS[labels.ROAD], 2.0),  # 0 road
    Material(GRASS, labels.COLORS[labels.GROUND], 1.5),  # 1 ground
    Material(PAINT, labels.COLORS[labels.BARRIER], 1.0),  # 2 barrier
    Material(CONCRETE, labels.COLORS[labels.SCENERY_STRUCTURE], 2.5),  # 3 walls, buildings
    Material(FOLIAGE, labels.COLORS[labels.SCENERY_VEGETATION], 1.0),  # 4 trees
    Material(WOOD, labels.COLORS[labels.SCENERY_OBJECT], 0.8),  # 5 furniture, signs
    Material(SMOOTH, labels.COLORS[labels.CAR], 1.0),  # 6 car paint
    Material(RUBBER, (0.07, 0.07, 0.07), 0.3),  # 7 tyres
    Material(CARBON, (0.14, 0.14, 0.15), 0.25),  # 8 wings, splitters
    Material(SMOOTH, (0.08, 0.1, 0.13), 1.0),  # 9 windows
    # Formula Student cones: blue with a white stripe, yellow with a black one, the orange
    # ones with two white stripes.
    Material(BLUE_CONE, labels.COLORS[labels.CONE_BLUE], 0.5, Stripes(((0.36, 0.6),))),  # 10
    Material(YELLOW_CONE, labels.COLORS[labels.CONE_YELLOW], 0.5,
             Stripes(((0.36, 0.6),), BLACK)),  # 11
    Material(ORANGE_CONE, _ORANGE, 0.5, Stripes(((0.3, 0.42), (0.56, 0.68)))),  # 12
    Material(BIG_ORANGE_CONE, _ORANGE, 0.5, Stripes(((0.26, 0.4), (0.54, 0.66)))),  # 13
    Material(SMOOTH, labels.DEFAULT_COLOR, 1.0),  # 14 any other class
    Material(KERB, _KERB_MEAN, 2.0 * KERB_BLOCK_M),  # 15 kerbs
    # A calibration board's squares, white and black: a flat print. Their texels are far
    # smaller than any pixel, so the texture always fades to the plain colour (no grain to
    # move the corners a calibration finds).
    Material(SMOOTH, WHITE, FLAT_PRINT_M),  # 16
    Material(SMOOTH, (0.02, 0.02, 0.02), FLAT_PRINT_M),  # 17
)
CAR_PAINT, TYRE, WING, WINDOW, DEFAULT_MATERIAL = 6, 7, 8, 9, 14
BOARD_WHITE, BOARD_BLACK = 16, 17
_FREQUENCY = np.array([1.0 / m.scale_m for m in MATERIALS])
_STRIPED = np.array([m.stripes is not None for m in MATERIALS])
_BY_LABEL = {labels.ROAD: 0, labels.GROUND: 1, labels.BARRIER: 2,
             labels.SCENERY_STRUCTURE: 3, labels.SCENERY_VEGETATION: 4,
             labels.SCENERY_OBJECT: 5, labels.CAR: CAR_PAINT, labels.CONE_BLUE: 10,
             labels.CONE_YELLOW: 11, labels.CONE_ORANGE: 12, labels.CONE_BIG_ORANGE: 13,
             labels.KERB: 15, labels.CALIBRATION_TARGET: BOARD_WHITE}
#: The material of each class id (256 entries).
LABEL_MATERIAL = np.array([_BY_LABEL.get(label, DEFAULT_MATERIAL) for label in range(256)],
                          np.uint8)


def tints(seed: int, jitter: float) -> np.ndarray:
    """Per material (M, 3): twice its tint (layers centre on 0.5), each channel varied by up
    to ``jitter`` of itself, from ``seed``: another run, another shade of every material."""
    base = 2.0 * np.array([m.tint for m in MATERIALS])
    variation = np.random.default_rng([seed, 7]).uniform(-1.0, 1.0, (len(MATERIALS), 4))
    # Half the jitter in brightness (all channels alike), half in hue.
    factor = 1.0 + jitter * (0.5 * variation[:, :1] + 0.5 * variation[:, 1:])
    return base * np.maximum(factor, 0.0)


# --- textures ----------------------------------------------------------------------------------
@lru_cache(maxsize=2)
def textures(seed: int, contrast: float = 1.0) -> np.ndarray:
    """Every layer (LAYERS, SIZE, SIZE, 4) uint8 RGBA, tileable, from ``seed``, patterns
    scaled by ``contrast``. A material's layer averages exactly 0.5 in every channel, so a
    renderer that fades it out with distance keeps the material's colour."""
    layers = []
    for index, make in enumerate(_MAKERS):
        pattern = make(np.random.default_rng([seed, index]))
        pattern /= pattern.mean(axis=(0, 1))
        layers.append(1.0 + contrast * (pattern - 1.0))
    layers += [_cone(m.color, m.stripes) for m in MATERIALS if m.stripes is not None]
    rgb = np.clip(0.5 * np.stack(layers), 0.0, 1.0)
    out = np.full((LAYERS, SIZE, SIZE, 4), 255, np.uint8)
    out[..., :3] = np.rint(rgb * 255.0)
    out.setflags(write=False)
    return out


def _noise(rng: np.random.Generator, slope: float, stretch: float = 1.0) -> np.ndarray:
    """Tileable noise (SIZE, SIZE), mean 0, standard deviation 1, power falling as
    frequency ** -2 slope (0: white; 1.5: blotches); ``stretch`` > 1 draws it out along the
    rows' axis (streaks running down a wall). Filtered in the Fourier domain, so it wraps."""
    spectrum = np.fft.rfft2(rng.standard_normal((SIZE, SIZE)))
    fy = np.fft.fftfreq(SIZE)[:, None] * stretch
    fx = np.fft.rfftfreq(SIZE)[None, :]
    radius = np.hypot(fx, fy)
    radius[0, 0] = 1.0
    spectrum *= radius ** -slope
    spectrum[0, 0] = 0.0
    field = np.fft.irfft2(spectrum, s=(SIZE, SIZE))
    return field / max(float(field.std()), 1e-12)


def _grey(pattern: np.ndarray) -> np.ndarray:
    return np.repeat(pattern[..., None], 3, axis=2)


def _asphalt(rng: np.random.Generator) -> np.ndarray:
    """Fine grain, worn patches and light and dark stones."""
    grain, patches, stones = _noise(rng, 0.3), _noise(rng, 1.4), _noise(rng, 0.0)
    pattern = 1.0 + 0.1 * grain + 0.07 * patches
    pattern += 0.45 * (stones > 2.3) - 0.3 * (stones < -2.5)
    return _grey(pattern)


def _grass(rng: np.random.Generator) -> np.ndarray:
    """Blades, clumps and yellowed patches."""
    blades, clumps, dry = _noise(rng, 0.2), _noise(rng, 1.2), _noise(rng, 1.8)
    pattern = _grey(1.0 + 0.22 * blades + 0.14 * clumps)
    pattern[..., 0] += 0.18 * np.maximum(dry, 0.0)
    pattern[..., 2] -= 0.08 * np.maximum(dry, 0.0)
    return pattern


def _paint(rng: np.random.Generator) -> np.ndarray:
    """Painted barriers: dirt streaks running down, scuffs."""
    streaks, scuffs, grain = _noise(rng, 1.0, stretch=8.0), _noise(rng, 1.5), _noise(rng, 0.2)
    return _grey(1.0 - 0.1 * np.maximum(streaks, 0.0) - 0.05 * np.abs(scuffs)
                 + 0.03 * grain)


def _concrete(rng: np.random.Generator) -> np.ndarray:
    """Mottled concrete or plaster, pores, and the joints of panels one tile across."""
    mottle, pores = _noise(rng, 1.3), _noise(rng, 0.1)
    pattern = 1.0 + 0.09 * mottle + 0.05 * pores - 0.3 * (pores < -2.4)
    pattern[[0, 1], :] *= 0.7  # the joints at the tile's edges
    pattern[:, [0, 1]] *= 0.7
    pattern[SIZE // 2, :] *= 0.85  # and a lighter one half way up
    return _grey(pattern)


def _foliage(rng: np.random.Generator) -> np.ndarray:
    """Clumps of leaves, light ones yellower."""
    leaves, clumps = _noise(rng, 0.6), _noise(rng, 1.1)
    light = np.tanh(1.5 * leaves + clumps)
    pattern = _grey(1.0 + 0.35 * light)
    pattern[..., 0] += 0.12 * np.maximum(light, 0.0)
    return pattern


def _wood(rng: np.random.Generator) -> np.ndarray:
    """Grain along the rows, four planks a tile."""
    warp, grain = _noise(rng, 1.6, stretch=6.0), _noise(rng, 0.3)
    x = np.arange(SIZE)[None, :] / SIZE
    rings = np.sin(2.0 * np.pi * (12.0 * x + 0.8 * warp))
    pattern = 1.0 + 0.1 * rings + 0.05 * grain
    pattern[np.arange(SIZE) % (SIZE // 4) < 2, :] *= 0.65
    return _grey(pattern)


def _smooth(rng: np.random.Generator) -> np.ndarray:
    """Paint and plastic: a faint texture, enough to tell a surface from a flat colour."""
    return _grey(1.0 + 0.05 * _noise(rng, 0.2) + 0.05 * _noise(rng, 1.5))


def _rubber(rng: np.random.Generator) -> np.ndarray:
    return _grey(1.0 + 0.2 * _noise(rng, 0.3))


def _carbon(rng: np.random.Generator) -> np.ndarray:
    """A twill weave, 16 tows a tile."""
    y, x = np.mgrid[0:SIZE, 0:SIZE] / SIZE * 16.0
    weave = np.sign(np.sin(np.pi * (x + y)) * np.sin(np.pi * (x - y)))
    return _grey(1.0 + 0.25 * weave + 0.05 * _noise(rng, 0.2))


def _kerb(rng: np.random.Generator) -> np.ndarray:
    """Red and white blocks, two a tile each way, in world x and y (so they alternate along a
    kerb whichever way it runs), with a little wear."""
    half = np.arange(SIZE) < SIZE // 2
    white = half[:, None] ^ half[None, :]
    pattern = np.where(white[..., None], np.asarray(WHITE), np.asarray(_KERB_RED))
    return pattern * (1.0 + 0.04 * _noise(rng, 0.3))[..., None]


def _cone(color: Color, stripes: Stripes) -> np.ndarray:
    """A cone's layer: its colour with the stripes across the rows (row 0 at the base), the
    same along them. Stripes are the rules' whatever the contrast."""
    along = (np.arange(SIZE) + 0.5) / SIZE
    paint = np.repeat(np.asarray(color, np.float64)[None], SIZE, axis=0)
    for start, end in stripes.spans:
        paint[(along >= start) & (along < end)] = stripes.color
    return np.repeat(paint[:, None, :], SIZE, axis=1)


_MAKERS: Sequence[Callable[[np.random.Generator], np.ndarray]] = (
    _asphalt, _grass, _paint, _concrete, _foliage, _wood, _smooth, _rubber, _carbon, _kerb)


# --- cones -------------------------------------------------------------------------------------
def cone_axes(vertices: np.ndarray, triangles: np.ndarray,
              triangle_labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per triangle, the base centre (T, 3) and base-to-tip axis (T, 3) of the cone it belongs
    to, standing or lying; a zero axis for triangles of no cone. A cone is a connected part
    labelled as one whose farthest vertex from its centroid stands clear of the rest (its
    tip): a wall labelled as a cone gets no stripes."""
    triangles = np.asarray(triangles, np.int64).reshape(-1, 3)
    base = np.zeros((len(triangles), 3))
    axis = np.zeros((len(triangles), 3))
    chosen = np.flatnonzero(np.isin(triangle_labels, labels.CONES))
    if not len(chosen):
        return base, axis
    corners = triangles[chosen]
    used, local = np.unique(corners, return_inverse=True)
    local = local.reshape(-1, 3)
    part = _components(local, len(used))
    points = np.asarray(vertices, np.float64)[used]
    count = np.bincount(part)
    centroid = np.stack([np.bincount(part, points[:, k]) for k in range(3)], 1) / count[:, None]
    distance = np.linalg.norm(points - centroid[part], axis=1)
    order = np.lexsort((-distance, part))
    first = np.flatnonzero(np.r_[True, part[order][1:] != part[order][:-1]])
    tip_vertex = order[first]  # the farthest vertex of each part, parts in order
    second = order[np.minimum(first + 1, len(order) - 1)]
    runner_up = np.where(np.diff(np.r_[first, len(order)]) > 1, distance[second], 0.0)
    tip = points[tip_vertex]
    rest = (centroid * count[:, None] - tip) / np.maximum(count - 1, 1)[:, None]
    is_cone = (count >= 5) & (distance[tip_vertex] > 1.5 * runner_up)
    cone_axis = np.where(is_cone[:, None], tip - rest, 0.0)
    triangle_part = part[local[:, 0]]
    base[chosen], axis[chosen] = rest[triangle_part], cone_axis[triangle_part]
    return base, axis


def _components(triangles: np.ndarray, count: int) -> np.ndarray:
    """The connected part (0, 1, ...) of each of ``count`` vertices joined by ``triangles``."""
    parent = np.arange(count)
    while True:
        low = parent[triangles].min(axis=1)
        merged = parent.copy()
        np.minimum.at(merged, triangles.ravel(), np.repeat(low, 3))
        np.minimum.at(merged, parent, merged)  # roots take their members' smallest
        merged = merged[merged]
        if np.array_equal(merged, parent):
            break
        parent = merged
    return np.unique(parent, return_inverse=True)[1].reshape(-1)


def cone_band(points: np.ndarray, base: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """Where ``points`` lie along their cone's axis, 0 at the base and 1 at the tip; -1 off
    any cone."""
    length2 = np.einsum('ij,ij->i', axis, axis)
    along = np.einsum('ij,ij->i', points - base, axis) / np.maximum(length2, 1e-12)
    return np.where(length2 > 0.0, along, -1.0)


def texture_uv(points: np.ndarray, normals: np.ndarray, material: np.ndarray,
               band: np.ndarray) -> np.ndarray:
    """Texture coordinates (n, 2) in tiles, as the raster's vertex shader computes them: the
    point's x, y on faces that face up or down most, else the horizontal axis along the face
    and z, times the material's tiles per metre; on a cone's layer, v is the place along the
    cone (PLAIN_BAND off one)."""
    dominant = np.abs(normals)
    up = dominant[:, 2] >= np.maximum(dominant[:, 0], dominant[:, 1])
    along_y = dominant[:, 0] >= dominant[:, 1]
    frequency = _FREQUENCY[material]
    u = np.where(up, points[:, 0], np.where(along_y, points[:, 1], points[:, 0])) * frequency
    v = np.where(up, points[:, 1], points[:, 2]) * frequency
    return np.stack([u, np.where(_STRIPED[material], np.maximum(band, PLAIN_BAND), v)], axis=1)
