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
   output is ``encode(g max(n + sqrt(n + r^2) z, 0) / full_well)``. z is drawn per pixel and
   channel as one of 64 evenly spaced quantiles of N(0, 1) (six random bits), so the output of
   each level is a function of the draw alone: one table of 256 levels x 64 draws per gain
   (``noise_table``), which holds the model's distribution itself (to the nearest 8-bit value)
   rather than a fit of its moments. A frame costs one look-up per value, and a change of gain
   16,384 encodings. 64 quantiles reach 2.4 sigma: finer ones change no statistic that 8-bit
   values can show at the noise levels of real sensors.

Every draw comes from the frame's own seed (the run's seed, the car, the sensor and the frame
time) through SplitMix64 (Steele, Lea and Flood, OOPSLA 2014: a counter hashed, which passes
BigCrush), eight bytes per word, so a rerun gives the same images bit for bit, on any number
of threads, with numba or without.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import cv2
import numpy as np

from arsim_core._jit import NUMBA_ENABLED, inline_kernel, kernel, python_function
from arsim_core.backend import helper_thread
from arsim_core.backend.pixel_rays import pixel_rays
from arsim_core.lens import Resampling
from arsim_core.pinhole import Intrinsics
from arsim_core.protocol.appearance import SHOULDER, encode
from arsim_core.protocol.camera_effects import CameraEffects, Exposure, PhotonNoise

TOP_LEVEL = 1.0 - 0.5 / 255.0  # level 255 decodes as if half a level below 1 (1 is infinity)
METER_STEP = 4  # auto exposure meters every fourth row and column
LOG_GAIN_TOLERANCE = 1e-7  # of the metered gain's logarithm
_GOLDEN_INT = 0x9E3779B97F4A7C15  # SplitMix64's counter step
_GOLDEN = np.uint64(_GOLDEN_INT)
_MIX_1, _MIX_2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_SHIFTS = (np.uint64(30), np.uint64(27), np.uint64(31))


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


DRAW_BITS = 6  # random bits per value: it draws one of 2^6 quantiles of N(0, 1)
# The draw d (0 .. 63) of a pixel and channel stands for the Gaussian z = DRAWS[d].
DRAWS = _normal_quantiles(1 << DRAW_BITS)
_DRAW_MASK = np.uint32((1 << DRAW_BITS) - 1)


@inline_kernel
def splitmix64(state: Any) -> Any:
    """SplitMix64's output for a counter ``state`` (uint64, a scalar or an array)."""
    state = (state ^ (state >> _SHIFTS[0])) * _MIX_1
    state = (state ^ (state >> _SHIFTS[1])) * _MIX_2
    return state ^ (state >> _SHIFTS[2])


