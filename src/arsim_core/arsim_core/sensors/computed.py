"""The computed sensors: IMU, GNSS, wheel odometry, wheel encoders, objects and cones, from the
engine's state.

No backend renders these: each is a few formulas on the car's state (``kinematics``,
``geodesy``) plus noise, or, for objects and cones, on every car's state and the track's cones
(``objects``). They are computed once, here, so every face (the ROS republishers, the dataset
runner, the Gymnasium environments) gets the same values from one place, and every noise
stream is seeded from the run seed, the car and the sensor:
``np.random.default_rng([seed, car.index, sensor_index])`` (numpy's SeedSequence), where
``sensor_index`` is the sensor's position in the car profile's ``Sensors``. Two runs with the
same seed give identical values; runs with different seeds, different noise.

Per frame, :meth:`ComputedSensors.compute` returns the sensors due at that step (the rule of
the rendered sensors: ``step % frames_per_sample(rate_hz, frame period) == 0``) as float64
arrays, keyed by frame name ``<car>/<sensor>`` as rendered outputs are
(``arsim_core.backend.outputs.frame_name``, no suffix). Their layouts:

- ``imu`` (10,): ``[qx, qy, qz, qw, wx, wy, wz, ax, ay, az]``: orientation of the sensor in
  the world frame (ENU) as a quaternion, angular velocity [rad/s] and specific force
  [m/s^2] (gravity included: +g on z at rest) in the sensor's frame, each with Gaussian
  noise, the rates and forces also with their constant biases. Noise draws per frame: 3 for
  the force, 3 for the rates, 3 for roll, pitch, yaw of the orientation.
- ``gnss`` (3,): ``[latitude, longitude, altitude]`` [deg, deg, m] of the antenna, the world
  frame (x east, y north) anchored at the spec's geodetic origin. Noise draws: east, north
  (horizontal std), up (vertical std).
- ``wheel_odometry`` (8,): ``[x, y, yaw, vx, yaw_rate, steering_angle, vx_variance,
  yaw_rate_variance]``: vesc_to_odom's dead reckoning (``kinematics.WheelOdometry``) in a frame
  that starts where the car is at its first sample, the twist it publishes, the noisy steering
  angle it used, and the twist's variances (the yaw rate's depends on the noisy speed and
  steering). Noise draws: speed, then steering angle.
- ``wheel_encoders`` (6,): ``[ticks_left, ticks_right, angle_left, angle_right,
  rate_left, rate_right]``: whole ticks counted by the two rear wheels' encoders since the
  car's first frame (signed, a float64 holding an integer), the wheel angles [rad] they
  resolve and the wheels' angular speeds [rad/s] (``kinematics.WheelEncoders``). The wheels
  roll without slip; their turning is integrated every frame, not only when the sensor is
  due. No noise: the quantisation is the error.
- ``objects`` (n, 9), one row per box: ``[x, y, z, yaw, length, width, height, label, id]``
  (``arsim_core.sensors.objects.COLUMNS``): the exact 3D ground truth around the car in its
  base_link, every box whose centre is within the spec's ``range_m``: the cones of the track
  mesh (found once per track, ``set_track``; id: the cone's number among them), then the
  track's placed cones as they stand or lie (``compute``'s ``placed_cones``; id: the cone's
  number on the track), then the other cars' footprint boxes at their poses of the frame (id:
  the car's index in the scenario, ``car_names`` names it). Centre and heading in base_link,
  size along the box's own axes, label as ``arsim_core.labels`` numbers it. No noise.
- ``cones`` (n, 5), one row per placed cone whose base is within the spec's ``range_m``:
  ``[x, y, yaw, down, label]`` (``objects.CONE_STATE_COLUMNS``) in the car's base_link, where
  the cone stands or lies in this frame (EUFS sim's ground-truth cones). No noise.

The IMU needs the car's acceleration: with ``accelerations=True`` the states' ``ax``/``ay`` (as
the car's dynamics give them: a dynamics node's, or the engine's vehicles' where a car has an
IMU) and the yaw acceleration differenced from the previous frame; otherwise all three
differenced from the previous frame (``kinematics.body_acceleration``), for states that carry
none.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from arsim_core import labels
from arsim_core.beams import frames_per_sample
from arsim_core.config.sensors import (
    ConesSpec,
    GnssSpec,
    ImuSpec,
    ObjectsSpec,
    WheelEncodersSpec,
    WheelOdometrySpec,
)
from arsim_core.geometry import rotation_matrix
from arsim_core.protocol.messages import FrameMeta
from arsim_core.sensors.geodesy import enu_to_geodetic
from arsim_core.sensors.kinematics import (
    PlanarState,
    WheelEncoders,
    WheelOdometry,
    body_acceleration,
    specific_force,
)
from arsim_core.sensors.objects import (
    COLUMNS,
    CONE_STATE_COLUMNS,
    car_rows,
    cones_seen_from,
    seen_from,
    track_cone_rows,
)

if TYPE_CHECKING:
    from arsim_core.config.scenario import CarSpec, Scenario

#: The columns of each computed kind's array, by kind (the encoding of its frames).
LAYOUTS: Mapping[str, tuple[str, ...]] = {
    'imu': ('qx', 'qy', 'qz', 'qw', 'wx', 'wy', 'wz', 'ax', 'ay', 'az'),
    'gnss': ('latitude', 'longitude', 'altitude'),
    'wheel_odometry': ('x', 'y', 'yaw', 'vx', 'yaw_rate', 'steering_angle', 'vx_variance',
                       'yaw_rate_variance'),
    'wheel_encoders': ('ticks_left', 'ticks_right', 'angle_left', 'angle_right', 'rate_left',
                       'rate_right'),
    'objects': COLUMNS,
    'cones': CONE_STATE_COLUMNS,
}
KINDS = frozenset(LAYOUTS)
#: The kinds whose array holds a row per item, (n, len(LAYOUTS[kind])), not one vector.
ROW_KINDS = frozenset({'objects', 'cones'})
NO_BOXES = np.zeros((0, len(COLUMNS)))
NO_CONES = np.zeros((0, len(CONE_STATE_COLUMNS)))


class PlacedCones(Protocol):
    """A track's placed cones as they stand or lie now (``arsim_core.engine.cones.ConeField``),
    each view made only when a sensor is due."""

    def boxes(self) -> np.ndarray:
        """World-frame rows of ``objects.COLUMNS``."""

    def state_rows(self) -> np.ndarray:
        """World-frame rows of ``objects.CONE_STATE_COLUMNS``."""


class State(Protocol):
    """What a computed sensor reads of a car's state (``engine.state.CarState`` has it)."""

    @property
    def x(self) -> float: ...
    @property
    def y(self) -> float: ...
    @property
    def yaw(self) -> float: ...
    @property
    def vx(self) -> float: ...
    @property
    def vy(self) -> float: ...
    @property
    def yaw_rate(self) -> float: ...
    @property
    def ax(self) -> float: ...
    @property
    def ay(self) -> float: ...
    @property
    def steering_angle(self) -> float: ...


