"""Weather in LiDAR returns: range loss and false early returns in fog, attenuation, dropout
and spray returns in rain (docs/scenes.md, "Weather in LiDARs").

Range loss is the received power's: ``configure`` sets the range model's two-way extinction
(``RangeModel.extinction_per_m``, ``I *= exp(-2 sigma r)`` ahead of its detection threshold,
``lidar_effects``) to the sum of

- fog: Koschmieder's ``sigma = 3.912 / V`` for a visibility V (``protocol.weather``), which
  holds near 900 nm as in the visible for fog droplets, far larger than the wavelength
  (Rasshofer, Spies and Spies, "Influences of weather phenomena on automotive laser radar
  systems", Adv. Radio Sci. 9, 2011);
- rain: ``1.076 R ** 0.67`` dB/km for a rain rate R [mm/h], the free-space-optics relation
  (Carbonneau and Wisely 1998, as quoted by Kim, McArthur and Korevaar 2001), 0.0012 /m at
  10 mm/h: rain dims a return far less than fog of a like name.

``weathered`` then changes a scan's returns, per beam, drawn from the range model's seeded
generator (fog's draws, then rain's):

1. Fog backscatter: with probability ``p = 1 - exp(-sigma L)`` (L = ``FOG_ECHO_LENGTH_M``,
   the near zone where the fog's own echo, strong at short range, beats the threshold) a beam
   returns from the fog itself at ``range_min + Gamma(2, FOG_ECHO_SCALE_M)``, when that is
   nearer than its own return: the cluster of points around the sensor that real LiDARs show
   in dense fog (Bijelic et al., "Seeing through fog", CVPR 2020; Hahner et al., "Fog
   simulation on real LiDAR point clouds", ICCV 2021). Its intensity is that of a target of
   reflectivity ``FOG_ECHO_REFLECTIVITY`` at that range, its label none.
2. Rain dropout: with probability ``min(RAIN_DROPOUT_PER_MM_H * R, RAIN_DROPOUT_MAX)`` a
   return is lost (NaN, as the range model's dropout): drops on the window and near the
   sensor scatter the pulse away, the rise in lost points with rain rate that Filgueira et
   al. ("Quantifying the influence of rain in LiDAR performance", Measurement 95, 2017)
   measured.
3. Spray: with probability ``min(SPRAY_PER_MM_H * R, SPRAY_MAX)`` a beam returns from the
   water the wheels throw up, uniformly between ``range_min`` and ``SPRAY_REACH_M``, when
   that is nearer than its own return; low intensity, label none.

Clear air and a dry road cost nothing: ``weathered`` returns at once.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Protocol, TypeVar

import numpy as np

from arsim_core.backend import lidar_effects
from arsim_core.backend.hits import Hits
from arsim_core.labels import NONE
from arsim_core.protocol.weather import Weather

RAIN_DB_PER_KM = 1.076  # rain extinction = RAIN_DB_PER_KM * R ** RAIN_EXPONENT [dB/km]
RAIN_EXPONENT = 0.67
FOG_ECHO_LENGTH_M = 2.0  # the near zone whose fog echo can beat the threshold
FOG_ECHO_SCALE_M = 0.5  # fog echoes at range_min + Gamma(2, this): most within 2 m
FOG_ECHO_REFLECTIVITY = 0.05
RAIN_DROPOUT_PER_MM_H = 0.004  # 4 % of returns lost at 10 mm/h
RAIN_DROPOUT_MAX = 0.5
SPRAY_PER_MM_H = 0.002  # 2 % of beams hit spray at 10 mm/h
SPRAY_MAX = 0.2
SPRAY_REACH_M = 2.0
SPRAY_REFLECTIVITY = 0.1


class RangeModel(Protocol):
    """What of ``lidar.RangeModel`` the weather reads and sets (``lidar`` imports this
    module, so it is named by its parts)."""

    range_min: float
    extinction_per_m: float
    rng: np.random.Generator


class Returns(Protocol):
    """What of ``lidar.Returns`` (a frozen dataclass) the weather changes."""

    @property
    def ranges(self) -> np.ndarray: ...
    @property
    def intensity(self) -> np.ndarray: ...
    @property
    def reflectivity(self) -> np.ndarray: ...
    @property
    def label(self) -> np.ndarray | None: ...


Measured = TypeVar('Measured', bound=Returns)


def rain_extinction_per_m(rate_mm_h: float) -> float:
    """Rain's extinction coefficient [1/m] at ``rate_mm_h``."""
    if rate_mm_h <= 0.0:
        return 0.0
    return RAIN_DB_PER_KM * rate_mm_h ** RAIN_EXPONENT * math.log(10.0) / 10.0 / 1000.0


