"""Weather in camera images: overcast skies, wet roads, headlights and fog (docs/scenes.md).

Applied to a camera's colour image after its lens remap and before the sensor's own effects
(``Camera.render``), from the depth and class ids rendered with it: a camera whose scenario
asks only for colour renders them too while the weather is not clear (``view_for``), and
publishes only what it was asked for. Depth and class ids themselves never change. A lens
camera's rays are taken as its pinhole's (the image's intrinsics without the distortion),
which bends the distances fog needs by the lens's share only. Clear weather costs nothing:
``view_for`` and ``apply`` return what they were given.

All of it acts on linear light, ``colour ** 2`` (the renderers' display gamma is 2,
``protocol.appearance.encode``), in this order:

1. Overcast: sky pixels (no depth) lose their blue towards a grey of their luminance, by the
   cloud cover N (the light on the scene is already the clouds', ``config.conditions``).
2. Rain wets the road (class ids road and kerb): wetness ``w = 1 - exp(-R / WET_RATE_MM_H)``
   for a rain rate R; the albedo falls by ``WET_DARKENING * w`` (a water film darkens
   asphalt by total internal reflection, Lekner and Dorf, "Why some things are darker when
   wet", Appl. Opt. 27, 1988), and the water mirrors the sky's horizon by Schlick's Fresnel
   term ``F = 0.02 + 0.98 (1 - cos i) ** 5`` (water, n = 1.33) at the view's incidence i on
   the flat road, times w and ``SHEEN`` (the share of a rough film that mirrors).
3. Headlights: dipped beams from the camera's position along the car's heading, ``E = H
   exp(-(h / BEAM_WIDTH_RAD) ** 2 - ((v - BEAM_AIM_RAD) / BEAM_HEIGHT_RAD) ** 2)
   cos(incidence) / d ** 2`` at distance d, h the ray's angle left or right of the heading
   and v its elevation: a wide, flat beam aimed just below the horizon, which lights the
   road some ten to forty metres ahead of a full-size car and little right in front, as a
   low beam's cut-off does (UN ECE Regulation 112). Incidence is the ray's on flat ground
   for road, kerb and grass, on upright faces otherwise. The light falls on each class's
   base colour (``labels.COLORS``: the texture's detail is not recovered in the dark), dimmed
   by fog there and back.
4. Fog, Koschmieder: ``c = c exp(-sigma d) + f (1 - exp(-sigma d))`` with ``sigma = 3.912 /
   V`` and d the distance along each pixel's ray; the airlight f is a grey of the horizon
   sky's luminance, so fog glows by day and is dark at night. The sky (no depth) becomes f.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import TYPE_CHECKING

import cv2
import numpy as np

from arsim_core import labels
from arsim_core.geometry import Pose
from arsim_core.pinhole import Intrinsics
from arsim_core.protocol.appearance import Appearance
from arsim_core.protocol.weather import Weather

if TYPE_CHECKING:
    from arsim_core.backend.opengl import View
    from arsim_core.backend.scene import World

NEEDED = ('depth', 'semantic')  # what the weather is worked out from
WET_RATE_MM_H = 1.0  # a road is 63 % wet at this rain rate, fully wet at a few mm/h
WET_DARKENING = 0.5  # a wet road scatters half the light a dry one does
WATER_F0 = 0.02  # Fresnel reflectance of water at normal incidence
OVERCAST_SKY_GAIN = 1.15  # an overcast sky's grey, of the clear sky's luminance
FOG_GREY = 0.85  # the airlight, of the horizon sky's luminance
SHEEN = 0.08  # a wet road's mirror share: a rough film, not a pane of glass
HEADLIGHT_INTENSITY = 1200.0  # H of a full-size car's dipped beams [light units * m^2]
BEAM_WIDTH_RAD = 0.4  # 1/e half widths of the beam: 23 degrees to the sides,
BEAM_HEIGHT_RAD = 0.08  # 4.6 degrees up and down,
BEAM_AIM_RAD = -0.02  # about a degree below the horizon
HEADLIGHT_COLOR = np.array([1.0, 0.96, 0.88], np.float32)
LUMINANCE = np.array([0.2126, 0.7152, 0.0722], np.float32)  # Rec. 709
# Per class id, float32 tables for cv2.LUT: wet (road and kerb), lit from above (their
# incidence is the ray's), the sky; the base colours, linear, in the headlights' colour.
_WET = np.zeros(256, np.float32)
_WET[[labels.ROAD, labels.KERB]] = 1.0
_FLAT = np.zeros(256, np.float32)
_FLAT[[labels.ROAD, labels.KERB, labels.GROUND]] = 1.0
_SKY = np.zeros(256, np.float32)
_SKY[labels.NONE] = 1.0
ALBEDO = (np.asarray(labels.color_table(), np.float32) * HEADLIGHT_COLOR).reshape(1, 256, 3)
_DECODE = np.square(np.arange(256, dtype=np.float32) / np.float32(255.0))  # display to linear


def renders(weather: Weather) -> bool:
    """Whether cameras change at all in this weather (the cloud cover's light alone is the
    appearance's, but its sky is ours)."""
    return not weather.clear


def view_for(weather: Weather, view: View) -> View:
    """``view`` asking also for the depth and class ids the weather needs."""
    if weather.clear or all(o in view.outputs for o in NEEDED):
        return view
    return dataclasses.replace(view, outputs=(*view.outputs,
                                              *(o for o in NEEDED if o not in view.outputs)))


def weathered(world: World, intrinsics: Intrinsics, view: View, car_pose: Pose,
              images: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``Camera.render``'s hook: ``apply`` with the world's weather and light, for a camera
    of published ``intrinsics`` on a car at ``car_pose`` (x, y, z, roll, pitch, yaw)."""
    weather = world.weather
    if weather.clear:
        return images
    yaw = float(car_pose[5])
    heading = np.array([np.cos(yaw), np.sin(yaw), 0.0])
    return apply(weather, world.appearance, intrinsics, view, heading, images)


def apply(weather: Weather, appearance: Appearance, intrinsics: Intrinsics, view: View,
          heading: np.ndarray, images: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``images`` with the weather in ``rgb`` (a new array); ``intrinsics`` are the published
    image's, ``view`` the one it was rendered with, ``heading`` the car's forward unit vector
    in the world. Whole-image float32 arithmetic without masks: every effect is a per-pixel
    gain and an added light (per-pixel factors spread to the three channels by ``_rgb``,
    which NumPy multiplies far faster than a broadcast)."""
    if weather.clear or 'rgb' not in images:
        return images
    depth, semantic = images['depth'], images['semantic']
    light = cv2.LUT(images['rgb'], _DECODE)  # linear, float32
    rays, inverse_z = _rays(intrinsics)
    optical_to_world = np.linalg.inv(view.world_to_optical)[:3, :3]
    distance = depth * inverse_z  # along each ray; inf for the sky
    horizon = np.square(appearance.sky_gradient()[0]).astype(np.float32)
    if weather.cloud_cover > 0.0:
        cover = weather.cloud_cover
        sky = cv2.LUT(semantic, _SKY) * np.float32(cover)  # the sky's share that turns grey
        grey = cv2.transform(light, (LUMINANCE * np.float32(OVERCAST_SKY_GAIN))[None])
        light *= _rgb(np.float32(1.0) - sky)
        light += _rgb(grey * sky)
        horizon = horizon * (1.0 - cover) + (horizon @ LUMINANCE) * OVERCAST_SKY_GAIN * cover
    # Each ray in the car's terms: forward, to the left and up (world z).
    heading = np.asarray(heading, np.float64)
    axes = np.stack([heading, [-heading[1], heading[0], 0.0], [0.0, 0.0, 1.0]])
    # cv2.transform, not a matrix product: BLAS threads on a busy machine take 100 times longer
    local = cv2.transform(rays, (axes @ optical_to_world).astype(np.float32))
    up = np.ascontiguousarray(local[..., 2])
    if weather.rain_rate_mm_h > 0.0:
        wetness = 1.0 - np.exp(-weather.rain_rate_mm_h / WET_RATE_MM_H)
        wet = cv2.LUT(semantic, _WET)
        grazing = np.float32(1.0) - np.clip(-up, 0.0, 1.0)
        fresnel = WATER_F0 + (1.0 - WATER_F0) * np.square(np.square(grazing)) * grazing
        light *= _rgb(np.float32(1.0) - wet * np.float32(WET_DARKENING * wetness))
        sheen = wet * fresnel * np.float32(wetness * SHEEN)
        light += cv2.merge([sheen * horizon[0], sheen * horizon[1], sheen * horizon[2]])
    sigma = np.float32(weather.fog_extinction_per_m)
    if weather.headlights > 0.0:
        light += _headlights(weather, appearance, distance, semantic, local, sigma)
    if sigma > 0.0:
        airlight = np.float32((horizon @ LUMINANCE) * FOG_GREY)
        light -= airlight  # c t + f (1 - t) = (c - f) t + f
        light *= _rgb(np.exp(-sigma * distance))  # t: 0 for the sky
        light += airlight
    return {**images, 'rgb': cv2.convertScaleAbs(cv2.sqrt(cv2.max(light, 0.0)), alpha=255.0)}


def _rgb(factor: np.ndarray) -> np.ndarray:
    """A per-pixel ``factor`` (height, width) as three equal channels."""
    return cv2.merge([factor, factor, factor])


def _headlights(weather: Weather, appearance: Appearance, distance: np.ndarray,
                semantic: np.ndarray, local: np.ndarray, sigma: np.float32) -> np.ndarray:
    """The headlights' light (height, width, 3) on every surface; ``local`` holds each ray's
    forward, left and up components. The beam's angles are taken as their tangent across
    and sine up (within 2 % inside the beam)."""
    forward, left, up = (np.ascontiguousarray(local[..., i]) for i in range(3))
    across = left / np.maximum(forward, np.float32(1e-3))
    flat = cv2.LUT(semantic, _FLAT)
    incidence = flat * np.clip(-up, 0.0, 1.0) \
        + (np.float32(1.0) - flat) * np.sqrt(np.clip(np.float32(1.0) - up * up, 0.0, 1.0))
    d = np.maximum(distance, np.float32(0.1))
    strength = np.float32(HEADLIGHT_INTENSITY * weather.headlights * appearance.exposure)
    exponent = np.square(across * np.float32(1.0 / BEAM_WIDTH_RAD)) \
        + np.square((up - np.float32(BEAM_AIM_RAD)) * np.float32(1.0 / BEAM_HEIGHT_RAD)) \
        + (forward <= 0.0) * np.float32(50.0)  # nothing behind the lamps
    if sigma > 0.0:
        exponent += np.float32(2.0) * sigma * d
    irradiance = strength * np.exp(-exponent) * incidence / (d * d)  # 0 for the sky
    return cv2.LUT(cv2.merge([semantic, semantic, semantic]), ALBEDO) * _rgb(irradiance)


@lru_cache(maxsize=16)
def _rays(intrinsics: Intrinsics) -> tuple[np.ndarray, np.ndarray]:
    """Unit rays (height, width, 3) through the pixel centres in the optical frame, float32,
    and 1 / their z (depth to distance along the ray)."""
    rays = intrinsics.pixel_directions().astype(np.float32)
    return rays, (1.0 / rays[..., 2]).astype(np.float32)
