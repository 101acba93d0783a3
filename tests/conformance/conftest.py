"""The backends the conformance suite holds to docs/protocol.md, and the world it asks them to
sense.

Backends: the embedded backend (``python -m arsim_core.backend.server``) and the C# console
host (``mono unity/host/bin/arsim-unity-host.exe``), each a process of its own started with
``--address tcp://127.0.0.1:<free port>`` and stopped when its module ends, passed or failed.
A test takes ``backend`` (run once per backend, ids ``embedded`` and ``csharp-host``),
``fresh_backend`` (a process of its own, for requests that must come first) or ``backends``
(both at once). The host's parameters carry the mark ``csharp_host``, and ``-k embedded`` (or
``-m 'not csharp_host'``) runs the suite without Mono. Where the host is asked for, a missing
``mono`` or a failed ``bash unity/build.sh host`` fails the test with the reason: it is never
skipped.

Requests are built from arsim_core's typed bodies (``arsim_core.protocol.messages``) and sent
through the bridge's own client (``protocol.client.BackendClient``), which also checks that a
reply echoes the request's step and time; malformed requests go as raw frames over a second
REQ socket.

The world: a square room of walls with an opening, on a floor, and two cars, where
``Room.cast`` computes every LiDAR range in closed form (rays against the walls' and the
floor's planes and the cars' boxes), without any of the code under test.
"""

from __future__ import annotations

import math
import shutil
import socket
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import csharp_host
import numpy as np
import pytest
from rawbackend import RawBackend

from arsim_core import labels
from arsim_core.errors import BackendUnavailableError
from arsim_core.geometry import Footprint
from arsim_core.protocol import framing, messages
from arsim_core.protocol.client import BackendClient

EMBEDDED, CSHARP_HOST = 'embedded', 'csharp-host'
BACKEND_PARAMS = [pytest.param(EMBEDDED, id=EMBEDDED),
                  pytest.param(CSHARP_HOST, id=CSHARP_HOST, marks=pytest.mark.csharp_host)]
START_TIMEOUT_S = 30.0  # until a started backend accepts connections
REPLY_TIMEOUT_S = 20.0  # for any one reply; set-up with a camera is the slowest
FRAME_NS = 25_000_000  # the step: 40 Hz
MOUNTED_AT = 0.2  # the height of the 2D LiDAR above base_link [m]


# --- the world ---------------------------------------------------------------------------------
Box = tuple[float, float, float, float, float, float, float]  # x, y, z, yaw, length, width, height


@dataclass(frozen=True)
class Room:
    """Walls at x = +-half and y = +-half from the floor up to ``height``, except an opening
    (a door without a lintel) in the x = -half wall where |y| < ``door``, and the floor
    (class ground) over the room's square. Walls are barrier (1)."""

    name: str
    half: float
    height: float
    door: float

    def walls(self) -> list[tuple[str, float, float, float]]:
        """(axis, coordinate, low, high): the plane ``axis`` = coordinate, spanning [low, high]
        along the other horizontal axis."""
        h, d = self.half, self.door
        return [('y', -h, -h, h), ('x', h, -h, h), ('y', h, -h, h),
                ('x', -h, d, h), ('x', -h, -h, -d)]

    def track(self) -> messages.TrackRequest:
        """Two triangles a quad, each facing into the room."""
        h, top = self.half, self.height
        quads = [((-h, -h, 0.0), (h, -h, 0.0), (h, h, 0.0), (-h, h, 0.0), labels.GROUND)]
        for axis, at, low, high in self.walls():
            a, b = ((at, low), (at, high)) if axis == 'x' else ((low, at), (high, at))
            inward = -at if axis == 'x' else at  # which way round faces into the room
            if inward < 0:
                a, b = b, a
            quads.append(((*a, 0.0), (*b, 0.0), (*b, top), (*a, top), labels.BARRIER))
        vertices, triangles, classes = [], [], []
        for *corners, label in quads:
            k = len(vertices)
            vertices += corners
            triangles += [(k, k + 1, k + 2), (k, k + 2, k + 3)]
            classes += [label, label]
        return messages.TrackRequest(self.name, np.array(vertices, np.float32),
                                     np.array(triangles, np.uint32),
                                     np.array(classes, np.uint8))

    def cast(self, origin: Sequence[float], directions: np.ndarray,
             boxes: Sequence[Box] = ()) -> tuple[np.ndarray, np.ndarray]:
        """Distance along each unit direction (n, 3) from ``origin`` to the first wall, floor
        or box, and its class (5 for a box); +inf and 255 where the ray leaves the room."""
        origin = np.asarray(origin, np.float64)
        directions = np.asarray(directions, np.float64).reshape(-1, 3)
        best = np.full(len(directions), np.inf)
        label = np.full(len(directions), labels.NONE, np.uint8)

        def offer(distance: np.ndarray, hit: np.ndarray, cls: int) -> None:
            nearer = hit & (distance > 0) & (distance < best)
            best[nearer] = distance[nearer]
            label[nearer] = cls

        with np.errstate(divide='ignore', invalid='ignore'):
            for axis, at, low, high in self.walls():
                i, j = (0, 1) if axis == 'x' else (1, 0)
                t = (at - origin[i]) / directions[:, i]
                along = origin[j] + t * directions[:, j]
                z = origin[2] + t * directions[:, 2]
                offer(t, (along >= low) & (along <= high) & (z >= 0) & (z <= self.height),
                      labels.BARRIER)
            t = -origin[2] / directions[:, 2]
            x, y = origin[0] + t * directions[:, 0], origin[1] + t * directions[:, 1]
            offer(t, (np.abs(x) <= self.half) & (np.abs(y) <= self.half), labels.GROUND)
            for x, y, z, yaw, length, width, height in boxes:
                # In the box's frame, where it spans [-l/2, l/2] x [-w/2, w/2] x [0, h].
                turn = np.array([[math.cos(yaw), math.sin(yaw), 0.0],
                                 [-math.sin(yaw), math.cos(yaw), 0.0], [0.0, 0.0, 1.0]])
                start, heading = turn @ (origin - (x, y, z)), directions @ turn.T
                low_corner = np.array([-length / 2, -width / 2, 0.0])
                high_corner = np.array([length / 2, width / 2, height])
                t1, t2 = (low_corner - start) / heading, (high_corner - start) / heading
                near = np.nanmax(np.minimum(t1, t2), axis=1)
                far = np.nanmin(np.maximum(t1, t2), axis=1)
                offer(near, near <= far, labels.CAR)
        return best, label


