"""Protocol v1's message bodies as typed values: docs/protocol.md is the spec, this module its
one Python implementation.

Each body is a frozen dataclass. ``to_wire`` gives its topic's header keys, binary frames and
frame descriptions (``Wire``); ``from_wire`` takes a ``framing.Message`` (``framing.decode``
has checked its JSON and its frames' sizes) and reads every value the reader goes on to use
through the checks of ``wire``, so anything else is a ProtocolError naming the key. The
engine's renderers and the backend, the bridge and the sensor republishers all build and read
their messages here. The Update bodies and the fan-out frame are made every frame, many times a
second: their checks try the usual types first, and their arrays pass on without a copy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import Field, dataclass, field, fields
from types import MappingProxyType
from typing import Any, ClassVar, NamedTuple, Protocol

import numpy as np

from arsim_core.errors import ProtocolError
from arsim_core.geometry import Footprint, Pose, Wheels
from arsim_core.protocol import framing, wire
from arsim_core.protocol.appearance import DEFAULT as DEFAULT_APPEARANCE
from arsim_core.protocol.appearance import INTEGER_KEYS as APPEARANCE_INTEGERS
from arsim_core.protocol.appearance import LIMITS as APPEARANCE_LIMITS
from arsim_core.protocol.appearance import Appearance
from arsim_core.protocol.camera_effects import NAMES as CAMERA_EFFECTS
from arsim_core.protocol.target import CalibrationTarget
from arsim_core.protocol.target import from_header as calibration_target
from arsim_core.protocol.weather import CLEAR as CLEAR_WEATHER
from arsim_core.protocol.weather import Weather

NO_ARRAYS: Mapping[str, Any] = MappingProxyType({})
INT64_RANGE = (framing.INT64[0], framing.INT64[1] - 1)  # [low, high]
VERTICES, TRIANGLES, LABELS = 'track_vertices', 'track_triangles', 'track_labels'


class Wire(NamedTuple):
    """A body as ``framing.encode`` takes it: header keys, binary frames, their descriptions."""

    header: dict[str, Any]
    arrays: Mapping[str, np.ndarray] = NO_ARRAYS
    meta: Mapping[str, Mapping[str, Any]] = NO_ARRAYS


class Body(Protocol):
    """What every message body has: its topic and its wire form."""

    TOPIC: ClassVar[str]

    def to_wire(self) -> Wire: ...


def encode(body: Body, step: int, time_ns: int) -> list[bytes | memoryview]:
    """The frames of ``body``'s message at ``step`` and ``time_ns``."""
    header, arrays, meta = body.to_wire()
    return framing.encode(body.TOPIC, step, time_ns, header, arrays, meta)


def in_process(body: Body, step: int = 0, time_ns: int = 0) -> framing.Message:
    """The message ``framing.decode(encode(body, ...))`` gives, without bytes or JSON: for
    both ends of the protocol in one process."""
    header, arrays, meta = body.to_wire()
    return framing.message(body.TOPIC, step, time_ns, header, arrays, meta)


class _Body:
    """Equality by value, arrays by dtype, shape and values (NaN equal to NaN): the default
    comparison of fields would ask an array for one truth value. No hash, as arrays have
    none."""

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(
            _same(getattr(self, f.name), getattr(other, f.name)) for f in fields(self))


