"""What a real time-of-flight LiDAR makes of its hits: beam divergence with mixed-pixel
returns at edges, received power from reflectivity, incidence and range, two-way atmospheric
extinction, a detection threshold, and range noise that grows with range.

``lidar.RangeModel`` calls ``measure`` (compiled with numba) or ``measure_numpy`` (the same
values, bit for bit, where numba is off) on a grid of ideal ranges and signals, one row per
channel (a 2D scanner is one row). Per beam, in this order (docs/sensors.md, "LiDAR effects"):

1. Signal (``signal``, or the fused 2D scan's intensity, the same bits). ``I = SCALE * rho *
   |cos theta| / max(r, 1 m)^2``: the Lambertian LiDAR equation for an extended target,
   received power proportional to reflectivity ``rho`` times the cosine of incidence over the
   range squared (Jelalian, Laser Radar Systems, 1992; Kashani et al., "A review of LIDAR
   radiometric processing", Sensors 15, 2015), in Ouster-like photon counts (``SCALE`` =
   1000).
2. Footprint. A beam of full divergence ``omega`` lights a spot ``omega`` wide. Where it and
   its neighbour ``Delta`` away (along the scan or the next channel) lie across a depth edge
   (a hit beside a miss, or a range jump above ``EDGE_MIN_M`` and ``EDGE_RATIO`` times the
   smaller of the steps on either side of the pair, so that a surface seen at a grazing
   angle, whose steps grow smoothly, is none), the edge lies at a uniform offset ``u Delta``
   from the beam, hashed per pair of beams from the scan's key (an integer hash, so both
   beams of a pair see the one edge). The beam's spot puts ``f = max(0, omega/2 - u Delta) /
   omega`` of its power on the neighbour's surface. With powers ``w_own = (1 - f) I_own`` and
   ``w_other = f I_other``, returns closer than ``MERGE_GAP_M`` (one pulse length, c tau / 2
   for a 3 ns pulse) merge into one at the power-weighted mean range (the mixed pixel); farther
   apart, the single-return receiver reports the stronger, as Ouster's "strongest return"
   mode does (Hebert and Krotkov, "3D measurements from imaging laser radars", 1992; Tuley et
   al., "Analysis and removal of artifacts in 3-D LADAR data", ICRA 2005). A beam mixes with
   the one neighbour that gives the largest ``f`` (ties: left, right, up, down).
3. Extinction. ``I *= exp(-2 sigma r)``: Beer-Lambert attenuation out and back, ``sigma``
   [1/m] set by the weather (0 in clear air).
4. Threshold. ``I < I_min`` is no return (+inf): ``I_min`` is the signal of a 10 % Lambertian
   target at normal incidence at the sensor's ``detection_range``, as datasheets state it.
5. Noise. ``r + n * (noise_std + noise_per_m * r)``, ``n`` standard normal: an entry of
   ``NORMALS`` by a hash of the scan's key and the beam.
6. Limits. +inf beyond ``range_max``, -inf closer than ``range_min`` (REP-117); dropout (NaN)
   follows in ``RangeModel``.

All arithmetic after the signal is float64 rounded once to float32, in the same order on both
paths, so they agree bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

from arsim_core._jit import inline_kernel, kernel, parallel_kernel, prange, python_function
from arsim_core.labels import NONE

SCALE = 1000.0  # signal of a white (rho = 1) target at normal incidence at 1 m
DETECTION_REFLECTIVITY = 0.1  # the target datasheets quote their detection range for
EDGE_MIN_M = 0.05  # a range jump below this is never an edge (one surface)
EDGE_RATIO = 3.0  # an edge's jump is this many times the smaller step beside it
MERGE_GAP_M = 0.45  # two returns closer than one pulse (c * 3 ns / 2) merge into one
_MASK = np.uint64(0xFFFFFFFF)
NOISE_SALT = np.uint64(0x5BD1E995)  # the noise's hash stream, apart from the edges'
NORMAL_BITS = 12  # range noise: one of 2^12 standard normal deviates per beam


def _normal_table() -> np.ndarray:
    """Standard normal deviates, drawn once from a fixed seed and standardised (mean 0,
    variance 1), that the range noise takes by a hash of the scan's key and the beam: both
    paths read the same entries (so they agree bit for bit), at a few nanoseconds a beam
    against a generator call per scan, which cost as much as the rest of the effects on a
    1080-beam scan. 4096 float32 entries (16 kB) stay in the first-level cache; a table of
    65536 cost twice the rest of the kernel in cache misses. Tails end near 3.5 sigma."""
    table = np.random.default_rng(0x5EED).standard_normal(1 << NORMAL_BITS)
    return ((table - table.mean()) / table.std()).astype(np.float32)


NORMALS = _normal_table()
_NORMAL_MASK = np.uint64((1 << NORMAL_BITS) - 1)

# ``measure``'s settings, in one float64 array (one argument for numba's dispatcher to check
# instead of eight): noise_std, noise_per_m, range_min and range_max (as float32 values),
# divergence, column spacing, extinction and the detection threshold.
NOISE_STD, NOISE_PER_M, RANGE_MIN, RANGE_MAX, DIVERGENCE, COLUMN_SPACING, EXTINCTION, \
    THRESHOLD = range(8)


def detection_signal(detection_range: float) -> float:
    """``I_min``: the signal of a 10 % target at normal incidence at ``detection_range`` [m];
    0 (no threshold) for a range of 0."""
    if detection_range <= 0.0:
        return 0.0
    return SCALE * DETECTION_REFLECTIVITY / max(detection_range, 1.0) ** 2


@inline_kernel
def hash32(key: np.uint64, index: np.uint64) -> np.uint64:
    """32 well-mixed bits of ``index`` in the stream ``key`` (murmur3's finaliser)."""
    x = (index * np.uint64(0x9E3779B1) + key) & _MASK
    x ^= x >> np.uint64(16)
    x = (x * np.uint64(0x85EBCA6B)) & _MASK
    x ^= x >> np.uint64(13)
    x = (x * np.uint64(0xC2B2AE35)) & _MASK
    x ^= x >> np.uint64(16)
    return x


@inline_kernel
def edge_offset(key: np.uint64, pair: np.uint64) -> float:
    """A uniform number in [0, 1) for pair ``pair`` of beams (24 bits of ``hash32``)."""
    return float(hash32(key, pair) >> np.uint64(8)) * (1.0 / 16777216.0)


@inline_kernel
def _step(near: float, far: float) -> float:
    """The range step between two neighbouring beams: 0 between two misses, inf between a hit
    and a miss."""
    finite_near, finite_far = math.isfinite(near), math.isfinite(far)
    if finite_near and finite_far:
        return abs(near - far)
    return math.inf if finite_near or finite_far else 0.0


@inline_kernel
def _edge_share(before: float, near: float, far: float, after: float, has_before: bool,
                has_after: bool, key: np.uint64, pair: int, spacing: float, divergence: float,
                second: bool) -> float:
    """What one beam of the pair at ranges ``near`` and ``far`` (the first beam, or the
    ``second``) puts of its spot on the other's surface: 0 unless the pair lies across a depth
    edge (a jump above ``EDGE_MIN_M`` and ``EDGE_RATIO`` times the smaller of the steps to the
    beams ``before`` and ``after`` the pair, where there are such beams). Scalars only: array
    arguments would cost two reference counts a call, more than the rest of a beam's work."""
    gap = _step(near, far)
    if not gap > EDGE_MIN_M:
        return 0.0
    step_before = _step(before, near) if has_before else math.inf
    step_after = _step(far, after) if has_after else math.inf
    if not gap > EDGE_RATIO * min(step_before, step_after):
        return 0.0
    u = edge_offset(key, np.uint64(pair))
    offset = (1.0 - u) * spacing if second else u * spacing
    half = 0.5 * divergence
    return (half - offset) / divergence if offset < half else 0.0


def signal(distance: np.ndarray, label: np.ndarray, cosine: np.ndarray,
           gain: np.ndarray) -> np.ndarray:
    """Step 1, float32: ``gain[label] * cosine / max(distance, 1)^2`` (``gain``: ``SCALE *
    rho`` by label, 0 for a miss), in the fused 2D scan's order of operations."""
    clamped = np.maximum(distance, np.float32(1.0))
    return gain[label] * cosine / (clamped * clamped)


@kernel
def measure(distance: np.ndarray, strength: np.ndarray, label: np.ndarray,
            settings: np.ndarray, row_spacing: np.ndarray, key: np.uint64, noisy: bool,
            normals: np.ndarray, percent: np.ndarray, ranges: np.ndarray,
            intensity: np.ndarray, reflectivity: np.ndarray, returned: np.ndarray) -> None:
    """The effects on (rows, columns) float32 ideal ``distance`` (inf: a miss) and ``strength``
    (step 1's signal) and uint8 ``label``, with ``settings`` as the indices above say
    (``row_spacing`` (rows - 1,) [rad]; ``percent`` indexed by label; ``noisy``: draw range
    noise from ``normals``), into ``ranges``, ``intensity``, ``reflectivity`` and the label of
    each return, ``returned`` (NONE where none). Each beam's spot is shared with the
    neighbour (left, right, up, down; ties to the first) it puts most on."""
    rows, columns = distance.shape[0], distance.shape[1]
    noise_std, noise_per_m = settings[NOISE_STD], settings[NOISE_PER_M]
    range_min, range_max = settings[RANGE_MIN], settings[RANGE_MAX]
    divergence, column_spacing = settings[DIVERGENCE], settings[COLUMN_SPACING]
    extinction, threshold = settings[EXTINCTION], settings[THRESHOLD]
    mixing = divergence > 0.0
    noise_key = key ^ NOISE_SALT
    none = np.uint8(NONE)
    for i in range(rows):
        for j in range(columns):
            d = float(distance[i, j])
            power = float(strength[i, j])
            own = label[i, j]
            if mixing:
                best = 0.0
                bi, bj = i, j
                if columns > 1:  # pairs along the scan: (j - 1, j) and (j, j + 1)
                    left = float(distance[i, j - 1]) if j > 0 else 0.0
                    right = float(distance[i, j + 1]) if j + 1 < columns else 0.0
                    if j > 0:
                        f = _edge_share(float(distance[i, j - 2]) if j > 1 else 0.0, left, d,
                                        right, j > 1, j + 1 < columns, key,
                                        2 * (i * columns + j - 1), column_spacing, divergence,
                                        True)
                        if f > best:
                            best, bi, bj = f, i, j - 1
                    if j + 1 < columns:
                        f = _edge_share(left, d, right,
                                        float(distance[i, j + 2]) if j + 2 < columns else 0.0,
                                        j > 0, j + 2 < columns, key, 2 * (i * columns + j),
                                        column_spacing, divergence, False)
                        if f > best:
                            best, bi, bj = f, i, j + 1
                if rows > 1:  # pairs across channels: (i - 1, i) and (i, i + 1)
                    up = float(distance[i - 1, j]) if i > 0 else 0.0
                    down = float(distance[i + 1, j]) if i + 1 < rows else 0.0
                    if i > 0:
                        f = _edge_share(float(distance[i - 2, j]) if i > 1 else 0.0, up, d,
                                        down, i > 1, i + 1 < rows, key,
                                        2 * ((i - 1) * columns + j) + 1,
                                        float(row_spacing[i - 1]), divergence, True)
                        if f > best:
                            best, bi, bj = f, i - 1, j
                    if i + 1 < rows:
                        f = _edge_share(up, d, down,
                                        float(distance[i + 2, j]) if i + 2 < rows else 0.0,
                                        i > 0, i + 2 < rows, key, 2 * (i * columns + j) + 1,
                                        float(row_spacing[i]), divergence, False)
                        if f > best:
                            best, bi, bj = f, i + 1, j
                if best > 0.0:
                    mine = (1.0 - best) * power
                    theirs = best * float(strength[bi, bj])
                    other = float(distance[bi, bj])
                    if math.isfinite(d) and math.isfinite(other) \
                            and abs(d - other) < MERGE_GAP_M and mine + theirs > 0.0:
                        d = (mine * d + theirs * other) / (mine + theirs)
                        power = mine + theirs
                        if theirs > mine:
                            own = label[bi, bj]
                    elif theirs > mine:
                        d, power, own = other, theirs, label[bi, bj]
                    else:
                        power = mine
            if extinction > 0.0 and math.isfinite(d):
                power = power * math.exp(-2.0 * extinction * d)
            if power < threshold or not math.isfinite(d):
                d, power, own = math.inf, 0.0, none
            elif noisy:
                n = float(normals[hash32(noise_key, np.uint64(i * columns + j))
                                  & _NORMAL_MASK])
                d = d + n * (noise_std + noise_per_m * d)
            value = np.float32(d)
            if value > range_max:
                value = np.float32(np.inf)
            elif value < range_min:
                value = np.float32(-np.inf)
            ranges[i, j] = value
            intensity[i, j] = np.float32(power)
            returned[i, j] = own
            reflectivity[i, j] = percent[own]


@inline_kernel
def _measure_row(distance: np.ndarray, strength: np.ndarray, label: np.ndarray,
                 settings: np.ndarray, keys: np.ndarray, noisy: np.ndarray,
                 row_spacing: np.ndarray, normals: np.ndarray, percent: np.ndarray,
                 dropout: np.ndarray, draws: np.ndarray, i: int, ranges: np.ndarray,
                 intensity: np.ndarray, reflectivity: np.ndarray, returned: np.ndarray) -> None:
    """``measure_rows`` of row ``i``."""
    beams = distance.shape[1]
    measure(distance[i:i + 1], strength[i:i + 1], label[i:i + 1], settings[i], row_spacing,
            keys[i], noisy[i], normals, percent, ranges[i:i + 1], intensity[i:i + 1],
            reflectivity[i:i + 1], returned[i:i + 1])
    if draws.shape[1] == beams:
        drop = np.float32(dropout[i])
        for j in range(beams):
            if draws[i, j] < drop:
                ranges[i, j] = np.float32(np.nan)
                intensity[i, j] = np.float32(0.0)
                reflectivity[i, j] = 0


@kernel
def measure_rows(distance: np.ndarray, strength: np.ndarray, label: np.ndarray,
                 settings: np.ndarray, keys: np.ndarray, noisy: np.ndarray,
                 row_spacing: np.ndarray, normals: np.ndarray, percent: np.ndarray,
                 dropout: np.ndarray, draws: np.ndarray, rows: np.ndarray, ranges: np.ndarray,
                 intensity: np.ndarray, reflectivity: np.ndarray, returned: np.ndarray) -> None:
    """``measure`` of each of ``rows`` of (sensors, beams) arrays as a scan of its own
    (a batch of 2D scanners: rows never mix), row i with ``settings[i]``, ``keys[i]`` and
    ``noisy[i]``, then its dropout: NaN with zero intensity and reflectivity where
    ``draws[i]`` fall below ``dropout[i]`` in float32 (``draws`` (1, 0): none)."""
    for i in rows:
        _measure_row(distance, strength, label, settings, keys, noisy, row_spacing, normals,
                     percent, dropout, draws, i, ranges, intensity, reflectivity, returned)


@parallel_kernel
def measure_rows_threaded(distance: np.ndarray, strength: np.ndarray, label: np.ndarray,
                          settings: np.ndarray, keys: np.ndarray, noisy: np.ndarray,
                          row_spacing: np.ndarray, normals: np.ndarray, percent: np.ndarray,
                          dropout: np.ndarray, draws: np.ndarray, rows: np.ndarray,
                          ranges: np.ndarray, intensity: np.ndarray, reflectivity: np.ndarray,
                          returned: np.ndarray, threads: int) -> None:
    """``measure_rows`` in ``threads`` runs of rows on numba's threads: rows never mix, so
    the values are the serial kernel's."""
    count = rows.shape[0]
    for run in prange(threads):
        for r in range(run * count // threads, (run + 1) * count // threads):
            _measure_row(distance, strength, label, settings, keys, noisy, row_spacing,
                         normals, percent, dropout, draws, rows[r], ranges, intensity,
                         reflectivity, returned)


def measure_numpy(distance: np.ndarray, strength: np.ndarray, label: np.ndarray,
                  settings: np.ndarray, row_spacing: np.ndarray, key: np.uint64, noisy: bool,
                  normals: np.ndarray, percent: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``measure`` in NumPy: ranges, intensity, reflectivity and the returns' labels."""
    d = distance.astype(np.float64)
    power = strength.astype(np.float64)
    own = label.copy()
    divergence, extinction = settings[DIVERGENCE], settings[EXTINCTION]
    if divergence > 0.0:
        d, power, own = _footprints(d, power, own, divergence, settings[COLUMN_SPACING],
                                    row_spacing, key)
    finite = np.isfinite(d)
    if extinction > 0.0:
        power = np.where(finite, power * np.exp(-2.0 * extinction * np.where(finite, d, 0.0)),
                         power)
    lost = (power < settings[THRESHOLD]) | ~finite
    d = np.where(lost, np.inf, d)
    power = np.where(lost, 0.0, power)
    own = np.where(lost, np.uint8(NONE), own).astype(label.dtype)
    if noisy:
        kept = ~lost
        beams = np.arange(d.size, dtype=np.uint64).reshape(d.shape)[kept]
        noise = normals[_hash32(key ^ NOISE_SALT, beams) & _NORMAL_MASK].astype(np.float64)
        d[kept] = d[kept] + noise * (settings[NOISE_STD] + settings[NOISE_PER_M] * d[kept])
    ranges = d.astype(np.float32)
    ranges[ranges > settings[RANGE_MAX]] = np.inf
    ranges[ranges < settings[RANGE_MIN]] = -np.inf
    return ranges, power.astype(np.float32), percent[own], own


def _steps(near: np.ndarray, far: np.ndarray) -> np.ndarray:
    """``_step`` on arrays."""
    finite_near, finite_far = np.isfinite(near), np.isfinite(far)
    with np.errstate(invalid='ignore'):
        both = np.abs(near - far)
    return np.where(finite_near & finite_far, both,
                    np.where(finite_near | finite_far, np.inf, 0.0))


def _pair_edges(d: np.ndarray) -> np.ndarray:
    """``_is_edge`` for the pairs (k, k + 1) along the last axis of ``d``."""
    steps = _steps(d[..., :-1], d[..., 1:])  # steps[k]: between k and k + 1
    edge_of = np.full(d.shape[:-1] + (d.shape[-1] + 1,), np.inf)
    edge_of[..., 1:-1] = steps
    before = edge_of[..., :-2]  # the step before pair k: (k - 1, k)
    after = edge_of[..., 2:]  # the step after it: (k + 1, k + 2)
    return (steps > EDGE_MIN_M) & (steps > EDGE_RATIO * np.minimum(before, after))


def _footprints(d: np.ndarray, power: np.ndarray, label: np.ndarray, divergence: float,
                column_spacing: float, row_spacing: np.ndarray, key: np.uint64
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step 2 of ``measure`` on whole arrays (float64 ``d`` and ``power``)."""
    rows, columns = d.shape
    flat = np.arange(rows * columns, dtype=np.uint64).reshape(rows, columns)
    shares = np.zeros((4, rows, columns))
    half = 0.5 * divergence
    # Pairs along the scan (beam, beam + 1) and across channels (row, row + 1): the edge
    # offset u from the first beam, 1 - u from the second.
    for axis in range(2):
        if (columns if axis == 0 else rows) < 2:
            continue
        if axis == 0:
            first, second = (slice(None), slice(0, columns - 1)), (slice(None), slice(1, None))
            edge = _pair_edges(d)
            spacing = np.full((rows, columns - 1), column_spacing)
        else:
            first, second = (slice(0, rows - 1), slice(None)), (slice(1, None), slice(None))
            edge = _pair_edges(d.T).T
            spacing = np.broadcast_to(np.asarray(row_spacing, np.float64)[:, None],
                                      (rows - 1, columns))
        u = _edge_offsets(key, np.uint64(2) * flat[first] + np.uint64(axis))
        for offset, target, look in ((u * spacing, first, 1 + 2 * axis),
                                     ((1.0 - u) * spacing, second, 2 * axis)):
            shares[look][target] = np.where(edge & (offset < half), (half - offset) / divergence,
                                            0.0)
    best = shares.max(axis=0)
    pick = shares.argmax(axis=0)
    ii, jj = np.indices((rows, columns))
    ni = np.where(pick == 2, ii - 1, np.where(pick == 3, ii + 1, ii))
    nj = np.where(pick == 0, jj - 1, np.where(pick == 1, jj + 1, jj))
    mixed = best > 0.0
    ni, nj = np.where(mixed, ni, ii), np.where(mixed, nj, jj)
    mine = (1.0 - best) * power
    theirs = best * power[ni, nj]
    other = d[ni, nj]
    both = np.isfinite(d) & np.isfinite(other)
    with np.errstate(invalid='ignore'):
        merge = mixed & both & (np.abs(d - other) < MERGE_GAP_M) & (mine + theirs > 0.0)
        merged = (mine * d + theirs * other) / np.where(merge, mine + theirs, 1.0)
    swap = mixed & ~merge & (theirs > mine)
    new_d = np.where(merge, merged, np.where(swap, other, d))
    new_power = np.where(merge, mine + theirs, np.where(swap, theirs,
                                                         np.where(mixed, mine, power)))
    new_label = np.where((merge | swap) & (theirs > mine), label[ni, nj], label)
    return new_d, new_power, new_label.astype(label.dtype)


_hash32 = python_function(hash32)  # the same bits on arrays of indices


def _edge_offsets(key: np.uint64, pairs: np.ndarray) -> np.ndarray:
    """``edge_offset`` on an array of pair indices."""
    return (_hash32(key, pairs) >> np.uint64(8)).astype(np.float64) * (1.0 / 16777216.0)
