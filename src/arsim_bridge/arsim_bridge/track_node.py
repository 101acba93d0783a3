"""Track loader: loads the scenario's track and publishes everything other nodes and RViz need.

Topics (relative names; the launcher puts the node in /arsim and remaps ``map`` and ``track``
through the topic map), all latched (reliable, transient local, depth 1) so late joiners such as
RViz or a planner started after the simulation still get the current track:

- ``map`` (nav_msgs/OccupancyGrid): the walls rasterised at ``track.map_resolution``;
- ``track`` (arsim_msgs/TrackGeometry): the triangle mesh the bridge hands to the backend;
- ``track_markers`` (visualization_msgs/MarkerArray): the same mesh for RViz, one coloured
  TRIANGLE_LIST per label;
- ``centerline`` and ``raceline`` (nav_msgs/Path): poses along the lines, heading forward.

Service ``load_track`` (arsim_msgs/LoadTrack) switches the track at run time. Every message is
built before any is published, so a track that fails to load changes nothing.

Stamps are zero: the data are static and latched, RViz and tf2 treat a zero stamp as "latest",
and stamping with sim time would mean subscribing /clock at the full frame rate for nothing.
"""

from __future__ import annotations

import array
import math
import time
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np
from geometry_msgs.msg import Point, PoseStamped
from nav_msgs.msg import OccupancyGrid, Path
from rclpy.node import Node
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from arsim_bridge import qos
from arsim_bridge.common import declare_scenario, pose_2d, run_node
from arsim_core.config.scenario import Scenario
from arsim_core.engine.world import fixed_mesh
from arsim_core.errors import ArsimError, TrackError
from arsim_core.track import (
    LABEL_BARRIER,
    LABEL_CONE_BIG_ORANGE,
    LABEL_CONE_BLUE,
    LABEL_CONE_ORANGE,
    LABEL_CONE_YELLOW,
    LABEL_KERB,
    LABEL_ROAD,
    Track,
    TrackMesh,
    load_track,
    rasterize,
)
from arsim_core.track.fs.mission import Mission
from arsim_core.track.mesh import join_meshes, placed_cones_mesh
from arsim_core.track.polylines import headings
from arsim_msgs.msg import Mission as MissionMsg
from arsim_msgs.msg import TrackGeometry
from arsim_msgs.srv import LoadTrack

# Largest /map, in cells (= bytes). TUM Spa at 0.2 m (66 M cells) reaches a Python subscriber
# about 1.2 s after the request; 0.05 m, a 1:10 car's usual cell, would be a gigabyte. Above the
# limit the resolution is doubled until the grid fits, which keeps round numbers (0.1, 0.2 m).
MAX_MAP_CELLS = 64 * 1024 * 1024
MAP_MARGIN_M = 1.0  # free border around the walls, as rasterize's default

# RViz builds a triangle list point by point; above this many triangles a marker is thinned.
MAX_MARKER_TRIANGLES = 200_000
MARKER_NAMESPACE = 'track'
# Colours per label (r, g, b, a). The ground is left out: it is one flat rectangle that would
# only hide the /map display underneath it.
MARKER_COLOURS: dict[int, tuple[float, float, float, float]] = {
    LABEL_ROAD: (0.18, 0.18, 0.2, 1.0),
    LABEL_KERB: (0.85, 0.15, 0.12, 1.0),
    LABEL_BARRIER: (0.62, 0.62, 0.62, 1.0),
    LABEL_CONE_BLUE: (0.1, 0.3, 0.95, 1.0),
    LABEL_CONE_YELLOW: (0.98, 0.85, 0.1, 1.0),
    LABEL_CONE_ORANGE: (1.0, 0.45, 0.05, 1.0),
    LABEL_CONE_BIG_ORANGE: (1.0, 0.45, 0.05, 1.0),
}


@dataclass(frozen=True)
class TrackMessages:
    """Everything published for one track, built in full before any of it is published."""

    grid: OccupancyGrid
    geometry: TrackGeometry
    markers: MarkerArray
    centerline: Path
    raceline: Path
    summary: str