def _same(a: Any, b: Any) -> bool:
    """Whether two field values are equal; arrays, mappings and sequences item by item."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
                and a.dtype == b.dtype and a.shape == b.shape
                and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in 'fc')))
    if isinstance(a, Mapping):
        return isinstance(b, Mapping) and a.keys() == b.keys() and all(
            _same(value, b[key]) for key, value in a.items())
    if isinstance(a, (list, tuple)):
        return type(b) is type(a) and len(a) == len(b) and all(
            _same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


# --- the track ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, eq=False)
class TrackRequest(_Body):
    """A named track mesh: the whole body of a Track request, and the track of
    InitialSettings. ``from_wire`` gives the arrays in these dtypes."""

    TOPIC: ClassVar[str] = framing.TRACK
    name: str
    vertices: np.ndarray  # float32 (V, 3) [m], world frame, finite, within MAX_COORDINATE
    triangles: np.ndarray  # uint32 (T, 3), vertex indices, each in [0, V)
    labels: np.ndarray | None = None  # uint8 (T,), class per triangle; None: all barrier

    def to_wire(self) -> Wire:
        arrays = {VERTICES: self.vertices, TRIANGLES: self.triangles}
        if self.labels is not None:
            arrays[LABELS] = self.labels
        return Wire({'track': {'name': self.name}}, arrays)

    @classmethod
    def from_wire(cls, message: framing.Message) -> TrackRequest:
        """The track of a Track or InitialSettings message: integer triangles that all index
        existing vertices (smallest and largest: a signed dtype can carry negative indices),
        finite vertices, integer labels 0..255."""
        track = message.header.get('track', {})
        if not isinstance(track, dict) or not isinstance(track.get('name', ''), str):
            msg = 'header key "track" must be an object {"name": string}'
            raise ProtocolError(msg)
        arrays = message.arrays
        vertices, triangles = arrays.get(VERTICES), arrays.get(TRIANGLES)
        labels = arrays.get(LABELS)
        if vertices is None or triangles is None:
            msg = f'{message.topic} needs the frames {VERTICES} and {TRIANGLES}'
            raise ProtocolError(msg)
        if vertices.ndim != 2 or vertices.shape[1] != 3 or triangles.ndim != 2 \
                or triangles.shape[1] != 3:
            msg = f'{VERTICES} and {TRIANGLES} must both have shape (n, 3)'
            raise ProtocolError(msg)
        if vertices.dtype.kind != 'f' or triangles.dtype.kind not in 'iu':
            msg = (f'{VERTICES} must be float32 or float64 and {TRIANGLES} an integer dtype, '
                   f'got {vertices.dtype} and {triangles.dtype}')
            raise ProtocolError(msg)
        points = vertices.astype(np.float32)
        if not np.isfinite(points).all() or (
                points.size and np.abs(points).max() > wire.MAX_COORDINATE):
            msg = f'{VERTICES} must be finite numbers within +-{wire.MAX_COORDINATE:g} m'
            raise ProtocolError(msg)
        if triangles.size and (int(triangles.min()) < 0
                               or int(triangles.max()) >= len(vertices)):
            msg = (f'{TRIANGLES} index a vertex that does not exist (indices must be in '
                   f'[0, {len(vertices)}))')
            raise ProtocolError(msg)
        if labels is not None:
            if labels.shape != (len(triangles),) or labels.dtype.kind not in 'iu' or (
                    labels.size and (int(labels.min()) < 0 or int(labels.max()) > 255)):
                msg = (f'{LABELS} must be one integer label 0..255 per triangle '
                       f'({len(triangles)})')
                raise ProtocolError(msg)
            labels = labels.astype(np.uint8)
        return cls(track.get('name', ''), points, triangles.astype(np.uint32), labels)


# --- start-up ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, eq=False)
class CarSettings(_Body):
    """One car of InitialSettings: its id, the box other cars' sensors see (None: invisible),
    and its sensor descriptions as the wire has them (``SensorSpec.to_wire``), each checked
    against the limits by ``from_wire``."""

    name: str
    footprint: Footprint | None = None
    sensors: tuple[Mapping[str, Any], ...] = ()

    def to_wire(self) -> dict[str, Any]:
        body: dict[str, Any] = {'id': self.name}
        if self.footprint is not None:
            footprint = self.footprint
            body['footprint'] = [footprint.length, footprint.width, footprint.height]
            if footprint.wheels is not None:
                wheels = footprint.wheels
                body['wheels'] = [wheels.rear_x, wheels.front_x, wheels.radius, wheels.width]
        body['sensors'] = list(self.sensors)
        return body


def _wheels(car: Mapping[str, Any], where: str) -> Wheels | None:
    """A car's optional ``wheels`` (absent from an older peer): the rear axle behind the front
    one, the radius and width positive."""
    if car.get('wheels') is None:
        return None
    rear_x, front_x, radius, width = wire.numbers(car, 'wheels', 4, where, low=-1e3, high=1e3)
    if not (rear_x < front_x and radius > 0.0 and width > 0.0):
        msg = (f"{where}: key 'wheels' must be [rear axle x, front axle x, radius, width], the "
               f'rear axle behind the front one and the sizes positive, got '
               f'{wire.show(car["wheels"])}')
        raise ProtocolError(msg)
    return Wheels(rear_x, front_x, radius, width)


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class InitialSettings(_Body):
    """The InitialSettings request: the cars with their sensors, the step, the noise seed,
    whether cars see each other, the cameras' appearance, and the track."""

    TOPIC: ClassVar[str] = framing.INITIAL_SETTINGS
    track: TrackRequest
    cars: tuple[CarSettings, ...] = ()
    frame_period_ns: int = 0
    seed: int = 0
    cars_visible: bool = True
    world_frame: str = ''
    appearance: Appearance = DEFAULT_APPEARANCE
    calibration_target: CalibrationTarget | None = None
    weather: Weather = CLEAR_WEATHER  # fog, rain, clouds, headlights (protocol.weather)

    def to_wire(self) -> Wire:
        track = self.track.to_wire()
        header = {'world_frame': self.world_frame, 'frame_period_ns': self.frame_period_ns,
                  'seed': self.seed, **track.header, 'cars_visible': self.cars_visible,
                  'appearance': self.appearance.to_wire(),
                  'weather': self.weather.to_wire(),
                  'cars': [car.to_wire() for car in self.cars]}
        if self.calibration_target is not None:
            header['calibration_target'] = self.calibration_target.to_wire()
        return Wire(header, track.arrays)

    def camera_effects(self) -> dict[tuple[str, str], tuple[str, ...]]:
        """The effects (``camera_effects.NAMES``) of every camera that has one, by (car,
        camera)."""
        return {(car.name, str(spec['name'])): needed for car in self.cars
                for spec in car.sensors if spec.get('type') == 'camera'
                for needed in (tuple(n for n in CAMERA_EFFECTS if spec.get(n) is not None),)
                if needed}

    def lenses(self) -> dict[tuple[str, str], str]:
        """The lens model (``lens.WIRE_MODELS``) of every camera that has one, by (car,
        camera)."""
        return {(car.name, str(spec['name'])): str(spec['lens']['model'])
                for car in self.cars for spec in car.sensors
                if spec.get('type') == 'camera' and isinstance(spec.get('lens'), dict)}

    @classmethod
    def from_wire(cls, message: framing.Message) -> InitialSettings:
        header = message.header
        cars, samples = [], 0
        for car in wire.objects(header, 'cars', 'header', wire.MAX_CARS):
            where = f'car {wire.show(car.get("id"))}'
            name = wire.text(car, 'id', where)
            footprint = None
            if car.get('footprint') is not None:
                length, width, height = wire.numbers(car, 'footprint', 3, where, low=0.0,
                                                     high=1e3, open_low=True)
                footprint = Footprint(length, width, height, _wheels(car, where))
            sensors = wire.objects(car, 'sensors', where, wire.MAX_SENSORS_PER_CAR)
            samples += sum(wire.sensor(spec, where) for spec in sensors)
            cars.append(CarSettings(name, footprint, tuple(sensors)))
        if samples > wire.MAX_TOTAL_SAMPLES:
            msg = (f'the sensors cast {samples} rays and pixels in all, at most '
                   f'{wire.MAX_TOTAL_SAMPLES}')
            raise ProtocolError(msg)
        return cls(
            cars=tuple(cars),
            frame_period_ns=wire.integer(header, 'frame_period_ns', 'header', 0,
                                         wire.MAX_FRAME_PERIOD_NS, 0),
            seed=wire.integer(header, 'seed', 'header', 0, wire.MAX_SEED, 0),
            cars_visible=wire.flag(header, 'cars_visible', 'header', True),
            world_frame=wire.text(header, 'world_frame', 'header', default=''),
            appearance=_appearance(header),
            calibration_target=calibration_target(header),
            weather=Weather.from_wire(header),
            track=TrackRequest.from_wire(message))


