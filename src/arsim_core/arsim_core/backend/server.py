"""The embedded headless backend: a ZeroMQ REP server speaking protocol v1 (docs/protocol.md).

It holds the track mesh and renders every sensor on the CPU. Cars are moved by the bridge, which
sends their poses each frame; this process owns no clock and no physics.
"""

from __future__ import annotations

import argparse
import logging
import sys
import threading
import traceback
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import cv2
import numpy as np
import zmq

from arsim_core import endpoints
from arsim_core.backend import lidar_weather
from arsim_core.backend.camera import Camera, Renderer, make_renderer
from arsim_core.backend.embree import EmbreePacketRaycaster
from arsim_core.backend.lidar import Lidar2D, Lidar2DBatch, Lidar3D
from arsim_core.backend.outputs import Context, Rendered, frame_name, update_frames
from arsim_core.backend.scene import World
from arsim_core.backend.target import Board
from arsim_core.backend.timeline import Poses, Timeline
from arsim_core.config.scenario import MAX_REQUEST_MIB, TCP_BACKEND_ADDRESS
from arsim_core.config.sensors import COMPUTED_KINDS, CameraSpec, Lidar2DSpec, Lidar3DSpec
from arsim_core.errors import ArsimError, ProtocolError
from arsim_core.geometry import Footprint
from arsim_core.lens import WIRE_MODELS
from arsim_core.log_limit import LogLimit, clip
from arsim_core.process import heartbeat
from arsim_core.process.entrypoints import stop_on_signals
from arsim_core.protocol import framing
from arsim_core.protocol import target as targets
from arsim_core.protocol.appearance import Appearance
from arsim_core.protocol.camera_effects import NAMES as CAMERA_EFFECTS
from arsim_core.protocol.messages import (
    CarSettings,
    Error,
    InitialSettings,
    ListedSensor,
    Ready,
    TrackRequest,
    UpdateRequest,
    encode,
)
from arsim_core.protocol.weather import NAMES as WEATHER_NAMES
from arsim_core.protocol.weather import Weather
from arsim_core.rows import NamedRows

LOG = logging.getLogger('arsim.backend')
NAME = 'arsim-embedded'

Frames = list[Any]
Sensor = Lidar2D | Lidar3D | Camera
# What renders each rendered kind of config.sensors.SENSOR_TYPES, the one registry of kinds.
RENDERERS: Mapping[str, Any] = {Lidar2DSpec.kind: Lidar2D, Lidar3DSpec.kind: Lidar3D,
                                CameraSpec.kind: Camera}
MAX_REQUEST_FRAMES = 64  # binary frames and all; InitialSettings, the largest, has 5
MAX_ERROR_CHARS = 2000
MAX_TRACEBACK_CHARS = 4000  # of one logged traceback: its message may quote a request
TRACEBACK_BURST, TRACEBACK_PERIOD_S = 3, 60.0  # tracebacks logged at once, then one a minute
UPDATE_TOPIC = framing.UPDATE.encode()


