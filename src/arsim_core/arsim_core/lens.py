"""Lens models of the cameras, as OpenCV and ROS name them: the pinhole with ``plumb_bob``
(k1, k2, p1, p2, k3) or ``rational_polynomial`` (k1, k2, p1, p2, k3, k4, k5, k6) distortion,
and the ``equidistant`` fisheye (k1, k2, k3, k4).

A camera with a lens is rendered as an ideal pinhole image wide enough to hold every ray the
lens sees, then resampled: the ray of each output pixel is found once (Newton's method on
OpenCV's lens model, ``rays``, each ray checked by projecting it back through the lens with
OpenCV), which fixes where in the ideal image that pixel reads, and ``cv2.remap`` reads it
there every frame.
So the images follow OpenCV's own model to a small fraction of a pixel, and calibrating them
with OpenCV gives the coefficients back.

A lens is refused, before anything is rendered, when it folds the image (its distorted radius
stops growing before the image's corners: two rays would land on one pixel) or when its
corners see rays further than ``MAX_HALF_ANGLE`` off the optical axis (a pinhole image cannot
hold them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

# OpenCV (about 15 MiB a process) is imported by the functions that use it: the launcher
# imports this module to check a scenario and never calls them.
import numpy as np

from arsim_core.pinhole import Intrinsics

# Each model and the names of its coefficients, in OpenCV's (and CameraInfo's D) order.
MODELS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    'plumb_bob': ('k1', 'k2', 'p1', 'p2', 'k3'),
    'rational_polynomial': ('k1', 'k2', 'p1', 'p2', 'k3', 'k4', 'k5', 'k6'),
    'equidistant': ('k1', 'k2', 'k3', 'k4'),
})
FISHEYE = 'equidistant'
PINHOLE = 'pinhole'  # on the wire: given intrinsics, no distortion
WIRE_MODELS = (PINHOLE, *MODELS)  # what a camera's lens may be on the wire
MAX_HALF_ANGLE = math.radians(80.0)  # the furthest ray off the axis a lens may see
MAX_IDEAL_SIDE = 4096  # pixels a side of the ideal image rendered for a lens
MAX_COEFFICIENT = 1e3  # |k|, |p|: beyond, no lens, a typo
PAD = 2  # pixels of the ideal image beyond the furthest ray an output pixel reads
# Ideal pixels per output pixel where the output is densest, by default (a camera's
# ``lens_oversample``): one, as a pinhole camera of the same size renders. At 1 the rasterised
# edges' steps move a checkerboard's corners by a fifth of a pixel, and OpenCV's calibration of
# a plumb_bob camera comes out about 0.5 % short in focal length; at 2 it agrees to 0.05 %, at
# four times the pixels rendered (the shipped calibration camera renders at 2).
OVERSAMPLE = 1.0
MAX_OVERSAMPLE = 4.0
INVERSE_TOLERANCE_PX = 1e-3  # a ray projected back lands this close to its pixel
_NEWTON_STEPS = 30
_CONVERGED_PX = 1e-6
_DIFFERENCE = 1e-7  # relative step of the forward differences
_RADIAL_SAMPLES = 20_000


class LensError(ValueError):
    """A lens that cannot be rendered; ``key`` names the setting that is at fault."""

    def __init__(self, message: str, key: str) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class Lens:
    """A distortion model and its coefficients, in OpenCV's order."""

    model: str
    coefficients: tuple[float, ...]

    @property
    def fisheye(self) -> bool:
        return self.model == FISHEYE

    def d(self) -> np.ndarray:
        return np.asarray(self.coefficients, np.float64)


def focal_from_fov(width: int, horizontal_fov: float, model: str | None) -> float:
    """The focal length [px] that spans ``horizontal_fov`` across the full width before
    distortion: ``tan`` for a pinhole, the angle itself for the equidistant fisheye."""
    half = horizontal_fov / 2.0
    return (width / 2.0) / (half if model == FISHEYE else math.tan(half))


def _k(intrinsics: Intrinsics) -> np.ndarray:
    return np.array([[intrinsics.fx, 0.0, intrinsics.cx], [0.0, intrinsics.fy, intrinsics.cy],
                     [0.0, 0.0, 1.0]])