def _appearance(header: Mapping[str, Any]) -> Appearance:
    """The optional ``appearance`` object: each key a number within its limits, absent keys
    (and an absent object, from an older peer) their defaults; keys it does not know are left
    for newer peers."""
    given = header.get('appearance', {})
    if not isinstance(given, dict):
        msg = f'header: key \'appearance\' must be an object of numbers, got {wire.show(given)}'
        raise ProtocolError(msg)
    values: dict[str, Any] = {}
    for key, (low, high, open_low) in APPEARANCE_LIMITS.items():
        default = getattr(DEFAULT_APPEARANCE, key)
        if key in APPEARANCE_INTEGERS:
            values[key] = wire.integer(given, key, 'appearance', int(low), int(high), default)
        else:
            values[key] = wire.number(given, key, 'appearance', low, high, default,
                                      open_low=open_low)
    return Appearance(**values)


class ListedSensor(NamedTuple):
    """A sensor a backend renders, as Ready lists it."""

    car: str
    sensor: str
    kind: str  # the sensor's type

    def to_wire(self) -> dict[str, Any]:
        return {'car': self.car, 'sensor': self.sensor, 'type': self.kind}


MAX_CAPABILITIES = 32  # names in one list of Ready's capabilities


@dataclass(frozen=True, slots=True, eq=False)
class Ready(_Body):
    """The reply to InitialSettings and Track: the backend's name, the track's, the sensors it
    renders, and what it can render beyond protocol v1's first cameras: the camera lens
    models (``lens.WIRE_MODELS``), the calibration targets (``target.KINDS``) and the weather
    (``weather.NAMES``). A peer that sends no capabilities can render none of them."""

    TOPIC: ClassVar[str] = framing.READY
    backend: str
    track: str
    sensors: tuple[ListedSensor, ...] = ()
    lenses: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    conditions: tuple[str, ...] = ()  # the weather it renders (protocol.weather.NAMES)
    camera_effects: tuple[str, ...] = ()  # its cameras' effects (camera_effects.NAMES)

    def to_wire(self) -> Wire:
        return Wire({'backend': self.backend, 'track': self.track,
                     'sensors': [sensor.to_wire() for sensor in self.sensors],
                     'capabilities': {'lenses': list(self.lenses),
                                      'targets': list(self.targets),
                                      'conditions': list(self.conditions),
                                      'camera_effects': list(self.camera_effects)}})

    @classmethod
    def from_wire(cls, message: framing.Message) -> Ready:
        header = message.header
        listed = wire.objects(header, 'sensors', 'Ready', wire.MAX_CARS * wire.MAX_SENSORS_PER_CAR)
        capabilities = header.get('capabilities', {})
        if not isinstance(capabilities, dict):
            msg = f"Ready: key 'capabilities' must be an object, got {wire.show(capabilities)}"
            raise ProtocolError(msg)
        return cls(wire.text(header, 'backend', 'Ready'), wire.text(header, 'track', 'Ready'),
                   tuple(ListedSensor(wire.text(s, 'car', 'Ready sensor'),
                                      wire.text(s, 'sensor', 'Ready sensor'),
                                      wire.text(s, 'type', 'Ready sensor')) for s in listed),
                   _names(capabilities, 'lenses'), _names(capabilities, 'targets'),
                   _names(capabilities, 'conditions'), _names(capabilities, 'camera_effects'))

    def unrenderable(self, settings: InitialSettings) -> list[str]:
        """What of ``settings`` this backend said it cannot render: a camera's lens, the
        calibration target, a part of the weather. A backend that ignored them would hand back
        images that look right and are not."""
        problems = [f'car {car!r} camera {camera!r} has a {model} lens'
                    for (car, camera), model in settings.lenses().items()
                    if model not in self.lenses]
        target = settings.calibration_target
        if target is not None and target.kind not in self.targets:
            problems.append(f'the scenario places a {target.kind} calibration target')
        if problems:
            problems.append(f'backend {self.backend!r} renders lenses {list(self.lenses)} and '
                            f'calibration targets {list(self.targets)}')
        weather = [name for name in settings.weather.needs() if name not in self.conditions]
        if weather:
            problems.append(f'the scenario\'s conditions need {", ".join(weather)}, and backend '
                            f'{self.backend!r} renders conditions {list(self.conditions)}')
        effects = [f'car {car!r} camera {camera!r} has {", ".join(missing)}'
                   for (car, camera), needed in settings.camera_effects().items()
                   for missing in ([n for n in needed if n not in self.camera_effects],)
                   if missing]
        if effects:
            problems += [*effects, f'backend {self.backend!r} renders camera effects '
                                   f'{list(self.camera_effects)}']
        return problems