ROOM = Room('room', half=5.0, height=1.0, door=1.5)
BIG_ROOM = Room('big room', half=10.0, height=2.0, door=3.0)

# The cars: ego faces +y (so its sensors' frames are turned against the world's), and the
# opponent stands ahead of it, facing +y too. Both are 0.5 x 0.3 x 1.0 m boxes.
FOOTPRINT = Footprint(0.5, 0.3, 1.0)
EGO_POSE = (0.5, -1.0, 0.0, 0.0, 0.0, math.pi / 2)
OPPONENT_POSE = (0.5, 2.0, 0.0, 0.0, 0.0, math.pi / 2)
POSES = {'ego': EGO_POSE, 'opp': OPPONENT_POSE}
# The same two cars turned 0.15 rad clockwise, the opponent still 3 m ahead of the ego car: no
# direction of any beam is then an axis of the world.
TURN = math.pi / 2 - 0.15
TURNED_POSES = {'ego': (0.5, -1.0, 0.0, 0.0, 0.0, TURN),
                'opp': (0.5 + 3 * math.cos(TURN), -1.0 + 3 * math.sin(TURN), 0.0, 0.0, 0.0, TURN)}


def box_of(pose: Sequence[float], footprint: Footprint = FOOTPRINT) -> Box:
    """A car's box in the world (``Room.cast``'s boxes), for an upright car."""
    x, y, z, roll, pitch, yaw = pose
    assert roll == 0 and pitch == 0
    return (x, y, z, yaw, footprint.length, footprint.width, footprint.height)


def sensor_origin(pose: Sequence[float], mount: Sequence[float]) -> tuple[float, float, float]:
    """Where a sensor mounted at ``mount`` sits in the world, the car upright."""
    x, y, z, roll, pitch, yaw = pose
    assert roll == 0 and pitch == 0 and mount[3] == 0 and mount[4] == 0
    c, s = math.cos(yaw), math.sin(yaw)
    return (x + c * mount[0] - s * mount[1], y + s * mount[0] + c * mount[1], z + mount[2])


def rays(pose: Sequence[float], mount: Sequence[float], azimuths: np.ndarray,
         elevations: np.ndarray | float = 0.0) -> np.ndarray:
    """Unit world directions of beams at ``azimuths`` (and ``elevations``) in a sensor frame
    mounted upright on an upright car."""
    heading = np.asarray(azimuths) + pose[5] + mount[5]
    up = np.broadcast_to(np.asarray(elevations, np.float64), heading.shape)
    return np.stack([np.cos(up) * np.cos(heading), np.cos(up) * np.sin(heading), np.sin(up)],
                    axis=-1)


# --- the sensors -------------------------------------------------------------------------------
def scan(name: str = 'scan', range_min: float = 0.1) -> dict[str, Any]:
    """A 2D LiDAR 0.2 m ahead of base_link and MOUNTED_AT up, eight beams 45 degrees apart
    from straight behind (-pi), counter-clockwise."""
    return {'name': name, 'type': 'lidar2d', 'rate_hz': 40.0,
            'mount': [0.2, 0.0, MOUNTED_AT, 0.0, 0.0, 0.0], 'beams': 8,
            'angle_min': -math.pi, 'angle_increment': math.pi / 4, 'range_min': range_min,
            'range_max': 30.0, 'noise_std': 0.0, 'dropout': 0.0}


