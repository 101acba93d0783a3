"""Protocol v1 conformance (docs/protocol.md), run against every backend: the embedded one and
the C# console host. Each test sends the same requests to each; replies are checked against
the contract and, where the world allows it, against distances computed by hand (conftest's
room: walls 5 m from its centre, an opening in the x = -5 m wall, a floor, two cars)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest
from conftest import (
    BIG_ROOM,
    CLOUD_PERIOD_NS,
    EGO_POSE,
    FRAME_NS,
    IMU,
    OPPONENT_POSE,
    POSES,
    ROOM,
    TURNED_POSES,
    Backend,
    Room,
    box_of,
    camera,
    cloud,
    cloud_beams,
    raw,
    rays,
    scan,
    scan_angles,
    sensor_origin,
    update,
)

from arsim_core import labels
from arsim_core.config.sensors import COMPUTED_KINDS
from arsim_core.protocol import framing, messages

MM = 1e-3  # hand-computed ranges agree within a millimetre
CM = 1e-2  # camera depth, and the two backends with each other, within a centimetre


def expected_ranges(spec: Mapping[str, Any], room: Room = ROOM,
                    poses: Mapping[str, Sequence[float]] | None = None,
                    cars_visible: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The ranges and classes a noiseless LiDAR ``spec`` on the ego car measures in ``room``
    (REP-117: -inf closer than range_min), the other car's box in view, the own car's not."""
    poses = poses or POSES
    pose = poses['ego']
    if spec['type'] == 'lidar2d':
        directions = rays(pose, spec['mount'], scan_angles(spec))
    else:
        azimuths, elevations = cloud_beams(spec)
        directions = rays(pose, spec['mount'], azimuths, elevations)
    boxes = [box_of(p) for car, p in poses.items() if car != 'ego'] if cars_visible else []
    ranges, classes = room.cast(sensor_origin(pose, spec['mount']), directions, boxes)
    ranges = np.where(ranges < spec['range_min'], -np.inf, ranges)
    shape = directions.shape[:-1]
    return ranges.reshape(shape), classes.reshape(shape)


def assert_ranges(measured: np.ndarray, expected: np.ndarray, atol: float, what: str) -> None:
    """Same shape, +inf and -inf in the same places, finite ranges within ``atol``."""
    assert measured.shape == expected.shape, what
    np.testing.assert_allclose(measured, expected, rtol=0, atol=atol,
                               err_msg=f'{what}: measured vs expected')


def serves_on(backend: Backend, step: int = 4) -> None:
    """After a refused request, a good Update is answered as ever: the room's scan."""
    reply = backend.update(step, ['scan'])
    assert_ranges(reply.arrays['ego/scan'], expected_ranges(scan())[0], MM,
                  'the scan after a refused request')


# --- start-up and the track --------------------------------------------------------------------
def test_ready_lists_exactly_the_rendered_sensors_and_the_track(backend: Backend) -> None:
    ready = backend.configure([scan(), cloud(), camera(), IMU])
    assert ready.track == 'room'
    assert ready.backend, 'Ready names the backend'
    assert sorted(ready.sensors) == sorted([
        messages.ListedSensor('ego', 'scan', 'lidar2d'),
        messages.ListedSensor('ego', 'cloud', 'lidar3d'),
        messages.ListedSensor('ego', 'cam', 'camera')]), 'the computed imu is not listed'


def test_a_sensor_of_every_computed_kind_is_taken_and_not_listed(backend: Backend) -> None:
    """A bridge may send every sensor of a car; a backend takes each computed kind arsim knows
    and renders none of them."""
    computed = [{'name': kind, 'type': kind, 'rate_hz': 10.0,
                 **({'mount': [0.0, 0.0, 0.1, 0.0, 0.0, 0.0]} if kind in ('imu', 'gnss') else {})}
                for kind in sorted(COMPUTED_KINDS)]
    ready = backend.configure([scan(), *computed])
    assert list(ready.sensors) == [messages.ListedSensor('ego', 'scan', 'lidar2d')]