def _names(capabilities: Mapping[str, Any], key: str) -> tuple[str, ...]:
    """A list of names under ``key`` of Ready's capabilities (absent: none)."""
    value = capabilities.get(key, [])
    if not isinstance(value, list) or len(value) > MAX_CAPABILITIES or not all(
            isinstance(v, str) and len(v) <= 64 for v in value):
        msg = (f"Ready: capabilities key {key!r} must be a list of at most {MAX_CAPABILITIES} "
               f'names, got {wire.show(value)}')
        raise ProtocolError(msg)
    return tuple(value)


# --- every frame -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, eq=False)
class UpdateRequest(_Body):
    """One step: every car's pose (x, y, z, roll, pitch, yaw of base_link in the world frame)
    and the (car, sensor) pairs due, each once, in order."""

    TOPIC: ClassVar[str] = framing.UPDATE
    poses: Mapping[str, Pose]
    render: Sequence[tuple[str, str]] = ()  # (car, sensor)

    def to_wire(self) -> Wire:
        return Wire({'cars': [{'id': car, 'pose': list(pose)} for car, pose in self.poses.items()],
                     'render': [{'car': car, 'sensor': sensor} for car, sensor in self.render]})

    @classmethod
    def from_wire(cls, message: framing.Message) -> UpdateRequest:
        header = message.header
        poses: dict[str, Pose] = {}
        for car in wire.objects(header, 'cars', 'header', wire.MAX_CARS):
            name = wire.text(car, 'id', 'car')
            poses[name] = wire.numbers(car, 'pose', 6, f'car {wire.show(name)}',
                                       -wire.MAX_COORDINATE, wire.MAX_COORDINATE)
        entries = wire.objects(header, 'render', 'header',
                               wire.MAX_CARS * wire.MAX_SENSORS_PER_CAR)
        keys = ((wire.text(r, 'car', 'render request'), wire.text(r, 'sensor', 'render request'))
                for r in entries)
        return cls(poses, tuple(dict.fromkeys(keys)))


