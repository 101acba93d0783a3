"""The bridge -> republisher fan-out: one ZeroMQ message per car and frame.

Frame 0 is the subscription topic ``car/<name>``; the rest is a protocol v1 ``Update`` message
whose header carries the car's state and whose binary frames are that car's sensor data, passed
on from the backend without a copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from arsim_core import protocol


def car_topic(car: str) -> bytes:
    return f'car/{car}'.encode()


def encode_car_frame(car: str, step: int, time_ns: int, state: Mapping[str, Any],
                     arrays: Mapping[str, np.ndarray],
                     meta: Mapping[str, Mapping[str, Any]]) -> list[Any]:
    body = {'car': car, 'state': state}
    return [car_topic(car), *protocol.encode(protocol.UPDATE, step, time_ns, body, arrays, meta)]


def decode_car_frame(frames: list[Any]) -> protocol.Message:
    return protocol.decode(frames[1:])