def noise(seed: int, car_index: int, sensor_index: int) -> np.random.Generator:
    """The noise stream of one sensor of one car in a run seeded ``seed``."""
    return np.random.default_rng([seed, car_index, sensor_index])


@dataclass
class _Sensor:
    """One computed sensor of one car: its spec, due period, noise stream and what it keeps
    from frame to frame."""

    car: str
    name: str  # the frame name, <car>/<sensor>
    kind: str
    spec: ImuSpec | GnssSpec | WheelOdometrySpec | WheelEncodersSpec | ObjectsSpec | ConesSpec
    every: int  # due every this many frames
    car_index: int
    sensor_index: int
    wheelbase: float
    wheel_radius: float
    rng: np.random.Generator
    odometry: WheelOdometry | None = None
    encoders: WheelEncoders | None = None

    def restart(self) -> None:
        """From a car at rest again: wheel odometry and encoders start over where the car is
        next."""
        if isinstance(self.spec, WheelOdometrySpec):
            self.odometry = WheelOdometry(self.spec.wheelbase or self.wheelbase)
        elif isinstance(self.spec, WheelEncodersSpec):
            self.encoders = WheelEncoders(self.spec.track_width, self.wheel_radius,
                                          self.spec.ticks_per_wheel_revolution)


class ComputedSensors:
    """Every car's computed sensors in ``scenario``, their noise from the run ``seed``."""

    def __init__(self, scenario: Scenario, seed: int = 0) -> None:
        self.seed = seed
        self.sensors: list[_Sensor] = []
        self._imus: dict[str, list[_Sensor]] = {}
        for car in scenario.cars:
            self.sensors.extend(_car_sensors(car, scenario.frame_period_ns, seed))
        for sensor in self.sensors:
            sensor.restart()
            if sensor.kind == 'imu':
                self._imus.setdefault(sensor.car, []).append(sensor)
        self.cars = frozenset(sensor.car for sensor in self.sensors)
        self._previous: dict[str, PlanarState] = {}  # each IMU car's state last frame
        # What objects sensors see: every car's footprint, and the track mesh's cones.
        self.car_names = tuple(car.name for car in scenario.cars)
        self._sizes = np.array([(f.length, f.width, f.height) for f in
                                (car.profile.footprint for car in scenario.cars)],
                               np.float64).reshape(-1, 3)
        self.objects = any(sensor.kind == 'objects' for sensor in self.sensors)
        self._track_cones = NO_BOXES

    def set_track(self, vertices: np.ndarray, triangles: np.ndarray,
                  triangle_labels: np.ndarray) -> None:
        """The track mesh the objects sensors see from now on: its cones are found here, once
        per track (nothing is done without an objects sensor)."""
        self._track_cones = track_cone_rows(vertices, triangles, triangle_labels) \
            if self.objects else NO_BOXES

    def __bool__(self) -> bool:
        return bool(self.sensors)

    def reset(self, seed: int | None = None, cars: Collection[str] | None = None) -> None:
        """Sensors of ``cars`` (default all) as at the start of a run: wheel odometry from
        zero, no previous state; their noise afresh from ``seed`` if one is given (else it
        runs on)."""
        if seed is not None and cars is None:
            self.seed = seed
        for sensor in self.sensors:
            if cars is None or sensor.car in cars:
                sensor.restart()
                if seed is not None:
                    sensor.rng = noise(seed, sensor.car_index, sensor.sensor_index)
        for car in list(self._previous):
            if cars is None or car in cars:
                del self._previous[car]

    def compute(self, step: int, time_ns: int, states: Mapping[str, State],
                accelerations: bool = False, cars: Mapping[str, State] | None = None,
                placed_cones: PlacedCones | None = None) -> dict[str, np.ndarray]:
        """The sensors due at ``step`` (sim time ``time_ns``) of the cars in ``states``, by
        frame name (layouts in the module's docstring). Call it once per frame, in order: the
        IMU differences the previous call's states and wheel odometry integrates. Objects
        sensors see the cars in ``cars`` (default ``states``) and, besides the track mesh's
        cones, the track's ``placed_cones``, which are all that cones sensors see."""
        if not self.sensors:
            return {}
        current = {car: _planar(time_ns, states[car]) for car in self.cars if car in states}
        found: dict[str, np.ndarray] = {}
        world: np.ndarray | None = None  # every box in the world frame, made once per frame
        for sensor in self.sensors:
            state = current.get(sensor.car)
            if state is None:
                continue
            if sensor.encoders is not None:  # the wheels turn in every frame
                sensor.encoders.advance(time_ns, state.vx, state.yaw_rate)
            if step % sensor.every:
                continue
            if sensor.kind == 'objects':
                if world is None:
                    world = self._world_boxes(states if cars is None else cars, placed_cones)
                found[sensor.name] = _objects(sensor, state, world)
            elif sensor.kind == 'cones':
                found[sensor.name] = _cones(sensor, state, placed_cones)
            elif sensor.kind == 'imu':
                previous = self._previous.get(sensor.car)
                raw = states[sensor.car]
                accel = (raw.ax, raw.ay, body_acceleration(previous, state)[2]) \
                    if accelerations else body_acceleration(previous, state)
                found[sensor.name] = _imu(sensor, state, accel)
            elif sensor.kind == 'gnss':
                found[sensor.name] = _gnss(sensor, state)
            elif sensor.encoders is not None:
                found[sensor.name] = np.array(sensor.encoders.reading())
            else:
                found[sensor.name] = _wheel_odometry(sensor, state, time_ns)
        for car in self._imus:
            if car in current:
                self._previous[car] = current[car]
        return found

    def _world_boxes(self, cars: Mapping[str, State],
                     placed_cones: PlacedCones | None) -> np.ndarray:
        """The boxes objects sensors may see, in the world frame: the track mesh's cones, the
        placed cones, the cars of ``cars`` (in scenario order)."""
        present = [i for i, name in enumerate(self.car_names) if name in cars]
        poses = np.array([(cars[self.car_names[i]].x, cars[self.car_names[i]].y,
                           cars[self.car_names[i]].yaw) for i in present],
                         np.float64).reshape(-1, 3)
        blocks = [self._track_cones, car_rows(poses, self._sizes[present], np.array(present))]
        if placed_cones is not None:
            blocks.insert(1, placed_cones.boxes())
        return np.concatenate(blocks)

    def frame_meta(self, names: Iterable[str], time_ns: int) -> dict[str, FrameMeta]:
        """The descriptions of computed frames ``names`` taken at ``time_ns``, as a fan-out
        frame carries them (encoding: the kind, whose layout ``LAYOUTS`` gives)."""
        by_name = {sensor.name: sensor for sensor in self.sensors}
        meta = {}
        for name in names:
            sensor = by_name.get(name)
            if sensor is not None:
                meta[name] = FrameMeta(sensor.car, sensor.spec.name, sensor.kind, sensor.kind,
                                       time_ns)
        return meta