class FrameMeta(NamedTuple):
    """What a sensor frame of an Update reply or a fan-out frame holds, beyond its dtype and
    shape: whose it is, what it encodes and when its data was taken."""

    car: str
    sensor: str
    kind: str  # the sensor's type
    encoding: str
    stamp_ns: int

    def to_wire(self) -> dict[str, Any]:
        return {'car': self.car, 'sensor': self.sensor, 'type': self.kind,
                'encoding': self.encoding, 'stamp_ns': self.stamp_ns}

    @classmethod
    def from_wire(cls, entry: Mapping[str, Any]) -> FrameMeta:
        """The description of one frame (``entry`` from the header's ``frames``)."""
        car, sensor, kind = entry.get('car'), entry.get('sensor'), entry.get('type')
        encoding, stamp_ns = entry.get('encoding'), entry.get('stamp_ns')
        if isinstance(car, str) and isinstance(sensor, str) and isinstance(kind, str) \
                and isinstance(encoding, str) and type(stamp_ns) is int \
                and INT64_RANGE[0] <= stamp_ns <= INT64_RANGE[1]:
            return cls(car, sensor, kind, encoding, stamp_ns)  # the usual case, quickly
        where = f'frame {wire.show(entry["name"])}'  # the checks again, to say what is wrong
        return cls(wire.text(entry, 'car', where), wire.text(entry, 'sensor', where),
                   wire.text(entry, 'type', where), wire.text(entry, 'encoding', where),
                   wire.integer(entry, 'stamp_ns', where, *INT64_RANGE))


