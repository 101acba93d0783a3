"""Fuzzing the embedded backend process over a real socket: generated multipart messages (random
bytes, mutated valid messages, valid JSON of the wrong types and values, bad binary frames), each of
which must get a reply while the process keeps running; a valid session must work afterwards. Each
reply must come within HANG_S (5 s in the long run), and the process's resident memory may grow only
a bounded amount over the run.

The number of messages follows the fuzz knobs (fuzzing.py): 1,000 in the brief run, 100,000 with
``ARSIM_FUZZ_PROFILE=fuzz``, or ``ARSIM_FUZZ_EXAMPLES``.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from fuzzing import HANG_S, NO_SHRINK, fuzz, key_paths, repeat, rss_kib, timeout_s
from hypothesis import given
from hypothesis import strategies as st
from rawbackend import LIDAR, SETTINGS, UPDATE, RawBackend, frames_of, track_arrays

from arsim_core.protocol import framing

# RSS the backend may gain between the end of its warm-up and the end of the run: its caches
# (a track's BVH, one frame of every sensor) are full after the warm-up, so a leak of even a
# hundred bytes a message shows at the long profile's 300,000 messages.
RSS_GROWTH_KIB = 48 * 1024
DTYPES = ['uint8', 'int8', 'uint16', 'int16', 'uint32', 'int32', 'float32', 'float64']
CAMERA = {'name': 'cam', 'type': 'camera', 'rate_hz': 20.0, 'mount': [0.2, 0, 0.3, 0, 0, 0],
          'width': 32, 'height': 24, 'fov': 1.5, 'near': 0.1, 'far': 50.0,
          'outputs': ['rgb', 'depth', 'semantic']}
LIDAR3D = {'name': 'l3', 'type': 'lidar3d', 'rate_hz': 10.0, 'mount': [0, 0, 0.4, 0, 0, 0],
           'channels': 4, 'columns': 64, 'azimuth_start': 3.1, 'azimuth_increment': -0.098,
           'elevations': [0.1, 0.0, -0.1, -0.2], 'range_min': 0.1, 'range_max': 50.0,
           'noise_std': 0.01, 'dropout': 0.01}
RICH_SETTINGS = {**SETTINGS, 'cars': [
    {'id': 'ego', 'sensors': [LIDAR, LIDAR3D, CAMERA, {'name': 'imu', 'type': 'imu'}],
     'footprint': [0.5, 0.3, 0.2]},
    {'id': 'opp', 'sensors': [{**LIDAR, 'beams': 45}], 'footprint': [0.5, 0.3, 0.2]}]}
RICH_UPDATE = {'cars': UPDATE['cars'], 'render': [
    {'car': 'ego', 'sensor': s} for s in ('scan', 'l3', 'cam', 'imu')] + [
    {'car': 'opp', 'sensor': 'scan'}]}
# Valid messages to start mutations from: (topic, header, arrays).
BASES: list[tuple[str, dict[str, Any], dict[str, np.ndarray]]] = [
    (framing.INITIAL_SETTINGS, SETTINGS, track_arrays()),
    (framing.INITIAL_SETTINGS, RICH_SETTINGS, track_arrays()),
    (framing.TRACK, {'track': {'name': 'box'}}, track_arrays()),
    (framing.UPDATE, UPDATE, {}),
    (framing.UPDATE, RICH_UPDATE, {}),
]
SENSOR_KEYS = sorted({key for spec in (LIDAR, LIDAR3D, CAMERA) for key in spec})
HEADER_KEYS = ['world_frame', 'frame_period_ns', 'track', 'cars', 'cars_visible', 'seed',
               'render', 'frames', 'protocol', 'step', 'time_ns']

# --- values ------------------------------------------------------------------------------------
special_numbers = st.sampled_from([0, -1, 1, 2 ** 31, 2 ** 32, 2 ** 63, -(2 ** 63), 2 ** 64,
                                   10 ** 30, 1e308, -1e308, 1e-320, 0.5, -0.0, 3.14159,
                                   float('nan'), float('inf'), float('-inf')])
scalars = st.one_of(st.none(), st.booleans(), st.integers(), special_numbers,
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
                    st.sampled_from(['', 'ego', 'scan', 'camera', 'lidar2d', 'lidar3d', 'rgb',
                                     'x' * 5000]))
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=6) | st.dictionaries(
        st.text(max_size=8) | st.sampled_from(HEADER_KEYS + SENSOR_KEYS), inner, max_size=5),
    max_leaves=12)
plausible_numbers = st.one_of(st.integers(-5, 5000), st.floats(-1e4, 1e4), special_numbers)


@st.composite
def sensor_like(draw: st.DrawFn) -> dict[str, Any]:
    """A sensor description of some real type whose fields are right, wrong or missing."""
    base = copy.deepcopy(draw(st.sampled_from([LIDAR, LIDAR3D, CAMERA])))
    for key in draw(st.lists(st.sampled_from(SENSOR_KEYS), max_size=4, unique=True)):
        if draw(st.booleans()):
            base.pop(key, None)
        else:
            base[key] = draw(st.one_of(plausible_numbers, json_values,
                                       st.lists(plausible_numbers, max_size=8)))
    return base


car_like = st.fixed_dictionaries({}, optional={
    'id': st.sampled_from(['ego', 'opp']) | json_values,
    'pose': st.lists(plausible_numbers, min_size=5, max_size=7) | json_values,
    'footprint': st.lists(plausible_numbers, min_size=2, max_size=4) | json_values,
    'wheels': st.lists(plausible_numbers, min_size=3, max_size=5) | json_values,
    'sensors': st.lists(sensor_like(), max_size=3) | json_values})


# --- messages ----------------------------------------------------------------------------------
def assemble(topic: bytes, header: dict[str, Any], buffers: list[bytes]) -> list[bytes]:
    """Frames from a header that may hold NaN (json.dumps writes it; the backend must refuse)."""
    return [topic, json.dumps(header, allow_nan=True).encode(), *buffers]


def described(arrays: dict[str, np.ndarray]) -> tuple[list[dict[str, Any]], list[bytes]]:
    meta = [{'name': n, 'dtype': a.dtype.name, 'shape': list(a.shape)} for n, a in arrays.items()]
    return meta, [a.tobytes() for a in arrays.values()]


random_bytes = st.lists(st.binary(max_size=80), min_size=1, max_size=6)


@st.composite
def bad_arrays(draw: st.DrawFn) -> dict[str, np.ndarray]:
    """Track frames whose dtypes, shapes and contents are anything the decoder lets through:
    NaN and infinite vertices, negative and too large indices, labels past 255."""
    vertices = draw(st.integers(0, 12))
    triangles = draw(st.integers(0, 12))
    arrays = {}
    for name, rows, columns in (('track_vertices', vertices, 3),
                                ('track_triangles', triangles, 3),
                                ('track_labels', triangles, None)):
        if draw(st.integers(0, 5)) == 0:
            continue  # a frame left out
        dtype = np.dtype(draw(st.sampled_from(DTYPES)))
        shape = (rows,) if columns is None else (rows, draw(st.sampled_from([columns, 2, 4])))
        count = int(np.prod(shape))
        if draw(st.booleans()):
            raw = draw(st.binary(min_size=count * dtype.itemsize, max_size=count * dtype.itemsize))
            arrays[name] = np.frombuffer(raw, dtype).reshape(shape)
        else:
            values = draw(st.lists(st.integers(-3, vertices + 2), min_size=count, max_size=count))
            arrays[name] = np.array(values).astype(dtype).reshape(shape)
    return arrays


@st.composite
def wrong_types(draw: st.DrawFn) -> list[bytes]:
    """Valid JSON headers of the right version whose keys hold the wrong types and values."""
    topic = draw(st.sampled_from(sorted(framing.TOPICS)))
    header: dict[str, Any] = {'protocol': 1, 'step': draw(st.integers(0, 2 ** 40)),
                              'time_ns': draw(st.integers(0, 2 ** 50))}
    for key in draw(st.lists(st.sampled_from(HEADER_KEYS[:7]), max_size=6, unique=True)):
        if key == 'cars':
            header[key] = draw(st.lists(car_like, max_size=3) | json_values)
        elif key == 'render':
            header[key] = draw(st.lists(st.fixed_dictionaries(
                {}, optional={'car': st.sampled_from(['ego', 'opp']) | json_values,
                              'sensor': st.sampled_from(['scan', 'cam', 'l3']) | json_values}),
                max_size=4) | json_values)
        else:
            header[key] = draw(json_values | plausible_numbers)
    arrays = draw(st.sampled_from([{}, track_arrays()]) | bad_arrays())
    header['frames'], buffers = described(arrays)
    return assemble(topic.encode(), header, buffers)


@st.composite
def mutated(draw: st.DrawFn) -> list[bytes]:
    """A valid message with one to four things changed in its header, frames or bytes."""
    topic, header, arrays = draw(st.sampled_from(BASES))
    header = copy.deepcopy({'protocol': 1, 'step': 1, 'time_ns': 25_000_000, **header})
    if draw(st.integers(0, 3)) == 0:
        arrays = draw(bad_arrays())
    header['frames'], buffers = described(arrays)
    topic_bytes = topic.encode()
    text: bytes | None = None
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(['value', 'value', 'value', 'delete', 'topic', 'frame',
                                     'bytes']))
        paths = list(key_paths(header))
        if kind in ('value', 'delete') and paths:
            path = draw(st.sampled_from(paths))
            parent = header
            for key in path[:-1]:
                parent = parent[key]
            if kind == 'delete':
                del parent[path[-1]]
            else:
                parent[path[-1]] = draw(json_values | plausible_numbers | sensor_like()
                                        | car_like)
        elif kind == 'topic':
            topic_bytes = draw(st.sampled_from(sorted(framing.TOPICS)).map(str.encode)
                               | st.binary(max_size=16))
        elif kind == 'frame' and buffers:
            index = draw(st.integers(0, len(buffers) - 1))
            change = draw(st.sampled_from(['cut', 'grow', 'drop', 'dup']))
            if change == 'cut':
                buffers[index] = buffers[index][:draw(st.integers(0, len(buffers[index])))]
            elif change == 'grow':
                buffers[index] += draw(st.binary(min_size=1, max_size=16))
            elif change == 'drop':
                del buffers[index]
            else:
                buffers.append(buffers[index])
        elif kind == 'bytes':
            text = text or json.dumps(header, allow_nan=True).encode()
            at = draw(st.integers(0, len(text)))
            text = text[:at] + draw(st.binary(max_size=4)) + text[at + draw(
                st.integers(0, 4)):]
    frames = assemble(topic_bytes, header, buffers)
    return frames if text is None else [topic_bytes, text, *buffers]


messages = st.one_of(random_bytes, mutated(), mutated(), wrong_types(), wrong_types())


# --- the test ----------------------------------------------------------------------------------
@pytest.fixture(scope='module')
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawBackend]:
    backend = RawBackend(tmp_path_factory.mktemp('fuzz') / 'backend.log', timeout_s=60.0)
    yield backend
    assert backend.close() == 0, backend.log[-5000:]


OUTCOMES: Counter[str] = Counter()


def warm_up(target: RawBackend) -> None:
    """A valid session with every sensor kind, so that compiling and first allocations are
    done before replies are timed and memory is measured."""
    target.check_session()
    for topic, header, arrays in BASES:
        reply = target.ask(frames_of(topic, header, arrays or None, step=1,
                                     time_ns=25_000_000))
        assert reply.topic in (framing.READY, framing.UPDATE), reply.header


RUN = fuzz(1000, deadline=None, phases=NO_SHRINK)  # timed by the reply timeout


@pytest.mark.timeout(timeout_s(10))
def test_generated_messages_never_stop_the_backend(target: RawBackend) -> None:
    warm_up(target)
    rss_before = rss_kib(target.process.pid)
    hang_ms = int(HANG_S * 1000)

    @RUN
    @given(frames=messages)
    def one(frames: list[bytes]) -> None:
        reply = target.exchange(frames, timeout_ms=hang_ms)
        assert reply is not None, (
            f'no reply within {hang_ms} ms; backend '
            f'{"alive" if target.alive else "dead"}; log tail:\n{target.log[-3000:]}')
        message = framing.decode(reply)
        assert message.topic in (framing.ERROR, framing.READY, framing.UPDATE)
        OUTCOMES[message.topic] += 1

    runs = repeat(one)
    assert target.alive, target.log[-3000:]
    sent = runs * RUN.max_examples
    assert sum(OUTCOMES.values()) >= sent, OUTCOMES
    assert OUTCOMES[framing.ERROR] > sent // 2, OUTCOMES  # most messages are refused
    growth = rss_kib(target.process.pid) - rss_before
    print(f'backend fuzz: {dict(OUTCOMES)}; RSS {rss_before} KiB, then {growth:+} KiB')
    assert growth < RSS_GROWTH_KIB, f'the backend grew by {growth} KiB over {sent} messages'
    target.check_session(step=2)
    assert 'Traceback' not in target.log, 'an unexpected failure reached the last resort'