def _car_sensors(car: CarSpec, frame_period_ns: int, seed: int) -> list[_Sensor]:
    params = car.profile.vehicle.params
    return [_Sensor(car.name, f'{car.name}/{spec.name}', spec.kind, spec,
                    frames_per_sample(spec.rate_hz, frame_period_ns), car.index, index,
                    params.body.wheelbase, params.tyre.wheel_radius,
                    noise(seed, car.index, index))
            for index, spec in enumerate(car.profile.sensors)
            if isinstance(spec, (ImuSpec, GnssSpec, WheelOdometrySpec, WheelEncodersSpec,
                                 ObjectsSpec, ConesSpec))]


def _planar(time_ns: int, state: State) -> PlanarState:
    return PlanarState(time_ns, state.x, state.y, state.yaw, state.vx, state.vy,
                       state.yaw_rate, state.steering_angle)


def _imu(sensor: _Sensor, state: PlanarState,
         accel: tuple[float, float, float]) -> np.ndarray:
    spec = sensor.spec
    assert isinstance(spec, ImuSpec)
    m, rng = spec.mount, sensor.rng
    lever = np.array([m.x, m.y, m.z])
    mount_rotation = rotation_matrix(m.roll, m.pitch, m.yaw)
    force = specific_force(accel, state.yaw_rate, spec.gravity, lever, mount_rotation)
    force += np.asarray(spec.accel_bias) + rng.normal(0.0, spec.accel_noise_std, 3)
    rate = mount_rotation.T @ np.array([0.0, 0.0, state.yaw_rate])
    rate += np.asarray(spec.gyro_bias) + rng.normal(0.0, spec.gyro_noise_std, 3)
    roll, pitch, yaw = rng.normal(0.0, spec.orientation_noise_std, 3)
    orientation = rotation_matrix(roll, pitch, yaw + state.yaw) @ mount_rotation
    values = np.empty(10)
    values[:4] = quaternion(orientation)
    values[4:7] = rate
    values[7:] = force
    return values