def _frame_meta(message: framing.Message) -> dict[str, FrameMeta]:
    """The descriptions of a message's sensor frames (``decode`` checked their names)."""
    return {entry['name']: FrameMeta.from_wire(entry)
            for entry in message.header.get('frames', [])}


@dataclass(frozen=True, slots=True, eq=False)
class UpdateReply(_Body):
    """The reply to an Update: every rendered frame, named ``<car>/<sensor><suffix>``, with
    its description."""

    TOPIC: ClassVar[str] = framing.UPDATE
    arrays: Mapping[str, np.ndarray]
    meta: Mapping[str, FrameMeta]

    def to_wire(self) -> Wire:
        return Wire({}, self.arrays, {name: m.to_wire() for name, m in self.meta.items()})

    @classmethod
    def from_wire(cls, message: framing.Message) -> UpdateReply:
        return cls(message.arrays, _frame_meta(message))

    def by_car(self) -> dict[str, UpdateReply]:
        """The frames of each car that has any, for its fan-out frame."""
        arrays: dict[str, dict[str, np.ndarray]] = {}
        meta: dict[str, dict[str, FrameMeta]] = {}
        for name, m in self.meta.items():
            arrays.setdefault(m.car, {})[name] = self.arrays[name]
            meta.setdefault(m.car, {})[name] = m
        return {car: UpdateReply(arrays[car], meta[car]) for car in arrays}


@dataclass(frozen=True, slots=True, eq=False)
class Error(_Body):
    """The reply to a request a backend cannot serve: why."""

    TOPIC: ClassVar[str] = framing.ERROR
    text: str

    def to_wire(self) -> Wire:
        return Wire({'error': self.text})

    @classmethod
    def from_wire(cls, message: framing.Message) -> Error:
        return cls(wire.text(message.header, 'error', 'Error'))


# --- bridge -> sensor republishers ---------------------------------------------------------------
@dataclass(frozen=True, slots=True, eq=False)
class FanoutFrame(_Body):
    """One car's frame as the bridge fans it out: its planar state (pose in the world frame;
    twist, accelerations and steering in base_link) and its sensor frames, passed on from the
    backend's reply without a copy."""

    TOPIC: ClassVar[str] = framing.UPDATE
    car: str
    pose: tuple[float, float, float]  # x [m], y [m], yaw [rad]
    twist: tuple[float, float, float]  # vx, vy [m/s], yaw rate [rad/s]
    steering_angle: float = 0.0
    accel: tuple[float, ...] | None = None  # ax, ay [m/s^2] (, yaw acceleration [rad/s^2])
    arrays: Mapping[str, np.ndarray] = field(default_factory=dict)
    meta: Mapping[str, FrameMeta] = field(default_factory=dict)

    def to_wire(self) -> Wire:
        state: dict[str, Any] = {'pose': list(self.pose), 'twist': list(self.twist)}
        if self.accel is not None:
            state['accel'] = list(self.accel)
        state['steering_angle'] = self.steering_angle
        return Wire({'car': self.car, 'state': state}, self.arrays,
                    {name: m.to_wire() for name, m in self.meta.items()})

    @classmethod
    def from_wire(cls, message: framing.Message) -> FanoutFrame:
        header = message.header
        car = wire.text(header, 'car', 'header')
        state = header.get('state')
        if not isinstance(state, dict):
            msg = f"car {wire.show(car)}: key 'state' must be an object, got {wire.show(state)}"
            raise ProtocolError(msg)
        where, limit = f'car {wire.show(car)}, state', wire.MAX_COORDINATE
        x, y, yaw = wire.numbers(state, 'pose', 3, where, -limit, limit)
        vx, vy, yaw_rate = wire.numbers(state, 'twist', 3, where, -limit, limit)
        accel = None
        if state.get('accel'):  # [ax, ay] or [ax, ay, yaw acceleration]
            length = 3 if isinstance(state['accel'], list) and len(state['accel']) > 2 else 2
            accel = tuple(wire.numbers(state, 'accel', length, where, -limit, limit))
        return cls(car, (x, y, yaw), (vx, vy, yaw_rate),
                   wire.number(state, 'steering_angle', where, -limit, limit, default=0.0),
                   accel, message.arrays, _frame_meta(message))
