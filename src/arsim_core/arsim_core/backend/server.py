"""The embedded headless backend: a ZeroMQ REP server speaking protocol v1 (docs/protocol.md).

It holds the track mesh and renders every sensor on the CPU. Cars are moved by the bridge, which
sends their poses each frame; this process owns no clock and no physics.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import zmq

from arsim_core import protocol
from arsim_core.backend.camera import Camera, Renderer, make_renderer
from arsim_core.backend.embree import EmbreePacketRaycaster
from arsim_core.backend.frames import Context, Rendered, frame_name, update_frames
from arsim_core.backend.lidar import Lidar2D, Lidar2DBatch, Lidar3D
from arsim_core.backend.scene import World
from arsim_core.backend.shapes import Footprint
from arsim_core.backend.timeline import Timeline
from arsim_core.config.scenario import TCP_BACKEND_ADDRESS
from arsim_core.errors import ProtocolError

LOG = logging.getLogger('arsim.backend')
NAME = 'arsim-embedded'

Frames = list[Any]
Sensor = Lidar2D | Lidar3D | Camera
SENSOR_TYPES: Mapping[str, Any] = {'lidar2d': Lidar2D, 'lidar3d': Lidar3D, 'camera': Camera}
# Computed by the car's republisher from the car state; a backend renders nothing for them and
# ignores them if a bridge lists or requests them.
COMPUTED_TYPES = frozenset({'imu', 'gnss', 'wheel_odometry', 'ground_truth'})


class EmbeddedBackend:
    """Protocol state machine, independent of the socket so it can be tested directly."""

    def __init__(self, threads: int = 1) -> None:
        """``threads`` > 1 spreads 2D scans over numba's threads: for in-process users only,
        as the backend process shares the cores with the simulation's others."""
        self.threads = threads
        self.world: World | None = None
        self.timeline = Timeline()
        self.sensors: dict[tuple[str, str], Sensor] = {}
        self.computed: set[tuple[str, str]] = set()
        self.footprints: dict[str, Footprint] = {}
        self.cars_visible = True
        self.track_name = ''
        self.car_specs: list[Mapping[str, Any]] = []
        self._plans: dict[tuple[tuple[str, str], ...], _Plan] = {}
        self.seed = 0
        self.frame_period_ns = 0
        self._renderer: Renderer | None = None

    def renderer(self) -> Renderer:
        """The camera renderer, made (and given the track) on first use."""
        if self._renderer is None:
            self._renderer = make_renderer(lambda: self.world)
            if self.world is not None:
                self._renderer.set_track(self.world.vertices, self.world.triangles,
                                         self.world.triangle_labels)
        return self._renderer

    def handle(self, message: protocol.Message) -> Frames:
        handler = {protocol.INITIAL_SETTINGS: self._initial_settings,
                   protocol.TRACK: self._track,
                   protocol.UPDATE: self._update}.get(message.topic)
        if handler is None:
            msg = f'the backend does not accept {message.topic!r} requests'
            raise ProtocolError(msg)
        return handler(message)

    def _initial_settings(self, message: protocol.Message) -> Frames:
        self.configure(message.header, message.arrays)
        return self._ready(message)

    def configure(self, header: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        """Apply InitialSettings (its header and track arrays); in-process callers use this
        directly, without the socket and the JSON."""
        cars = _list(header, 'cars')
        footprints: dict[str, Footprint] = {}
        for car in cars:
            if car.get('footprint') is not None:
                footprints[str(car.get('id'))] = _footprint(car)
        frame_period = int(header.get('frame_period_ns', 0))
        seed = int(header.get('seed', 0))
        sensors, computed = _make_sensors(cars, seed, frame_period)
        for sensor in sensors.values():
            if isinstance(sensor, Lidar2D):
                sensor.threads = self.threads
        self._load_track(header, arrays, protocol.INITIAL_SETTINGS)
        self.sensors, self.computed = sensors, computed
        self.car_specs = cars
        self._plans.clear()
        self.seed = seed
        self.frame_period_ns = frame_period
        self.footprints = footprints
        self.cars_visible = bool(header.get('cars_visible', True))
        assert self.world is not None
        self.world.set_cars(footprints, self.cars_visible)
        periods = [s.period_ns for s in sensors.values() if isinstance(s, Lidar3D)]
        self.timeline = Timeline(max(periods, default=0) + frame_period)
        if any(isinstance(s, Camera) for s in sensors.values()):
            LOG.info('camera renderer: %s', self.renderer().name)
        LOG.info('ready: track %r, %d car(s), %d rendered sensor(s)', self.track_name,
                 len(cars), len(sensors))

    def reseed(self, seed: int, cars: Collection[str] | None = None) -> None:
        """Start the noise of every sensor (of ``cars``, default all) afresh from ``seed``, as
        InitialSettings would, without reloading the track or changing any sensor's settings
        (a randomised noise level stays): a reproducible episode start for in-process users."""
        if cars is None:
            self.seed = seed
            self.timeline.clear()
        for car_index, car in enumerate(self.car_specs):
            car_id = str(car.get('id'))
            if cars is not None and car_id not in cars:
                continue
            for sensor_index, spec in enumerate(_list(car, 'sensors')):
                sensor = self.sensors.get((car_id, str(spec.get('name'))))
                if sensor is not None:
                    sensor.reseed(_sensor_seed(seed, car_index, sensor_index))

    def _track(self, message: protocol.Message) -> Frames:
        self._load_track(message.header, message.arrays, message.topic)
        assert self.world is not None
        self.world.set_cars(self.footprints, self.cars_visible)
        return self._ready(message)

    def _ready(self, message: protocol.Message) -> Frames:
        listing = [{'car': car, 'sensor': name, 'type': sensor.kind}
                   for (car, name), sensor in self.sensors.items()]
        return protocol.encode(protocol.READY, message.step, message.time_ns,
                               {'backend': NAME, 'track': self.track_name, 'sensors': listing})

    def _load_track(self, header: Mapping[str, Any], arrays: Mapping[str, np.ndarray],
                    topic: str) -> None:
        vertices = arrays.get('track_vertices')
        triangles = arrays.get('track_triangles')
        labels = arrays.get('track_labels')
        if vertices is None or triangles is None:
            msg = f'{topic} needs the frames track_vertices and track_triangles'
            raise ProtocolError(msg)
        if vertices.ndim != 2 or vertices.shape[1] != 3 or triangles.ndim != 2 \
                or triangles.shape[1] != 3:
            msg = 'track_vertices and track_triangles must both have shape (n, 3)'
            raise ProtocolError(msg)
        if triangles.size and int(triangles.max()) >= len(vertices):
            msg = 'track_triangles index a vertex that does not exist'
            raise ProtocolError(msg)
        if labels is not None and labels.shape != (len(triangles),):
            msg = f'track_labels must have one label per triangle ({len(triangles)})'
            raise ProtocolError(msg)
        self.world = World(vertices, triangles.astype(np.int64), labels)
        if self._renderer is not None:
            self._renderer.set_track(self.world.vertices, self.world.triangles,
                                     self.world.triangle_labels)
        self.track_name = str(header.get('track', {}).get('name', ''))

    def _update(self, message: protocol.Message) -> Frames:
        poses = {str(car['id']): _pose(car) for car in _list(message.header, 'cars')}
        requests = [(str(r.get('car')), str(r.get('sensor')))
                    for r in _list(message.header, 'render')]
        arrays, meta = update_frames(self.render(message.time_ns, poses, requests))
        return protocol.encode(protocol.UPDATE, message.step, message.time_ns, {}, arrays, meta)

    def render(self, time_ns: int, poses: Mapping[str, Sequence[float]],
               requests: Sequence[tuple[str, str]]) -> list[tuple[Sensor, Rendered]]:
        """Move the cars to ``poses`` (x, y, z, roll, pitch, yaw) at ``time_ns`` and render the
        (car, sensor) ``requests``; computed sensors among them are skipped."""
        plan, ctx = self._prepare(time_ns, poses, requests)
        if plan.batch is None:
            return [(sensor, sensor.render(ctx)) for sensor in plan.sensors]
        results = plan.batch.render(ctx, self.threads)
        if not plan.unbatched:  # scans only, the usual case
            return list(zip(plan.sensors, results, strict=True))
        batched = {id(sensor): result
                   for sensor, result in zip(plan.batch.sensors, results, strict=True)}
        return [(sensor, batched.get(id(sensor)) or sensor.render(ctx))
                for sensor in plan.sensors]

    def render_frames(self, time_ns: int, poses: Mapping[str, Sequence[float]],
                      requests: Sequence[tuple[str, str]]) -> dict[str, np.ndarray]:
        """``render``'s frames by name (``frames.frame_name``), for callers in this process:
        a batch of scans goes straight from its arrays to the names, with no record per
        sensor."""
        plan, ctx = self._prepare(time_ns, poses, requests)
        batch = plan.batch
        frames: dict[str, np.ndarray] = {}
        if batch is not None:
            ranges, intensity = batch.scan(ctx, self.threads)
            frames.update(zip(batch.frame_names[0], ranges, strict=True))
            frames.update(zip(batch.frame_names[1], intensity, strict=True))
        for sensor in plan.unbatched:
            frames.update((frame_name(sensor, output), output.array)
                          for output in sensor.render(ctx).outputs)
        return frames

    def _prepare(self, time_ns: int, poses: Mapping[str, Sequence[float]],
                 requests: Sequence[tuple[str, str]]) -> tuple[_Plan, Context]:
        """The plan of ``requests`` and the context to render it in, the poses recorded."""
        if self.world is None:
            msg = 'Update before InitialSettings'
            raise ProtocolError(msg)
        plan = self._plans.get(tuple(requests)) or self._plan(requests)
        missing = plan.cars.difference(poses)
        if missing:
            msg = f'render request for car(s) {sorted(missing)} without a pose'
            raise ProtocolError(msg)
        self.timeline.add(time_ns, poses)
        return plan, Context(self.world, self.timeline, time_ns, self.renderer)

    def _plan(self, requests: Sequence[tuple[str, str]]) -> _Plan:
        """What a list of (car, sensor) requests renders, checked once and kept: the same
        requests come back every few frames."""
        chosen = []
        for key in requests:
            if key in self.computed:
                continue
            if key not in self.sensors:
                msg = f'render request for unknown car/sensor {key}'
                raise ProtocolError(msg)
            chosen.append(self.sensors[key])
        assert self.world is not None
        scans = [s for s in chosen if isinstance(s, Lidar2D)]
        # Several cars' scans in one compiled call (and over threads in process, if asked).
        batch = Lidar2DBatch(scans) if len(scans) > 1 and isinstance(
            self.world.track.raycaster, EmbreePacketRaycaster) and len(
            {s.local_directions.shape for s in scans}) == 1 else None
        in_batch = {id(sensor) for sensor in batch.sensors} if batch is not None else set()
        plan = _Plan(tuple(chosen), frozenset(s.car for s in chosen), batch,
                     tuple(s for s in chosen if id(s) not in in_batch))
        if len(self._plans) > 64:
            self._plans.clear()
        self._plans[tuple(requests)] = plan
        return plan


@dataclass(frozen=True)
class _Plan:
    sensors: tuple[Sensor, ...]
    cars: frozenset[str]
    batch: Lidar2DBatch | None
    unbatched: tuple[Sensor, ...]  # the sensors the batch does not render


def _make_sensors(cars: Sequence[Mapping[str, Any]], seed: int, frame_period_ns: int
                  ) -> tuple[dict[tuple[str, str], Sensor], set[tuple[str, str]]]:
    """The rendered sensors of every car, each with its own noise seed, and the (car, sensor)
    keys of the computed ones a backend skips."""
    sensors: dict[tuple[str, str], Sensor] = {}
    computed: set[tuple[str, str]] = set()
    for car_index, car in enumerate(cars):
        car_id = str(car.get('id'))
        for sensor_index, spec in enumerate(_list(car, 'sensors')):
            kind = spec.get('type')
            if kind in COMPUTED_TYPES:
                computed.add((car_id, str(spec.get('name'))))
                continue
            if kind not in SENSOR_TYPES:
                msg = (f'sensor type {kind!r} is not supported by {NAME}; it renders '
                       f'{sorted(SENSOR_TYPES)}')
                raise ProtocolError(msg)
            sensor = SENSOR_TYPES[kind].from_wire(
                car_id, spec, _sensor_seed(seed, car_index, sensor_index), frame_period_ns)
            sensors[(sensor.car, sensor.name)] = sensor
    return sensors, computed


def _sensor_seed(seed: int, car_index: int, sensor_index: int) -> int:
    """Each sensor's own noise seed, so two sensors never share a noise sequence."""
    return seed + 1000 * car_index + sensor_index


def _footprint(car: Mapping[str, Any]) -> Footprint:
    value = car.get('footprint')
    if not isinstance(value, list) or len(value) != 3 or not all(
            isinstance(v, (int, float)) and np.isfinite(v) and v > 0 for v in value):
        msg = (f'car {car.get("id")!r}: footprint must be 3 positive numbers '
               f'(length, width, height)')
        raise ProtocolError(msg)
    return Footprint(*(float(v) for v in value))


def _list(mapping: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = mapping.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        msg = f'header key {key!r} must be a list of objects'
        raise ProtocolError(msg)
    return value


def _pose(car: Mapping[str, Any]) -> Sequence[float]:
    pose = car.get('pose')
    if not isinstance(pose, list) or len(pose) != 6 or not all(
            isinstance(v, (int, float)) and np.isfinite(v) for v in pose):
        msg = f'car {car.get("id")!r}: pose must be 6 finite numbers (x, y, z, roll, pitch, yaw)'
        raise ProtocolError(msg)
    return pose


def _answer(backend: EmbeddedBackend, frames: list[Any]) -> Frames:
    try:
        message = protocol.decode(frames)
    except ProtocolError as exc:
        LOG.error('refused a message: %s', exc)
        return protocol.encode(protocol.ERROR, 0, 0, {'error': str(exc)})
    try:
        return backend.handle(message)
    except (ProtocolError, KeyError, TypeError, ValueError, IndexError) as exc:
        LOG.error('refused %s of step %d: %s', message.topic, message.step, exc)
        return protocol.encode(protocol.ERROR, message.step, message.time_ns, {'error': str(exc)})


def serve(address: str) -> None:
    """Answer requests until SIGINT/SIGTERM; a bad request gets an Error reply, never a crash."""
    context = zmq.Context.instance()
    socket = context.socket(zmq.REP)
    socket.setsockopt(zmq.LINGER, 0)
    socket.bind(address)
    backend = EmbeddedBackend()
    # The simulation's other processes share these cores: OpenCV's worker threads would spin
    # on them for jobs that take a twentieth of a millisecond (a camera's RGBA -> RGB).
    cv2.setNumThreads(0)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    LOG.info('%s listening on %s (protocol %d)', NAME, address, protocol.PROTOCOL_VERSION)
    poller = zmq.Poller()
    poller.register(socket, zmq.POLLIN)
    try:
        while not stopping:
            if not poller.poll(200):
                continue
            reply = _answer(backend, socket.recv_multipart(copy=False))
            socket.send_multipart(reply, copy=False)
    except KeyboardInterrupt:
        pass
    finally:
        socket.close()
    LOG.info('%s stopped', NAME)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description='arsim embedded headless backend')
    parser.add_argument('--address', default=TCP_BACKEND_ADDRESS,
                        help='ZeroMQ endpoint to bind (loopback by default)')
    args, _ros_args = parser.parse_known_args(argv)
    logging.basicConfig(level=logging.INFO, format='[backend] %(levelname)s: %(message)s')
    try:
        serve(args.address)
    except zmq.ZMQError as exc:
        LOG.error('cannot bind %s: %s', args.address, exc)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
