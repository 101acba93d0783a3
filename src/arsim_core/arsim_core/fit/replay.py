"""The recorded commands replayed into the simulator's ``Vehicle`` with a candidate profile.

Open-loop paths drift, so the drive is cut into short windows (multiple shooting): each starts
from the recorded pose and speed, replays a warm-up in which the wheels, the actuators and the
commands in flight settle from the placement, and is then compared with the recording sample
by sample: speed, yaw rate and lateral acceleration (the car's, as its dynamics give it at the
sample: what the simulator's IMU measures, and a real one).

Commands reach the car at their recorded times, checked before every physics sub-step when
the profile has dead times (so a dead time shows at the physics rate, not only at the
recording's), else once per sample; the VESC's commands go through the car's own
``VescDrive``, as the ROS dynamics node takes them.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray

from arsim_core.dynamics import ModelDivergedError, Vehicle, VehicleConfig
from arsim_core.dynamics.vesc import VescDrive
from arsim_core.fit.recording import BRAKE, SERVO, SPEED, Recording

WINDOW_S: Final = 3.0
WARMUP_S: Final = 0.75
_EPS: Final = 1e-6  # [s]: a command stamped with a sample's time belongs to that sample
#: Channels of the residual, in its order.
CHANNELS: Final = ('speed', 'yaw_rate', 'lateral_acceleration')
DIVERGED: Final = 1e3  # the residual of a sample a diverged model did not reach


@dataclass(frozen=True)
class Window:
    """Samples ``begin`` (placement) to ``end`` (exclusive); compared from ``score``."""

    begin: int
    score: int
    end: int


@dataclass(frozen=True)
class Simulated:
    """What the replay gives at every sample (NaN where no window compares it)."""

    speed: NDArray[np.float64]  # [m/s], or the VESC's forward ERPM divided by the gain
    erpm: NDArray[np.float64] | None
    yaw_rate: NDArray[np.float64]
    lateral_acceleration: NDArray[np.float64]
    path: list[NDArray[np.float64]]  # per window: (samples, 2) x, y from its placement
    diverged: int  # windows the model diverged in


def plan(recording: Recording, window_s: float = WINDOW_S,
         warmup_s: float = WARMUP_S) -> list[Window]:
    """Windows of ``window_s`` compared, each after a warm-up of ``warmup_s``, covering the
    recording from its first ``warmup_s`` on."""
    t = recording.t
    windows = []
    score = int(np.searchsorted(t, t[0] + warmup_s))
    while score < len(t) - 2:
        end = int(np.searchsorted(t, t[score] + window_s))
        end = len(t) if len(t) - end < 0.3 * window_s / recording.period else end
        begin = int(np.searchsorted(t, t[score] - warmup_s))
        windows.append(Window(begin, score, max(end, score + 2)))
        score = end
    return windows


def replay_config(config: VehicleConfig) -> VehicleConfig:
    """The profile as the replay steps it: no command noise (the recording has its own)."""
    quiet = dataclasses.replace(config.actuators, steering_noise_std=0.0, drive_noise_std=0.0)
    return dataclasses.replace(config, actuators=quiet)


class Replay:
    """The windows of one recording, replayed for any candidate profile."""

    def __init__(self, recording: Recording, windows: list[Window]) -> None:
        self.recording = recording
        self.windows = windows
        self.scored = np.zeros(len(recording.t), bool)
        for w in windows:
            self.scored[w.score:w.end] = True
        commands = recording.commands
        self._times = commands.times
        self._first = np.searchsorted(commands.times, recording.t + _EPS, side='right')
        times = recording.t
        sample_aligned = np.isin(np.round(commands.times, 6), np.round(times, 6))
        self._asynchronous = not bool(np.all(sample_aligned))

    def simulate(self, config: VehicleConfig) -> Simulated:
        rec = self.recording
        n = len(rec.t)
        config = replay_config(config)
        vehicle = Vehicle(config)
        vesc = config.vesc if rec.commands.vesc is not None else None
        out = np.full((n, 4), np.nan)  # vx, vy, yaw rate, lateral acceleration
        paths = []
        diverged = 0
        fine = config.actuators.delayed or self._asynchronous
        rate = config.physics_rate_hz
        for window in self.windows:
            x, y, yaw = rec.pose[window.begin]
            vehicle.reset(float(x), float(y), float(yaw), self._speed(config, window.begin))
            drive = VescDrive(vesc, config.params.body.mass) if vesc is not None else None
            last = int(self._first[window.begin])
            self._give(vehicle, drive, self._latest(last, drive), last)
            path = np.full((window.end - window.begin, 2), np.nan)
            path[0] = x, y
            try:
                for j in range(window.begin, window.end - 1):
                    t0, dt = rec.t[j], rec.t[j + 1] - rec.t[j]
                    steps = max(1, math.ceil(dt * rate - 1e-9)) if fine else 1
                    h = dt / steps
                    for k in range(steps):
                        until = int(np.searchsorted(self._times, t0 + k * h + _EPS, 'right'))
                        if until > last:
                            self._give(vehicle, drive, last, until)
                            last = until
                        vehicle.advance(h)
                    px, py, _, vx, vy, wz, _ = vehicle.planar_state()
                    path[j + 1 - window.begin] = px, py
                    if j + 1 >= window.score:  # a warm-up's samples are the last window's
                        out[j + 1] = vx, vy, wz, vehicle.body_acceleration[1]
            except ModelDivergedError:
                diverged += 1
            paths.append(path)
        erpm = None
        if vesc is not None:
            erpm = vesc.speed_to_erpm_gain * out[:, 0] + vesc.speed_to_erpm_offset
        return Simulated(out[:, 0], erpm, out[:, 2], out[:, 3], paths, diverged)

    def _speed(self, config: VehicleConfig, sample: int) -> float:
        """The recorded speed at ``sample``: from the VESC's ERPM with this profile's gain."""
        rec = self.recording
        if rec.erpm is None or config.vesc is None:
            return float(rec.speed[sample])
        vesc = config.vesc
        return float((rec.erpm[sample] - vesc.speed_to_erpm_offset) / vesc.speed_to_erpm_gain)

    def _latest(self, last: int, drive: VescDrive | None) -> int:
        """Where to start giving the commands before a placement: the latest one (Ackermann),
        or the latest of each VESC channel."""
        if drive is None:
            return max(0, last - 1)
        vesc = self.recording.commands.vesc
        assert vesc is not None
        seen: set[float] = set()
        first = last
        for i in range(last - 1, -1, -1):
            channel = vesc[i, 0]
            steering = channel == SERVO
            if steering not in seen:
                seen.add(steering)
                first = i
            if len(seen) == 2:
                break
        return first

    def _give(self, vehicle: Vehicle, drive: VescDrive | None, first: int, until: int) -> None:
        """Commands ``first`` to ``until`` (exclusive) to the car, in order."""
        commands = self.recording.commands
        if drive is None:
            assert commands.ackermann is not None
            if until > first:
                speed, steering, rate, accel, jerk = commands.ackermann[until - 1]
                vehicle.set_ackermann(float(speed), float(steering), float(rate), float(accel),
                                      float(jerk))
            return
        assert commands.vesc is not None
        for channel, value in commands.vesc[first:until]:
            if channel == SPEED:
                drive.command_speed(float(value))
            elif channel == SERVO:
                drive.command_servo(float(value))
            elif channel == BRAKE:
                drive.command_brake(float(value))
        if until > first:
            vehicle.set_ackermann(*drive.ackermann())


def compared_erpm_gain(recording: Recording, config: VehicleConfig) -> float | None:
    """The ERPM per m/s that ``measured`` and ``simulated_channels`` compare speeds with:
    the profile's, where the recording holds the VESC's commands; else None (m/s)."""
    if recording.commands.vesc is None or config.vesc is None:
        return None
    return config.vesc.speed_to_erpm_gain


def measured(recording: Recording, erpm_gain: float | None = None) -> NDArray[np.float64]:
    """The recorded channels as (samples, 3): speed (the ERPM over ``erpm_gain`` when the
    VESC gives the speed), yaw rate, lateral acceleration (NaN without an IMU)."""
    speed = recording.speed if recording.erpm is None or erpm_gain is None \
        else recording.erpm / erpm_gain
    lateral = recording.lateral_acceleration if recording.lateral_acceleration is not None \
        else np.full(len(recording.t), np.nan)
    return np.column_stack([speed, recording.yaw_rate, lateral])


def simulated_channels(sim: Simulated, erpm_gain: float | None = None) -> NDArray[np.float64]:
    """The simulated channels as ``measured`` lays them out."""
    speed = sim.speed if sim.erpm is None or erpm_gain is None else sim.erpm / erpm_gain
    return np.column_stack([speed, sim.yaw_rate, sim.lateral_acceleration])
