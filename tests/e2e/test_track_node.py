"""The track loader as its own process, started as the launcher starts it, observed over DDS.

Checks what a late-joining RViz or planner receives (latched /map, markers, paths, geometry),
that the load_track service switches to real tracks, and that bad requests change nothing.
"""

from __future__ import annotations

import math
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import simharness
from nav_msgs.msg import OccupancyGrid
from nav_msgs.msg import Path as PathMsg
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from simharness import LoggedProcess, Probe, installed_resources, ros_env
from visualization_msgs.msg import Marker, MarkerArray

from arsim_core.config.scenario import SceneSettings, load_scenario
from arsim_core.engine.world import fixed_mesh
from arsim_core.track import LABEL_BARRIER, LABEL_ROAD, Track, load_track, track_mesh
from arsim_core.track.model import LABEL_SCENERY_STRUCTURE
from arsim_launch.nodes import flatten, generate_nodes
from arsim_launch.runner import command
from arsim_msgs.msg import TrackGeometry
from arsim_msgs.srv import LoadTrack

STARTUP_S = 30.0
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
TOPICS = {'/map': OccupancyGrid, '/arsim/track': TrackGeometry,
          '/arsim/track_markers': MarkerArray, '/arsim/centerline': PathMsg,
          '/arsim/raceline': PathMsg}
SERVICE = '/arsim/load_track'


class TrackLoader:
    """The track_loader process of the default scenario, on a private DDS domain, and a probe
    node in this process that records every message of the loader's topics."""

    def __init__(self, workdir: Path, overrides: dict[str, Any] | None = None) -> None:
        resources = installed_resources()
        settings = resources / 'config' / 'sim.yaml'
        scenario = load_scenario(settings, resources, overrides)
        self.resolution = scenario.track.map_resolution
        self.maps_dir = resources / 'maps'
        self.topics = dict(TOPICS)
        self.topics[scenario.topic_map.map_topic] = self.topics.pop('/map')
        spec = next(n for n in flatten(generate_nodes(scenario, settings, overrides))
                    if n.name == 'track_loader')
        args = command(spec, workdir)
        self.domain_id = simharness.allocate_domain()
        self.node = LoggedProcess(args, ros_env(self.domain_id), workdir / 'track_loader.log',
                                  start_new_session=True)
        self.process = self.node.process
        self.probe = Probe(self.domain_id, 'track_probe')
        self.received: dict[str, list] = {}
        for topic in self.topics:
            self.received[topic] = self.subscribe(topic)
        self.client = self.probe.node.create_client(LoadTrack, SERVICE)
        assert self.probe.spin_until(self.client.service_is_ready, STARTUP_S), self.log

    @property
    def log(self) -> str:
        return self.node.log

    def subscribe(self, topic: str) -> list:
        """A new latched subscription to ``topic``: what a node starting now would get."""
        messages: list = []
        self.probe.node.create_subscription(self.topics[topic], topic, messages.append, LATCHED)
        return messages

    def latest(self, topic: str, count: int = 1, timeout_s: float = STARTUP_S):
        """The last message on ``topic`` once at least ``count`` have arrived."""
        messages = self.received[topic]
        assert self.probe.spin_until(lambda: len(messages) >= count, timeout_s), \
            f'{topic}: {len(messages)} of {count} message(s)\n{self.log}'
        return messages[-1]

    def call(self, track: str, timeout_s: float = 60.0) -> LoadTrack.Response:
        future = self.client.call_async(LoadTrack.Request(track=track))
        assert self.probe.spin_until(future.done, timeout_s), self.log
        return future.result()

    def close(self) -> None:
        self.probe.close()
        self.node.stop(signal.SIGTERM)


@pytest.fixture
def loader(tmp_path: Path) -> Iterator[TrackLoader]:
    node = TrackLoader(tmp_path)
    yield node
    node.close()


