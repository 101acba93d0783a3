"""One simulated car: model + integrator + controller, stepped by the ROS dynamics node.

Hot path: :meth:`Vehicle.advance` runs all sub-steps of a call (controller, integrator,
finiteness check) in one compiled kernel when numba is available, so the per-call cost is a
single dispatch (~1 us). User models and installs without numba use the same code as plain
Python.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._jit import NUMBA_ENABLED, python_function
from ..errors import ArsimError
from .actuators import COMMAND_SLOTS, DeadTime, command_noise
from .base import VehicleModel
from .controllers import (
    ACCEL_APPLIED,
    ACCEL_INPUT,
    ACCEL_LIMIT,
    BRAKE,
    BRAKE_APPLIED,
    DRIVE_LIMIT,
    JERK_LIMIT,
    LAST_ACCEL,
    LAST_SV,
    MODE,
    MODE_ACKERMANN,
    MODE_DIRECT,
    MODE_NORMALISED,
    SPEED_APPLIED,
    SPEED_TARGET,
    STEER_APPLIED,
    STEER_RATE_INPUT,
    STEER_TARGET,
    SV_LIMIT,
    THROTTLE,
    THROTTLE_APPLIED,
    control,
    initial_controller,
)
from .integrators import INTEGRATORS, METHOD_IDS
from .params import CarParameters, pack
from .powertrain import Gearbox
from .stepping import MODEL_IDS, advance
from .vehicle_config import VehicleConfig


class ModelDivergedError(ArsimError):
    """The vehicle state became NaN or infinite; call :meth:`Vehicle.reset` to continue."""


def _clip(value: float, lo: float, hi: float) -> float:
    return lo if value < lo else min(value, hi)


def substeps(dt: float, rate_hz: float) -> tuple[int, float]:
    """``dt`` split into ceil(dt * rate_hz) equal sub-steps: (count, length [s])."""
    if not dt >= 0.0:
        raise ValueError(f'dt must be >= 0, got {dt!r}')
    n = max(1, math.ceil(dt * rate_hz - 1e-9)) if dt > 0.0 else 0
    return n, dt / n if n else 0.0


def ackermann_out_of_range(params: CarParameters, speed: float,
                           steering_angle: float) -> str | None:
    """Why an Ackermann command lies outside what the car can do, or None if it does not.

    ``AckermannDrive`` carries float32: a command at a limit arrives as the limit rounded to
    float32, which may lie just beyond it, so the limits are compared rounded alike."""
    def rounded(value: float) -> float:
        return float(np.float32(value))

    lo, hi = rounded(params.longitudinal.min_speed), rounded(params.longitudinal.max_speed)
    if not lo <= rounded(speed) <= hi:
        return f'speed outside [{params.longitudinal.min_speed}, ' \
               f'{params.longitudinal.max_speed}] m/s'
    lo, hi = rounded(params.steering.min_angle), rounded(params.steering.max_angle)
    if not lo <= rounded(steering_angle) <= hi:
        return f'steering_angle outside [{params.steering.min_angle}, ' \
               f'{params.steering.max_angle}] rad'
    return None


def drive_command_problem(params: CarParameters, speed: float, steering_angle: float,
                          *others: float) -> str | None:
    """Why a drive command must be ignored, or None: the one check every face (the ROS drive
    topics, the dataset runner, the engine's callers) applies before a command reaches a car.
    A refused command leaves the car on its last one, as a real car's controller would on a
    garbled message. ``others`` are the command's further fields (rates, acceleration), which
    must be finite too."""
    if not all(math.isfinite(value) for value in (speed, steering_angle, *others)):
        return 'non-finite value'
    return ackermann_out_of_range(params, speed, steering_angle)


def _finite(name: str, value: float) -> float:
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f'{name} must be finite, got {value!r}')
    return value


class Vehicle:
    """A car driven by Ackermann or normalised commands (see :mod:`.controllers`).

    Frames: world frame for ``pose``; car frame (REP-103: x forward, y left, z up) for
    velocities and accelerations, all at the model's reference point
    (``config.model.reference_point``: rear axle for KS, centre of gravity for ST/STD).
    """

    def __init__(self, config: VehicleConfig, seed: int = 0, car_index: int = 0) -> None:
        """A vehicle of ``config``; its command noise (if the profile gives one) draws from
        the stream of car ``car_index`` in a run seeded ``seed`` (``reseed``)."""
        self._config = config
        self._model: type[VehicleModel] = config.model
        self._params = config.params
        self._rate = config.physics_rate_hz
        self._method = METHOD_IDS[config.integrator]
        self._step = INTEGRATORS[config.integrator]
        self._model_id = MODEL_IDS.get(config.model)  # None: a model without a kernel
        self._compiled = self._model_id is not None and NUMBA_ENABLED
        n = len(config.model.state_names)
        pvec = pack(config.params)
        actuators = config.actuators
        cvec = initial_controller(config.controller, config.params, actuators.steering_lag,
                                  actuators.drive_lag)
        if self._compiled:
            self._p: Any = np.array(pvec, dtype=np.float64)
            self._c: Any = np.array(cvec, dtype=np.float64)
            self._x: Any = np.zeros(n, dtype=np.float64)
            self._buf: Any = np.zeros((5, n), dtype=np.float64)
        else:
            self._p = list(pvec)
            self._c = cvec
            self._x = [0.0] * n
            self._buf = [[0.0] * n for _ in range(5)]
        # Commands go to ``_given``; with a dead time it is a vector of its own that the dead
        # time line releases into the controller's, else the controller's itself (no cost).
        self._dead_time = DeadTime(actuators) if actuators.delayed else None
        self._given: Any = self._c if self._dead_time is None else self._c.copy()
        self._steering_noise = actuators.steering_noise_std
        self._drive_noise = actuators.drive_noise_std
        self._noise: np.random.Generator | None = None
        if actuators.noisy:
            self.reseed(seed, car_index)
        self._control = python_function(control)
        #: the combustion powertrain's gearbox, or None: the car's acceleration limits only
        self.gearbox = None if config.powertrain is None else Gearbox(
            config.powertrain, config.params.body.mass, config.params.tyre.wheel_radius)
        self._diverged = False
        self._clock = np.zeros(1)  # simulated time since the reset [s]; a Fleet's row of it
        self._dt = -1.0  # cached sub-step split of the last dt
        self._n = 0
        self._h = 0.0
        self.reset(0.0, 0.0, 0.0)
        if self._compiled and self._model_id is not None:
            # compile (or load from the on-disk cache) now rather than in the first sim step
            advance(self._model_id, self._x, self._p, self._c, 0, 1.0, self._method, self._buf)

    # --- commands ---------------------------------------------------------------------------
    def reset(self, x: float, y: float, yaw: float, speed: float = 0.0) -> None:
        """Place the reference point at (x, y) [m] heading ``yaw`` [rad], straight wheels.

        The Ackermann target becomes (speed, 0 rad) so the car holds its speed, and a diverged
        vehicle becomes usable again.
        """
        state = self._model.initial_state(_finite('x', x), _finite('y', y), _finite('yaw', yaw),
                                          _finite('speed', speed), self._params)
        self._model.project(state, self._params)
        if len(state) != len(self._model.state_names):
            raise ValueError(f'{self._model.__name__}.initial_state returned {len(state)} '
                             f'values for {len(self._model.state_names)} states')
        for i, v in enumerate(state):
            self._x[i] = float(v)
        self._diverged = False
        self._clock[0] = 0.0
        if self.gearbox is not None:
            self.gearbox.reset()
        c = self._c
        c[LAST_ACCEL] = 0.0
        c[LAST_SV] = 0.0
        self._give_ackermann(speed, 0.0)  # exact: a placement is not a command
        if self._dead_time is not None:  # a placed car has no commands in flight
            self._dead_time.clear()
            for slot in COMMAND_SLOTS:
                c[slot] = self._given[slot]
        # and its actuators stand where this command puts them, without a lag to settle
        c[SPEED_APPLIED] = c[SPEED_TARGET]
        c[STEER_APPLIED] = c[STEER_TARGET]
        c[THROTTLE_APPLIED] = c[BRAKE_APPLIED] = c[ACCEL_APPLIED] = 0.0

    def reseed(self, seed: int, car_index: int) -> None:
        """Command noise afresh from the stream of car ``car_index`` in a run seeded
        ``seed`` (``actuators.command_noise``); nothing to do for a car without noise."""
        if self._config.actuators.noisy:
            self._noise = command_noise(seed, car_index)

    def _steering_with_noise(self, steering_angle: float) -> float:
        """A commanded steering angle [rad] off by this car's steering noise."""
        if self._noise is None or self._steering_noise <= 0.0:
            return steering_angle
        return steering_angle + self._steering_noise * float(self._noise.standard_normal())

    def _drive_with_noise(self, value: float) -> float:
        """A drive command (speed, pedal or acceleration) off by this car's drive noise; a
        zero command (stand still, pedal released) stays exact, as a real one does."""
        if self._noise is None or self._drive_noise <= 0.0 or value == 0.0:
            return value
        return value + self._drive_noise * float(self._noise.standard_normal())

    def set_ackermann(self, speed: float, steering_angle: float,
                      steering_angle_velocity: float = 0.0, acceleration: float = 0.0,
                      jerk: float = 0.0) -> None:
        """Ackermann target, ``ackermann_msgs/AckermannDrive`` semantics.

        speed [m/s], steering_angle [rad, + left]; the three limits are magnitudes
        (rad/s, m/s^2, m/s^3) and 0 means "as fast as the car can". Targets beyond the
        car's limits are clipped to them.
        """
        if not math.isfinite(speed + steering_angle + steering_angle_velocity + acceleration
                             + jerk):  # one test for the usual case; the names come after
            for name, value in (('speed', speed), ('steering_angle', steering_angle),
                                ('steering_angle_velocity', steering_angle_velocity),
                                ('acceleration', acceleration), ('jerk', jerk)):
                _finite(name, value)
        if self._noise is not None:
            steering_angle = self._steering_with_noise(steering_angle)
            speed = self._drive_with_noise(speed)
        self._give_ackermann(speed, steering_angle, steering_angle_velocity, acceleration, jerk)

    def _give_ackermann(self, speed: float, steering_angle: float,
                        steering_angle_velocity: float = 0.0, acceleration: float = 0.0,
                        jerk: float = 0.0) -> None:
        """A checked Ackermann command as given, targets clipped to the car's limits."""
        p = self._params
        c = self._given
        c[MODE] = MODE_ACKERMANN
        c[SPEED_TARGET] = _clip(float(speed), p.longitudinal.min_speed,
                                p.longitudinal.max_speed)
        c[STEER_TARGET] = _clip(float(steering_angle), p.steering.min_angle,
                                p.steering.max_angle)
        c[SV_LIMIT] = abs(float(steering_angle_velocity))
        c[ACCEL_LIMIT] = abs(float(acceleration))
        c[JERK_LIMIT] = abs(float(jerk))

    def set_normalised(self, throttle: float, brake: float, steering: float) -> None:
        """Normalised command: throttle, brake in [0, 1], steering in [-1, 1] (+ left).

        Values are clipped to their ranges; steering 1 is the car's full left lock.
        """
        p = self._params
        c = self._given
        c[MODE] = MODE_NORMALISED
        throttle, brake = _finite('throttle', throttle), _finite('brake', brake)
        s = _clip(_finite('steering', steering), -1.0, 1.0)
        angle = s * p.steering.max_angle if s >= 0.0 else -s * p.steering.min_angle
        if self._noise is not None:
            angle = _clip(self._steering_with_noise(angle), p.steering.min_angle,
                          p.steering.max_angle)
            throttle = self._drive_with_noise(_clip(throttle, 0.0, 1.0))
            brake = self._drive_with_noise(_clip(brake, 0.0, 1.0))
        c[THROTTLE] = _clip(throttle, 0.0, 1.0)
        c[BRAKE] = _clip(brake, 0.0, 1.0)
        c[STEER_TARGET] = angle
        c[SV_LIMIT] = 0.0
        c[ACCEL_LIMIT] = 0.0
        c[JERK_LIMIT] = 0.0

    def set_inputs(self, steering_rate: float, acceleration: float) -> None:
        """The model inputs directly: steering rate [rad/s, + left] and longitudinal
        acceleration [m/s^2], held until the next command. The model's constraints clip them
        (steering and speed limits, a_max, the power limit above the switching speed)."""
        c = self._given
        c[MODE] = MODE_DIRECT
        c[STEER_RATE_INPUT] = _finite('steering_rate', steering_rate)
        c[ACCEL_INPUT] = self._drive_with_noise(_finite('acceleration', acceleration))

    def advance(self, dt: float) -> None:
        """Simulate ``dt`` seconds in ceil(dt * physics_rate_hz) equal sub-steps.

        Raises ModelDivergedError if the state becomes non-finite (then again on every call
        until :meth:`reset`).
        """
        if dt != self._dt:  # the node uses one dt all the time: compute the split once
            self._dt = dt
            self._n, self._h = substeps(dt, self._rate)
        if self._diverged:
            raise ModelDivergedError(f'{self._config.source}: model {self._config.model_name} '
                                     'diverged earlier; reset() the vehicle first')
        if not self._n:
            return
        if self._dead_time is not None:
            self._dead_time.release(self.time, self._given, self._c)
        if self.gearbox is not None:
            self.engage_powertrain(dt)
        try:
            if self._model_id is not None:
                ok = advance(self._model_id, self._x, self._p, self._c, self._n, self._h,
                             self._method, self._buf)
            else:
                ok = self._advance_generic(self._n, self._h)
        except (ArithmeticError, ValueError):  # pure-Python math errors mean divergence too
            ok = False
        self.record_step(dt, ok)

    def engage_powertrain(self, dt: float) -> None:
        """Let the gearbox shift and bound the drive of the next ``dt`` s (here or in a
        ``Fleet``) by what the engine gives at the current speed."""
        assert self.gearbox is not None
        self._c[DRIVE_LIMIT] = self.gearbox.drive_limit(self.speed, dt)

    def record_step(self, dt: float, ok: bool) -> None:
        """Book a step of ``dt`` s that ran on this vehicle's state (here or in a ``Fleet``):
        the clock moves on, or, if the state stopped being finite, the vehicle is diverged
        and ModelDivergedError is raised."""
        if not ok:
            self._diverged = True
            raise ModelDivergedError(
                f'{self._config.source}: model {self._config.model_name} diverged within '
                f'{dt:g} s after t = {self.time:g} s (state {list(self.state)}); lower the '
                f'time step (physics_rate_hz) or check the parameters')
        self._clock[0] += dt

    def share_rows(self, x: np.ndarray, p: np.ndarray, c: np.ndarray,
                   clock: np.ndarray) -> None:
        """Keep the state, packed parameters, controller vector and clock in the rows ``x``,
        ``p``, ``c`` and ``clock`` (one element) of a ``Fleet``'s arrays from now on, with
        their current values; the fleet moves every clock on in one operation."""
        x[:] = self._x
        p[:] = self._p
        c[:] = self._c
        clock[:] = self._clock
        if self._given is self._c:
            self._given = c
        self._x, self._p, self._c, self._clock = x, p, c, clock

    @property
    def method(self) -> int:
        """The integrator's id (``integrators.METHOD_IDS``)."""
        return self._method

    @property
    def packed_params(self) -> Sequence[float]:
        """The parameters in the layout the kernels index (``params.pack``)."""
        return self._p

    @property
    def controls(self) -> Sequence[float]:
        """The controller vector (layout in :mod:`.controllers`)."""
        return self._c

    def _advance_generic(self, n: int, h: float) -> bool:
        """Sub-step loop for models without a kernel (plain Python, any derivative)."""
        model, params, c, pv = self._model, self._params, self._c, self._p
        f, step, ctrl = model.derivative, self._step, self._control
        x: Sequence[float] = self._x
        for _ in range(n):
            u = ctrl(model.steering_angle(x), model.speed(x), pv, c, h)
            new = step(f, x, u, params, h)
            model.project(new, params)
            if not all(math.isfinite(v) for v in new):
                self._x[:] = [float(v) for v in new]
                return False
            x = new
        self._x[:] = [float(v) for v in x]
        return True

    # --- read-out ---------------------------------------------------------------------------
    @property
    def pose(self) -> tuple[float, float, float]:
        """(x [m], y [m], yaw [rad]) of the reference point, world frame, yaw in [-pi, pi).

        The yaw state itself is continuous (not wrapped), see ``state``.
        """
        x, y, yaw = self._model.pose(self._x)
        return x, y, (yaw + math.pi) % math.tau - math.pi

    def planar_state(self) -> tuple[float, float, float, float, float, float, float]:
        """``pose``, ``body_velocity`` and ``steering_angle`` in one read of the state: x, y,
        yaw, vx, vy, yaw rate, steering angle."""
        model = self._model
        x = self._x.tolist() if self._compiled else self._x
        px, py, yaw = model.pose(x)
        vx, vy, wz = model.body_velocity(x, self._params)
        return (px, py, (yaw + math.pi) % math.tau - math.pi, vx, vy, wz,
                model.steering_angle(x))

    @property
    def body_velocity(self) -> tuple[float, float, float]:
        """(vx [m/s], vy [m/s], yaw rate [rad/s]) in the car frame (REP-103)."""
        return self._model.body_velocity(self._x, self._params)

    @property
    def body_acceleration(self) -> tuple[float, float]:
        """(ax, ay) [m/s^2] in the car frame, gravity excluded, under the last applied input."""
        u = (float(self._c[LAST_SV]), float(self._c[LAST_ACCEL]))
        x = self._x.tolist() if self._compiled else list(self._x)
        return self._model.body_acceleration(x, u, self._params)

    @property
    def steering_angle(self) -> float:
        """Front wheel steering angle [rad], positive left."""
        return self._model.steering_angle(self._x)

    @property
    def speed(self) -> float:
        """The model's speed state [m/s] (what the speed controller tracks)."""
        return self._model.speed(self._x)

    @property
    def state(self) -> np.ndarray:
        """Copy of the raw state vector (layout: ``config.model.state_names``)."""
        return np.array(self._x, dtype=np.float64)

    @property
    def model_name(self) -> str:
        """``model:`` value of the profile, e.g. ``st`` or ``my_model.py:MyModel``."""
        return self._config.model_name

    @property
    def config(self) -> VehicleConfig:
        """The configuration this vehicle was built from."""
        return self._config

    @property
    def time(self) -> float:
        """Simulated time since the last reset [s]."""
        return float(self._clock[0])

    @property
    def compiled(self) -> bool:
        """True when advance() runs a numba-compiled kernel."""
        return self._compiled