def scan_angles(spec: Mapping[str, Any]) -> np.ndarray:
    return spec['angle_min'] + np.arange(spec['beams']) * spec['angle_increment']


def cloud(name: str = 'cloud', with_labels: bool = True, channels: int = 3, columns: int = 8,
          elevations: Sequence[float] = (0.1, 0.0, -0.2)) -> dict[str, Any]:
    """A spinning LiDAR on base_link, 0.3 m up, turning clockwise (a negative increment) at
    20 Hz: one revolution every two steps."""
    return {'name': name, 'type': 'lidar3d', 'rate_hz': 20.0,
            'mount': [0.0, 0.0, 0.3, 0.0, 0.0, 0.0], 'channels': channels, 'columns': columns,
            'azimuth_start': 0.0, 'azimuth_increment': -2 * math.pi / columns,
            'elevations': list(elevations)[:channels], 'range_min': 0.3, 'range_max': 100.0,
            'noise_std': 0.0, 'dropout': 0.0, 'labels': with_labels}


def cloud_beams(spec: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Azimuth and elevation of every point, each (channels, columns)."""
    columns = spec['azimuth_start'] + np.arange(spec['columns']) * spec['azimuth_increment']
    return np.meshgrid(columns, np.asarray(spec['elevations']))


CLOUD_PERIOD_NS = 50_000_000  # 20 Hz


def camera(name: str = 'cam', outputs: Sequence[str] = ('rgb', 'depth', 'semantic')
           ) -> dict[str, Any]:
    """On base_link, 0.5 m up, looking to the car's right (the world's +x); odd sizes put a
    pixel on the optical axis."""
    return {'name': name, 'type': 'camera', 'rate_hz': 40.0,
            'mount': [0.0, 0.0, 0.5, 0.0, 0.0, -math.pi / 2], 'width': 33, 'height': 21,
            'fov': 1.2, 'near': 0.1, 'far': 50.0, 'outputs': list(outputs), 'noise_std': 0.0,
            'depth_noise_std': 0.0}


IMU = {'name': 'imu', 'type': 'imu', 'rate_hz': 100.0, 'mount': [0.0, 0.0, 0.1, 0.0, 0.0, 0.0]}


def settings(sensors: Sequence[Mapping[str, Any]], track: messages.TrackRequest | None = None,
             cars_visible: bool = True) -> messages.InitialSettings:
    """The ego car with ``sensors`` and the sensor-less opponent in the room (or ``track``)."""
    return messages.InitialSettings(
        track=track or ROOM.track(), world_frame='map', frame_period_ns=FRAME_NS, seed=11,
        cars_visible=cars_visible,
        cars=(messages.CarSettings('ego', FOOTPRINT, tuple(sensors)),
              messages.CarSettings('opp', FOOTPRINT, ())))


def update(render: Sequence[str], poses: Mapping[str, Sequence[float]] | None = None
           ) -> messages.UpdateRequest:
    """Every car at its pose (default POSES), the ego car's ``render`` sensors due."""
    chosen = POSES if poses is None else poses
    return messages.UpdateRequest({car: tuple(pose) for car, pose in chosen.items()},
                                  [('ego', name) for name in render])


def raw(body: messages.Body, step: int = 0, time_ns: int = 0) -> list[bytes]:
    """A valid message as plain bytes, for a test to break."""
    return [bytes(frame) for frame in messages.encode(body, step, time_ns)]


