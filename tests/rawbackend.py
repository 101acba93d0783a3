"""The embedded backend as its own process, spoken to over a raw REQ socket.

``BackendClient`` only sends what ``framing.encode`` makes; these tests send any bytes at all,
so they talk to the socket directly and check after each message that the process answered and
is still running.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import zmq
from simharness import die_with_parent, free_port

from arsim_core.protocol import framing


def box_room(half: float = 5.0, height: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Four walls of a square room centred on the origin, two triangles per wall."""
    corners = [(-half, -half), (half, -half), (half, half), (-half, half)]
    vertices, triangles = [], []
    for i, (a, b) in enumerate(zip(corners, corners[1:] + corners[:1], strict=True)):
        vertices += [(*a, 0.0), (*b, 0.0), (*b, height), (*a, height)]
        k = 4 * i
        triangles += [(k, k + 1, k + 2), (k, k + 2, k + 3)]
    return np.array(vertices, np.float32), np.array(triangles, np.uint32)


LIDAR = {'name': 'scan', 'type': 'lidar2d', 'rate_hz': 40.0, 'mount': [0.5, 0, 0.2, 0, 0, 0],
         'beams': 90, 'angle_min': -math.pi, 'angle_increment': 2 * math.pi / 90,
         'range_min': 0.1, 'range_max': 30.0, 'noise_std': 0.01}
SETTINGS = {'world_frame': 'map', 'frame_period_ns': 25_000_000, 'track': {'name': 'box'},
            'cars': [{'id': 'ego', 'sensors': [LIDAR], 'footprint': [0.5, 0.3, 0.2]},
                     {'id': 'opp', 'sensors': [], 'footprint': [0.5, 0.3, 0.2]}],
            'seed': 7}
UPDATE = {'cars': [{'id': 'ego', 'pose': [1.0, -2.0, 0, 0, 0, 0.3]},
                   {'id': 'opp', 'pose': [2.0, -2.0, 0, 0, 0, 0.0]}],
          'render': [{'car': 'ego', 'sensor': 'scan'}]}


def frames_of(topic: str, header: dict[str, Any], arrays: dict[str, np.ndarray] | None = None,
              step: int = 0, time_ns: int = 0) -> list[bytes]:
    """A valid message as plain bytes, ready to be changed by a test."""
    return [bytes(f) for f in framing.encode(topic, step, time_ns, header, arrays)]


def track_arrays() -> dict[str, np.ndarray]:
    vertices, triangles = box_room()
    return {'track_vertices': vertices, 'track_triangles': triangles,
            'track_labels': np.ones(len(triangles), np.uint8)}


def raw_header(topic: str, text: str | bytes, *frames: bytes) -> list[bytes]:
    """A message with a header given as text, for headers json.dumps would never write."""
    return [topic.encode(), text.encode() if isinstance(text, str) else text, *frames]


def header_text(**keys: Any) -> str:
    return json.dumps({'protocol': framing.PROTOCOL_VERSION, 'step': 0, 'time_ns': 0,
                       'frames': [], **keys})


class RawBackend:
    """A backend process and a REQ socket to it; every request waits at most ``timeout_s``."""

    def __init__(self, log_path: Path, *arguments: str, timeout_s: float = 30.0,
                 program: Sequence[str] = ('-m', 'arsim_core.backend.server'),
                 command: Sequence[str] | None = None) -> None:
        """``program``: the Python arguments that start the backend (a test's own script);
        ``command``: a whole command line instead, for a backend that is no Python module."""
        self.address = f'tcp://127.0.0.1:{free_port()}'
        self.timeout_ms = int(timeout_s * 1000)
        self.log_path = log_path
        self._log = log_path.open('wb')
        start = list(command) if command is not None else [sys.executable, *program]
        self.process = subprocess.Popen([*start, '--address', self.address, *arguments],
                                        stdout=self._log, stderr=subprocess.STDOUT,
                                        preexec_fn=die_with_parent)
        self.socket = self._connect()

    def _connect(self) -> zmq.Socket:
        socket = zmq.Context.instance().socket(zmq.REQ)
        socket.setsockopt(zmq.LINGER, 0)
        socket.connect(self.address)
        return socket

    def reconnect(self) -> None:
        """A fresh REQ socket, after a request that got no answer (the peer was dropped)."""
        self.socket.close()
        self.socket = self._connect()

    def exchange(self, frames: Sequence[bytes], timeout_ms: int | None = None
                 ) -> list[bytes] | None:
        """Send ``frames`` and return the reply's frames, or None if none came in time (then
        on a fresh socket, as a REQ socket cannot send again before it has a reply)."""
        self.socket.send_multipart(frames)
        if not self.socket.poll(self.timeout_ms if timeout_ms is None else timeout_ms):
            self.reconnect()
            return None
        return self.socket.recv_multipart()

    def ask(self, frames: Sequence[bytes]) -> framing.Message:
        """Send ``frames``; the reply, decoded. Fails if none came or the process is gone."""
        reply = self.exchange(frames)
        assert reply is not None, f'no reply; backend {"alive" if self.alive else "dead"}'
        return framing.decode(reply)

    def refused(self, frames: Sequence[bytes]) -> str:
        """The error text of the Error reply to ``frames``; the backend must still run."""
        reply = self.ask(frames)
        assert reply.topic == framing.ERROR, f'expected an Error reply, got {reply.topic}'
        assert self.alive
        return str(reply.header['error'])

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    @property
    def log(self) -> str:
        return self.log_path.read_text(errors='replace')

    def check_session(self, step: int = 1) -> None:
        """A whole valid session: configure, load a track, render; the backend must serve it."""
        ready = self.ask(frames_of(framing.INITIAL_SETTINGS, SETTINGS, track_arrays()))
        assert ready.topic == framing.READY, ready.header
        assert ready.header['sensors'] == [{'car': 'ego', 'sensor': 'scan', 'type': 'lidar2d'}]
        track = self.ask(frames_of(framing.TRACK, {'track': {'name': 'box2'}}, track_arrays()))
        assert track.topic == framing.READY and track.header['track'] == 'box2', track.header
        reply = self.ask(frames_of(framing.UPDATE, UPDATE, step=step,
                                   time_ns=step * 25_000_000))
        assert reply.topic == framing.UPDATE, reply.header
        assert (reply.step, reply.time_ns) == (step, step * 25_000_000)
        ranges = reply.arrays['ego/scan']
        assert ranges.shape == (90,) and np.isfinite(ranges).sum() > 80

    def close(self) -> int | None:
        """Stop the process; its exit code (None if it had to be killed)."""
        self.socket.close()
        self.process.terminate()
        try:
            code = self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            code = None
        self._log.close()
        return code
