"""Bridge <-> backend wire protocol, version 1 (see docs/protocol.md).

A message is a ZeroMQ multipart: frame 0 the topic, frame 1 a UTF-8 JSON header, then raw binary
frames. The header lists every binary frame by name, dtype and shape, so a reader never depends on
implicit order and never unpickles or evaluates anything that came over the socket.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from arsim_core.errors import ProtocolError

PROTOCOL_VERSION = 1

INITIAL_SETTINGS = 'InitialSettings'
READY = 'Ready'
UPDATE = 'Update'
TRACK = 'Track'
ERROR = 'Error'
TOPICS = frozenset({INITIAL_SETTINGS, READY, UPDATE, TRACK, ERROR})

_ALLOWED_DTYPES = frozenset(
    {'uint8', 'int8', 'uint16', 'int16', 'uint32', 'int32', 'float32', 'float64'})


@dataclass(frozen=True)
class Message:
    """One decoded protocol message: its topic, JSON header and named binary arrays."""

    topic: str
    header: Mapping[str, Any]
    arrays: Mapping[str, np.ndarray] = field(default_factory=dict)

    @property
    def step(self) -> int:
        return int(self.header['step'])

    @property
    def time_ns(self) -> int:
        return int(self.header['time_ns'])


def encode(topic: str, step: int, time_ns: int, body: Mapping[str, Any] | None = None,
           arrays: Mapping[str, np.ndarray] | None = None,
           array_meta: Mapping[str, Mapping[str, Any]] | None = None) -> list[bytes | memoryview]:
    """Build the frames of one message.

    ``array_meta`` adds per-array fields to the frame description (e.g. the sensor id and
    encoding); the arrays themselves travel as C-contiguous buffers without an extra copy.
    """
    if topic not in TOPICS:
        msg = f'unknown protocol topic {topic!r}; expected one of {sorted(TOPICS)}'
        raise ProtocolError(msg)
    frames_meta: list[dict[str, Any]] = []
    buffers: list[memoryview] = []
    for name, array in (arrays or {}).items():
        contiguous = np.ascontiguousarray(array)
        meta = {'name': name, 'dtype': contiguous.dtype.name, 'shape': list(contiguous.shape)}
        meta.update((array_meta or {}).get(name, {}))
        frames_meta.append(meta)
        buffers.append(memoryview(contiguous).cast('B'))
    header = {'protocol': PROTOCOL_VERSION, 'step': step, 'time_ns': time_ns,
              **(body or {}), 'frames': frames_meta}
    return [topic.encode(), json.dumps(header, separators=(',', ':')).encode(), *buffers]


def decode(frames: Sequence[bytes | memoryview | Any]) -> Message:
    """Parse and validate a multipart message; raises ProtocolError with the reason."""
    if len(frames) < 2:
        msg = f'a protocol message has at least 2 frames (topic, header), got {len(frames)}'
        raise ProtocolError(msg)
    raw = [f.buffer if hasattr(f, 'buffer') else f for f in frames]
    topic = bytes(raw[0]).decode('utf-8', errors='replace')
    if topic not in TOPICS:
        msg = f'unknown protocol topic {topic!r}; expected one of {sorted(TOPICS)}'
        raise ProtocolError(msg)
    try:
        header = json.loads(bytes(raw[1]))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        msg = f'{topic}: header is not valid JSON ({exc})'
        raise ProtocolError(msg) from exc
    if not isinstance(header, dict):
        msg = f'{topic}: header must be a JSON object'
        raise ProtocolError(msg)
    if topic != ERROR:  # an error is shown to the user whatever version its sender speaks
        check_version(header, topic)
    for key in ('step', 'time_ns'):
        if not isinstance(header.get(key), int):
            msg = f'{topic}: header key {key!r} must be an integer'
            raise ProtocolError(msg)
    meta = header.get('frames', [])
    if not isinstance(meta, list) or len(meta) != len(raw) - 2:
        msg = (f'{topic}: header lists {len(meta) if isinstance(meta, list) else "no"} binary '
               f'frames but the message carries {len(raw) - 2}')
        raise ProtocolError(msg)
    arrays = {entry_name(entry, topic): _frame_array(entry, buf, topic)
              for entry, buf in zip(meta, raw[2:], strict=True)}
    return Message(topic, header, arrays)


def check_version(header: Mapping[str, Any], topic: str) -> None:
    """Refuse a peer that speaks another protocol version, saying which versions differ."""
    version = header.get('protocol')
    if version != PROTOCOL_VERSION:
        msg = (f'{topic}: peer speaks arsim protocol version {version!r}, this side speaks '
               f'version {PROTOCOL_VERSION}; update the older side')
        raise ProtocolError(msg)


def entry_name(entry: Any, topic: str) -> str:
    if not isinstance(entry, dict) or not isinstance(entry.get('name'), str):
        msg = f'{topic}: every frame description needs a string "name"'
        raise ProtocolError(msg)
    return entry['name']


def _frame_array(entry: Mapping[str, Any], buffer: Any, topic: str) -> np.ndarray:
    dtype, shape = entry.get('dtype'), entry.get('shape')
    if dtype not in _ALLOWED_DTYPES:
        msg = f'{topic}: frame {entry["name"]!r} has dtype {dtype!r}; expected one of ' \
              f'{sorted(_ALLOWED_DTYPES)}'
        raise ProtocolError(msg)
    if not isinstance(shape, list) or not all(isinstance(n, int) and n >= 0 for n in shape):
        msg = f'{topic}: frame {entry["name"]!r} needs a shape of non-negative integers'
        raise ProtocolError(msg)
    array = np.frombuffer(buffer, dtype=np.dtype(dtype))
    if array.size != int(np.prod(shape, dtype=np.int64)):
        msg = (f'{topic}: frame {entry["name"]!r} declares shape {shape} ({dtype}) but carries '
               f'{len(memoryview(buffer).cast("B"))} bytes')
        raise ProtocolError(msg)
    return array.reshape(shape)


def frame_meta(message: Message) -> dict[str, Mapping[str, Any]]:
    """The frame descriptions of a message, by name."""
    return {entry['name']: entry for entry in message.header.get('frames', [])}