@kernel
def _noisy(levels: np.ndarray, table: np.ndarray, key: np.uint64, words: np.ndarray,
           out: np.ndarray) -> None:
    """``out[i] = table[levels[i], draw i]`` (flat uint8 arrays; ``table`` 256 levels x
    2^DRAW_BITS draws, flat), draw i the low bits of byte i of the SplitMix64 stream of
    ``key``; ``words`` (uint64, at least a word per eight values) holds the stream."""
    for k in range((levels.size + 7) // 8):
        words[k] = splitmix64(key + np.uint64(k + 1) * _GOLDEN)
    draws = words.view(np.uint8)
    for i in range(levels.size):
        out[i] = table[(np.uint32(levels[i]) << DRAW_BITS) | (draws[i] & _DRAW_MASK)]


def _noisy_numpy(levels: np.ndarray, table: np.ndarray, key: np.uint64, words: np.ndarray,
                 out: np.ndarray) -> None:
    """``_noisy`` in NumPy, for machines without numba: the same values."""
    count = (levels.size + 7) // 8
    counters = np.arange(1, count + 1, dtype=np.uint64) * _GOLDEN + key
    words[:count] = python_function(splitmix64)(counters)
    draws = words.view(np.uint8)[:levels.size] & _DRAW_MASK
    np.take(table, (levels.astype(np.intp) << DRAW_BITS) | draws, out=out)


noisy = _noisy if NUMBA_ENABLED else _noisy_numpy


class ImageSensor:
    """The sensor effects of one camera and its auto exposure's state."""

    def __init__(self, effects: CameraEffects, intrinsics: Intrinsics,
                 resampling: Resampling | None = None) -> None:
        self.exposure = effects.exposure or Exposure()
        self.noise = effects.photon_noise
        self.vignette = _vignette(effects, intrinsics, resampling)
        self._metered_vignette = None if self.vignette is None else _metered(self.vignette)
        self.gain = self.exposure.gain
        self._time_ns: int | None = None
        self._table: tuple[float, np.ndarray] | None = None
        self._collected = _collected(self.noise)
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
        renderer's). A large image is shared with the helper thread in bands of rows, with
        the same values."""
        self._flip ^= 1
        out = self._buffer(f'out{self._flip}', rgb.shape, np.uint8)
        if self.auto:
            self._follow(rgb, time_ns)
        vignette = None if self.vignette is None else \
            (self.vignette, self._buffer('vignetted', rgb.shape, np.uint8))
        noise = None if self.noise is None else (
            int(python_function(splitmix64)(np.array([seed], np.uint64))[0]),
            self.noise_table().reshape(-1), self._buffer('draws', ((rgb.size + 7) // 8,),
                                                         np.uint64))
        table = self._exposure_table() if noise is None and self.gain != 1.0 else None
        row_values = rgb[0].size

        def band(rows: slice) -> None:
            image = rgb[rows]
            if vignette is not None:
                image = cv2.multiply(image, vignette[0][rows], scale=1.0 / 255.0,
                                     dst=vignette[1][rows])
            if noise is not None:
                key, outputs, words = noise
                # the band's first word of the frame's stream (bands start on whole words)
                first = rows.start * row_values // 8
                noisy(image.reshape(-1), outputs, np.uint64((key + first * _GOLDEN_INT) % 2**64),
                      words[first:], out[rows].reshape(-1))
            elif table is not None:
                cv2.LUT(image, table, dst=out[rows])
            else:
                np.copyto(out[rows], image)

        helper_thread.share(band, helper_thread.image_rows(*rgb.shape[:2]))
        return out

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
        sample = _metered(image)
        if self.vignette is not None:
            sample = cv2.multiply(sample, self._metered_vignette, scale=1.0 / 255.0)
        # OpenCV's histogram (exact counts) in a third of np.bincount's time, which first
        # widens every value to 64 bits
        counts = cv2.calcHist([sample.reshape(sample.shape[0], -1)], [0], None, [256],
                              [0, 256]).reshape(-1).astype(np.int64)
        shown = np.flatnonzero(counts)  # only the levels the image has count
        weights, light = counts[shown] / max(int(counts.sum()), 1), LINEAR[shown]
        exposure = self.exposure

        def excess(log_gain: float) -> float:
            """Mean display brightness at the gain, less the target: rises with the gain."""
            return float(weights @ encode(math.exp(log_gain) * light)) - exposure.target

        low, high = math.log(exposure.gain_min), math.log(exposure.gain_max)
        if excess(high) <= 0.0:
            return exposure.gain_max
        if excess(low) >= 0.0:
            return exposure.gain_min
        from scipy.optimize import brentq  # here: only auto exposure needs it

        return math.exp(brentq(excess, low, high, xtol=LOG_GAIN_TOLERANCE))

    def _exposure_table(self) -> np.ndarray:
        """Each level after the gain, without noise."""
        return np.rint(255.0 * encode(self.gain * LINEAR)).astype(np.uint8)

    def noise_table(self) -> np.ndarray:
        """The noisy output of each level (row) for each draw (column) at the current gain
        (256 x 2^DRAW_BITS, uint8); kept while the gain stays."""
        if self._table is None or self._table[0] != self.gain:
            self._table = (self.gain, np.rint(255.0 * encode(self.gain * self._collected))
                           .astype(np.uint8))
        return self._table[1]


def _metered(image: np.ndarray) -> np.ndarray:
    """Every METER_STEP-th row and column of ``image`` (nearest-neighbour resizing picks
    them, four times faster than copying a strided view; it leaves out a last one that a
    side's rounding drops)."""
    if min(image.shape[:2]) < 2 * METER_STEP:  # too small to resize by a quarter
        return np.ascontiguousarray(image[::METER_STEP, ::METER_STEP])
    step = 1.0 / METER_STEP
    return cv2.resize(image, None, fx=step, fy=step, interpolation=cv2.INTER_NEAREST)


def _collected(noise: PhotonNoise | None) -> np.ndarray:
    """Linear light at gain 1 of each level (row) for each draw (column): the electrons
    collected, ``max(n + sqrt(n + r^2) z, 0)``, over the full well; empty without noise."""
    if noise is None:
        return np.empty((0, 0))
    electrons = LINEAR[:, None] * noise.full_well
    collected = electrons + np.sqrt(electrons + noise.read_noise ** 2) * DRAWS[None, :]
    return np.maximum(collected, 0.0) / noise.full_well


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