def extinction_per_m(weather: Weather) -> float:
    """The air's one-way extinction coefficient [1/m]: fog's and rain's."""
    return weather.fog_extinction_per_m + rain_extinction_per_m(weather.rain_rate_mm_h)


def configure(model: RangeModel, weather: Weather) -> None:
    """Give ``model`` the weather's extinction (0 in clear air, its effects then off)."""
    model.extinction_per_m = extinction_per_m(weather)


def fog_echo_probability(weather: Weather) -> float:
    """The share of beams that return from the fog itself."""
    return 1.0 - math.exp(-weather.fog_extinction_per_m * FOG_ECHO_LENGTH_M)


def rain_dropout(weather: Weather) -> float:
    return min(RAIN_DROPOUT_PER_MM_H * weather.rain_rate_mm_h, RAIN_DROPOUT_MAX)


def spray_probability(weather: Weather) -> float:
    return min(SPRAY_PER_MM_H * weather.rain_rate_mm_h, SPRAY_MAX)


def changes_scans(weather: Weather) -> bool:
    """Whether ``weathered`` changes anything in this weather (fog or rain)."""
    return weather.fog_visibility_m > 0.0 or weather.rain_rate_mm_h > 0.0


def weathered(weather: Weather, model: RangeModel, hits: Hits, returns: Measured) -> Measured:
    """``returns`` of ``hits`` (any shape) with fog echoes, rain dropout and spray, changed
    in place where they can be; the labels of echoes and spray are NONE."""
    if not changes_scans(weather):
        return returns
    fog = weather.fog_visibility_m > 0.0
    rain = weather.rain_rate_mm_h > 0.0
    rng = model.rng
    ranges, intensity, reflectivity = returns.ranges, returns.intensity, returns.reflectivity
    label = np.array(hits.label if returns.label is None else returns.label, np.uint8)
    shape, near = ranges.shape, max(model.range_min, 0.0)
    if fog:
        echo = rng.random(shape, np.float32) < fog_echo_probability(weather)
        at = near + rng.gamma(2.0, FOG_ECHO_SCALE_M, shape).astype(np.float32)
        _early(echo, at, FOG_ECHO_REFLECTIVITY, ranges, intensity, reflectivity, label)
    if rain:
        lost = rng.random(shape, np.float32) < rain_dropout(weather)
        ranges[lost] = np.nan
        intensity[lost] = 0.0
        reflectivity[lost] = 0
        spray = rng.random(shape, np.float32) < spray_probability(weather)
        at = rng.uniform(near, max(SPRAY_REACH_M, near), shape).astype(np.float32)
        _early(spray, at, SPRAY_REFLECTIVITY, ranges, intensity, reflectivity, label)
    return replace(returns, label=label)  # type: ignore[type-var]  # a dataclass, lidar.Returns


def _early(chosen: np.ndarray, at: np.ndarray, reflectivity_of: float, ranges: np.ndarray,
           intensity: np.ndarray, reflectivity: np.ndarray, label: np.ndarray) -> None:
    """Returns at ``at`` where ``chosen`` and nearer than the beam's own (or it had none:
    +inf, NaN), in place."""
    own = np.where(np.isnan(ranges), np.inf, ranges)  # -inf: something nearer than range_min
    take = chosen & (at < own)
    if not take.any():
        return
    where = at[take]
    ranges[take] = where
    clamped = np.maximum(where, np.float32(1.0))
    intensity[take] = np.float32(lidar_effects.SCALE * reflectivity_of) / (clamped * clamped)
    reflectivity[take] = round(100 * reflectivity_of)
    label[take] = NONE
