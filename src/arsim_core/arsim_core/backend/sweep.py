"""The work around a spinning LiDAR's ray cast, as compiled loops: each column's ray origin
and directions from the pose the car had at its time, and the range model that turns hits
into measurements.

``lidar.Lidar3D`` and ``lidar.RangeModel`` keep their NumPy versions for machines without
numba (or with ``ARSIM_NUMBA=0``); these give the same values in one pass over the arrays,
with no temporaries. On an OS1 revolution of 32 x 1024 rays they take about 0.2 ms here where
the NumPy versions took about 1.5 ms, as much as Embree's cast of the revolution in a hall.
"""

from __future__ import annotations

import math

import numpy as np

from arsim_core._jit import NUMBA_ENABLED, kernel

ENABLED = NUMBA_ENABLED


@kernel
def column_rays(poses: np.ndarray, mount_position: np.ndarray, mount_rotation: np.ndarray,
                local: np.ndarray, origins: np.ndarray, directions: np.ndarray) -> None:
    """Fill ``origins`` (columns, 3) and ``directions`` (channels, columns, 3), float32, for
    the car's ``poses`` (columns, 6: x, y, z, roll, pitch, yaw) and the sensor's ``local``
    directions (channels, columns, 3, float32) in its mount (position (3,), rotation (3, 3)).

    As ``Lidar3D``'s NumPy version: the car's rotation is Rz(yaw) Ry(pitch) Rx(roll) in
    float64, the sensor's rotation is rounded to float32 and turns the float32 directions.
    """
    channels, columns = local.shape[0], local.shape[1]
    sensor = np.empty((3, 3), np.float32)
    for j in range(columns):
        cr, sr = math.cos(poses[j, 3]), math.sin(poses[j, 3])
        cp, sp = math.cos(poses[j, 4]), math.sin(poses[j, 4])
        cy, sy = math.cos(poses[j, 5]), math.sin(poses[j, 5])
        r00, r01, r02 = cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr
        r10, r11, r12 = sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr
        r20, r21, r22 = -sp, cp * sr, cp * cr
        mx, my, mz = mount_position[0], mount_position[1], mount_position[2]
        origins[j, 0] = np.float32(poses[j, 0] + (r00 * mx + r01 * my + r02 * mz))
        origins[j, 1] = np.float32(poses[j, 1] + (r10 * mx + r11 * my + r12 * mz))
        origins[j, 2] = np.float32(poses[j, 2] + (r20 * mx + r21 * my + r22 * mz))
        for b in range(3):
            m0, m1, m2 = mount_rotation[0, b], mount_rotation[1, b], mount_rotation[2, b]
            sensor[0, b] = np.float32(r00 * m0 + r01 * m1 + r02 * m2)
            sensor[1, b] = np.float32(r10 * m0 + r11 * m1 + r12 * m2)
            sensor[2, b] = np.float32(r20 * m0 + r21 * m1 + r22 * m2)
        for c in range(channels):
            lx, ly, lz = local[c, j, 0], local[c, j, 1], local[c, j, 2]
            for a in range(3):
                directions[c, j, a] = sensor[a, 0] * lx + sensor[a, 1] * ly + sensor[a, 2] * lz


@kernel
def measure(distance: np.ndarray, label: np.ndarray, cosine: np.ndarray, noise: np.ndarray,
            noise_std: np.float32, range_min: np.float32, range_max: np.float32,
            gain: np.ndarray, percent: np.ndarray, ranges: np.ndarray, intensity: np.ndarray,
            reflectivity: np.ndarray) -> None:
    """``RangeModel.measure`` without dropout, on flat arrays: ``ranges`` is the distance plus
    ``noise * noise_std`` (``noise`` empty: none), +inf beyond ``range_max`` and -inf closer
    than ``range_min``; ``intensity`` is ``gain[label] * cosine / max(range, 1)^2`` and
    ``reflectivity`` ``percent[label]`` (both tables zero for a miss)."""
    one = np.float32(1.0)
    noisy = noise.size > 0
    for i in range(distance.size):
        r = distance[i]
        if noisy:
            r = r + noise[i] * noise_std
        clamped = max(r, one)
        intensity[i] = gain[label[i]] * cosine[i] / (clamped * clamped)
        reflectivity[i] = percent[label[i]]
        if r > range_max:
            r = np.float32(np.inf)
        elif r < range_min:
            r = np.float32(-np.inf)
        ranges[i] = r
