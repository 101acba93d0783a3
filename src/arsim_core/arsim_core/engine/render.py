"""Renderers the engine drives: the embedded backend in this process, or any backend over the
ZeroMQ protocol (the embedded backend's process, Unity). Both answer with a protocol
``Message`` whose frames are named ``<car>/<sensor><suffix>`` (docs/protocol.md)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from arsim_core import protocol
from arsim_core.backend.outputs import update_frames
from arsim_core.backend.timeline import Poses
from arsim_core.config.scenario import Scenario
from arsim_core.engine.schedule import SensorKey
from arsim_core.engine.world import TrackWorld
from arsim_core.errors import ProtocolError

RenderPoses = Poses  # car -> x, y, z, roll, pitch, yaw


def initial_settings(scenario: Scenario, world: TrackWorld, seed: int = 0) -> dict[str, Any]:
    """The InitialSettings body for ``scenario`` on ``world``."""
    return {'world_frame': scenario.topic_map.world_frame,
            'frame_period_ns': scenario.frame_period_ns,
            'seed': seed,
            'track': {'name': world.name},
            'cars_visible': scenario.collisions.cars_visible,
            'cars': [{'id': car.name,
                      'footprint': [car.profile.footprint.length, car.profile.footprint.width,
                                    car.profile.footprint.height],
                      'sensors': [s.to_wire() for s in car.profile.sensors]}
                     for car in scenario.cars]}


class Renderer(Protocol):
    """A backend as the engine sees it: set up once, then one render in flight at a time, so
    the caller can work while a remote backend renders."""

    def start(self, settings: Mapping[str, Any], world: TrackWorld,
              timeout_s: float) -> Mapping[str, Any]:
        """Send InitialSettings; the Ready header (backend and track names, sensors)."""
        ...

    def switch_track(self, step: int, time_ns: int, world: TrackWorld) -> None: ...

    def send(self, step: int, time_ns: int, poses: RenderPoses,
             due: Sequence[SensorKey]) -> None:
        """Move the cars and ask for the ``due`` sensors of frame ``step``."""
        ...

    def receive(self) -> protocol.Message:
        """The reply to the last ``send``."""
        ...

    def close(self) -> None: ...


class ProtocolRenderer:
    """A backend in another process, over the ZeroMQ request socket at ``address``."""

    def __init__(self, address: str, timeout_s: float) -> None:
        from arsim_core.backend.client import BackendClient

        self.client = BackendClient(address, timeout_s)

    def start(self, settings: Mapping[str, Any], world: TrackWorld,
              timeout_s: float) -> Mapping[str, Any]:
        return self.client.request(protocol.INITIAL_SETTINGS, 0, 0, settings, world.arrays(),
                                   timeout_ms=int(timeout_s * 1000)).header

    def switch_track(self, step: int, time_ns: int, world: TrackWorld) -> None:
        self.client.request(protocol.TRACK, step, time_ns, {'track': {'name': world.name}},
                            world.arrays())

    def send(self, step: int, time_ns: int, poses: RenderPoses,
             due: Sequence[SensorKey]) -> None:
        cars = [{'id': car, 'pose': list(pose)} for car, pose in poses.items()]
        render = [{'car': car, 'sensor': sensor} for car, sensor in due]
        self.client.send(protocol.UPDATE, step, time_ns, {'cars': cars, 'render': render})

    def receive(self) -> protocol.Message:
        return self.client.receive()

    def close(self) -> None:
        self.client.close()


class InProcessRenderer:
    """The embedded backend's renderers called directly: no socket, no JSON, no copies."""

    def __init__(self, threads: int = 1, scan_intensity: bool = True) -> None:
        """``threads`` > 1 spreads 2D scans over numba's threads; without ``scan_intensity``
        2D scans have ranges only (see EmbeddedBackend)."""
        from arsim_core.backend.server import NAME, EmbeddedBackend

        self.backend = EmbeddedBackend(threads, scan_intensity)
        self.name = NAME
        self._reply: protocol.Message | None = None

    def start(self, settings: Mapping[str, Any], world: TrackWorld,
              timeout_s: float = 0.0) -> Mapping[str, Any]:
        self.backend.configure({**settings, 'track': {'name': world.name}}, world.arrays())
        return {'backend': self.name, 'track': world.name}

    def switch_track(self, step: int, time_ns: int, world: TrackWorld) -> None:
        backend = self.backend
        backend.configure({'cars': backend.car_specs, 'frame_period_ns': backend.frame_period_ns,
                           'cars_visible': backend.cars_visible, 'seed': backend.seed,
                           'track': {'name': world.name}}, world.arrays())

    def reseed(self, seed: int, cars: Collection[str] | None = None) -> None:
        """Sensor noise (of ``cars``, default all) from ``seed`` afresh, for a reproducible
        episode."""
        self.backend.reseed(seed, cars)

    def render(self, time_ns: int, poses: RenderPoses,
               due: Sequence[SensorKey]) -> Mapping[str, np.ndarray]:
        """The frames of the ``due`` sensors at ``time_ns``, by name."""
        return self.backend.render_frames(time_ns, poses, due)

    def send(self, step: int, time_ns: int, poses: RenderPoses,
             due: Sequence[SensorKey]) -> None:
        arrays, meta = update_frames(self.backend.render(time_ns, poses, due))
        frames = [{'name': name, 'dtype': array.dtype.name, 'shape': list(array.shape),
                   **meta[name]} for name, array in arrays.items()]
        self._reply = protocol.Message(protocol.UPDATE, {'step': step, 'time_ns': time_ns,
                                                         'frames': frames}, arrays)

    def receive(self) -> protocol.Message:
        reply, self._reply = self._reply, None
        if reply is None:
            msg = 'no request awaits a reply'
            raise ProtocolError(msg)
        return reply

    def close(self) -> None:
        self._reply = None
