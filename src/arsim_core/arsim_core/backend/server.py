"""The embedded headless backend: a ZeroMQ REP server speaking protocol v1 (docs/protocol.md).

It holds the track mesh and renders every sensor on the CPU. Cars are moved by the bridge, which
sends their poses each frame; this process owns no clock and no physics.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import zmq

from arsim_core import protocol
from arsim_core.backend.lidar import Lidar2D
from arsim_core.backend.raycast import Raycaster, make_raycaster
from arsim_core.errors import ProtocolError

LOG = logging.getLogger('arsim.backend')
NAME = 'arsim-embedded'

Frames = list[Any]


class EmbeddedBackend:
    """Protocol state machine, independent of the socket so it can be tested directly."""

    def __init__(self) -> None:
        self.raycaster: Raycaster | None = None
        self.sensors: dict[tuple[str, str], Lidar2D] = {}
        self.track_name = ''

    def handle(self, message: protocol.Message) -> Frames:
        handler = {protocol.INITIAL_SETTINGS: self._initial_settings,
                   protocol.TRACK: self._track,
                   protocol.UPDATE: self._update}.get(message.topic)
        if handler is None:
            msg = f'the backend does not accept {message.topic!r} requests'
            raise ProtocolError(msg)
        return handler(message)

    def _initial_settings(self, message: protocol.Message) -> Frames:
        cars = _list(message.header, 'cars')
        seed = int(message.header.get('seed', 0))
        sensors = {}
        for car_index, car in enumerate(cars):
            for sensor_index, spec in enumerate(_list(car, 'sensors')):
                if spec.get('type') != 'lidar2d':
                    msg = f'sensor type {spec.get("type")!r} is not supported by {NAME}'
                    raise ProtocolError(msg)
                sensor = Lidar2D.from_wire(str(car['id']), spec, seed + 1000 * car_index
                                           + sensor_index)
                sensors[(sensor.car, sensor.name)] = sensor
        self._load_track(message)
        self.sensors = sensors
        LOG.info('ready: track %r, %d car(s), %d sensor(s)', self.track_name, len(cars),
                 len(sensors))
        return self._ready(message)

    def _track(self, message: protocol.Message) -> Frames:
        self._load_track(message)
        return self._ready(message)

    def _ready(self, message: protocol.Message) -> Frames:
        listing = [{'car': car, 'sensor': name, 'type': 'lidar2d'} for car, name in self.sensors]
        return protocol.encode(protocol.READY, message.step, message.time_ns,
                               {'backend': NAME, 'track': self.track_name, 'sensors': listing})

    def _load_track(self, message: protocol.Message) -> None:
        vertices = message.arrays.get('track_vertices')
        triangles = message.arrays.get('track_triangles')
        if vertices is None or triangles is None:
            msg = f'{message.topic} needs the frames track_vertices and track_triangles'
            raise ProtocolError(msg)
        if vertices.ndim != 2 or vertices.shape[1] != 3 or triangles.ndim != 2 \
                or triangles.shape[1] != 3:
            msg = 'track_vertices and track_triangles must both have shape (n, 3)'
            raise ProtocolError(msg)
        if triangles.size and int(triangles.max()) >= len(vertices):
            msg = 'track_triangles index a vertex that does not exist'
            raise ProtocolError(msg)
        self.raycaster = make_raycaster(vertices, triangles.astype(np.int64))
        self.track_name = str(message.header.get('track', {}).get('name', ''))

    def _update(self, message: protocol.Message) -> Frames:
        if self.raycaster is None:
            msg = 'Update before InitialSettings'
            raise ProtocolError(msg)
        poses = {str(car['id']): _pose(car) for car in _list(message.header, 'cars')}
        arrays: dict[str, np.ndarray] = {}
        meta: dict[str, dict[str, Any]] = {}
        for request in _list(message.header, 'render'):
            key = (str(request.get('car')), str(request.get('sensor')))
            sensor = self.sensors.get(key)
            if sensor is None or key[0] not in poses:
                msg = f'render request for unknown car/sensor {key}'
                raise ProtocolError(msg)
            name = f'{key[0]}/{key[1]}'
            arrays[name] = sensor.render(self.raycaster, poses[key[0]])
            meta[name] = {'car': key[0], 'sensor': key[1], 'type': 'lidar2d',
                          'encoding': 'ranges', 'stamp_ns': message.time_ns}
        return protocol.encode(protocol.UPDATE, message.step, message.time_ns, {}, arrays, meta)


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
    except (ProtocolError, KeyError, TypeError, ValueError) as exc:
        LOG.error('refused %s of step %d: %s', message.topic, message.step, exc)
        return protocol.encode(protocol.ERROR, message.step, message.time_ns, {'error': str(exc)})


def serve(address: str) -> None:
    """Answer requests until SIGINT/SIGTERM; a bad request gets an Error reply, never a crash."""
    context = zmq.Context.instance()
    socket = context.socket(zmq.REP)
    socket.setsockopt(zmq.LINGER, 0)
    socket.bind(address)
    backend = EmbeddedBackend()
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
    parser.add_argument('--address', default='tcp://127.0.0.1:5555',
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
