"""The typed message bodies: every one survives the wire unchanged (through the bytes and in
process), and a body of the wrong shape is a ProtocolError naming the key."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from arsim_core.errors import ProtocolError
from arsim_core.geometry import Footprint
from arsim_core.protocol import framing, messages
from arsim_core.protocol.messages import (
    CarSettings,
    Error,
    FanoutFrame,
    FrameMeta,
    InitialSettings,
    ListedSensor,
    Ready,
    TrackRequest,
    UpdateReply,
    UpdateRequest,
)

SCAN = {'name': 'scan', 'type': 'lidar2d', 'rate_hz': 40.0, 'mount': [0.3, 0.0, 0.1, 0, 0, 0],
        'beams': 4, 'angle_min': -math.pi / 2, 'angle_increment': math.pi / 3,
        'range_min': 0.1, 'range_max': 30.0, 'noise_std': 0.01, 'dropout': 0.0}
IMU = {'name': 'imu', 'type': 'imu', 'rate_hz': 100.0}


def track(labels: bool = True) -> TrackRequest:
    vertices = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 1]], np.float32)
    triangles = np.array([[0, 1, 2], [0, 2, 3]], np.uint32)
    return TrackRequest('box', vertices, triangles,
                        np.array([1, 4], np.uint8) if labels else None)


RANGES = np.array([1.5, np.inf, np.nan, -np.inf], np.float32)
RGB = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
META = {'ego/scan': FrameMeta('ego', 'scan', 'lidar2d', 'ranges', 25_000_000),
        'opp/cam/rgb': FrameMeta('opp', 'cam', 'camera', 'rgb8', 25_000_000)}
REPLY = UpdateReply({'ego/scan': RANGES, 'opp/cam/rgb': RGB}, META)
SETTINGS = InitialSettings(track=track(), world_frame='map', frame_period_ns=25_000_000, seed=7,
                           cars_visible=False,
                           cars=(CarSettings('ego', Footprint(0.5, 0.3, 0.2), (SCAN, IMU)),
                                 CarSettings('opp')))
READY = Ready('arsim-embedded', 'box', (ListedSensor('ego', 'scan', 'lidar2d'),))
UPDATE = UpdateRequest({'ego': [1.0, -2.0, 0.0, 0.0, 0.0, 0.3],
                        'opp': [2.0, -2.0, 0.1, 0.0, 0.0, 0.0]},
                       (('ego', 'scan'), ('opp', 'cam')))
ERROR = Error('the backend failed')
FANOUT = FanoutFrame('ego', (1.0, 2.0, 0.5), (3.0, 0.1, -0.2), 0.05, (0.4, -0.1),
                     {'ego/scan': RANGES}, {'ego/scan': META['ego/scan']})

BODIES: list[messages.Body] = [
    SETTINGS, InitialSettings(track=track(labels=False)),
    READY, Ready('unity', 'box'),
    track(), track(labels=False),
    UPDATE, UpdateRequest({}),
    REPLY, UpdateReply({}, {}),
    ERROR,
    FANOUT, FanoutFrame('opp', (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), accel=(0.4, -0.1, 2.0)),
    FanoutFrame('opp', (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
]


def over_the_wire(body: messages.Body) -> framing.Message:
    frames = messages.encode(body, 12, 300_000_000)
    return framing.decode([bytes(frame) for frame in frames])


@pytest.mark.parametrize('body', BODIES, ids=lambda body: type(body).__name__)
def test_every_body_survives_the_wire(body: messages.Body) -> None:
    message = over_the_wire(body)
    assert (message.topic, message.step, message.time_ns) == (body.TOPIC, 12, 300_000_000)
    assert type(body).from_wire(message) == body


@pytest.mark.parametrize('body', BODIES, ids=lambda body: type(body).__name__)
def test_every_body_survives_the_way_in_process(body: messages.Body) -> None:
    message = messages.in_process(body, 12, 300_000_000)
    wired = over_the_wire(body)
    assert message.header == wired.header
    assert type(body).from_wire(message) == body


def test_equality_sees_every_array_value_and_dtype() -> None:
    assert REPLY == UpdateReply(dict(REPLY.arrays), dict(META))
    assert REPLY != UpdateReply({**REPLY.arrays, 'ego/scan': RANGES + 1}, META)
    assert REPLY != UpdateReply({**REPLY.arrays, 'ego/scan': RANGES.astype(np.float64)}, META)
    assert track() != replace(track(), labels=None)


def test_the_arrays_travel_without_a_copy() -> None:
    wire = REPLY.to_wire()
    assert wire.arrays['ego/scan'] is RANGES
    parts = REPLY.by_car()
    assert sorted(parts) == ['ego', 'opp']
    assert parts['ego'].arrays['ego/scan'] is RANGES
    assert parts['ego'].meta == {'ego/scan': META['ego/scan']}
    message = over_the_wire(REPLY)
    assert UpdateReply.from_wire(message).arrays['opp/cam/rgb'] is message.arrays['opp/cam/rgb']


def test_the_wire_form_is_the_documented_one() -> None:
    """docs/protocol.md's keys, so peers that build headers by hand are unaffected."""
    header = over_the_wire(SETTINGS).header
    assert header['track'] == {'name': 'box'} and header['world_frame'] == 'map'
    assert header['cars'][0] == {'id': 'ego', 'footprint': [0.5, 0.3, 0.2],
                                 'sensors': [SCAN, IMU]}
    assert [f['name'] for f in header['frames']] == ['track_vertices', 'track_triangles',
                                                     'track_labels']
    update = over_the_wire(UPDATE).header
    assert update['cars'][0] == {'id': 'ego', 'pose': [1.0, -2.0, 0.0, 0.0, 0.0, 0.3]}
    assert update['render'] == [{'car': 'ego', 'sensor': 'scan'},
                                {'car': 'opp', 'sensor': 'cam'}]
    reply = framing.frame_meta(over_the_wire(REPLY))['ego/scan']
    assert reply == {'name': 'ego/scan', 'dtype': 'float32', 'shape': [4], 'car': 'ego',
                     'sensor': 'scan', 'type': 'lidar2d', 'encoding': 'ranges',
                     'stamp_ns': 25_000_000}
    fanout = over_the_wire(FANOUT).header
    assert fanout['car'] == 'ego'
    assert fanout['state'] == {'pose': [1.0, 2.0, 0.5], 'twist': [3.0, 0.1, -0.2],
                               'accel': [0.4, -0.1], 'steering_angle': 0.05}


