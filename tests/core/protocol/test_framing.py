"""Protocol v1: round trips, explicit frame descriptions, version and malformed-input refusal."""

from __future__ import annotations

import json

import numpy as np
import pytest

from arsim_core.errors import ProtocolError
from arsim_core.protocol import framing


@pytest.mark.parametrize('topic', sorted(framing.TOPICS))
def test_round_trip_keeps_header_and_arrays(topic: str) -> None:
    arrays = {'a': np.arange(12, dtype=np.float32).reshape(3, 4),
              'b': np.array([1, 2, 3], dtype=np.uint32)}
    frames = framing.encode(topic, 7, 175_000_000, {'extra': [1, 2]}, arrays,
                             {'a': {'sensor': 'scan'}})
    message = framing.decode([bytes(f) for f in frames])
    assert (message.topic, message.step, message.time_ns) == (topic, 7, 175_000_000)
    assert message.header['extra'] == [1, 2]
    assert framing.frame_meta(message)['a']['sensor'] == 'scan'
    for name, array in arrays.items():
        np.testing.assert_array_equal(message.arrays[name], array)
        assert message.arrays[name].dtype == array.dtype


def test_an_empty_array_round_trips_with_its_shape() -> None:
    # An objects sensor with nothing in range sends no rows: (0, 9).
    frames = framing.encode(framing.UPDATE, 1, 0, arrays={'none': np.zeros((0, 9))})
    message = framing.decode([bytes(f) for f in frames])
    assert message.arrays['none'].shape == (0, 9)
    assert message.arrays['none'].dtype == np.float64


def test_frames_are_found_by_name_not_order() -> None:
    frames = framing.encode(framing.UPDATE, 1, 0, arrays={
        'x': np.zeros(2, np.float32), 'y': np.ones(3, np.uint8)})
    header = json.loads(frames[1])
    header['frames'].reverse()
    swapped = [frames[0], json.dumps(header).encode(), frames[3], frames[2]]
    message = framing.decode([bytes(f) for f in swapped])
    assert message.arrays['y'].tolist() == [1, 1, 1]


def test_other_version_is_refused_with_both_versions_named() -> None:
    frames = framing.encode(framing.UPDATE, 1, 0)
    header = json.loads(frames[1])
    header['protocol'] = 99
    with pytest.raises(ProtocolError, match='version 99.*version 1'):
        framing.decode([frames[0], json.dumps(header).encode()])


@pytest.mark.parametrize(('frames', 'reason'), [
    ([b'Update'], 'at least 2 frames'),
    ([b'Bogus', b'{}'], 'unknown protocol topic'),
    ([b'Update', b'not json'], 'not valid JSON'),
    ([b'Update', b'[1]'], 'JSON object'),
    ([b'Update', b'{"protocol": 1, "step": "1", "time_ns": 0}'], "'step' must be an integer"),
    ([b'Update', b'{"protocol": 1, "step": 1, "time_ns": 0, "frames": []}', b'xx'],
     'lists 0 binary frames but the message carries 1'),
    ([b'Update', b'{"protocol": 1, "step": 1, "time_ns": 0, "frames": [{"name": "a", '
                 b'"dtype": "object", "shape": [1]}]}', b'x'], "dtype 'object'"),
    ([b'Update', b'{"protocol": 1, "step": 1, "time_ns": 0, "frames": [{"name": "a", '
                 b'"dtype": "float32", "shape": [3]}]}', b'1234'], 'carries 4 bytes'),
])
def test_malformed_messages_are_refused(frames: list[bytes], reason: str) -> None:
    with pytest.raises(ProtocolError, match=reason):
        framing.decode(frames)


def _update(frames: list[dict], *buffers: bytes) -> list[bytes]:
    header = {'protocol': 1, 'step': 1, 'time_ns': 0, 'frames': frames}
    return [b'Update', json.dumps(header).encode(), *buffers]


@pytest.mark.parametrize(('frames', 'reason'), [
    # NumPy raised ValueError on a byte count that is no multiple of the item size
    (_update([{'name': 'a', 'dtype': 'float32', 'shape': [1]}], b'12345'), 'carries 5 bytes'),
    # int64 products overflowed (or raised OverflowError past 2**63)
    (_update([{'name': 'a', 'dtype': 'uint8', 'shape': [2 ** 32, 2 ** 32]}], b''),
     'carries 0 bytes'),
    (_update([{'name': 'a', 'dtype': 'uint8', 'shape': [2 ** 64]}], b''), 'carries 0 bytes'),
    # an empty frame of dimensions no array can have (found by the backend fuzz test)
    (_update([{'name': 'a', 'dtype': 'uint8', 'shape': [0, 2 ** 63]}], b''),
     r'declares shape \[0, 9223372036854775808\]: Maximum allowed dimension'),
    (_update([{'name': 'a', 'dtype': 'uint8', 'shape': [0, 2 ** 62, 2 ** 62]}], b''),
     'array is too big'),
    (_update([{'name': 'a', 'dtype': 'uint8', 'shape': [True]}], b'x'), 'shape of at most'),
    (_update([{'name': 'a', 'dtype': 'uint8', 'shape': [1] * 9}], b'x'), 'shape of at most'),
    (_update([{'name': 'a', 'dtype': ['uint8'], 'shape': [1]}], b'x'), 'dtype'),
    (_update([{'name': 'a', 'dtype': 'uint8', 'shape': [1]}] * 2, b'x', b'y'),
     "two binary frames are named 'a'"),
    ([b'Update', b'{"protocol": 1, "step": 1, "time_ns": ' + b'[' * 100_000 + b']' * 100_000
      + b'}'], 'nests deeper than 32'),
    ([b'Update', b'{"protocol": 1, "step": 1, "time_ns": 0, "x": ' + b'[' * 33 + b']' * 33
      + b'}'], 'nests deeper than 32'),
    ([b'Update', b'{"protocol": 1, "step": Infinity, "time_ns": 0}'], 'not valid JSON'),
    ([b'Update', b'{"protocol": 1, "step": 1, "time_ns": NaN}'], 'not valid JSON'),
    ([b'Update', b'{"protocol": 1, "step": ' + b'9' * 5000 + b', "time_ns": 0}'],
     'not valid JSON'),
    ([b'Update', b'{"protocol": 1, "step": 1, "time_ns": 9223372036854775808}'],
     "'time_ns' must be an integer that fits in 64 bits"),
    ([b'Update', b'{"protocol": 1, "step": true, "time_ns": 0}'], "'step' must be an integer"),
    ([b'Update', b'{"protocol": true, "step": 1, "time_ns": 0}'], 'version True'),
    ([b'Update', b'\xff\xfe\xfd'], 'not valid JSON'),
])
def test_hostile_messages_are_refused_with_protocol_errors(frames: list[bytes],
                                                            reason: str) -> None:
    """Each of these used to escape decode as another exception (and end a backend)."""
    with pytest.raises(ProtocolError, match=reason):
        framing.decode(frames)


def test_errors_quote_at_most_a_little_of_what_was_sent() -> None:
    with pytest.raises(ProtocolError) as refused:
        framing.decode([b'x' * 1_000_000, b'{}'])
    assert len(str(refused.value)) < 400 and '1000000 characters' in str(refused.value)


def test_encode_writes_strict_json_only() -> None:
    with pytest.raises(ProtocolError, match='finite numbers only'):
        framing.encode(framing.UPDATE, 1, 0, {'pose': [float('nan')] * 6})
