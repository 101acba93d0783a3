"""A camera's image sensor: vignetting, exposure (fixed or automatic) and photon noise, applied
to the colour image the renderer drew (docs/sensors.md, "Exposure and motion").

The renderers encode linear light L into display values with ``appearance.encode`` (a soft
shoulder, then a gamma of 2), so every effect here decodes a display value d back to linear
light (``LINEAR``, the exact inverse, per 8-bit level), works there, and encodes again. As the
effects act per pixel on 256 levels, each frame costs a few table look-ups instead of float
arithmetic on every pixel:

1. Vignetting scales linear light by v(pixel) (``protocol.camera_effects.Vignetting``). It is
   applied as sqrt(v) on display values, which is exactly v on linear light below the
   renderers' shoulder (display 0.77), and close above it.
2. Exposure: a gain g on linear light, fixed or automatic. Auto exposure meters each frame
   (every fourth row and column) for the gain g* whose image would have the target mean display
   brightness, and follows it in log gain with a first-order lag of its time constant in sim
   time: ``log g = log g* + exp(-dt / tau) (log g_prev - log g*)``; it starts from its initial
   gain, and starts again when the camera is reseeded or time goes back.
3. Photon noise: a pixel of linear light L collects n = L * full_well electrons; shot noise
   (Poisson, sqrt(n)) and read noise (r electrons) add, the gain amplifies both, and the
   output is ``encode(g (n + sqrt(n + r^2) z) / full_well)``. Per level (and gain), the mean
   and variance of that light over z ~ N(0, 1) are worked out on 64 quantiles of z, and each
   pixel draws its display value as a mean plus a spread times a Gaussian draw (one random byte
   per pixel and channel, the generator's raw output, turned into one of 256 Gaussian
   quantiles), in 1/16 of a level; mean and spread are chosen so that the light decoded from
   the draws has the model's mean and variance (below the shoulder; above it, the display
   values' own). So the variance of each level follows the photon model; the shape of its
   distribution is taken as Gaussian in display values.

Every draw comes from the frame's own seed (the run's seed, the car, the sensor and the frame
time), so a rerun gives the same images bit for bit.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import cv2
import numpy as np

from arsim_core.backend.pixel_rays import pixel_rays
from arsim_core.lens import Resampling
from arsim_core.pinhole import Intrinsics
from arsim_core.protocol.appearance import SHOULDER, encode
from arsim_core.protocol.camera_effects import CameraEffects, Exposure

TOP_LEVEL = 1.0 - 0.5 / 255.0  # level 255 decodes as if half a level below 1 (1 is infinity)
METER_STEP = 4  # auto exposure meters every fourth row and column
BAND_VALUES = 1 << 18  # values (pixels x channels) of the bands of rows ``apply`` works on
_BISECTIONS = 24  # halvings of the log gain range when solving for the metered gain
_SUB = 16  # fixed-point steps per display level of the noisy image
_SPREAD_SCALE = 64  # fixed-point steps per level of the spread table
_DRAW_SCALE = 256  # fixed-point steps per unit of the Gaussian draws
_QUANTILES = 64  # points of z the mean and spread of each level are worked out on


def decode(display: np.ndarray) -> np.ndarray:
    """Linear light of display values in [0, 1] (``appearance.encode`` inverted; values
    above TOP_LEVEL as TOP_LEVEL)."""
    squared = np.square(np.clip(np.asarray(display, np.float64), 0.0, TOP_LEVEL))
    over = np.maximum(squared - SHOULDER, 0.0)
    return np.minimum(squared, SHOULDER) + over / (1.0 - over / (1.0 - SHOULDER))


LINEAR = decode(np.arange(256) / 255.0)  # linear light of each 8-bit level


def _normal_quantiles(count: int) -> np.ndarray:
    """``count`` evenly spaced quantiles of N(0, 1), scaled to unit variance (the tails they
    leave out would otherwise take a few per cent of it)."""
    z = np.array([NormalDist().inv_cdf((k + 0.5) / count) for k in range(count)])
    return z / math.sqrt(float(np.mean(z * z)))


# A random byte b per pixel and channel stands for the Gaussian draw DRAWS[b] (fixed point).
DRAWS = np.rint(_normal_quantiles(256) * _DRAW_SCALE).astype(np.int16)
_Z = _normal_quantiles(_QUANTILES)


class ImageSensor:
    """The sensor effects of one camera and its auto exposure's state."""

    def __init__(self, effects: CameraEffects, intrinsics: Intrinsics,
                 resampling: Resampling | None = None) -> None:
        self.exposure = effects.exposure or Exposure()
        self.noise = effects.photon_noise
        self.vignette = _vignette(effects, intrinsics, resampling)
        self.gain = self.exposure.gain
        self._time_ns: int | None = None
        self._tables: tuple[float, np.ndarray, np.ndarray] | None = None
        self._buffers: dict[str, np.ndarray] = {}
        self._flip = 0

    @property
    def auto(self) -> bool:
        return self.exposure.mode == 'auto'

    def reset(self) -> None:
        """The auto exposure starts again from its initial gain."""
        self.gain = self.exposure.gain
        self._time_ns = None

    def apply(self, rgb: np.ndarray, time_ns: int, seed: int) -> np.ndarray:
        """The sensor's image of the rendered ``rgb`` (uint8, height x width x 3) at
        ``time_ns``, its noise drawn from ``seed``. ``rgb`` is not changed; the array returned
        is this camera's own and stays valid until its next-but-one frame (as the
        renderer's)."""
        self._flip ^= 1
        out = self._buffer(f'out{self._flip}', rgb.shape, np.uint8)
        if self.auto:
            self._follow(rgb, time_ns)
        exposure = None if self.noise is not None or self.gain == 1.0 \
            else self._exposure_table()
        noise = self._noise_tables() if self.noise is not None else None
        # Raw 64-bit words of the generator, as bytes: the cheapest uniform draws it makes.
        words = np.random.default_rng(seed).bit_generator if noise is not None else None
        # Band by band of rows, so that every temporary of a band stays in the CPU's cache.
        rows = max(1, BAND_VALUES // max(rgb[0].size, 1))
        for top in range(0, rgb.shape[0], rows):
            band = slice(top, top + rows)
            self._band(rgb[band], out[band], band, exposure, noise, words)
        return out

    def _band(self, image: np.ndarray, out: np.ndarray, band: slice,
              exposure: np.ndarray | None, noise: tuple[np.ndarray, np.ndarray] | None,
              words: Any) -> None:
        """One band of rows of ``apply``, into ``out``."""
        shape = (BAND_VALUES // max(image[0].size, 1) or 1, *image.shape[1:])
        size = image.shape[0]
        if self.vignette is not None:
            image = cv2.multiply(image, self.vignette[band],
                                 dst=self._buffer('vignetted', shape, np.uint8)[:size],
                                 scale=1.0 / 255.0)
        if noise is None:
            if exposure is None:
                np.copyto(out, image)
            else:
                cv2.LUT(image, exposure, dst=out)
            return
        mean, spread = noise
        draws = np.asarray(words.random_raw(-(-image.size // 8))).view(np.uint8)[:image.size]
        drawn = self._buffer('drawn', shape, np.int16)[:size]
        spreads = self._buffer('spreads', shape, np.int16)[:size]
        noisy = self._buffer('noisy', shape, np.uint16)[:size]
        cv2.LUT(draws.reshape(image.shape), DRAWS, dst=drawn)
        cv2.LUT(image, spread, dst=spreads)
        cv2.multiply(spreads, drawn, dst=drawn, scale=_SUB / (_SPREAD_SCALE * _DRAW_SCALE),
                     dtype=cv2.CV_16S)
        cv2.LUT(image, mean, dst=noisy)
        cv2.add(noisy, drawn, dst=noisy, dtype=cv2.CV_16U)  # saturates: below 0 is 0
        cv2.convertScaleAbs(noisy, dst=out, alpha=1.0 / _SUB)

    def _buffer(self, name: str, shape: tuple[int, ...], dtype: type) -> np.ndarray:
        """A temporary array, this camera's own from frame to frame (fresh arrays of image
        size cost their page faults every frame)."""
        buffer = self._buffers.get(name)
        if buffer is None or buffer.shape != shape:
            buffer = self._buffers[name] = np.empty(shape, dtype)
        return buffer

    def _follow(self, image: np.ndarray, time_ns: int) -> None:
        """One step of the auto exposure towards the gain metered on ``image``."""
        wanted = self.metered_gain(image)
        first = self._time_ns is None or time_ns <= self._time_ns
        tau = self.exposure.time_constant
        if first and tau > 0.0:
            self.gain = self.exposure.gain
        else:
            dt = 0.0 if first or self._time_ns is None else (time_ns - self._time_ns) * 1e-9
            keep = math.exp(-dt / tau) if tau > 0.0 else 0.0
            self.gain = math.exp(math.log(wanted) + keep * (math.log(self.gain)
                                                            - math.log(wanted)))
        self._time_ns = time_ns

    def metered_gain(self, image: np.ndarray) -> float:
        """The gain, within the exposure's limits, that gives ``image`` (as rendered, before
        vignetting and gain) the target mean display brightness."""
        sample = np.ascontiguousarray(image[::METER_STEP, ::METER_STEP])
        if self.vignette is not None:
            sample = cv2.multiply(sample, self.vignette[::METER_STEP, ::METER_STEP],
                                  scale=1.0 / 255.0)
        counts = np.bincount(sample.reshape(-1), minlength=256)
        weights = counts / max(int(counts.sum()), 1)
        exposure = self.exposure

        def brightness(gain: float) -> float:
            return float(weights @ encode(gain * LINEAR))

        low, high = math.log(exposure.gain_min), math.log(exposure.gain_max)
        if brightness(math.exp(high)) <= exposure.target:
            return exposure.gain_max
        if brightness(math.exp(low)) >= exposure.target:
            return exposure.gain_min
        for _ in range(_BISECTIONS):
            middle = 0.5 * (low + high)
            if brightness(math.exp(middle)) < exposure.target:
                low = middle
            else:
                high = middle
        return math.exp(0.5 * (low + high))

    def _exposure_table(self) -> np.ndarray:
        """Each level after the gain, without noise."""
        return np.rint(255.0 * encode(self.gain * LINEAR)).astype(np.uint8)

    def _noise_tables(self) -> tuple[np.ndarray, np.ndarray]:
        """Per level, the mean (in 1/_SUB of a level) and the spread (1/_SPREAD_SCALE) of the
        noisy display value at the current gain; kept while the gain stays."""
        if self._tables is not None and self._tables[0] == self.gain:
            return self._tables[1], self._tables[2]
        assert self.noise is not None
        full_well, read = self.noise.full_well, self.noise.read_noise
        electrons = LINEAR[:, None] * full_well
        collected = electrons + np.sqrt(electrons + read * read) * _Z[None, :]
        light = (self.gain / full_well) * np.maximum(collected, 0.0)
        display = 255.0 * encode(light)
        mean, spread = display.mean(axis=1), display.std(axis=1)
        # Below the shoulder display values are sqrt(light): a draw m + s z there has the
        # linear mean m^2 + s^2 and variance 4 m^2 s^2 + 2 s^4, which are set to the model's
        # (matching the display values' moments instead overstates the variance of dark
        # levels, whose noise bends through the square root).
        mu, variance = light.mean(axis=1), light.var(axis=1)
        root = np.sqrt(np.maximum(mu * mu - 0.5 * variance, 0.0))
        gamma = (mean < 255.0 * math.sqrt(SHOULDER)) & (mu * mu >= 0.5 * variance)
        mean = np.where(gamma, 255.0 * np.sqrt(root), mean)
        spread = np.where(gamma, 255.0 * np.sqrt(np.maximum(mu - root, 0.0)), spread)
        mean = np.rint(mean * _SUB).astype(np.uint16)
        spread = np.rint(np.minimum(spread * _SPREAD_SCALE, 32767)).astype(np.int16)
        self._tables = (self.gain, mean, spread)
        return mean, spread


def _vignette(effects: CameraEffects, intrinsics: Intrinsics,
              resampling: Resampling | None) -> np.ndarray | None:
    """The display-value factor sqrt(v) of every pixel (height x width x 3, 255 = 1), or
    None without vignetting."""
    vignetting = effects.vignetting
    if vignetting is None:
        return None
    if vignetting.model == 'cos4':
        x, y = pixel_rays(intrinsics, resampling)
        lost = 1.0 - 1.0 / np.square(1.0 + x.astype(np.float64) ** 2 + y.astype(np.float64) ** 2)
    else:
        u = np.arange(intrinsics.width) - intrinsics.cx
        v = np.arange(intrinsics.height) - intrinsics.cy
        squared = u[None, :] ** 2 + v[:, None] ** 2
        lost = squared / max(float(squared.max()), 1e-12)
    light = np.clip(1.0 - vignetting.falloff * lost, 0.0, 1.0)
    factor = np.rint(255.0 * np.sqrt(light)).astype(np.uint8)
    return cv2.merge([factor] * 3)