def test_a_track_request_switches_the_track(backend: Backend) -> None:
    listed = backend.configure([scan()]).sensors
    room = backend.update(1, ['scan']).arrays['ego/scan']
    assert_ranges(room, expected_ranges(scan())[0], MM, 'scan in the first room')
    reply = backend.request(BIG_ROOM.track(), 2, 2 * FRAME_NS)
    assert reply.topic == framing.READY, reply.header
    ready = messages.Ready.from_wire(reply)
    assert ready.track == 'big room'
    assert ready.sensors == listed, 'the same sensors render on the new track'
    big = backend.update(3, ['scan']).arrays['ego/scan']
    assert_ranges(big, expected_ranges(scan(), BIG_ROOM)[0], MM, 'scan in the bigger room')
    assert big[0] == pytest.approx(9.2, abs=MM), 'the -y wall, 10 m from the centre'


# --- Update ------------------------------------------------------------------------------------
def test_an_update_echoes_step_and_time_near_two_to_the_62(backend: Backend) -> None:
    """Steps on and on, at times near 2^62 ns (the client checks the echo of every reply as
    well); a lidar3d frame is stamped with the start of its last revolution, a whole number
    of periods, also that far out."""
    backend.configure([scan(), cloud()])
    start = (1 << 62) // CLOUD_PERIOD_NS * CLOUD_PERIOD_NS
    steps = [(1, start + FRAME_NS), (2, start + 2 * FRAME_NS), (3, start + 3 * FRAME_NS),
             (1_000_000_007, start + 7 * FRAME_NS + 1), ((1 << 62) + 5, (1 << 62) + 5 * 10**9)]
    for step, time_ns in steps:
        reply = backend.request(update(['scan', 'cloud']), step, time_ns)
        assert (reply.topic, reply.step, reply.time_ns) == (framing.UPDATE, step, time_ns)
        meta = messages.UpdateReply.from_wire(reply).meta
        assert meta['ego/scan'].stamp_ns == time_ns
        assert meta['ego/cloud'].stamp_ns == (time_ns // CLOUD_PERIOD_NS - 1) * CLOUD_PERIOD_NS


def test_a_spinning_lidar_is_stamped_with_the_start_of_its_last_revolution(
        backend: Backend) -> None:
    backend.configure([cloud()])
    backend.update(1, [])
    stamps = [backend.update(step, ['cloud']).meta['ego/cloud'].stamp_ns for step in (2, 3, 4, 5)]
    assert stamps == [0, 0, CLOUD_PERIOD_NS, CLOUD_PERIOD_NS], '20 Hz: a revolution per 2 steps'


FRAMES = {  # suffix: dtype, encoding; per the table of docs/protocol.md
    'lidar2d': {'': ('float32', 'ranges'), '/intensity': ('float32', 'intensity')},
    'lidar3d': {'': ('float32', 'ranges'), '/intensity': ('float32', 'intensity'),
                '/reflectivity': ('uint16', 'reflectivity'), '/labels': ('uint8', 'labels')},
    'camera': {'/rgb': ('uint8', 'rgb8'), '/depth': ('float32', '32FC1'),
               '/semantic': ('uint8', 'mono8')},
}


def expected_frames(spec: Mapping[str, Any], time_ns: int) -> dict[str, tuple]:
    """name: (dtype, shape, FrameMeta) of every frame a rendered sensor sends at ``time_ns``."""
    kind, frames = spec['type'], {}
    for suffix, (dtype, encoding) in FRAMES[kind].items():
        stamp = time_ns
        if kind == 'lidar2d':
            shape: tuple[int, ...] = (spec['beams'],)
        elif kind == 'lidar3d':
            if suffix == '/labels' and not spec['labels']:
                continue
            shape = (spec['channels'], spec['columns'])
            stamp = (time_ns // CLOUD_PERIOD_NS - 1) * CLOUD_PERIOD_NS
        else:
            if suffix[1:] not in spec['outputs']:
                continue
            shape = (spec['height'], spec['width'], 3) if suffix == '/rgb' else (
                spec['height'], spec['width'])
        frames[f'ego/{spec["name"]}{suffix}'] = (
            np.dtype(dtype), shape, messages.FrameMeta('ego', spec['name'], kind, encoding, stamp))
    return frames


def test_every_sensor_type_sends_its_frames(backend: Backend) -> None:
    """Names ``<car>/<sensor>`` plus a suffix, dtypes, shapes and descriptions per the docs'
    table; labels only with ``labels: true``, a camera's outputs only those asked for, and
    nothing for a computed sensor even when it is asked for."""
    sensors = [scan(), cloud(), cloud('plain', with_labels=False), camera(),
               camera('depthcam', outputs=['depth']), IMU]
    backend.configure(sensors)
    backend.update(1, [])
    reply = backend.update(2, [s['name'] for s in sensors])
    expected: dict[str, tuple] = {}
    for spec in sensors[:-1]:
        expected.update(expected_frames(spec, 2 * FRAME_NS))
    assert sorted(reply.arrays) == sorted(expected)
    for name, (dtype, shape, meta) in expected.items():
        array = reply.arrays[name]
        assert (array.dtype, array.shape) == (dtype, shape), name
        assert reply.meta[name] == meta, name


# --- what the sensors measure ------------------------------------------------------------------
POSE_SETS = {'quarter turn': POSES, 'turned': TURNED_POSES}
# A car turned by an exact quarter turn: float32 rotations leave direction components of
# about -5e-24, which Embree once took as +1e-18 and missed what the rays pointed at.


@pytest.mark.parametrize('pose_set', list(POSE_SETS))
def test_a_2d_lidar_measures_the_hand_computed_distances(backend: Backend,
                                                        pose_set: str) -> None:
    """Zero noise: every range within 1 mm of the room's geometry, REP-117 +inf where a beam
    leaves through the opening, -inf for a return closer than range_min."""
    poses = POSE_SETS[pose_set]
    backend.configure([scan(), scan('near', range_min=3.0)])
    reply = backend.update(1, ['scan', 'near'], poses)
    for spec in (scan(), scan('near', range_min=3.0)):
        name = f'ego/{spec["name"]}'
        assert_ranges(reply.arrays[name], expected_ranges(spec, poses=poses)[0], MM, name)
    # By hand: the other car's box 3 m ahead, 0.25 m of it before its centre, the scan 0.2 m
    # ahead of base_link; beam 6 looks out of the car's left, through the opening.
    ranges, near = reply.arrays['ego/scan'], reply.arrays['ego/near']
    assert ranges[4] == pytest.approx(2.55, abs=MM)
    assert (ranges[6], near[6]) == (np.inf, np.inf), 'out through the opening'
    assert near[4] == -np.inf, 'a return closer than range_min'
    if pose_set == 'quarter turn':  # from (0.5, -0.8, 0.2): the -y wall behind, +x right
        np.testing.assert_allclose(ranges[[0, 2]], [4.2, 4.5], rtol=0, atol=MM)


@pytest.mark.parametrize('pose_set', list(POSE_SETS))
def test_a_3d_lidar_measures_the_hand_computed_distances(backend: Backend,
                                                        pose_set: str) -> None:
    """Zero noise: every range within 1 mm and every label as the room's geometry has them,
    +inf (label 255) where a beam leaves through the opening or over a wall."""
    poses = POSE_SETS[pose_set]
    backend.configure([cloud()])
    backend.update(1, [], poses)
    reply = backend.update(2, ['cloud'], poses)
    ranges, classes = expected_ranges(cloud(), poses=poses)
    assert_ranges(reply.arrays['ego/cloud'], ranges, MM, 'ego/cloud')
    np.testing.assert_array_equal(reply.arrays['ego/cloud/labels'], classes,
                                  err_msg='ego/cloud/labels')
    # By hand: ring 2, 0.2 rad down from 0.3 m, meets the floor; ring 0 of column 7 passes
    # over the -x wall; ring 1 of column 6 leaves through the opening.
    cloud_ranges = reply.arrays['ego/cloud']
    np.testing.assert_allclose(cloud_ranges[2], 0.3 / math.sin(0.2), rtol=0, atol=MM)
    assert (cloud_ranges[0, 7], cloud_ranges[1, 6]) == (np.inf, np.inf)


def test_another_car_is_seen_as_a_car_and_the_own_car_is_not(backend: Backend) -> None:
    backend.configure([cloud()])
    backend.update(1, [])
    reply = backend.update(2, ['cloud'])
    ranges, classes = reply.arrays['ego/cloud'], reply.arrays['ego/cloud/labels']
    # Column 0 looks along the car's x axis (+y): the other car's box from y = 1.75, the
    # LiDAR at y = -1.0, 0.3 m up; ring 0 is 0.1 rad up, ring 1 level.
    np.testing.assert_allclose(ranges[:2, 0], [2.75 / math.cos(0.1), 2.75], rtol=0, atol=MM)
    assert list(classes[:2, 0]) == [labels.CAR, labels.CAR]
    assert list(reply.arrays['ego/cloud/reflectivity'][:2, 0]) == [50, 50], \
        'a car reflects 0.5 (100 = white diffuse)'
    assert np.count_nonzero(classes == labels.CAR) == 2, 'only the other car is a car'
    assert not np.any(ranges < 1.0), 'the own box (0.15 to 0.25 m around the LiDAR) is unseen'

    backend.configure([cloud()], cars_visible=False)
    backend.update(1, [])
    hidden = backend.update(2, ['cloud'])
    np.testing.assert_allclose(hidden.arrays['ego/cloud'][:2, 0], [6 / math.cos(0.1), 6.0],
                               rtol=0, atol=MM, err_msg='cars_visible: false: the wall behind')
    assert not np.any(hidden.arrays['ego/cloud/labels'] == labels.CAR)


def test_a_camera_sees_the_wall_ahead_at_its_distance(backend: Backend) -> None:
    """From (0.5, -1.0, 0.5) looking along +x: the wall at x = 5 squarely ahead, so the whole
    middle row's depth (along the optical axis) is 4.5 m; sky above it, floor below."""
    backend.configure([camera()])
    reply = backend.update(1, ['cam'])
    rgb, depth = reply.arrays['ego/cam/rgb'], reply.arrays['ego/cam/depth']
    semantic = reply.arrays['ego/cam/semantic']
    assert (rgb.shape, rgb.dtype) == ((21, 33, 3), np.uint8)
    assert depth[10, 16] == pytest.approx(4.5, abs=CM), 'the centre pixel'
    assert semantic[10, 16] == labels.BARRIER
    np.testing.assert_allclose(depth[10], 4.5, rtol=0, atol=CM,
                               err_msg='depth is along the optical axis, not the ray')
    assert (semantic[10] == labels.BARRIER).all()
    assert (depth[0, 16], semantic[0, 16]) == (np.inf, labels.NONE), 'the sky over the wall'
    assert semantic[20, 16] == labels.GROUND and depth[20, 16] < 4.5, 'the floor below'


# --- refusals ----------------------------------------------------------------------------------
def with_header(frames: Sequence[bytes], change: Any) -> list[bytes]:
    """``frames`` with ``change(header)`` applied to the header."""
    header = json.loads(frames[1])
    change(header)
    return [frames[0], json.dumps(header).encode(), *frames[2:]]


def frame_entry(frame: str, **keys: Any) -> Any:
    """A header change: set ``keys`` in the description of the frame named ``frame``."""
    def change(header: dict[str, Any]) -> None:
        next(e for e in header['frames'] if e['name'] == frame).update(keys)
    return change


@pytest.mark.parametrize('version', [2, 0])
def test_another_protocol_version_is_refused_naming_both(backend: Backend, version: int) -> None:
    backend.configure([scan()])
    frames = raw(update(['scan']), 3, 3 * FRAME_NS)
    reply = backend.refused(with_header(frames, lambda h: h.update(protocol=version)))
    assert (f'peer speaks arsim protocol version {version}, this side speaks version 1'
            in reply.header['error'])
    assert reply.header['protocol'] == framing.PROTOCOL_VERSION
    serves_on(backend)


STEP, TIME_NS = 3, 3 * FRAME_NS
UPDATE_FRAMES = raw(update(['scan']), STEP, TIME_NS)
TRACK_FRAMES = raw(ROOM.track(), STEP, TIME_NS)
VERTICES = ROOM.track().vertices


def _update_with(change: Any) -> list[bytes]:
    return with_header(UPDATE_FRAMES, change)


def _pose(header: dict[str, Any], pose: list[Any]) -> None:
    header['cars'][0]['pose'] = pose


# case: (frames, what the reason names (a regex, any case), whether the header is readable
# so the Error must carry the request's step and time)
MALFORMED: dict[str, tuple[list[bytes], str, bool]] = {
    'unknown topic': ([b'Hello', UPDATE_FRAMES[1]], r'hello|topic', False),
    'header not JSON': ([b'Update', b'{"protocol": 1, "step": 3,'], r'json', False),
    'header a JSON array': ([b'Update', b'[1, 3, 75000000]'], r'object', False),
    'NaN in the header': (_update_with(lambda h: _pose(h, [math.nan, -1.0, 0, 0, 0, 0])),
                          r'nan|json', False),
    'a listed frame missing': (TRACK_FRAMES[:-1], r'frame', False),
    'a frame not listed': ([*UPDATE_FRAMES, b'\0' * 4], r'frame', False),
    'wrong byte count': ([*TRACK_FRAMES[:2], TRACK_FRAMES[2][:-4], *TRACK_FRAMES[3:]],
                         r'track_vertices', False),
    'dtype f4 (not a protocol name)': (with_header(TRACK_FRAMES, frame_entry(
        'track_vertices', dtype='f4')), r"'f4'|dtype", False),
    'dtype float16': (with_header(TRACK_FRAMES, frame_entry(
        'track_vertices', dtype='float16', shape=[len(VERTICES), 6])), r'float16|dtype', False),
    'duplicate frame names': (with_header(TRACK_FRAMES, frame_entry(
        'track_labels', name='track_vertices')), r'track_vertices', False),
    'triangle index out of range': (raw(messages.TrackRequest(
        'x', VERTICES, ROOM.track().triangles + np.uint32(len(VERTICES))), STEP, TIME_NS),
        r'track_triangles', True),
    'negative triangle index': (raw(messages.TrackRequest(
        'x', VERTICES, ROOM.track().triangles.astype(np.int32) - 1), STEP, TIME_NS),
        r'track_triangles', True),
    'pose of 5 numbers': (_update_with(lambda h: _pose(h, [0.5, -1.0, 0.0, 0.0, 0.0])),
                          r'pose', True),
    'unknown car in render': (raw(messages.UpdateRequest(
        {'ego': EGO_POSE, 'opp': OPPONENT_POSE}, [('ghost', 'scan')]), STEP, TIME_NS),
        r'ghost', True),
    'unknown sensor in render': (raw(update(['radar']), STEP, TIME_NS), r'radar', True),
}


@pytest.mark.parametrize('case', list(MALFORMED))
def test_a_malformed_request_gets_error_and_the_backend_serves_on(
        backend: Backend, case: str) -> None:
    backend.configure([scan()])
    frames, names, readable = MALFORMED[case]
    reply = backend.refused(frames)
    reason = reply.header['error']
    assert re.search(names, reason, re.IGNORECASE), f'the reason names {names!r}: {reason}'
    echoed = (reply.step, reply.time_ns)
    assert echoed == (STEP, TIME_NS) if readable else echoed in ((STEP, TIME_NS), (0, 0)), \
        f'the Error of a request whose header was {"" if readable else "not "}read: {echoed}'
    serves_on(backend)


def test_an_update_before_initial_settings_is_refused(fresh_backend: Backend) -> None:
    reply = fresh_backend.refused(raw(update(['scan']), 1, FRAME_NS))
    assert (reply.step, reply.time_ns) == (1, FRAME_NS)
    fresh_backend.configure([scan()])
    serves_on(fresh_backend, step=2)


# --- the backends with each other --------------------------------------------------------------
@pytest.mark.csharp_host
def test_both_backends_measure_the_same_within_a_centimetre(
        backends: dict[str, Backend]) -> None:
    """A denser cloud from a tilted, turned car, the other car in view: every range, and
    every scan range, agrees; so do nearly all labels (a beam grazing an edge may differ)."""
    sensors = [cloud(channels=8, columns=90, elevations=np.linspace(0.25, -0.25, 8).tolist()),
               scan()]
    poses = {'ego': (-1.0, 0.7, 0.05, 0.02, -0.03, 0.4), 'opp': (2.0, 1.8, 0.0, 0.0, 0.0, 0.3)}
    replies = {}
    for kind, backend in backends.items():
        backend.configure(sensors)
        backend.update(1, [], poses)
        replies[kind] = backend.update(2, ['cloud', 'scan'], poses).arrays
    embedded, host = replies['embedded'], replies['csharp-host']
    assert np.isfinite(embedded['ego/cloud']).sum() > 400
    assert (embedded['ego/cloud/labels'] == labels.CAR).any(), 'the other car is in view'
    for name in ('ego/cloud', 'ego/scan'):
        assert_ranges(host[name], embedded[name], CM, f'{name}, C# host vs embedded')
    agree = np.mean(host['ego/cloud/labels'] == embedded['ego/cloud/labels'])
    assert agree > 0.99, f'labels agree on {agree:.1%} of the points'


def test_every_class_has_the_reflectivity_of_the_label_table(backend: Backend) -> None:
    """A wall of each class 0..7 around the car, one LiDAR column on each: the backend's
    reflectivity per class is the label table's (arsim_core.labels), so a class added
    on one side only shows up here."""
    classes = sorted(labels.NAMES)[:-1]  # every class but NONE
    vertices, triangles = [], []
    for i in range(len(classes)):
        angle = -2 * math.pi * i / len(classes)  # column i, turning clockwise
        cx, cy = 3.0 * math.cos(angle), 3.0 * math.sin(angle)
        sx, sy = -math.sin(angle) * 0.5, math.cos(angle) * 0.5  # along the wall
        k = len(vertices)
        vertices += [(cx - sx, cy - sy, 0.0), (cx + sx, cy + sy, 0.0), (cx + sx, cy + sy, 2.0),
                     (cx - sx, cy - sy, 2.0)]
        triangles += [(k, k + 1, k + 2), (k, k + 2, k + 3)]
    track = messages.TrackRequest('classes', np.array(vertices, np.float32),
                                  np.array(triangles, np.uint32),
                                  np.repeat(np.array(classes, np.uint8), 2))
    spec = cloud(channels=1, columns=len(classes))
    spec['elevations'] = [0.0]
    backend.configure([spec], track=track)
    poses = {'ego': (0.0, 0.0, 0.0, 0.0, 0.0, 0.0), 'opp': (50.0, 50.0, 0.0, 0.0, 0.0, 0.0)}
    backend.update(1, [], poses)
    reply = backend.update(2, ['cloud'], poses)
    expected = [round(labels.REFLECTIVITY.get(c, labels.DEFAULT_REFLECTIVITY) * 100)
                for c in classes]
    assert list(reply.arrays['ego/cloud/labels'][0]) == classes
    assert list(reply.arrays['ego/cloud/reflectivity'][0]) == expected