# --- the backends ------------------------------------------------------------------------------
class Backend:
    """One test's link to a running backend process: the bridge's client for well-formed
    requests, the process's raw REQ socket for any bytes at all."""

    def __init__(self, kind: str, process: RawBackend) -> None:
        self.kind = kind
        self.process = process
        process.reconnect()  # whatever an earlier test left unanswered
        self.client = BackendClient(process.address, REPLY_TIMEOUT_S)

    def request(self, body: messages.Body, step: int = 0, time_ns: int = 0) -> framing.Message:
        """The reply to ``body``; an Error reply, a reply that does not echo step and time, or
        none in time fail the test."""
        try:
            return self.client.request_body(body, step, time_ns)
        except BackendUnavailableError as exc:
            silence = str(exc)
        pytest.fail(f'{silence}\n{self.describe()}', pytrace=False)

    def configure(self, sensors: Sequence[Mapping[str, Any]], **keys: Any) -> messages.Ready:
        reply = self.request(settings(sensors, **keys))
        assert reply.topic == framing.READY, reply.header
        return messages.Ready.from_wire(reply)

    def update(self, step: int, render: Sequence[str],
               poses: Mapping[str, Sequence[float]] | None = None,
               time_ns: int | None = None) -> messages.UpdateReply:
        """Step ``step`` at ``time_ns`` (default ``step * FRAME_NS``); its frames."""
        reply = self.request(update(render, poses), step,
                             step * FRAME_NS if time_ns is None else time_ns)
        assert reply.topic == framing.UPDATE, reply.header
        return messages.UpdateReply.from_wire(reply)

    def refused(self, frames: Sequence[bytes]) -> framing.Message:
        """The Error reply to ``frames``, after which the process must still run."""
        answer = self.process.exchange(frames)
        assert answer is not None, f'no reply to a malformed request\n{self.describe()}'
        reply = framing.decode(answer)
        assert reply.topic == framing.ERROR, f'expected Error, got {reply.topic}: {reply.header}'
        assert isinstance(reply.header.get('error'), str) and reply.header['error']
        assert self.process.alive, f'the backend stopped\n{self.describe()}'
        return reply

    def describe(self) -> str:
        state = 'running' if self.process.alive else f'exited ({self.process.process.poll()})'
        return f'{self.kind} backend at {self.process.address}, {state}; its log:\n' \
               f'{tail(self.process.log)}'

    def close(self) -> None:
        self.client.close()


def tail(text: str, lines: int = 40) -> str:
    return '\n'.join(text.splitlines()[-lines:])


def host_command() -> tuple[str, ...]:
    """``mono <the built host>``; fails the test (never skips it) without mono or a build."""
    mono = shutil.which('mono')
    if mono is None:
        pytest.fail('the C# console host runs on mono, which is not installed; install it with '
                    'tools/setup.sh --mono (or: sudo apt-get install mono-runtime mono-mcs)',
                    pytrace=False)
    try:
        host = csharp_host.built_host()
    except RuntimeError as exc:
        failure = str(exc)  # failed outside the handler, so the report is the reason alone
    else:
        failure = '' if host.is_file() else f'bash unity/build.sh host left no {host}'
    if failure:
        pytest.fail(failure, pytrace=False)
    return (mono, str(host))


def start(kind: str, log_dir: Path) -> RawBackend:
    """A backend process of ``kind`` on a free loopback port, once it accepts connections."""
    command = host_command() if kind == CSHARP_HOST else None
    log_dir.mkdir(parents=True, exist_ok=True)
    process = RawBackend(log_dir / f'{kind}.log', timeout_s=REPLY_TIMEOUT_S, command=command)
    try:
        port = int(process.address.rsplit(':', 1)[1])
        deadline = time.monotonic() + START_TIMEOUT_S
        while not accepts(port):
            if not process.alive or time.monotonic() > deadline:
                state = (f'exited with code {process.process.poll()}' if not process.alive
                         else f'did not accept connections within {START_TIMEOUT_S:g} s')
                pytest.fail(f'the {kind} backend ({" ".join(process.process.args)}) {state}; '
                            f'its log:\n{tail(process.log)}', pytrace=False)
            time.sleep(0.05)
    except BaseException:
        process.close()
        raise
    return process


def accepts(port: int) -> bool:
    try:
        with socket.create_connection(('127.0.0.1', port), timeout=0.5):
            return True
    except OSError:
        return False


@pytest.fixture(scope='module', params=BACKEND_PARAMS)
def backend_process(request: pytest.FixtureRequest,
                    tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, RawBackend]]:
    process = start(request.param, tmp_path_factory.mktemp(f'conformance-{request.param}'))
    try:
        yield request.param, process
    finally:
        process.close()


@pytest.fixture
def backend(backend_process: tuple[str, RawBackend]) -> Iterator[Backend]:
    """Each backend in turn (one process per module), through a fresh link per test."""
    link = Backend(*backend_process)
    try:
        yield link
    finally:
        link.close()


@pytest.fixture(params=BACKEND_PARAMS)
def fresh_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """Each backend in turn, a process started for this test alone."""
    process = start(request.param, tmp_path)
    link = Backend(request.param, process)
    try:
        yield link
    finally:
        link.close()
        process.close()


@pytest.fixture(scope='module')
def backend_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, RawBackend]]:
    started: dict[str, RawBackend] = {}
    try:
        for kind in (EMBEDDED, CSHARP_HOST):
            started[kind] = start(kind, tmp_path_factory.mktemp(f'conformance-pair-{kind}'))
        yield started
    finally:
        for process in started.values():
            process.close()


@pytest.fixture
def backends(backend_pair: dict[str, RawBackend]) -> Iterator[dict[str, Backend]]:
    """Both backends at once, for tests that compare them."""
    links = {kind: Backend(kind, process) for kind, process in backend_pair.items()}
    try:
        yield links
    finally:
        for link in links.values():
            link.close()
