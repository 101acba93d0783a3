"""Bridge <-> backend wire protocol, version 1 (see docs/protocol.md).

A message is a ZeroMQ multipart: frame 0 the topic, frame 1 a UTF-8 JSON header, then raw binary
frames. The header lists every binary frame by name, dtype and shape, so a reader never depends on
implicit order and never unpickles or evaluates anything that came over the socket.

``decode`` is the one gate every received message passes, on both sides of the link: whatever
the bytes, it returns a message whose header is a JSON object of bounded depth without NaN or
infinities, whose step and time fit in 64 bits, and whose arrays hold exactly the bytes their
shapes need; anything else is a ``ProtocolError``, which a backend answers with ``Error``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from arsim_core.errors import ProtocolError
from arsim_core.log_limit import clip

PROTOCOL_VERSION = 1

INITIAL_SETTINGS = 'InitialSettings'
READY = 'Ready'
UPDATE = 'Update'
TRACK = 'Track'
ERROR = 'Error'
TOPICS = frozenset({INITIAL_SETTINGS, READY, UPDATE, TRACK, ERROR})

_ALLOWED_DTYPES = frozenset(
    {'uint8', 'int8', 'uint16', 'int16', 'uint32', 'int32', 'float32', 'float64'})
MAX_HEADER_DEPTH = 32  # nested lists and objects; the deepest the protocol uses is 6
MAX_DIMENSIONS = 8  # of one binary frame; the protocol uses at most 3
INT64 = (-(1 << 63), 1 << 63)  # the range of step and time_ns: [low, high)


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
        frames_meta.append(_describe(name, contiguous, array_meta))
        # memoryview refuses to cast a view with a zero in its shape: an empty frame is b''.
        buffers.append(contiguous.data.cast('B') if contiguous.size else memoryview(b''))
    header = {'protocol': PROTOCOL_VERSION, 'step': step, 'time_ns': time_ns,
              **(body or {}), 'frames': frames_meta}
    try:  # strict JSON, as decode reads it: NaN and the infinities are no JSON values
        text = json.dumps(header, separators=(',', ':'), allow_nan=False)
    except ValueError as exc:
        msg = f'{topic} of step {step}: {exc}; a header holds finite numbers only'
        raise ProtocolError(msg) from exc
    return [topic.encode(), text.encode(), *buffers]


def message(topic: str, step: int, time_ns: int, body: Mapping[str, Any] | None = None,
            arrays: Mapping[str, np.ndarray] | None = None,
            array_meta: Mapping[str, Mapping[str, Any]] | None = None) -> Message:
    """The message ``decode(encode(...))`` gives, made without bytes or JSON: for the two ends
    of the protocol in one process. The arrays are passed on as they are."""
    arrays = arrays if arrays is not None else {}
    frames_meta = [_describe(name, array, array_meta) for name, array in arrays.items()]
    return Message(topic, {'protocol': PROTOCOL_VERSION, 'step': step, 'time_ns': time_ns,
                           **(body or {}), 'frames': frames_meta}, arrays)


def _describe(name: str, array: np.ndarray,
              array_meta: Mapping[str, Mapping[str, Any]] | None) -> dict[str, Any]:
    """The description of one binary frame in the header's ``frames``."""
    meta = {'name': name, 'dtype': array.dtype.name, 'shape': list(array.shape)}
    if array_meta:
        meta.update(array_meta.get(name, {}))
    return meta


def decode(frames: Sequence[bytes | memoryview | Any]) -> Message:
    """Parse and validate a multipart message; raises ProtocolError with the reason."""
    if len(frames) < 2:
        msg = f'a protocol message has at least 2 frames (topic, header), got {len(frames)}'
        raise ProtocolError(msg)
    raw = [f.buffer if hasattr(f, 'buffer') else f for f in frames]
    topic = bytes(raw[0]).decode('utf-8', errors='replace')
    if topic not in TOPICS:
        msg = f'unknown protocol topic {_clip(topic)!r}; expected one of {sorted(TOPICS)}'
        raise ProtocolError(msg)
    header = parse_header(bytes(raw[1]), topic)
    if topic != ERROR:  # an error is shown to the user whatever version its sender speaks
        check_version(header, topic)
    for key in ('step', 'time_ns'):
        value = header.get(key)
        if type(value) is not int or not INT64[0] <= value < INT64[1]:
            msg = f'{topic}: header key {key!r} must be an integer that fits in 64 bits'
            raise ProtocolError(msg)
    meta = header.get('frames', [])
    if not isinstance(meta, list) or len(meta) != len(raw) - 2:
        msg = (f'{topic}: header lists {len(meta) if isinstance(meta, list) else "no"} binary '
               f'frames but the message carries {len(raw) - 2}')
        raise ProtocolError(msg)
    arrays: dict[str, np.ndarray] = {}
    for entry, buffer in zip(meta, raw[2:], strict=True):
        name = entry_name(entry, topic)
        if name in arrays:
            msg = f'{topic}: two binary frames are named {_clip(name)!r}'
            raise ProtocolError(msg)
        arrays[name] = _frame_array(entry, buffer, topic)
    return Message(topic, header, arrays)


