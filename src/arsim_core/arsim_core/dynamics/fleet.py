"""Cars of one built-in model stepped together: one compiled call for a whole grid of cars.

A vector of simulations or a race steps tens of cars in every frame, and calling each
``Vehicle``'s kernel, setting its command and reading its state costs a Python call per car
each time. A ``Fleet`` keeps its vehicles' state, parameter and controller vectors as the rows
of three matrices (each ``Vehicle`` goes on working on its own row, so single-car calls stay
valid), steps every row in one kernel call, takes commands for all cars as arrays and reads
every car's planar state into one array. The kernel is the models' one sub-step loop
(:mod:`.stepping`); only built-in models join a fleet.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from .._jit import NUMBA_ENABLED, kernel, threads_for
from .controllers import (
    ACCEL_INPUT,
    JERK_LIMIT,
    MODE,
    MODE_ACKERMANN,
    MODE_DIRECT,
    SPEED_TARGET,
    STEER_RATE_INPUT,
    STEER_TARGET,
    SV_LIMIT,
)
from .params import LF, LR, STEER_MAX, STEER_MIN, V_MAX, V_MIN
from .stepping import KS, MODEL_IDS, advance_rows, advance_rows_threaded
from .vehicle import ModelDivergedError, Vehicle, substeps

#: Columns of ``Fleet.planar``: what ``Vehicle.planar_state`` returns, one row per car.
PLANAR_COLUMNS = ('x', 'y', 'yaw', 'vx', 'vy', 'yaw_rate', 'steering_angle')


@kernel
def planar_rows(model: int, x: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
    """Every row's ``PLANAR_COLUMNS``, as the models' ``pose``, ``body_velocity`` and
    ``steering_angle`` give them (yaw wrapped to [-pi, pi))."""
    for i in range(x.shape[0]):
        row = x[i]
        out[i, 0] = row[0]
        out[i, 1] = row[1]
        out[i, 2] = (row[4] + math.pi) % (2.0 * math.pi) - math.pi
        if model == KS:  # no side slip at the rear axle
            out[i, 3] = row[3]
            out[i, 4] = 0.0
            out[i, 5] = row[3] / (p[i, LF] + p[i, LR]) * math.tan(row[2])
        else:  # ST and STD: slip angle and yaw rate states
            out[i, 3] = row[3] * math.cos(row[6])
            out[i, 4] = row[3] * math.sin(row[6])
            out[i, 5] = row[5]
        out[i, 6] = row[2]


@kernel
def ackermann_rows(controls: np.ndarray, active: np.ndarray, speed: np.ndarray,
                   steering_angle: np.ndarray, low: np.ndarray, high: np.ndarray) -> None:
    """``Fleet.set_ackermann`` in one compiled loop: a NumPy statement per field costs more
    than the whole command for a grid of cars."""
    for i in range(controls.shape[0]):
        if active[i]:
            controls[i, MODE] = MODE_ACKERMANN
            controls[i, SPEED_TARGET] = min(max(speed[i], low[i, 0]), high[i, 0])
            controls[i, STEER_TARGET] = min(max(steering_angle[i], low[i, 1]), high[i, 1])
            for j in range(SV_LIMIT, JERK_LIMIT + 1):  # no limits of the command
                controls[i, j] = 0.0


class Fleet:
    """Vehicles of one built-in model, integrator and physics rate, stepped together; over
    ``threads`` of numba's threads where there are enough of them (``_jit.threads_for``: for
    in-process users with cores to spare)."""

    def __init__(self, vehicles: Mapping[str, Vehicle], threads: int = 1) -> None:
        first = next(iter(vehicles.values()))
        self.threads = threads_for(len(vehicles), threads)
        self.names = tuple(vehicles)
        self.vehicles = tuple(vehicles.values())
        self.model = MODEL_IDS[first.config.model]
        self.rate = first.config.physics_rate_hz
        self.method = first.method
        self.states = np.zeros((len(self.vehicles), len(first.config.model.state_names)))
        self.params = np.zeros((len(self.vehicles), len(first.packed_params)))
        self.controls = np.zeros((len(self.vehicles), len(first.controls)))
        self.clocks = np.zeros(len(self.vehicles))  # each vehicle's time since its reset
        for i, vehicle in enumerate(self.vehicles):
            vehicle.share_rows(self.states[i], self.params[i], self.controls[i],
                               self.clocks[i:i + 1])
        self._buf = np.zeros((5, self.states.shape[1]))
        self._geared = [(i, v) for i, v in enumerate(self.vehicles) if v.gearbox is not None]
        self._ok = np.ones(len(self.vehicles), dtype=bool)
        self._planar = np.zeros((len(self.vehicles), len(PLANAR_COLUMNS)))
        self._dt, self._n, self._h = -1.0, 0, 0.0
        # the clipping limits of Ackermann targets: (speed, steering angle) lowest and highest
        self._low = np.ascontiguousarray(self.params[:, [V_MIN, STEER_MIN]])
        self._high = np.ascontiguousarray(self.params[:, [V_MAX, STEER_MAX]])

    @staticmethod
    def key(vehicle: Vehicle) -> tuple[object, ...] | None:
        """What vehicles must share to step in one call, or None if this one cannot: a car
        whose commands wait out a dead time or draw noise takes them through its own
        ``Vehicle``."""
        model, actuators = vehicle.config.model, vehicle.config.actuators
        if not NUMBA_ENABLED or model not in MODEL_IDS or actuators.delayed or actuators.noisy:
            return None
        return (model, vehicle.method, vehicle.config.physics_rate_hz)

    @classmethod
    def group(cls, vehicles: Mapping[str, Vehicle], threads: int = 1) -> list[Fleet]:
        """The vehicles that can step together, as fleets of two or more, in name order."""
        groups: dict[tuple[object, ...], dict[str, Vehicle]] = {}
        for name, vehicle in vehicles.items():
            key = cls.key(vehicle)
            if key is not None:
                groups.setdefault(key, {})[name] = vehicle
        return [cls(members, threads) for members in groups.values() if len(members) > 1]

    def advance(self, dt: float, skip: Iterable[str] = ()) -> dict[str, ModelDivergedError]:
        """Simulate ``dt`` seconds for every vehicle but those in ``skip``; the error of each
        one that diverged, by name, as its ``Vehicle.advance`` would have raised it."""
        if dt != self._dt:
            self._dt = dt
            self._n, self._h = substeps(dt, self.rate)
        skipped = np.zeros(len(self.names), dtype=bool)
        for name in skip:
            if name in self.names:
                skipped[self.names.index(name)] = True
        for i, vehicle in self._geared:
            if not skipped[i]:
                vehicle.engage_powertrain(dt)
        rows = (self.model, self.states, self.params, self.controls, skipped, self._n, self._h,
                self.method, self._buf, self._ok)
        if self.threads > 1:
            advance_rows_threaded(*rows, self.threads)
        else:
            advance_rows(*rows)
        if not skip and self._ok.all():  # the usual frame
            self.clocks += dt  # ``Vehicle.record_step(dt, True)`` of every car
            return {}
        diverged = {}
        for name, vehicle, ok, skip_it in zip(self.names, self.vehicles, self._ok.tolist(),
                                              skipped.tolist(), strict=True):
            if not skip_it:
                try:
                    vehicle.record_step(dt, ok)
                except ModelDivergedError as exc:
                    diverged[name] = exc
        return diverged

    def planar(self) -> np.ndarray:
        """(cars, 7) float64: every car's ``PLANAR_COLUMNS`` (a buffer reused by the next
        call: copy what you keep)."""
        planar_rows(self.model, self.states, self.params, self._planar)
        return self._planar

    def set_ackermann(self, active: np.ndarray, speed: np.ndarray,
                      steering_angle: np.ndarray) -> None:
        """``Vehicle.set_ackermann(speed, steering_angle)`` (no limits of the command, targets
        clipped to each car's) for the vehicles where ``active``; one value per vehicle, all
        finite."""
        ackermann_rows(self.controls, active, speed, steering_angle, self._low, self._high)

    def set_inputs(self, active: np.ndarray, steering_rate: np.ndarray,
                   acceleration: np.ndarray) -> None:
        """``Vehicle.set_inputs`` for the vehicles where ``active``; one value per vehicle,
        all finite."""
        c = self.controls
        rows = slice(None) if active.all() else np.flatnonzero(active)
        c[rows, MODE] = MODE_DIRECT
        c[rows, STEER_RATE_INPUT] = steering_rate[rows]
        c[rows, ACCEL_INPUT] = acceleration[rows]

    def rows(self, names: Sequence[str]) -> np.ndarray:
        """Row indices of ``names``."""
        return np.array([self.names.index(name) for name in names], dtype=np.intp)