class TrackOutputs:
    """The track's latched topics: built from a track in full, then published. The publishers
    come from any object with rclpy's ``create_publisher``: the track loader, or the bag writer
    of ``arsim-dataset generate``."""

    def __init__(self, node: Any, scenario: Scenario) -> None:
        self.world_frame = scenario.topic_map.world_frame
        self.resolution = scenario.track.map_resolution
        self.scene = scenario.track.scene
        self.map_pub = node.create_publisher(OccupancyGrid, 'map', qos.LATCHED)
        self.track_pub = node.create_publisher(TrackGeometry, 'track', qos.LATCHED)
        self.marker_pub = node.create_publisher(MarkerArray, 'track_markers', qos.LATCHED)
        self.centerline_pub = node.create_publisher(Path, 'centerline', qos.LATCHED)
        self.raceline_pub = node.create_publisher(Path, 'raceline', qos.LATCHED)

    def publish(self, messages: TrackMessages) -> None:
        """Geometry last: the bridge resets the cars on it, and by then /map is already new."""
        self.map_pub.publish(messages.grid)
        self.marker_pub.publish(messages.markers)
        self.centerline_pub.publish(messages.centerline)
        self.raceline_pub.publish(messages.raceline)
        self.track_pub.publish(messages.geometry)

    def build(self, track: Track) -> TrackMessages:
        fixed = fixed_mesh(track, self.scene)
        mesh = fixed if track.cones is None else join_meshes(fixed,
                                                             placed_cones_mesh(track.cones))
        resolution = fit_resolution(track, self.resolution)
        grid = self._grid(track, resolution)
        summary = (f'track {track.name!r} loaded from {track.source}: {track.length:.1f} m, '
                   f'map {grid.info.width} x {grid.info.height} at {resolution:g} m')
        if resolution != self.resolution:
            summary += (f' (at track.map_resolution {self.resolution:g} m it would need '
                        f'{map_cells(track, self.resolution) / 1e6:.0f} M cells, more than '
                        f'the {MAX_MAP_CELLS / 1e6:.0f} M a /map may hold)')
        return TrackMessages(
            grid=grid,
            geometry=geometry_message(track, fixed, self.world_frame),
            markers=self._markers(mesh),
            centerline=self._path(track.centerline),
            raceline=self._path(track.raceline),
            summary=summary,
        )

    def _grid(self, track: Track, resolution: float) -> OccupancyGrid:
        raster = rasterize(track, resolution=resolution, margin=MAP_MARGIN_M)
        grid = OccupancyGrid()
        grid.header.frame_id = self.world_frame
        grid.info.resolution = float(raster.resolution)
        grid.info.height, grid.info.width = raster.data.shape
        grid.info.origin = pose_2d(*raster.origin)
        cells = array.array('b')
        cells.frombytes(np.ascontiguousarray(raster.data, dtype=np.int8).tobytes())
        grid.data = cells
        return grid

    def _markers(self, mesh: TrackMesh) -> MarkerArray:
        """DELETEALL first, so a switch to a track without, say, cones clears the old ones."""
        clear = Marker(ns=MARKER_NAMESPACE, action=Marker.DELETEALL)
        clear.header.frame_id = self.world_frame
        markers = [clear]
        for label, points in marker_triangles(mesh).items():
            marker = Marker(ns=MARKER_NAMESPACE, id=int(label), type=Marker.TRIANGLE_LIST,
                            action=Marker.ADD, frame_locked=False)
            marker.header.frame_id = self.world_frame
            marker.pose.orientation.w = 1.0
            marker.scale.x = marker.scale.y = marker.scale.z = 1.0  # RViz scales the points
            r, g, b, a = MARKER_COLOURS[label]
            marker.color = ColorRGBA(r=r, g=g, b=b, a=a)
            marker.points = [Point(x=x, y=y, z=z) for x, y, z in points.tolist()]
            markers.append(marker)
        return MarkerArray(markers=markers)

    def _path(self, points: np.ndarray | None) -> Path:
        """A closed line as a Path whose last pose repeats the first, so RViz draws the whole
        loop; an empty Path when there is no line, which clears a previous track's."""
        path = Path()
        path.header.frame_id = self.world_frame
        if points is None or len(points) < 2:
            return path
        points = np.asarray(points, dtype=float)
        if np.allclose(points[0], points[-1]):
            points = points[:-1]
        yaws = headings(points)
        for (x, y), yaw in zip([*points.tolist(), points[0].tolist()],
                               [*yaws.tolist(), float(yaws[0])], strict=True):
            pose = PoseStamped()
            pose.header.frame_id = self.world_frame
            pose.pose = pose_2d(x, y, yaw)
            path.poses.append(pose)
        return path


class TrackNode(Node):
    """Publishes one track at a time; ``load_track`` replaces it as a whole or not at all."""

    def __init__(self, **node_options: Any) -> None:
        super().__init__('track_loader', **node_options)
        scenario = declare_scenario(self)
        self.maps_dir = scenario.resources / 'maps'
        self.outputs = TrackOutputs(self, scenario)
        # A start-up track that does not load is a configuration error: it propagates and
        # run_node turns it into one fatal line and a non-zero exit.
        messages = self.outputs.build(load_track(scenario.track.name, self.maps_dir))
        self.outputs.publish(messages)
        self.get_logger().info(messages.summary)
        self.create_service(LoadTrack, 'load_track', self.on_load_track)

    def on_load_track(self, request: LoadTrack.Request,
                      response: LoadTrack.Response) -> LoadTrack.Response:
        """Load, build, then publish; any failure leaves the published track untouched."""
        spec = request.track.strip()
        started = time.monotonic()
        try:
            if not spec:
                msg = 'no track given: name a folder in maps/ or a path to a track'
                raise TrackError(msg)
            messages = self.outputs.build(load_track(spec, self.maps_dir))
        except ArsimError as exc:
            response.success, response.message = False, str(exc)
            self.get_logger().warn(f'track {spec!r} not loaded, keeping the current one: {exc}')
            return response
        except Exception as exc:  # a loader bug must not take the simulation down
            response.success = False
            response.message = f'{spec}: unexpected {type(exc).__name__}: {exc}'
            self.get_logger().error(f'track {spec!r} not loaded, keeping the current one:\n'
                                    f'{traceback.format_exc()}')
            return response
        self.outputs.publish(messages)
        response.success = True
        response.message = f'{messages.summary} in {time.monotonic() - started:.2f} s'
        self.get_logger().info(response.message)
        return response