def grid_cells(grid: OccupancyGrid, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The grid as a (height, width) array and the (row, col) of world points in it (the grid
    is axis-aligned: origin yaw 0)."""
    info = grid.info
    assert info.origin.orientation.z == 0.0
    data = np.asarray(grid.data, dtype=np.int8).reshape(info.height, info.width)
    cols = np.floor((points[:, 0] - info.origin.position.x) / info.resolution).astype(int)
    rows = np.floor((points[:, 1] - info.origin.position.y) / info.resolution).astype(int)
    assert cols.min() >= 0 and rows.min() >= 0
    assert cols.max() < info.width and rows.max() < info.height
    return data, np.stack([rows, cols], axis=1)


def densify(polyline: np.ndarray, step: float) -> np.ndarray:
    """Points every ``step`` metres along a polyline, so a check covers whole walls."""
    out = [polyline[:1]]
    for a, b in zip(polyline[:-1], polyline[1:], strict=True):
        n = max(1, math.ceil(np.hypot(*(b - a)) / step))
        out.append(a + (b - a) * (np.arange(1, n + 1)[:, None] / n))
    return np.concatenate(out)


def assert_grid_matches(grid: OccupancyGrid, track: Track, frame: str) -> None:
    """Walls lie on occupied cells, the centerline on free ones.

    A wall drawn as a line of cells does not cover every cell a sloping wall grazes, so a point
    on a wall counts when its own cell or one of the eight around it is occupied; most must hit
    their own cell, which a grid shifted by a cell or more would not.
    """
    assert grid.header.frame_id == frame
    assert (grid.header.stamp.sec, grid.header.stamp.nanosec) == (0, 0)
    walls = np.concatenate([densify(w, grid.info.resolution / 4) for w in track.walls])
    data, cells = grid_cells(grid, walls)
    occupied = np.pad(data == 100, 1)
    rows, cols = cells[:, 0] + 1, cells[:, 1] + 1
    near = np.zeros(len(cells), dtype=bool)
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            near |= occupied[rows + dr, cols + dc]
    assert near.all(), f'{np.count_nonzero(~near)} wall points over free cells'
    assert occupied[rows, cols].mean() > 0.8, 'walls and grid are out of alignment'
    data, cells = grid_cells(grid, track.centerline)
    assert np.all(data[cells[:, 0], cells[:, 1]] == 0), 'the centerline runs over walls'


def assert_path_follows(path: PathMsg, line: np.ndarray, frame: str) -> None:
    """Closed: the last pose repeats the first; every pose heads to the next point."""
    assert path.header.frame_id == frame
    xy = np.array([(p.pose.position.x, p.pose.position.y) for p in path.poses])
    assert len(xy) == len(line) + 1 and np.allclose(xy[0], xy[-1])
    assert np.allclose(xy[:-1], line, atol=1e-9)
    yaw = np.array([2.0 * math.atan2(p.pose.orientation.z, p.pose.orientation.w)
                    for p in path.poses[:-1]])
    step = np.roll(line, -1, axis=0) - line
    forward = np.cos(yaw) * step[:, 0] + np.sin(yaw) * step[:, 1]
    assert np.all(forward > 0), 'a pose points against the driving direction'


def triangle_markers(array: MarkerArray, frame: str) -> dict[int, Marker]:
    first = array.markers[0]
    assert first.action == Marker.DELETEALL, 'a switch must clear the previous track'
    markers = {m.id: m for m in array.markers[1:]}
    for marker in markers.values():
        assert marker.header.frame_id == frame
        assert marker.type == Marker.TRIANGLE_LIST and marker.action == Marker.ADD
        assert len(marker.points) % 3 == 0 and marker.points
        assert marker.color.a > 0 and marker.scale.x == 1.0 and marker.pose.orientation.w == 1.0
    return markers


def without_duplicate_faces(track: Track, label: int) -> int:
    """Triangles of ``label`` in the track's mesh, counting a two-sided face once."""
    mesh = track_mesh(track)
    triangles = np.sort(mesh.triangles[mesh.labels == label], axis=1)
    return len(np.unique(triangles, axis=0))


def test_late_subscribers_get_map_markers_paths_and_geometry(loader: TrackLoader) -> None:
    track = load_track('arsim_ring', loader.maps_dir)
    grid = loader.latest('/map')
    assert grid.info.resolution == pytest.approx(loader.resolution)
    assert_grid_matches(grid, track, 'map')

    geometry = loader.latest('/arsim/track')
    assert geometry.name == 'arsim_ring' and geometry.header.frame_id == 'map'
    mesh = fixed_mesh(track, SceneSettings())  # the default scene around it
    assert len(geometry.triangles) == mesh.triangles.size
    assert set(np.asarray(geometry.labels).tolist()) >= {LABEL_SCENERY_STRUCTURE}
    assert (geometry.start_pose.position.x, geometry.start_pose.position.y) == \
        pytest.approx(track.start_pose[:2])

    markers = triangle_markers(loader.latest('/arsim/track_markers'), 'map')
    assert set(markers) == {LABEL_ROAD, LABEL_BARRIER}  # arsim_ring has no cones
    for label, marker in markers.items():
        assert len(marker.points) == 3 * without_duplicate_faces(track, label)
    barrier = np.array([(p.x, p.y, p.z) for p in markers[LABEL_BARRIER].points])
    assert barrier[:, 2].max() == pytest.approx(track.barrier_height)
    assert markers[LABEL_BARRIER].color.r == markers[LABEL_BARRIER].color.b  # grey

    assert_path_follows(loader.latest('/arsim/centerline'), track.centerline, 'map')
    raceline = loader.latest('/arsim/raceline')
    assert raceline.header.frame_id == 'map' and not raceline.poses  # none on arsim_ring


def test_switch_to_an_f1tenth_map_republishes_everything(loader: TrackLoader,
                                                         shared_tracks: Path) -> None:
    for topic in loader.topics:
        loader.latest(topic)
    map_yaml = shared_tracks / 'f1tenth_racetracks' / 'Spielberg' / 'Spielberg_map.yaml'
    response = loader.call(str(map_yaml))
    assert response.success, response.message
    assert "'Spielberg'" in response.message

    track = load_track(map_yaml)
    grid = loader.latest('/map', 2)
    assert grid.info.resolution == pytest.approx(loader.resolution)
    assert_grid_matches(grid, track, 'map')
    geometry = loader.latest('/arsim/track', 2)
    assert geometry.name == 'Spielberg'
    assert len(geometry.labels) == len(fixed_mesh(track, SceneSettings()).labels)
    markers = triangle_markers(loader.latest('/arsim/track_markers', 2), 'map')
    assert len(markers[LABEL_BARRIER].points) == \
        3 * without_duplicate_faces(track, LABEL_BARRIER)
    assert_path_follows(loader.latest('/arsim/centerline', 2), track.centerline, 'map')
    raceline = loader.latest('/arsim/raceline', 2)
    line = track.raceline
    if np.allclose(line[0], line[-1]):
        line = line[:-1]
    assert_path_follows(raceline, line, 'map')

    late = loader.subscribe('/arsim/track')
    assert loader.probe.spin_until(lambda: late, 10.0) and late[-1].name == 'Spielberg'


def test_bad_requests_fail_cleanly_and_keep_the_current_track(loader: TrackLoader,
                                                              tmp_path: Path) -> None:
    for topic in loader.topics:
        loader.latest(topic)
    source = (loader.maps_dir / 'arsim_ring' / 'centerline.csv').read_text().splitlines()
    nan = list(source)
    nan[10] = ','.join(['5.4', 'nan', '1.1', '1.1'])
    (tmp_path / 'nan.csv').write_text('\n'.join(nan) + '\n')
    (tmp_path / 'open.csv').write_text('\n'.join(source[:300]) + '\n')
    (tmp_path / 'garbage.yaml').write_text('format: [tum_csv\n')
    cases = {
        str(tmp_path / 'nan.csv'): 'nan.csv:11: ',
        str(tmp_path / 'open.csv'): 'centerline is not closed',
        str(tmp_path / 'missing.csv'): 'missing.csv: no such track file',
        'no_such_track': 'no such track file, and no track of that name',
        str(tmp_path / 'garbage.yaml'): 'garbage.yaml',
        '': 'no track given',
    }
    for request, expected in cases.items():
        response = loader.call(request)
        assert not response.success, request
        assert expected in response.message, response.message
        assert loader.process.poll() is None, loader.log

    loader.probe.spin_until(lambda: False, 1.0)  # anything republished would arrive by now
    for topic in loader.topics:
        assert len(loader.received[topic]) == 1, f'{topic} was republished'
    late_map, late_track = loader.subscribe('/map'), loader.subscribe('/arsim/track')
    assert loader.probe.spin_until(lambda: late_map and late_track, 10.0)
    assert late_track[-1].name == 'arsim_ring'
    assert late_map[-1].data == loader.received['/map'][0].data

    response = loader.call('arsim_ring')  # the service still works after all that
    assert response.success, response.message


def test_spa_switch_time_to_map(loader: TrackLoader, shared_tracks: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    """TUM Spa (7 km, full scale): how long from the request to the new /map in a subscriber.

    At the default 0.05 m the grid would hold a gigabyte, so the loader doubles the resolution
    until it fits and says so in the response.
    """
    loader.latest('/map')
    started = time.monotonic()
    future = loader.client.call_async(
        LoadTrack.Request(track=str(shared_tracks / 'tum_racetrack_database' / 'Spa.csv')))
    grid = loader.latest('/map', 2, timeout_s=60.0)
    to_map = time.monotonic() - started
    assert loader.probe.spin_until(future.done, 30.0)
    response = future.result()
    assert response.success, response.message
    assert grid.info.resolution > loader.resolution
    assert f'{grid.info.resolution:g} m' in response.message
    assert_grid_matches(grid, load_track(shared_tracks / 'tum_racetrack_database' / 'Spa.csv'),
                        'map')
    with capsys.disabled():
        print(f'\nSpa: request to /map received {to_map:.2f} s '
              f'({grid.info.width} x {grid.info.height} cells at {grid.info.resolution:g} m); '
              f'service: {response.message}')


def test_everything_is_in_the_world_frame_of_the_topic_map(tmp_path: Path) -> None:
    """With the real car's names the ground truth lives in arsim_world, on /arsim/map."""
    node = TrackLoader(tmp_path, {'topic_map': 'f1tenth_car'})
    try:
        grid = node.latest('/arsim/map')
        assert_grid_matches(grid, load_track('arsim_ring', node.maps_dir), 'arsim_world')
        assert node.latest('/arsim/track').header.frame_id == 'arsim_world'
        triangle_markers(node.latest('/arsim/track_markers'), 'arsim_world')
        for topic in ('/arsim/centerline', '/arsim/raceline'):
            path = node.latest(topic)
            assert path.header.frame_id == 'arsim_world'
            assert all(p.header.frame_id == 'arsim_world' for p in path.poses)
    finally:
        node.close()
