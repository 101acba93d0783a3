"""Track loader: loads the scenario's track, publishes /map and hands the geometry to the bridge.

Both topics are latched (transient local), so nodes that start later still receive them.
"""

from __future__ import annotations

import array

import numpy as np
from nav_msgs.msg import OccupancyGrid
from rclpy.node import Node

from arsim_bridge import qos
from arsim_bridge.common import declare_scenario, pose_2d, run_node
from arsim_core.track import load_track, rasterize, track_mesh
from arsim_msgs.msg import TrackGeometry


class TrackNode(Node):
    def __init__(self) -> None:
        super().__init__('track_loader')
        scenario = declare_scenario(self)
        self.world_frame = scenario.topic_map.world_frame
        self.map_pub = self.create_publisher(OccupancyGrid, 'map', qos.LATCHED)
        self.track_pub = self.create_publisher(TrackGeometry, 'track', qos.LATCHED)
        track = load_track(scenario.track.name, scenario.resources / 'maps')
        self.map_pub.publish(self._grid(track, scenario.track.map_resolution))
        self.track_pub.publish(self._geometry(track))
        self.get_logger().info(f'track {track.name!r} loaded from {track.source}')

    def _grid(self, track, resolution: float) -> OccupancyGrid:
        raster = rasterize(track, resolution=resolution)
        grid = OccupancyGrid()
        grid.header.frame_id = self.world_frame
        grid.info.resolution = float(raster.resolution)
        grid.info.height, grid.info.width = raster.data.shape
        grid.info.origin = pose_2d(*raster.origin)
        cells = array.array('b')
        cells.frombytes(np.ascontiguousarray(raster.data, dtype=np.int8).tobytes())
        grid.data = cells
        return grid

    def _geometry(self, track) -> TrackGeometry:
        mesh = track_mesh(track)
        msg = TrackGeometry(name=track.name)
        msg.header.frame_id = self.world_frame
        msg.vertices = array.array('f', np.asarray(mesh.vertices, np.float32).ravel().tobytes())
        msg.triangles = array.array('I', np.asarray(mesh.triangles, np.uint32).ravel().tobytes())
        msg.labels = array.array('B', np.asarray(mesh.labels, np.uint8).tobytes())
        msg.start_pose = pose_2d(*track.start_pose)
        return msg


def main() -> int:
    return run_node(TrackNode)
