"""The backends the conformance suite holds to docs/protocol.md: the embedded backend and the
C# console host, each a process of its own on a loopback port, spoken to over a raw REQ
socket. A test takes ``backend`` (run once per backend) or ``backends`` (both at once)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from csharp_host import built_host
from rawbackend import RawBackend

BACKENDS = ('embedded', 'csharp-host')
HALF = 5.0  # the test room: walls at x = +5, y = -5 and y = +5, open towards -x
WALL_HEIGHT = 1.0
FRAME_NS = 25_000_000


def start(kind: str, log_dir: Path) -> RawBackend:
    log_dir.mkdir(parents=True, exist_ok=True)
    if kind == 'embedded':
        return RawBackend(log_dir / f'{kind}.log')
    return RawBackend(log_dir / f'{kind}.log', command=('mono', str(built_host())))


@pytest.fixture(scope='module', params=BACKENDS)
def backend(request: pytest.FixtureRequest,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawBackend]:
    process = start(request.param, tmp_path_factory.mktemp('conformance'))
    try:
        yield process
    finally:
        process.close()


@pytest.fixture(scope='module')
def backends(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, RawBackend]]:
    started: dict[str, RawBackend] = {}
    try:
        for kind in BACKENDS:
            started[kind] = start(kind, tmp_path_factory.mktemp('conformance'))
        yield started
    finally:
        for process in started.values():
            process.close()


def room() -> dict[str, np.ndarray]:
    """Three walls, two triangles each, and a floor beyond the walls' feet (class ground):
    the beams towards -x leave the room."""
    h, top = HALF, WALL_HEIGHT
    walls = [((-h, -h), (h, -h)), ((h, -h), (h, h)), ((h, h), (-h, h))]
    vertices, triangles, labels = [], [], []
    for a, b in walls:
        k = len(vertices)
        vertices += [(*a, 0.0), (*b, 0.0), (*b, top), (*a, top)]
        triangles += [(k, k + 1, k + 2), (k, k + 2, k + 3)]
        labels += [1, 1]
    k = len(vertices)
    vertices += [(-h, -h, 0.0), (h, -h, 0.0), (h, h, 0.0), (-h, h, 0.0)]
    triangles += [(k, k + 1, k + 2), (k, k + 2, k + 3)]
    labels += [4, 4]
    return {'track_vertices': np.array(vertices, np.float32),
            'track_triangles': np.array(triangles, np.uint32),
            'track_labels': np.array(labels, np.uint8)}


def scan(name: str = 'scan', range_min: float = 0.1) -> dict:
    """Four beams from (0.5, 0, 0.2) on the car: -y, +x, +y, -x."""
    return {'name': name, 'type': 'lidar2d', 'rate_hz': 40.0, 'mount': [0.5, 0, 0.2, 0, 0, 0],
            'beams': 4, 'angle_min': -math.pi / 2, 'angle_increment': math.pi / 2,
            'range_min': range_min, 'range_max': 30.0, 'noise_std': 0.0}


def cloud(channels: int = 2, columns: int = 4, elevations: list[float] | None = None) -> dict:
    """A spinning LiDAR at 20 Hz (a revolution every 2 frames) on the car's centre, 0.3 m up."""
    return {'name': 'cloud', 'type': 'lidar3d', 'rate_hz': 20.0, 'mount': [0, 0, 0.3, 0, 0, 0],
            'channels': channels, 'columns': columns, 'azimuth_start': 0.0,
            'azimuth_increment': 2 * math.pi / columns,
            'elevations': elevations or [0.0, 0.1][:channels], 'range_min': 0.3,
            'range_max': 100.0, 'noise_std': 0.0, 'labels': True}


def camera() -> dict:
    """Looking along +y, at the wall 5 m away; odd sizes put a pixel on the optical axis."""
    return {'name': 'cam', 'type': 'camera', 'rate_hz': 40.0,
            'mount': [0, 0, 0.5, 0, 0, math.pi / 2], 'width': 33, 'height': 21, 'fov': 1.2,
            'near': 0.1, 'far': 50.0, 'outputs': ['rgb', 'depth', 'semantic']}


def settings(sensors: list[dict]) -> dict:
    """The ego car with ``sensors`` and an opponent without any, both 1 m tall boxes."""
    return {'world_frame': 'map', 'frame_period_ns': FRAME_NS, 'track': {'name': 'room'},
            'seed': 11,
            'cars': [{'id': 'ego', 'footprint': [0.5, 0.3, 1.0], 'sensors': sensors},
                     {'id': 'opp', 'footprint': [0.5, 0.3, 1.0], 'sensors': []}]}


def update(render: list[str], opponent_x: float = 3.0, ego: list[float] | None = None) -> dict:
    """The ego car at ``ego`` (default the origin), the opponent on the x axis, ``render``
    due."""
    return {'cars': [{'id': 'ego', 'pose': ego or [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]},
                     {'id': 'opp', 'pose': [opponent_x, 0.0, 0.0, 0.0, 0.0, 0.0]}],
            'render': [{'car': 'ego', 'sensor': name} for name in render]}
