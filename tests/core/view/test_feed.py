"""The view's feed: scans kept from the frames that carry them and turned into world points
where the sensor was, snapshots at most once per period, and the track's picture in place."""

from __future__ import annotations

import math

import cv2
import numpy as np

from arsim_core.engine import CarState, Engine, InProcessRenderer, TrackWorld
from arsim_core.engine.pacing import Pacing
from arsim_core.protocol import framing
from arsim_core.track.fs import generate
from arsim_core.view.feed import ViewFeed
from arsim_core.view.track_image import track_image


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _reply(arrays: dict[str, np.ndarray]) -> framing.Message:
    meta = {name: {'car': name.split('/')[0]} for name in arrays}
    return framing.decode(framing.encode(framing.UPDATE, 1, 0, {}, arrays, meta))


def _feed(make_scenario, ring, clock: Clock, real_time_factor: float = 1.0) -> ViewFeed:
    scenario = make_scenario(('ego',))
    engine = Engine(scenario, InProcessRenderer(), dynamics=False)
    engine.load_track(ring)
    return ViewFeed(scenario, engine, Pacing(real_time_factor), period_s=0.05,
                    flat_out_period_s=0.2, clock=clock)


def test_a_scan_becomes_world_points_from_where_its_sensor_was(make_scenario, ring):
    clock = Clock()
    feed = _feed(make_scenario, ring, clock)
    spec = feed.scan_specs['ego/scan'][1]
    ranges = np.full(spec.beams, 2.0, np.float32)
    ranges[::2] = np.inf  # no return
    car = CarState(10.0, 5.0, math.pi / 2)
    feed.offer(0, {'ego': car}, _reply({'ego/scan': ranges}))
    snapshot = feed.latest()
    assert snapshot is not None
    points = np.array(snapshot.to_json()['scans']['ego/scan'])
    assert 0 < len(points) <= 360
    # The sensor sits 0.27 m ahead of base_link: straight up the y axis from (10, 5).
    sensor = np.array([10.0, 5.27])
    assert np.allclose(np.hypot(*(points - sensor).T), 2.0, atol=0.01)
    assert snapshot.cars[0] == {'name': 'ego', 'x': 10.0, 'y': 5.0, 'yaw': 1.5708,
                                'speed': 0.0, 'steering': 0.0}
    assert [s['name'] for s in snapshot.standings] == ['ego']


def test_snapshots_come_at_most_once_a_period_and_keep_the_last_scan(make_scenario, ring):
    clock = Clock()
    feed = _feed(make_scenario, ring, clock)
    state = {'ego': CarState(0.0, 0.0, 0.0)}
    feed.offer(0, state, _reply({'ego/scan': np.ones(1080, np.float32)}))
    first = feed.latest()
    clock.now += 0.01
    feed.offer(25_000_000, state, _reply({}))
    assert feed.latest() is first  # not due yet
    clock.now += 0.05
    feed.offer(50_000_000, state, _reply({}))  # a frame without the scan
    later = feed.latest()
    assert later is not None and later.version == first.version + 1 and later.time_s == 0.05
    assert 'ego/scan' in later.scans  # the newest scan stays shown


def test_the_track_picture_puts_the_barriers_where_they_are(ring):
    image = track_image(ring, max_pixels=1024)
    picture = cv2.imdecode(np.frombuffer(image.png, np.uint8), cv2.IMREAD_COLOR)
    assert picture.shape[:2] == (image.height, image.width) and max(picture.shape) <= 1024
    centre = np.asarray(ring.centerline)[0, :2]
    row = int((image.y_max - centre[1]) / image.resolution)
    column = int((centre[0] - image.x_min) / image.resolution)
    assert tuple(picture[row, column]) == (200, 200, 200)  # road on the centerline
    vertices = np.asarray(ring.vertices).reshape(-1, 3)
    barrier = vertices[np.asarray(ring.triangles)[np.asarray(ring.labels) == 1][0, 0]]
    row = int((image.y_max - barrier[1]) / image.resolution)
    column = int((barrier[0] - image.x_min) / image.resolution)
    near = picture[max(row - 1, 0):row + 2, max(column - 1, 0):column + 2]
    assert near.min() < 100  # a barrier's dark grey at its vertex


def test_the_track_picture_shows_a_layouts_cones():
    """Placed cones are not in the world's fixed mesh (they can fall): the picture adds them."""
    world = TrackWorld.from_track(generate('acceleration'))
    image = track_image(world, max_pixels=2048)
    picture = cv2.imdecode(np.frombuffer(image.png, np.uint8), cv2.IMREAD_COLOR)
    assert world.cones is not None
    for x, y in world.cones.of(2).tolist():  # blue
        row = int((image.y_max - y) / image.resolution)
        column = int((x - image.x_min) / image.resolution)
        assert np.abs(picture[row, column].astype(int) - (200, 90, 20)).max() <= 3


def test_a_simulation_running_flat_out_is_snapshot_less_often(make_scenario, ring):
    clock = Clock()
    feed = _feed(make_scenario, ring, clock, real_time_factor=0.0)
    state = {'ego': CarState(0.0, 0.0, 0.0)}
    versions = []
    for frame in range(100):  # 1 s of wall time, a frame every 10 ms
        feed.offer(frame * 25_000_000, state, _reply({}))
        versions.append(feed.latest().version)
        clock.now += 0.01
    assert versions[-1] == 5  # every 0.2 s
    feed.pacing.set_real_time_factor(1.0)
    for frame in range(100, 200):
        feed.offer(frame * 25_000_000, state, _reply({}))
        clock.now += 0.01
    assert 16 <= feed.latest().version - versions[-1] <= 20  # every 0.05 s (or a tick later)
