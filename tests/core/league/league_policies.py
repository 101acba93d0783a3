"""Gym policies for the league tests, imported by path (``league_policies:gap``) as a user's
would be: each maps an observation of arsim_gym to an action (steering angle, speed)."""

from __future__ import annotations

from typing import Any

import numpy as np

from arsim_core.policies import FollowTheGap

# the F1TENTH profile's LiDAR (config/cars/f1tenth.yaml): 1080 beams over 4.7 rad
_GAP = FollowTheGap(angle_min=-2.35, angle_increment=4.7 / 1079, max_steering=0.4189,
                    max_speed=20.0, speed_scale=0.2)


def gap(observation: dict[str, Any]) -> np.ndarray:
    """Follow the gap on the scan, slowly."""
    return np.array(_GAP.act(observation['scan']))


class Broken:
    """Answers for a while, then raises: a policy that dies mid-race."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, observation: dict[str, Any]) -> np.ndarray:
        self.calls += 1
        if self.calls > 80:
            msg = 'the policy lost its weights'
            raise RuntimeError(msg)
        return gap(observation)


broken = Broken()
