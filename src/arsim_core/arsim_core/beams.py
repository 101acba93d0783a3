"""LiDAR beam geometry and sensor timing, shared by the backend (which casts the beams), the
bridge (which asks for due sensors) and the republishers (which turn ranges back into points),
so all agree on every direction, time offset and due frame."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def planar_directions(angle_min: float, angle_increment: float, beams: int) -> np.ndarray:
    """Unit vectors (beams, 3) in the sensor's x-y plane, counter-clockwise from angle_min."""
    angles = angle_min + angle_increment * np.arange(beams)
    return np.stack([np.cos(angles), np.sin(angles), np.zeros_like(angles)], axis=1)


def azimuths(azimuth_start: float, azimuth_increment: float, columns: int) -> np.ndarray:
    """Azimuth of each column [rad], in the order the columns are measured."""
    return azimuth_start + azimuth_increment * np.arange(columns)


def spinning_directions(azimuth_start: float, azimuth_increment: float, columns: int,
                        elevations: Sequence[float]) -> np.ndarray:
    """Unit vectors (channels, columns, 3) in the sensor frame; ring 0 first."""
    azimuth = azimuths(azimuth_start, azimuth_increment, columns)[None, :]
    elevation = np.asarray(elevations, dtype=np.float64)[:, None]
    return np.stack(np.broadcast_arrays(np.cos(elevation) * np.cos(azimuth),
                                        np.cos(elevation) * np.sin(azimuth),
                                        np.sin(elevation)), axis=-1)


def frames_per_sample(rate_hz: float, frame_period_ns: int) -> int:
    """How many frames apart a sensor of ``rate_hz`` is due: the bridge renders and the
    republishers compute only on frame times (at least every frame)."""
    return max(1, round(1e9 / (rate_hz * frame_period_ns)))


def scan_period_ns(rate_hz: float, frame_period_ns: int) -> int:
    """One revolution [ns]: a whole number of frames, as the bridge renders on frame times."""
    return frames_per_sample(rate_hz, frame_period_ns) * frame_period_ns


def column_offsets_ns(period_ns: int, columns: int) -> np.ndarray:
    """Time of each column after the start of its revolution [ns] (the cloud's ``t``)."""
    return (np.arange(columns, dtype=np.int64) * period_ns) // columns
