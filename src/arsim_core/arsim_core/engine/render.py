"""Renderers the engine drives: the embedded backend in this process, or any backend over the
ZeroMQ protocol (the embedded backend's process, Unity). Both answer with a protocol
``Message`` whose frames are named ``<car>/<sensor><suffix>`` (docs/protocol.md)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

import numpy as np

from arsim_core import description
from arsim_core.backend.outputs import update_frames
from arsim_core.backend.timeline import Poses
from arsim_core.config.conditions import light_and_weather
from arsim_core.config.scenario import Scenario
from arsim_core.engine.schedule import SensorKey
from arsim_core.engine.world import TrackWorld
from arsim_core.errors import ProtocolError
from arsim_core.process import heartbeat
from arsim_core.protocol import framing
from arsim_core.protocol.messages import (
    CarSettings,
    InitialSettings,
    Ready,
    TrackRequest,
    UpdateRequest,
    in_process,
)

RenderPoses = Poses  # car -> x, y, z, roll, pitch, yaw


def initial_settings(scenario: Scenario, world: TrackWorld, seed: int = 0) -> InitialSettings:
    """The InitialSettings request for ``scenario`` on ``world``; the run's ``seed`` seeds the
    sensors' noise and, with the scenario's own, the draw of its appearance and conditions
    ranges. Each car's footprint carries its wheels as its description places them."""
    appearance, weather = light_and_weather(scenario.appearance, scenario.conditions, seed)
    return InitialSettings(
        world_frame=scenario.topic_map.world_frame,
        frame_period_ns=scenario.frame_period_ns,
        seed=seed,
        appearance=appearance,
        weather=weather,
        track=world.track_request(),
        cars_visible=scenario.collisions.cars_visible,
        calibration_target=scenario.calibration_target,
        cars=tuple(CarSettings(car.name,
                               replace(car.profile.footprint, wheels=description.wheels(car)),
                               tuple(s.to_wire() for s in car.profile.sensors))
                   for car in scenario.cars))


class Renderer(Protocol):
    """A backend as the engine sees it: set up once, then one render in flight at a time, so
    the caller can work while a remote backend renders."""

    def start(self, settings: InitialSettings, timeout_s: float) -> Mapping[str, Any]:
        """Send InitialSettings; the names of the backend and of the track it has loaded."""
        ...

    def switch_track(self, step: int, time_ns: int, track: TrackRequest) -> None:
        """Load ``track`` in place of the one shown (a new track, or cones that fell)."""
        ...

    def send(self, step: int, time_ns: int, poses: RenderPoses,
             due: Sequence[SensorKey]) -> None:
        """Move the cars and ask for the ``due`` sensors of frame ``step``."""
        ...

    def receive(self) -> framing.Message:
        """The reply to the last ``send``."""
        ...

    def close(self) -> None: ...


class ProtocolRenderer:
    """A backend in another process, over the ZeroMQ request socket at ``address``."""

    def __init__(self, address: str, timeout_s: float,
                 stop_requested: Callable[[], bool] | None = None) -> None:
        """``stop_requested``: see ``BackendClient``."""
        from arsim_core.protocol.client import BackendClient

        self.client = BackendClient(address, timeout_s, stop_requested)

    def start(self, settings: InitialSettings, timeout_s: float) -> Mapping[str, Any]:
        # A backend sets a scene up for seconds; the wait is bounded by timeout_s, so beating
        # meanwhile hides no hang.
        with heartbeat.beating():
            reply = self.client.request_body(settings, 0, 0, timeout_ms=int(timeout_s * 1000))
        ready = Ready.from_wire(reply)
        problems = ready.unrenderable(settings)
        if problems:  # rendered without them, the images would look right and not be
            msg = f'the backend cannot render this scenario: {"; ".join(problems)}'
            raise ProtocolError(msg)
        return {'backend': ready.backend, 'track': ready.track}

    def switch_track(self, step: int, time_ns: int, track: TrackRequest) -> None:
        with heartbeat.beating():  # a new scene, as in start; bounded by the client's timeout
            self.client.request_body(track, step, time_ns)

    def send(self, step: int, time_ns: int, poses: RenderPoses,
             due: Sequence[SensorKey]) -> None:
        self.client.send_body(UpdateRequest(poses, due), step, time_ns)

    def receive(self) -> framing.Message:
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
        self._reply: framing.Message | None = None

    def start(self, settings: InitialSettings, timeout_s: float = 0.0) -> Mapping[str, Any]:
        # Seconds of compiling kernels for a new scene hold the caller's loop up: a launcher
        # watching that loop's heartbeat hears it meanwhile (nothing is written without one).
        with heartbeat.beating():
            self.backend.apply(InitialSettings.from_wire(in_process(settings)))
        return {'backend': self.name, 'track': settings.track.name}

    def switch_track(self, step: int, time_ns: int, track: TrackRequest) -> None:
        """``track`` in place of the one shown, as a Track request loads it: cars, sensors and
        their noise go on."""
        with heartbeat.beating():  # a new scene, as in start
            self.backend.switch_track(TrackRequest.from_wire(in_process(track)))

    def reseed(self, seed: int, cars: Collection[str] | None = None,
               car_index: int | None = None) -> None:
        """Sensor noise (of ``cars``, default all) from ``seed`` afresh, for a reproducible
        episode; ``car_index``: drawn as the car of that index (the backend's ``reseed``)."""
        self.backend.reseed(seed, cars, car_index)

    def render(self, time_ns: int, poses: RenderPoses,
               due: Sequence[SensorKey]) -> Mapping[str, np.ndarray]:
        """The frames of the ``due`` sensors at ``time_ns``, by name."""
        return self.backend.render_frames(time_ns, poses, due)

    def send(self, step: int, time_ns: int, poses: RenderPoses,
             due: Sequence[SensorKey]) -> None:
        self._reply = in_process(update_frames(self.backend.render(time_ns, poses, due)), step,
                                 time_ns)

    def receive(self) -> framing.Message:
        reply, self._reply = self._reply, None
        if reply is None:
            msg = 'no request awaits a reply'
            raise ProtocolError(msg)
        return reply

    def close(self) -> None:
        self._reply = None