def map_cells(track: Track, resolution: float) -> int:
    """Cells of the grid ``rasterize`` draws for ``track`` at ``resolution`` (0 without walls)."""
    walls = [w for w in track.walls if w.size]
    if not walls:
        return 0
    points = np.concatenate(walls)
    extent = points.max(axis=0) - points.min(axis=0) + 2.0 * MAP_MARGIN_M
    return math.ceil(extent[0] / resolution) * math.ceil(extent[1] / resolution)


def fit_resolution(track: Track, resolution: float, max_cells: int = MAX_MAP_CELLS) -> float:
    """``resolution``, doubled as often as needed for the track's grid to hold at most
    ``max_cells`` cells, so a full-scale circuit in a 1:10 scenario still gets a usable /map."""
    if not resolution > 0:
        return resolution  # rasterize reports it with a proper message
    while map_cells(track, resolution) > max_cells:
        resolution *= 2.0
    return resolution


def marker_triangles(mesh: TrackMesh,
                     max_triangles: int = MAX_MARKER_TRIANGLES) -> dict[int, np.ndarray]:
    """Corner points ``(3 T, 3)`` per label of the triangles RViz should draw.

    Zero-thickness walls carry every face twice, once per side, so rays hit them from both;
    RViz draws triangle lists without back-face culling, so one copy is enough and halves the
    message. A mesh that is still too big keeps every k-th triangle: only the view thins out.
    """
    keep = np.zeros(len(mesh.triangles), dtype=bool)
    if len(mesh.triangles):
        _, first = np.unique(np.sort(mesh.triangles, axis=1), axis=0, return_index=True)
        keep[first] = True
    keep &= np.isin(mesh.labels, list(MARKER_COLOURS))
    chosen = np.flatnonzero(keep)
    if len(chosen) > max_triangles:
        chosen = chosen[::math.ceil(len(chosen) / max_triangles)]
    vertices = np.asarray(mesh.vertices, dtype=np.float64)
    labels = mesh.labels[chosen]
    return {int(label): vertices[mesh.triangles[chosen[labels == label]]].reshape(-1, 3)
            for label in MARKER_COLOURS if np.any(labels == label)}


def geometry_message(track: Track, mesh: TrackMesh, world_frame: str) -> TrackGeometry:
    """The track as the bridge, the dynamics and the objects sensors take it: its labelled
    mesh without the placed cones, start pose, centerline and widths, and the placed cones and
    mission apart."""
    msg = TrackGeometry(name=track.name)
    msg.header.frame_id = world_frame
    msg.vertices = array.array('f', np.asarray(mesh.vertices, np.float32).ravel().tobytes())
    msg.triangles = array.array('I', np.asarray(mesh.triangles, np.uint32).ravel().tobytes())
    msg.labels = array.array('B', np.asarray(mesh.labels, np.uint8).tobytes())
    msg.start_pose = pose_2d(*track.start_pose)
    msg.centerline = array.array('d', np.asarray(track.centerline, np.float64).ravel())
    msg.width_left = array.array('d', np.asarray(track.width_left, np.float64))
    msg.width_right = array.array('d', np.asarray(track.width_right, np.float64))
    if track.cones is not None:
        msg.cones = array.array('d', np.asarray(track.cones.positions, np.float64).ravel())
        msg.cone_labels = array.array('B', np.asarray(track.cones.labels, np.uint8).tobytes())
    if track.mission is not None:
        msg.mission = mission_message(track.mission)
    return msg


def mission_message(mission: Mission) -> MissionMsg:
    def flat(points: np.ndarray) -> array.array:
        return array.array('d', np.asarray(points, np.float64).ravel())

    return MissionMsg(kind=mission.kind, laps=mission.laps, timed_laps=list(mission.timed_laps),
                      start_line=flat(mission.start_line), finish_line=flat(mission.finish_line),
                      stop_zone=flat(mission.stop_zone),
                      path=flat(mission.path) if mission.path is not None else [])


def main() -> int:
    return run_node(TrackNode)