def radial(lens: Lens, angle: np.ndarray) -> np.ndarray:
    """The distorted normalised radius of rays ``angle`` [rad] off the axis (tangential terms
    aside): ``r (1 + k1 r^2 + ...)`` of ``r = tan(angle)`` for the pinhole models, of the angle
    itself for the fisheye."""
    k = lens.coefficients
    if lens.fisheye:
        t2 = angle * angle
        return angle * (1.0 + t2 * (k[0] + t2 * (k[1] + t2 * (k[2] + t2 * k[3]))))
    r = np.tan(angle)
    r2 = r * r
    numerator = 1.0 + r2 * (k[0] + r2 * (k[1] + r2 * k[4]))
    if lens.model == 'plumb_bob':
        return r * numerator
    denominator = 1.0 + r2 * (k[5] + r2 * (k[6] + r2 * k[7]))
    with np.errstate(divide='ignore', invalid='ignore'):
        return np.where(denominator > 0.0, r * numerator / denominator, -np.inf)


def corner_radius(intrinsics: Intrinsics) -> float:
    """The largest normalised distorted radius in the image: its furthest corner's."""
    us = np.array([-0.5, intrinsics.width - 0.5]) - intrinsics.cx
    vs = np.array([-0.5, intrinsics.height - 0.5]) - intrinsics.cy
    return float(np.hypot(*np.meshgrid(us / intrinsics.fx, vs / intrinsics.fy)).max())


def coverage_problem(intrinsics: Intrinsics, lens: Lens) -> LensError | None:
    """Why ``lens`` cannot show the whole image: it folds inside the field of view, or its
    corners see further off the axis than MAX_HALF_ANGLE. None when it can."""
    needed = corner_radius(intrinsics)
    angles = np.linspace(0.0, MAX_HALF_ANGLE, _RADIAL_SAMPLES)
    radii = radial(lens, angles)
    reached = np.flatnonzero(radii >= needed)
    end = int(reached[0]) if len(reached) else len(angles) - 1
    falling = np.flatnonzero(np.diff(radii[:end + 1]) <= 0.0)
    if len(falling):
        peak = math.degrees(float(angles[falling[0]]))
        return LensError(
            f'the {lens.model} distortion {list(lens.coefficients)} folds the image: its '
            f'radius stops growing {peak:.1f} deg off the optical axis, inside the field of '
            f'view (the image corners need a normalised radius of {needed:.3g}); expected '
            f'coefficients whose distorted radius grows all the way to the corners',
            'distortion')
    if not len(reached):
        return LensError(
            f'the image corners would see rays more than {math.degrees(MAX_HALF_ANGLE):.0f} deg '
            f'off the optical axis (a field of view over '
            f'{2 * math.degrees(MAX_HALF_ANGLE):.0f} deg), which the renderer cannot cover; '
            f'expected a longer focal length or a narrower fov_rad',
            'fov_rad')
    return None


