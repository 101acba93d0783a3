"""The bridge -> republisher fan-out: one ZeroMQ message per car and frame.

Frame 0 is the subscription topic ``car/<name>``; the rest is a protocol v1 ``Update`` message
whose body is a ``messages.FanoutFrame``: the car's state and its sensor frames: the backend's,
passed on without a copy, and the engine's computed ones (IMU, GNSS, wheel odometry, objects
and cones as float64 arrays, ``arsim_core.sensors.computed``), each described like a rendered
frame.
"""

from __future__ import annotations

from typing import Any

from arsim_core.engine.state import CarState
from arsim_core.protocol import framing, messages
from arsim_core.protocol.messages import NO_ARRAYS, FanoutFrame, UpdateReply


def car_topic(car: str) -> bytes:
    return f'car/{car}'.encode()


def car_frame(car: str, state: CarState, sensors: UpdateReply | None,
              computed: UpdateReply | None = None) -> FanoutFrame:
    """The fan-out frame of ``car`` in ``state``, with its part of the backend's reply and its
    computed sensors (its part of the engine's, ``Engine.sense``)."""
    arrays = NO_ARRAYS if sensors is None else sensors.arrays
    meta = NO_ARRAYS if sensors is None else sensors.meta
    if computed is not None and computed.arrays:
        arrays, meta = {**arrays, **computed.arrays}, {**meta, **computed.meta}
    return FanoutFrame(car, (state.x, state.y, state.yaw), (state.vx, state.vy, state.yaw_rate),
                       state.steering_angle, (state.ax, state.ay), arrays, meta)


def encode_car_frame(frame: FanoutFrame, step: int, time_ns: int) -> list[Any]:
    return [car_topic(frame.car), *messages.encode(frame, step, time_ns)]


def decode_car_frame(frames: list[Any]) -> tuple[int, int, FanoutFrame]:
    """The step, the time and the frame of one fan-out message."""
    message = framing.decode(frames[1:])
    return message.step, message.time_ns, FanoutFrame.from_wire(message)
