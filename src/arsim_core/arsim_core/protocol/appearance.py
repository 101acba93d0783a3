"""How camera images look: the sun, the sky, the exposure and the textures' seed.

Perception trained or tested on flat colours learns nothing about light and surfaces, so a
scenario declares its lighting and may randomise it per run (``AppearanceRanges``, read from the
scenario's ``appearance`` section). The resolved numbers (``Appearance``) travel to the backend
in InitialSettings; both camera renderers apply the same model:

- the light reaching a face is a sun (directional, Lambert) plus a sky and ground hemisphere,
  times ``exposure``;
- a soft shoulder maps that light into [0, 1] and a display gamma follows. Both act on the
  light only, once per face; textures hold display-encoded albedo, which gamma multiplies
  through unchanged (``(a * l) ** g = a ** g * l ** g``), so a pixel costs one texture read
  and one product;
- the sky is a gradient from the horizon to the zenith.

Only colour changes: depth and class ids never depend on any of this.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields

import numpy as np

#: (lowest, highest, whether the lowest is excluded) of each key, for YAML and the wire.
LIMITS: Mapping[str, tuple[float, float, bool]] = {
    'sun_azimuth_rad': (-2.0 * math.pi, 2.0 * math.pi, False),
    'sun_elevation_rad': (0.0, 0.5 * math.pi, False),
    'sun_intensity': (0.0, 10.0, False),
    'sky_intensity': (0.0, 10.0, False),
    'exposure': (0.0, 10.0, True),
    'texture_seed': (0, 2**31 - 1, False),
    'texture_contrast': (0.0, 2.0, False),
    'color_jitter': (0.0, 1.0, False),
}
INTEGER_KEYS = frozenset({'texture_seed'})
SHOULDER = 0.6  # light above this is compressed smoothly towards 1

# Linear light of each part of the model at intensity 1 (RGB): a warm sun, a blue sky and
# the light the ground throws back up.
SUN_COLOR = (1.0, 0.95, 0.86)
SKY_LIGHT = (0.42, 0.46, 0.55)
GROUND_LIGHT = (0.2, 0.19, 0.17)
# The sky's own radiance at intensity 1, at the horizon and at the zenith.
HORIZON = (0.78, 0.84, 0.9)
ZENITH = (0.2, 0.36, 0.72)


@dataclass(frozen=True)
class Appearance:
    """The resolved appearance of one run. Azimuth counts counter-clockwise from the world's
    +x axis; elevation from the horizon. ``texture_seed`` picks the textures' noise,
    ``texture_contrast`` scales their patterns (0: flat colours, which skips the texture read
    and its cost, and the cones' stripes with it), and ``color_jitter`` (0..1) tints every
    material by up to that share of its colour, drawn from ``texture_seed`` too."""

    sun_azimuth_rad: float = 0.7
    sun_elevation_rad: float = 0.9
    sun_intensity: float = 1.0
    sky_intensity: float = 1.0
    exposure: float = 1.0
    texture_seed: int = 0
    texture_contrast: float = 1.0
    color_jitter: float = 0.0

    def to_wire(self) -> dict[str, float | int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def sun_direction(self) -> np.ndarray:
        """Unit vector towards the sun, world frame."""
        elevation, azimuth = self.sun_elevation_rad, self.sun_azimuth_rad
        return np.array([math.cos(elevation) * math.cos(azimuth),
                         math.cos(elevation) * math.sin(azimuth), math.sin(elevation)])

    @property
    def sun_light(self) -> np.ndarray:
        return np.asarray(SUN_COLOR) * self.sun_intensity

    @property
    def sky_light(self) -> np.ndarray:
        return np.asarray(SKY_LIGHT) * self.sky_intensity

    @property
    def ground_light(self) -> np.ndarray:
        return np.asarray(GROUND_LIGHT) * self.sky_intensity

    def sky_gradient(self) -> tuple[np.ndarray, np.ndarray]:
        """Display colours of the sky at the horizon and at the zenith."""
        scale = self.sky_intensity * self.exposure
        return (encode(np.asarray(HORIZON) * scale), encode(np.asarray(ZENITH) * scale))


KEYS = tuple(f.name for f in fields(Appearance))
DEFAULT = Appearance()


def encode(light: np.ndarray) -> np.ndarray:
    """Linear light (any shape, last axis RGB) to display values in [0, 1]: a shoulder that
    bends smoothly from the identity towards 1, then a display gamma of 2 (a square root,
    cheaper per vertex than 2.2 and close to it). The GLSL of ``raster`` computes the same."""
    light = np.maximum(np.asarray(light, np.float64), 0.0)
    over = np.maximum(light - SHOULDER, 0.0)
    return np.sqrt(np.minimum(light, SHOULDER) + over / (1.0 + over / (1.0 - SHOULDER)))


def face_light(normals: np.ndarray, appearance: Appearance) -> np.ndarray:
    """Display-encoded light (n, 3) on faces with unit ``normals`` (n, 3) that face the
    viewer: sun, sky and ground, times the exposure."""
    sun = np.maximum(normals @ appearance.sun_direction, 0.0)[:, None]
    up = 0.5 + 0.5 * normals[:, 2:3]
    light = sun * appearance.sun_light + up * appearance.sky_light \
        + (1.0 - up) * appearance.ground_light
    return encode(light * appearance.exposure)


def sky_colors(directions: np.ndarray, appearance: Appearance) -> np.ndarray:
    """Display colours (n, 3) of the sky along ``directions`` (n, 3, any length)."""
    horizon, zenith = appearance.sky_gradient()
    length = np.linalg.norm(directions, axis=1)
    height = np.clip(directions[:, 2] / np.maximum(length, 1e-12), 0.0, 1.0)
    blend = (height * (2.0 - height))[:, None]  # quickly away from the horizon, then slowly
    return horizon + (zenith - horizon) * blend


@dataclass(frozen=True)
class AppearanceRanges:
    """The appearance a scenario declares: per key a range (equal ends for a fixed value),
    drawn once per run from ``seed`` and the run's seed."""

    ranges: Mapping[str, tuple[float, float]]
    seed: int = 0

    def draw(self, run_seed: int = 0) -> Appearance:
        """One appearance; each key from its own stream, so making one key a range leaves the
        others' draws as they were."""
        values: dict[str, float | int] = {}
        for index, key in enumerate(KEYS):
            low, high = self.ranges.get(key, (getattr(DEFAULT, key),) * 2)
            if low == high:
                values[key] = int(low) if key in INTEGER_KEYS else float(low)
                continue
            rng = np.random.default_rng([self.seed, run_seed, index])
            values[key] = int(rng.integers(int(low), int(high) + 1)) \
                if key in INTEGER_KEYS else float(rng.uniform(low, high))
        return Appearance(**values)  # type: ignore[arg-type]


FIXED_DEFAULT = AppearanceRanges({key: (getattr(DEFAULT, key),) * 2 for key in KEYS})
