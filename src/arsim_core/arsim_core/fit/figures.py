"""How far a replay is from the recording: the error figures of the report and the tests.

Per channel the RMS error over the compared samples, in the channel's unit; the replay error,
one number for a profile: the RMS over channels of each channel's RMS error relative to the
RMS of what was recorded (0: the replay is the recording); and the path error, the mean
distance between where each window's replay ends and where the car was then.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from arsim_core.fit.replay import CHANNELS, Replay, Simulated, measured, simulated_channels


@dataclass(frozen=True)
class ReplayErrors:
    rms: dict[str, float]  # per channel, its unit; NaN where not recorded
    relative: dict[str, float]  # per channel, over the recorded RMS
    replay_error: float
    path_error: float  # [m], at the windows' ends


def replay_errors(replay: Replay, sim: Simulated, erpm_gain: float | None = None
                  ) -> ReplayErrors:
    rec = replay.recording
    target = measured(rec, erpm_gain)
    got = simulated_channels(sim, erpm_gain)
    rms, relative = {}, {}
    for c, name in enumerate(CHANNELS):
        mask = replay.scored & np.isfinite(target[:, c])
        if not np.any(mask):
            rms[name] = relative[name] = math.nan
            continue
        error = np.where(np.isfinite(got[mask, c]), got[mask, c] - target[mask, c], 1e3)
        rms[name] = float(np.sqrt(np.mean(error ** 2)))
        scale = float(np.sqrt(np.mean(target[mask, c] ** 2)))
        relative[name] = rms[name] / max(scale, 1e-9)
    finite = [v for v in relative.values() if math.isfinite(v)]
    ends = []
    for window, path in zip(replay.windows, sim.path, strict=True):
        x, y = path[-1]
        rx, ry = rec.pose[window.end - 1, :2]
        ends.append(math.hypot(x - rx, y - ry) if math.isfinite(x + y) else 1e3)
    return ReplayErrors(rms, relative, math.sqrt(sum(v * v for v in finite) / len(finite)),
                        float(np.mean(ends)) if ends else math.nan)
