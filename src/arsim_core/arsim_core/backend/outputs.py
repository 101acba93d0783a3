"""What a rendered sensor hands back to the protocol layer: named arrays and a stamp.

A sensor's frames are named ``<car>/<sensor>`` plus a suffix (``''`` for the main frame,
``/intensity``, ``/rgb``, ...); each carries an ``encoding`` that tells the republisher what the
array holds (see docs/protocol.md). The records are named tuples: made several times in every
frame, they cost a fraction of frozen dataclasses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import numpy as np

from arsim_core.protocol.messages import FrameMeta, UpdateReply

if TYPE_CHECKING:
    from arsim_core.backend.scene import World
    from arsim_core.backend.timeline import Timeline


class Output(NamedTuple):
    suffix: str
    array: np.ndarray
    encoding: str


class Rendered(NamedTuple):
    """One render of one sensor: the time its data refers to and its frames."""

    stamp_ns: int
    outputs: tuple[Output, ...]


class Context(NamedTuple):
    """What a sensor renders from: the scene, the cars' recent poses, the frame time, and the
    camera renderer (made on first use, so LiDAR-only runs never open an EGL context)."""

    world: World
    timeline: Timeline
    time_ns: int
    renderer: Callable[[], Any]


class RenderedSensor(Protocol):
    """What names a sensor's frames: its car, its name and its kind."""

    car: str
    name: str
    kind: str


def frame_name(sensor: RenderedSensor, output: Output) -> str:
    """``<car>/<sensor><suffix>``, the name a rendered output travels under."""
    return f'{sensor.car}/{sensor.name}{output.suffix}'


def update_frames(rendered: Sequence[tuple[RenderedSensor, Rendered]]) -> UpdateReply:
    """The Update reply of these renders: their frames and descriptions."""
    arrays: dict[str, np.ndarray] = {}
    meta: dict[str, FrameMeta] = {}
    for sensor, result in rendered:
        for output in result.outputs:
            name = frame_name(sensor, output)
            arrays[name] = output.array
            meta[name] = FrameMeta(sensor.car, sensor.name, sensor.kind, output.encoding,
                                   result.stamp_ns)
    return UpdateReply(arrays, meta)