def rays(intrinsics: Intrinsics, lens: Lens, pixels: np.ndarray) -> np.ndarray:
    """The normalised undistorted coordinates (n, 2: x/z, y/z) of the rays that land on
    ``pixels`` (n, 2); LensError where they are not found to within INVERSE_TOLERANCE_PX.

    OpenCV's own ``undistortPoints`` iterates a fixed point that diverges for strong lenses
    that are still one to one (a rational lens seeing 70 deg off the axis), so the rays are
    found by Newton's method on OpenCV's forward model (``project``), started from the
    inverse of the radial part."""
    pixels = np.asarray(pixels, np.float64).reshape(-1, 2)
    distorted = (pixels - [intrinsics.cx, intrinsics.cy]) / [intrinsics.fx, intrinsics.fy]
    rho = np.hypot(distorted[:, 0], distorted[:, 1])
    angles = np.linspace(0.0, MAX_HALF_ANGLE, _RADIAL_SAMPLES)
    radii = radial(lens, angles)
    rising = np.flatnonzero(np.diff(radii) <= 0.0)
    end = int(rising[0]) + 1 if len(rising) else len(angles)
    guess = np.tan(np.interp(rho, radii[:end], angles[:end]))
    with np.errstate(divide='ignore', invalid='ignore'):
        scale = np.where(rho > 0.0, guess / rho, 1.0)
    normalised = distorted * scale[:, None]
    residual = _forward(intrinsics, lens, normalised) - pixels
    for _ in range(_NEWTON_STEPS):
        active = np.flatnonzero(np.abs(residual).max(axis=1) > _CONVERGED_PX)
        if not len(active):
            break
        x, r, p = normalised[active], residual[active], pixels[active]
        h = _DIFFERENCE * (1.0 + np.abs(x))
        du = (_forward(intrinsics, lens, x + h * [1.0, 0.0]) - p - r) / h[:, :1]
        dv = (_forward(intrinsics, lens, x + h * [0.0, 1.0]) - p - r) / h[:, 1:]
        determinant = du[:, 0] * dv[:, 1] - dv[:, 0] * du[:, 1]
        with np.errstate(divide='ignore', invalid='ignore'):
            delta = np.column_stack([(dv[:, 1] * r[:, 0] - dv[:, 0] * r[:, 1]) / determinant,
                                     (du[:, 0] * r[:, 1] - du[:, 1] * r[:, 0]) / determinant])
        delta[~np.isfinite(delta)] = 0.0
        # Damped: a step that does not bring the pixel closer is halved, a few times over.
        size = np.abs(r).max(axis=1)
        for _ in range(8):
            trial = x - delta
            reached = _forward(intrinsics, lens, trial) - p
            better = np.abs(reached).max(axis=1) < size
            normalised[active[better]], residual[active[better]] = trial[better], reached[better]
            keep = ~better
            if not keep.any():
                break
            active, x, p, r, delta, size = (active[keep], x[keep], p[keep], r[keep],
                                            0.5 * delta[keep], size[keep])
    back = project(intrinsics, lens, np.column_stack([normalised, np.ones(len(normalised))]))
    error = np.abs(back - pixels).max(initial=0.0)
    if not error <= INVERSE_TOLERANCE_PX:
        msg = (f'the {lens.model} distortion {list(lens.coefficients)} cannot be inverted '
               f'over the image (a ray lands {error:.3g} px from its pixel at best); expected '
               f'coefficients of a lens that maps the image one to one')
        raise LensError(msg, 'distortion')
    return normalised


def _forward(intrinsics: Intrinsics, lens: Lens, normalised: np.ndarray) -> np.ndarray:
    """``project`` of the rays (n, 2: x/z, y/z), in NumPy: OpenCV's ``projectPoints`` takes
    twenty times as long, too long for the steps of the search (``rays`` checks the rays it
    found with OpenCV's)."""
    x, y = normalised[:, 0], normalised[:, 1]
    r2 = x * x + y * y
    k = lens.coefficients
    if lens.fisheye:
        r = np.sqrt(r2)
        theta = np.arctan(r)
        t2 = theta * theta
        distorted = theta * (1.0 + t2 * (k[0] + t2 * (k[1] + t2 * (k[2] + t2 * k[3]))))
        with np.errstate(divide='ignore', invalid='ignore'):
            scale = np.where(r > 1e-12, distorted / r, 1.0)
        xd, yd = x * scale, y * scale
    else:
        factor = 1.0 + r2 * (k[0] + r2 * (k[1] + r2 * k[4]))
        if lens.model == 'rational_polynomial':
            factor = factor / (1.0 + r2 * (k[5] + r2 * (k[6] + r2 * k[7])))
        p1, p2 = k[2], k[3]
        xd = x * factor + 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x)
        yd = y * factor + p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y
    return np.column_stack([intrinsics.fx * xd + intrinsics.cx, intrinsics.fy * yd + intrinsics.cy])


def project(intrinsics: Intrinsics, lens: Lens, points: np.ndarray) -> np.ndarray:
    """Pixel coordinates (n, 2) of points (n, 3) in the optical frame, through the lens (in
    front of the camera, z > 0)."""
    import cv2
    points = np.ascontiguousarray(points, np.float64).reshape(-1, 1, 3)
    zero = np.zeros(3)
    if lens.fisheye:
        pixels, _ = cv2.fisheye.projectPoints(points, zero, zero, _k(intrinsics), lens.d())
    else:
        pixels, _ = cv2.projectPoints(points, zero, zero, _k(intrinsics), lens.d())
    return pixels.reshape(-1, 2)


def _probe(intrinsics: Intrinsics) -> np.ndarray:
    """Pixels that bound where the image's rays go and how densely: the border, the middle
    row and column and a coarse grid."""
    w, h = intrinsics.width, intrinsics.height
    us = np.unique(np.r_[np.arange(0, w, 8), w - 1, np.clip(round(intrinsics.cx), 0, w - 1)])
    vs = np.unique(np.r_[np.arange(0, h, 8), h - 1, np.clip(round(intrinsics.cy), 0, h - 1)])
    border = [np.column_stack([np.arange(w), np.full(w, v)]) for v in (0, h - 1)] + \
        [np.column_stack([np.full(h, u), np.arange(h)]) for u in (0, w - 1)]
    grid = np.stack(np.meshgrid(us, vs), axis=-1).reshape(-1, 2)
    return np.vstack([*border, grid]).astype(np.float64)