def _gnss(sensor: _Sensor, state: PlanarState) -> np.ndarray:
    spec = sensor.spec
    assert isinstance(spec, GnssSpec)
    m, rng = spec.mount, sensor.rng
    c, s = math.cos(state.yaw), math.sin(state.yaw)
    east = state.x + c * m.x - s * m.y + rng.normal(0.0, spec.horizontal_noise_std)
    north = state.y + s * m.x + c * m.y + rng.normal(0.0, spec.horizontal_noise_std)
    up = m.z + rng.normal(0.0, spec.vertical_noise_std)
    return np.array(enu_to_geodetic(east, north, up, spec.origin))


def _objects(sensor: _Sensor, state: PlanarState, world: np.ndarray) -> np.ndarray:
    """The boxes around the car (never its own) in its base_link, within the spec's range."""
    spec = sensor.spec
    assert isinstance(spec, ObjectsSpec)
    own = (world[:, 7] == labels.CAR) & (world[:, 8] == sensor.car_index)
    return seen_from((state.x, state.y, state.yaw), world[~own], spec.range_m)


def _cones(sensor: _Sensor, state: PlanarState, placed: PlacedCones | None) -> np.ndarray:
    """The placed cones around the car in its base_link, within the spec's range."""
    spec = sensor.spec
    assert isinstance(spec, ConesSpec)
    if placed is None:
        return NO_CONES.copy()
    return cones_seen_from((state.x, state.y, state.yaw), placed.state_rows(), spec.range_m)