class EmbeddedBackend:
    """Protocol state machine, independent of the socket so it can be tested directly."""

    def __init__(self, threads: int = 1, scan_intensity: bool = True) -> None:
        """``threads`` > 1 spreads 2D scans over numba's threads: for in-process users only,
        as the backend process shares the cores with the simulation's others. Without
        ``scan_intensity``, 2D scans have no ``/intensity`` frames (in-process users that
        read only ranges)."""
        self.threads = threads
        self.scan_intensity = scan_intensity
        self.world: World | None = None
        self.timeline = Timeline()
        self.sensors: dict[tuple[str, str], Sensor] = {}
        self.computed: set[tuple[str, str]] = set()
        self.footprints: dict[str, Footprint] = {}
        self.cars_visible = True
        self.track_name = ''
        self.settings: InitialSettings | None = None  # the last applied
        self._plans: dict[tuple[tuple[str, str], ...], _Plan] = {}
        self.seed = 0
        self.frame_period_ns = 0
        self._renderer: Renderer | None = None
        self.board: Board | None = None  # the calibration target, if the scenario has one
        self.log = PeerLog()  # the lines a peer's requests cause

    def renderer(self) -> Renderer:
        """The camera renderer, made (and given the track) on first use."""
        if self._renderer is None:
            self._renderer = make_renderer(lambda: self.world)
            if self.settings is not None:
                self._renderer.set_appearance(self.settings.appearance)
            if self.world is not None:
                self._renderer.set_track(self.world.vertices, self.world.triangles,
                                         self.world.triangle_labels)
        return self._renderer

    def handle(self, message: framing.Message) -> Frames:
        handler = {framing.INITIAL_SETTINGS: self._initial_settings,
                   framing.TRACK: self._track,
                   framing.UPDATE: self._update}.get(message.topic)
        if handler is None:
            msg = f'the backend does not accept {message.topic!r} requests'
            raise ProtocolError(msg)
        return handler(message)

    def _initial_settings(self, message: framing.Message) -> Frames:
        self.apply(InitialSettings.from_wire(message))
        return self._ready(message)

    def apply(self, settings: InitialSettings) -> None:
        """Apply InitialSettings that ``InitialSettings.from_wire`` has checked."""
        cars, frame_period, seed = settings.cars, settings.frame_period_ns, settings.seed
        footprints = {car.name: car.footprint for car in cars if car.footprint is not None}
        sensors, computed = _make_sensors(cars, seed, frame_period)
        target = settings.calibration_target
        if target is not None and any(isinstance(s, Camera) for s in sensors.values()) \
                and self.renderer().name != 'opengl':
            msg = (f'the calibration target needs the OpenGL camera renderer, and cameras '
                   f'here are {self.renderer().name}')
            raise ProtocolError(msg)
        self.board = None if target is None else Board(target, frame_period)
        for sensor in sensors.values():
            if isinstance(sensor, Lidar2D):
                sensor.threads = self.threads
                sensor.with_intensity = self.scan_intensity
        self._load_track(settings.track)
        self.sensors, self.computed = sensors, computed
        self.settings = settings
        self.set_conditions(settings.appearance, settings.weather)
        self._plans.clear()
        self.seed = seed
        self.frame_period_ns = frame_period
        self.footprints = footprints
        self.cars_visible = settings.cars_visible
        assert self.world is not None
        self.world.set_cars(footprints, self.cars_visible)
        periods = [s.period_ns for s in sensors.values() if isinstance(s, Lidar3D)]
        self.timeline = Timeline(max(periods, default=0) + frame_period)
        if any(isinstance(s, Camera) for s in sensors.values()):
            self.log.info(f'camera renderer: {self.renderer().name}')
        self.log.info(f'ready: track {self.track_name!r}, {len(cars)} car(s), '
                      f'{len(sensors)} rendered sensor(s)')

    def set_conditions(self, appearance: Appearance, weather: Weather) -> None:
        """The light and weather of the frames from now on: InitialSettings', or a domain
        randomisation's draw for an episode."""
        if self.settings is not None:
            self.settings = replace(self.settings, appearance=appearance, weather=weather)
        if self._renderer is not None:
            self._renderer.set_appearance(appearance)
        if self.world is not None:
            self.world.weather, self.world.appearance = weather, appearance
        for sensor in self.sensors.values():
            if isinstance(sensor, (Lidar2D, Lidar3D)):
                lidar_weather.configure(sensor.model, weather)

    def reseed(self, seed: int, cars: Collection[str] | None = None,
               car_index: int | None = None) -> None:
        """Start the noise of every sensor (of ``cars``, default all) afresh from ``seed``, as
        InitialSettings would, without reloading the track or changing any sensor's settings
        (a randomised noise level stays): a reproducible episode start for in-process users.
        ``car_index``: draw as the car of that index in the run instead of its own (a race
        packed with others into one run is seeded as the race alone would be)."""
        if cars is None:
            self.seed = seed
            self.timeline.clear()
        for index, car in enumerate(self.settings.cars if self.settings else ()):
            if cars is not None and car.name not in cars:
                continue
            drawn_as = index if car_index is None else car_index
            for sensor_index, spec in enumerate(car.sensors):
                sensor = self.sensors.get((car.name, spec['name']))
                if sensor is not None:
                    sensor.reseed(_sensor_seed(seed, drawn_as, sensor_index))

    def _track(self, message: framing.Message) -> Frames:
        self.switch_track(TrackRequest.from_wire(message))
        return self._ready(message)

    def switch_track(self, track: TrackRequest) -> None:
        """``track`` in place of the one loaded; cars, sensors and their noise go on."""
        self._load_track(track)
        assert self.world is not None
        self.world.set_cars(self.footprints, self.cars_visible)

    def _ready(self, message: framing.Message) -> Frames:
        listing = tuple(ListedSensor(car, name, sensor.kind)
                        for (car, name), sensor in self.sensors.items())
        return encode(Ready(NAME, self.track_name, listing, WIRE_MODELS, self.targets(),
                            WEATHER_NAMES, CAMERA_EFFECTS), message.step, message.time_ns)

    def targets(self) -> tuple[str, ...]:
        """The calibration targets the cameras can show: all with OpenGL, none when they are
        ray cast (the renderer is made once there is a camera)."""
        ray_cast = self._renderer is not None and self._renderer.name != 'opengl'
        return () if ray_cast else targets.KINDS

    def _load_track(self, track: TrackRequest) -> None:
        self.world = World(track.vertices, track.triangles, track.labels)
        self.world.board = self.board
        if self.settings is not None:
            self.world.weather = self.settings.weather
            self.world.appearance = self.settings.appearance
        if self._renderer is not None:
            self._renderer.set_track(self.world.vertices, self.world.triangles,
                                     self.world.triangle_labels)
        self.track_name = track.name

    def _update(self, message: framing.Message) -> Frames:
        request = UpdateRequest.from_wire(message)
        return encode(update_frames(self.render(message.time_ns, request.poses, request.render)),
                      message.step, message.time_ns)

    def render(self, time_ns: int, poses: Poses,
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

    def render_frames(self, time_ns: int, poses: Poses,
                      requests: Sequence[tuple[str, str]]) -> Mapping[str, np.ndarray]:
        """``render``'s frames by name (``frames.frame_name``), for callers in this process:
        a batch of scans goes straight from its arrays to the names, with no record per
        sensor (and is the whole answer, as ``NamedRows``, when it holds only ranges)."""
        plan, ctx = self._prepare(time_ns, poses, requests)
        batch = plan.batch
        frames: dict[str, np.ndarray] = {}
        if batch is not None:
            ranges, intensity = batch.scan(ctx, self.threads)
            if intensity is None and not plan.unbatched:
                return NamedRows(batch.frame_names[0], ranges, batch.range_index)
            frames.update(zip(batch.frame_names[0], ranges, strict=True))
            if intensity is not None:
                frames.update(zip(batch.frame_names[1], intensity, strict=True))
        for sensor in plan.unbatched:
            frames.update((frame_name(sensor, output), output.array)
                          for output in sensor.render(ctx).outputs)
        return frames

    def _prepare(self, time_ns: int, poses: Poses,
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


def _make_sensors(cars: Sequence[CarSettings], seed: int, frame_period_ns: int
                  ) -> tuple[dict[tuple[str, str], Sensor], set[tuple[str, str]]]:
    """The rendered sensors of every car, each with its own noise seed, and the (car, sensor)
    keys of the computed ones a backend skips."""
    sensors: dict[tuple[str, str], Sensor] = {}
    computed: set[tuple[str, str]] = set()
    for car_index, car in enumerate(cars):
        car_id = car.name
        for sensor_index, spec in enumerate(car.sensors):
            kind = spec['type']
            if kind in COMPUTED_KINDS:  # a backend lists, renders and asks for none
                computed.add((car_id, spec['name']))
                continue
            if kind not in RENDERERS:
                msg = (f'sensor type {kind!r} is not supported by {NAME}; it renders '
                       f'{sorted(RENDERERS)}')
                raise ProtocolError(msg)
            sensor = RENDERERS[kind].from_wire(
                car_id, spec, _sensor_seed(seed, car_index, sensor_index), frame_period_ns)
            sensors[(sensor.car, sensor.name)] = sensor
    return sensors, computed


def _sensor_seed(seed: int, car_index: int, sensor_index: int) -> int:
    """Each sensor's own noise seed, so two sensors never share a noise sequence."""
    return seed + 1000 * car_index + sensor_index


class PeerLog:
    """The backend's log lines that a peer's requests cause, through LogLimits: a peer that
    sends malformed requests as fast as it can must not fill the log (nor the disk under it).
    A traceback, many lines long, has a stricter limit of its own."""

    def __init__(self) -> None:
        self.lines = LogLimit()
        self.tracebacks = LogLimit(TRACEBACK_BURST, TRACEBACK_PERIOD_S, MAX_TRACEBACK_CHARS)

    def info(self, text: str) -> None:
        line = self.lines.admit(text)
        if line is not None:
            LOG.info('%s', line)

    def error(self, text: str) -> None:
        line = self.lines.admit(text)
        if line is not None:
            LOG.error('%s', line)

    def failure(self, text: str, exc: BaseException) -> None:
        """``text`` with the traceback of ``exc`` while tracebacks are within their rate, then
        ``text`` alone, as any other line."""
        trace = ''.join(traceback.format_exception(exc)).rstrip()
        line = self.tracebacks.admit(f'{text}\n{trace}')
        if line is not None:
            LOG.error('%s', line)
        else:
            self.error(text)


def _answer(backend: EmbeddedBackend, frames: list[Any]) -> Frames:
    """The reply to one request: its handler's, or Error for a request that breaks the
    protocol, and, as a last resort, Error for any other failure, logged with its traceback:
    no request can stop the backend."""
    topic, step, time_ns = 'a request', 0, 0
    try:
        message = framing.decode(frames)
        topic, step, time_ns = message.topic, message.step, message.time_ns
        return backend.handle(message)
    except ProtocolError as exc:
        backend.log.error(f'refused {topic} of step {step}: {exc}')
        return error_reply(step, time_ns, str(exc))
    except Exception as exc:  # noqa: BLE001 - the last resort: answer, log, serve on
        backend.log.failure(f'failed to serve {topic} of step {step}', exc)
        return error_reply(step, time_ns, f'the backend failed to serve {topic} of step '
                                          f'{step}: {type(exc).__name__}: {exc}')


def error_reply(step: int, time_ns: int, text: str) -> Frames:
    """An Error message; the text cut to MAX_ERROR_CHARS, as it may quote what a peer sent."""
    return encode(Error(clip(text, MAX_ERROR_CHARS)), step, time_ns)


def receive(socket: zmq.Socket[bytes], max_bytes: int) -> tuple[Frames, str | None]:
    """One request's frames, part by part, or, past ``max_bytes`` or MAX_REQUEST_FRAMES parts,
    no frames and the reason: the rest is read and dropped without being kept."""
    frames: Frames = []
    size, count, refusal = 0, 0, None
    while True:
        frame = socket.recv(copy=False)
        size, count = size + len(frame), count + 1
        if refusal is None:
            if size > max_bytes:
                refusal = (f'request larger than {max_bytes} bytes (the backend\'s '
                           f'max_request_mib); refused unread')
            elif count > MAX_REQUEST_FRAMES:
                refusal = f'request of more than {MAX_REQUEST_FRAMES} frames; refused unread'
            else:
                frames.append(frame)
        if not socket.rcvmore:
            break
    if refusal is not None:
        frames.clear()
        refusal += f' ({count} frames, {size} bytes)'
    return frames, refusal


def serve(address: str, max_request_mib: int = MAX_REQUEST_MIB, allow_remote: bool = False,
          backend: EmbeddedBackend | None = None, stop: threading.Event | None = None) -> None:
    """Answer requests until ``stop`` is set (or Ctrl-C); every request gets a reply, a bad
    one Error.

    A request larger than ``max_request_mib`` MiB is refused with Error without being decoded;
    ZeroMQ drops a peer that sends a single frame that large before it reaches this process
    (ZMQ_MAXMSGSIZE), so such a peer gets no reply at all."""
    max_bytes = max_request_mib << 20
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
    socket = context.socket(zmq.REP)
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.MAXMSGSIZE, max_bytes)
    try:
        endpoints.bind(socket, address, '--address', allow_remote=allow_remote)
    except ArsimError:
        socket.close()
        raise
    backend = backend or EmbeddedBackend()
    # The simulation's other processes share these cores: OpenCV's worker threads would spin
    # on them for jobs that take a twentieth of a millisecond (a camera's RGBA -> RGB).
    cv2.setNumThreads(0)
    stop = stop or threading.Event()
    LOG.info('%s listening on %s (protocol %d, requests up to %d MiB)', NAME, address,
             framing.PROTOCOL_VERSION, max_request_mib)
    poller = zmq.Poller()
    poller.register(socket, zmq.POLLIN)
    heartbeat.start()
    try:
        while not stop.is_set():
            heartbeat.beat()
            if not poller.poll(200):
                continue
            frames, refusal = receive(socket, max_bytes)
            if refusal is not None:
                backend.log.error(f'refused a request: {refusal}')
                reply = error_reply(0, 0, refusal)
            elif frames and frames[0].bytes == UPDATE_TOPIC:  # every frame: short
                reply = _answer(backend, frames)
            else:  # a scene to set up: seconds of compiling, with the loop held up
                with heartbeat.beating():
                    reply = _answer(backend, frames)
            socket.send_multipart(reply, copy=False)
    except KeyboardInterrupt:
        pass
    finally:
        socket.close()
    LOG.info('%s stopped', NAME)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description='arsim embedded headless backend')
    parser.add_argument('--address', default=TCP_BACKEND_ADDRESS,
                        help='ZeroMQ endpoint to bind: tcp://<loopback IP>:<port> or '
                             'ipc://<path> (default %(default)s)')
    parser.add_argument('--allow-remote', action='store_true',
                        help='allow --address on an interface other than loopback: anyone who '
                             'reaches it can drive this backend')
    parser.add_argument('--max-request-mib', type=int, default=MAX_REQUEST_MIB,
                        help='refuse requests larger than this many MiB (default %(default)s)')
    args, _ros_args = parser.parse_known_args(argv)
    if args.max_request_mib < 1:
        parser.error(f'--max-request-mib must be at least 1, got {args.max_request_mib}')
    logging.basicConfig(level=logging.INFO, format='[backend] %(levelname)s: %(message)s')
    stop = stop_on_signals()
    try:
        serve(args.address, args.max_request_mib, args.allow_remote, stop=stop)
    except ArsimError as exc:
        LOG.error('%s', exc)
        return 1
    except KeyboardInterrupt:
        pass  # stopped before serving began: nothing to undo
    return 0


if __name__ == '__main__':
    sys.exit(main())