def ideal_intrinsics(intrinsics: Intrinsics, lens: Lens, oversample: float = OVERSAMPLE,
                     max_side: int = MAX_IDEAL_SIDE) -> Intrinsics:
    """The pinhole image rendered for ``lens``: it holds every ray of the output image (plus
    PAD pixels), with at least ``oversample`` pixels along each axis for each output pixel
    where the output is densest along it, unless that would make a side larger than
    ``max_side``. The two axes have their own focal lengths: a tall wide-angle image is
    densest along v in its corners and needs no more pixels along u than at its centre."""
    problem = coverage_problem(intrinsics, lens)
    if problem is not None:
        raise problem
    pixels = _probe(intrinsics)
    normalised = rays(intrinsics, lens, pixels)
    low, high = normalised.min(axis=0), normalised.max(axis=0)
    sides, focals = [], []
    for axis, step in enumerate(([1.0, 0.0], [0.0, 1.0])):
        # The smallest angle an output pixel spans along this axis, from neighbours a pixel
        # apart: the ideal image must be at least this fine.
        finest = float(np.abs(rays(intrinsics, lens, pixels + step) - normalised)[:, axis].min())
        focal = oversample / finest
        span = float(high[axis] - low[axis]) * focal + 2 * PAD + 1
        if span > max_side:
            focal *= (max_side - 2 * PAD - 1) / (span - 2 * PAD - 1)
        focals.append(focal)
        sides.append(math.ceil((high[axis] - low[axis]) * focal) + 2 * PAD + 1)
    return Intrinsics(sides[0], sides[1], focals[0], focals[1],
                      float(PAD - low[0] * focals[0]), float(PAD - low[1] * focals[1]))


@dataclass(frozen=True)
class Resampling:
    """How a lens camera's images are made from the ideal image ``ideal``: for each output
    pixel, where it reads (fixed-point maps for ``cv2.remap``: bilinear for colour, nearest
    for depth and class ids, so labels never blend)."""

    ideal: Intrinsics
    linear: tuple[np.ndarray, np.ndarray]
    nearest: np.ndarray

    def remap(self, image: np.ndarray, nearest: bool, fill: float,
              rows: slice = slice(None), out: np.ndarray | None = None) -> np.ndarray:
        """Rows ``rows`` of ``image`` (the ideal image) seen through the lens, written to
        ``out`` (those rows of the output image) when given."""
        import cv2
        if nearest:
            return cv2.remap(image, self.nearest[rows], None, cv2.INTER_NEAREST, dst=out,
                             borderMode=cv2.BORDER_CONSTANT, borderValue=fill)
        return cv2.remap(image, self.linear[0][rows], self.linear[1][rows], cv2.INTER_LINEAR,
                         dst=out, borderMode=cv2.BORDER_CONSTANT, borderValue=fill)


def resampling(intrinsics: Intrinsics, lens: Lens, oversample: float = OVERSAMPLE
               ) -> Resampling:
    """The ideal image of ``lens`` and the maps that resample it (made once per camera: a
    640 x 480 camera's in about a tenth of a second)."""
    import cv2
    ideal = ideal_intrinsics(intrinsics, lens, oversample)
    grid = np.stack(np.meshgrid(np.arange(intrinsics.width), np.arange(intrinsics.height)),
                    axis=-1).reshape(-1, 2).astype(np.float64)
    normalised = rays(intrinsics, lens, grid)
    shape = (intrinsics.height, intrinsics.width)
    map_x = (normalised[:, 0] * ideal.fx + ideal.cx).astype(np.float32).reshape(shape)
    map_y = (normalised[:, 1] * ideal.fy + ideal.cy).astype(np.float32).reshape(shape)
    linear = cv2.convertMaps(map_x, map_y, cv2.CV_16SC2)
    nearest, _ = cv2.convertMaps(map_x, map_y, cv2.CV_16SC2, nninterpolation=True)
    return Resampling(ideal, (linear[0], linear[1]), nearest)