def parse_header(text: bytes, topic: str) -> dict[str, Any]:
    """The header as a JSON object: strict JSON (no NaN or Infinity, which Python's json
    would otherwise turn into floats no integer field survives), nested at most
    MAX_HEADER_DEPTH deep, so no later walk over it can run out of stack."""
    try:
        header = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError as exc:
        msg = f'{topic}: header nests deeper than {MAX_HEADER_DEPTH} levels'
        raise ProtocolError(msg) from exc
    except ValueError as exc:  # also bad UTF-8, and integers of more digits than Python takes
        msg = f'{topic}: header is not valid JSON ({_clip(str(exc))})'
        raise ProtocolError(msg) from exc
    if not isinstance(header, dict):
        msg = f'{topic}: header must be a JSON object'
        raise ProtocolError(msg)
    if _depth_exceeds(header, MAX_HEADER_DEPTH):
        msg = f'{topic}: header nests deeper than {MAX_HEADER_DEPTH} levels'
        raise ProtocolError(msg)
    return header


def _refuse_constant(name: str) -> Any:
    msg = f'{name} is not a JSON value'
    raise ValueError(msg)


def _depth_exceeds(value: dict[str, Any] | list[Any], limit: int) -> bool:
    """Whether lists and objects nest deeper than ``limit``; iterative, so a deep value cannot
    exhaust the stack here either."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children
                     if isinstance(child, (dict, list)))
    return False


def _clip(text: str) -> str:
    """``text`` cut to 200 characters: error messages quote what a peer sent, which may be
    megabytes long."""
    return clip(text, 200)


def check_version(header: Mapping[str, Any], topic: str) -> None:
    """Refuse a peer that speaks another protocol version, saying which versions differ."""
    version = header.get('protocol')
    if type(version) is not int or version != PROTOCOL_VERSION:
        msg = (f'{topic}: peer speaks arsim protocol version {_clip(repr(version))}, this side '
               f'speaks version {PROTOCOL_VERSION}; update the older side')
        raise ProtocolError(msg)


def entry_name(entry: Any, topic: str) -> str:
    if not isinstance(entry, dict) or not isinstance(entry.get('name'), str):
        msg = f'{topic}: every frame description needs a string "name"'
        raise ProtocolError(msg)
    return entry['name']


def _frame_array(entry: Mapping[str, Any], buffer: Any, topic: str) -> np.ndarray:
    """The frame as an array of its declared dtype and shape, without a copy. The byte count is
    compared with the shape in Python integers first: NumPy would raise ValueError on a count
    that is not a multiple of the item size, and int64 products of huge shapes overflow."""
    name = _clip(entry['name'])
    dtype, shape = entry.get('dtype'), entry.get('shape')
    if not isinstance(dtype, str) or dtype not in _ALLOWED_DTYPES:
        msg = (f'{topic}: frame {name!r} has dtype {_clip(repr(dtype))}; expected one of '
               f'{sorted(_ALLOWED_DTYPES)}')
        raise ProtocolError(msg)
    if not isinstance(shape, list) or len(shape) > MAX_DIMENSIONS or not all(
            type(n) is int and n >= 0 for n in shape):
        msg = (f'{topic}: frame {name!r} needs a shape of at most {MAX_DIMENSIONS} '
               f'non-negative integers')
        raise ProtocolError(msg)
    item = np.dtype(dtype)
    size = memoryview(buffer).nbytes
    if math.prod(shape) * item.itemsize != size:
        msg = (f'{topic}: frame {name!r} declares shape {_clip(str(shape))} ({dtype}) but '
               f'carries {size} bytes')
        raise ProtocolError(msg)
    try:  # an empty frame may still declare dimensions no array can have
        return np.frombuffer(buffer, dtype=item).reshape(shape)
    except ValueError as exc:
        msg = f'{topic}: frame {name!r} declares shape {_clip(str(shape))}: {exc}'
        raise ProtocolError(msg) from exc


def frame_meta(message: Message) -> dict[str, Mapping[str, Any]]:
    """The frame descriptions of a message, by name."""
    return {entry['name']: entry for entry in message.header.get('frames', [])}
