"""What a rendered sensor hands back to the protocol layer: named arrays and a stamp.

A sensor's frames are named ``<car>/<sensor>`` plus a suffix (``''`` for the main frame,
``/intensity``, ``/rgb``, ...); each carries an ``encoding`` that tells the republisher what the
array holds (see docs/protocol.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from arsim_core.backend.scene import World
    from arsim_core.backend.timeline import Timeline


@dataclass(frozen=True)
class Output:
    suffix: str
    array: np.ndarray
    encoding: str


@dataclass(frozen=True)
class Rendered:
    """One render of one sensor: the time its data refers to and its frames."""

    stamp_ns: int
    outputs: tuple[Output, ...]


@dataclass(frozen=True)
class Context:
    """What a sensor renders from: the scene, the cars' recent poses, the frame time, and the
    camera renderer (made on first use, so LiDAR-only runs never open an EGL context)."""

    world: World
    timeline: Timeline
    time_ns: int
    renderer: Callable[[], Any]
