"""Protocol v1: round trips, explicit frame descriptions, version and malformed-input refusal."""

from __future__ import annotations

import json

import numpy as np
import pytest

from arsim_core import protocol
from arsim_core.errors import ProtocolError


@pytest.mark.parametrize('topic', sorted(protocol.TOPICS))
def test_round_trip_keeps_header_and_arrays(topic: str) -> None:
    arrays = {'a': np.arange(12, dtype=np.float32).reshape(3, 4),
              'b': np.array([1, 2, 3], dtype=np.uint32)}
    frames = protocol.encode(topic, 7, 175_000_000, {'extra': [1, 2]}, arrays,
                             {'a': {'sensor': 'scan'}})
    message = protocol.decode([bytes(f) for f in frames])
    assert (message.topic, message.step, message.time_ns) == (topic, 7, 175_000_000)
    assert message.header['extra'] == [1, 2]
    assert protocol.frame_meta(message)['a']['sensor'] == 'scan'
    for name, array in arrays.items():
        np.testing.assert_array_equal(message.arrays[name], array)
        assert message.arrays[name].dtype == array.dtype


def test_frames_are_found_by_name_not_order() -> None:
    frames = protocol.encode(protocol.UPDATE, 1, 0, arrays={
        'x': np.zeros(2, np.float32), 'y': np.ones(3, np.uint8)})
    header = json.loads(frames[1])
    header['frames'].reverse()
    swapped = [frames[0], json.dumps(header).encode(), frames[3], frames[2]]
    message = protocol.decode([bytes(f) for f in swapped])
    assert message.arrays['y'].tolist() == [1, 1, 1]


def test_other_version_is_refused_with_both_versions_named() -> None:
    frames = protocol.encode(protocol.UPDATE, 1, 0)
    header = json.loads(frames[1])
    header['protocol'] = 99
    with pytest.raises(ProtocolError, match='version 99.*version 1'):
        protocol.decode([frames[0], json.dumps(header).encode()])


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
        protocol.decode(frames)