def test_a_request_lists_each_render_once() -> None:
    message = framing.message(framing.UPDATE, 1, 0, {'cars': [], 'render': [
        {'car': 'ego', 'sensor': 'scan'}, {'car': 'ego', 'sensor': 'scan'}]})
    assert UpdateRequest.from_wire(message).render == (('ego', 'scan'),)


def with_header(body: messages.Body, **changes: object) -> framing.Message:
    """``body``'s message with header keys replaced (None: removed)."""
    header, arrays, meta = body.to_wire()
    header = {**header, **changes}
    header = {key: value for key, value in header.items() if value is not None}
    return framing.message(body.TOPIC, 1, 0, header, arrays, meta)


@pytest.mark.parametrize(('body', 'changes', 'key'), [
    (SETTINGS, {'cars': [{'id': 'ego', 'footprint': [0.5, 0.3]}]}, "'footprint'"),
    (SETTINGS, {'cars': [{'id': 'ego', 'footprint': [0.5, 0.3, 0.2],
                          'wheels': [0.2, -0.2, 0.05, 0.03]}]}, "'wheels'"),  # rear ahead
    (SETTINGS, {'cars': [{'id': 'ego', 'footprint': [0.5, 0.3, 0.2],
                          'wheels': [-0.2, 0.2, 0.0, 0.03]}]}, "'wheels'"),
    (SETTINGS, {'cars': [{'id': 'ego', 'footprint': [0.5, 0.3, 0.2],
                          'wheels': [-0.2, 0.2, 0.05]}]}, "'wheels'"),
    (SETTINGS, {'cars': [{'id': 3}]}, "'id'"),
    (SETTINGS, {'seed': -1}, "'seed'"),
    (SETTINGS, {'cars_visible': 'yes'}, "'cars_visible'"),
    (SETTINGS, {'world_frame': 5}, "'world_frame'"),
    (SETTINGS, {'cars': [{'id': 'ego', 'sensors': [{**SCAN, 'beams': 0}]}]}, "'beams'"),
    (track(), {'track': {'name': 3}}, '"track"'),
    (READY, {'backend': None}, "'backend'"),
    (READY, {'sensors': [{'car': 'ego', 'sensor': 'scan'}]}, "'type'"),
    (UPDATE, {'cars': [{'id': 'ego', 'pose': [0.0] * 5}]}, "'pose'"),
    (UPDATE, {'render': [{'car': 'ego'}]}, "'sensor'"),
    (ERROR, {'error': None}, "'error'"),
    (FANOUT, {'state': None}, "'state'"),
    (FANOUT, {'state': {'pose': [0, 0, 0], 'twist': [0, 0]}}, "'twist'"),
    (FANOUT, {'state': {'pose': [0, 0, 0], 'twist': [0, 0, 0], 'accel': 'up'}}, "'accel'"),
    (FANOUT, {'car': None}, "'car'"),
])
def test_a_body_of_the_wrong_shape_names_the_key(body: messages.Body, changes: dict,
                                                  key: str) -> None:
    with pytest.raises(ProtocolError, match=key):
        type(body).from_wire(with_header(body, **changes))


@pytest.mark.parametrize(('change', 'key'), [
    ({'stamp_ns': None}, "'stamp_ns'"),
    ({'stamp_ns': 1.5}, "'stamp_ns'"),
    ({'encoding': 7}, "'encoding'"),
    ({'car': None}, "'car'"),
])
def test_a_frame_description_of_the_wrong_shape_names_the_key(change: dict, key: str) -> None:
    header, arrays, meta = REPLY.to_wire()
    bad = {name: {k: v for k, v in {**entry, **change}.items() if v is not None}
           for name, entry in meta.items()}
    with pytest.raises(ProtocolError, match=key):
        UpdateReply.from_wire(framing.message(framing.UPDATE, 1, 0, header, arrays, bad))


def test_a_track_mesh_is_checked() -> None:
    bad = replace(track(), triangles=np.array([[0, 1, 9], [0, 2, 3]], np.uint32))
    with pytest.raises(ProtocolError, match='index a vertex that does not exist'):
        TrackRequest.from_wire(messages.in_process(bad))
    wide = replace(track(), vertices=track().vertices.astype(np.float64))
    assert TrackRequest.from_wire(messages.in_process(wide)) == track()  # as the scene takes it


def test_the_protocol_renders_the_kinds_the_settings_call_rendered() -> None:
    """The protocol's list of rendered sensor types and the settings' registry of kinds agree,
    so a sensor the bridge asks the backend for is one the protocol checks as rendered."""
    from arsim_core.config.sensors import SENSOR_TYPES
    from arsim_core.protocol.wire import RENDERED_KINDS

    assert RENDERED_KINDS == {kind for kind, (spec, _) in SENSOR_TYPES.items() if spec.rendered}
