"""The cars' poses over the last frames, so a sensor that measures over time (a spinning LiDAR
sweeps one column after the other during a revolution) sees each car where it was."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping

import numpy as np

from arsim_core.geometry import Pose
from arsim_core.rows import NamedRows

Poses = Mapping[str, Pose]


class PoseRows(NamedRows):
    """Every car's pose (x, y, z, roll, pitch, yaw) as the rows of one (cars, 6) float64
    array, by name: how a caller with all poses in one array hands them over (a ``Timeline``
    keeps it as the frame) and how a batch of sensors takes them, without a list per car."""

    @classmethod
    def of(cls, poses: Poses) -> PoseRows:
        """``poses`` as rows: itself if it is already a ``PoseRows``."""
        if isinstance(poses, PoseRows):
            return poses
        rows = np.array(list(poses.values()), dtype=np.float64)
        if rows.shape != (len(poses), 6):
            rows = rows.reshape(len(poses), 6)
        return cls(tuple(poses), rows)


def _wrap(angle: np.ndarray) -> np.ndarray:
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


class Timeline:
    """Frames (time, every car's pose), oldest first, covering at least ``keep_ns``."""

    def __init__(self, keep_ns: int = 0) -> None:
        self.keep_ns = keep_ns
        self._frames: deque[tuple[int, Mapping[str, np.ndarray]]] = deque()

    def add(self, time_ns: int, poses: Poses) -> None:
        """Record a frame; a time that goes back (a restart) forgets the older frames."""
        while self._frames and self._frames[-1][0] >= time_ns:
            self._frames.pop()
        frame: Mapping[str, np.ndarray] = poses if isinstance(poses, PoseRows) else {
            car: np.asarray(pose, np.float64) for car, pose in poses.items()}
        self._frames.append((time_ns, frame))
        while len(self._frames) > 2 and self._frames[1][0] <= time_ns - self.keep_ns:
            self._frames.popleft()

    def clear(self) -> None:
        self._frames.clear()

    @property
    def times(self) -> np.ndarray:
        return np.array([t for t, _ in self._frames], dtype=np.int64)

    def poses(self, index: int) -> Mapping[str, np.ndarray]:
        return self._frames[index][1]

    def frame_after(self, times_ns: np.ndarray) -> np.ndarray:
        """Index of the frame that closes the interval each time falls in (the first frame at
        or after it; the last frame for later times)."""
        index = np.searchsorted(self.times, times_ns, side='left')
        return np.minimum(index, len(self._frames) - 1)

    def pose_at(self, car: str, times_ns: np.ndarray) -> np.ndarray:
        """The car's pose (n, 6) at each time, linear between frames (angles the short way
        round) and held before the first and after the last frame. Frames without the car
        (an Update may leave a car out) are skipped: it moved straight through them."""
        frames = [(time, poses[car]) for time, poses in self._frames if car in poses]
        times = np.array([time for time, _ in frames], dtype=np.int64)
        track = np.stack([pose for _, pose in frames])
        if len(times) == 1:
            return np.broadcast_to(track[0], (len(times_ns), 6)).copy()
        k = np.clip(np.searchsorted(times, times_ns, side='right') - 1, 0, len(times) - 2)
        weight = np.clip((times_ns - times[k]) / (times[k + 1] - times[k]), 0.0, 1.0)[:, None]
        steps = np.diff(track, axis=0)  # frame to frame, wrapped once per frame, not per time
        steps[:, 3:] = _wrap(steps[:, 3:])
        return track[k] + weight * steps[k]