def _wheel_odometry(sensor: _Sensor, state: PlanarState, time_ns: int) -> np.ndarray:
    spec, odometry = sensor.spec, sensor.odometry
    assert isinstance(spec, WheelOdometrySpec) and odometry is not None
    rng = sensor.rng
    speed = state.vx + rng.normal(0.0, spec.speed_noise_std)
    steering = state.steering_angle + rng.normal(0.0, spec.steering_noise_std)
    speed, yaw_rate = odometry.step(time_ns, speed, steering)
    wheelbase = odometry.wheelbase
    rate_std = math.hypot(math.tan(steering) / wheelbase * spec.speed_noise_std,
                          abs(speed) / wheelbase / math.cos(steering) ** 2
                          * spec.steering_noise_std)
    return np.array([odometry.x, odometry.y, odometry.yaw, speed, yaw_rate, steering,
                     spec.speed_noise_std ** 2, rate_std ** 2])


def quaternion(matrix: np.ndarray) -> tuple[float, float, float, float]:
    """(x, y, z, w) of a rotation matrix."""
    w = math.sqrt(max(0.0, 1.0 + matrix[0, 0] + matrix[1, 1] + matrix[2, 2])) / 2.0
    x = math.copysign(math.sqrt(max(0.0, 1.0 + matrix[0, 0] - matrix[1, 1] - matrix[2, 2]))
                      / 2.0, matrix[2, 1] - matrix[1, 2])
    y = math.copysign(math.sqrt(max(0.0, 1.0 - matrix[0, 0] + matrix[1, 1] - matrix[2, 2]))
                      / 2.0, matrix[0, 2] - matrix[2, 0])
    z = math.copysign(math.sqrt(max(0.0, 1.0 - matrix[0, 0] - matrix[1, 1] + matrix[2, 2]))
                      / 2.0, matrix[1, 0] - matrix[0, 1])
    return x, y, z, w
