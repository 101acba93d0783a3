"""Objects republisher (``type: objects``): the 3D ground truth around a car, as
vision_msgs/Detection3DArray in base_link: the track's cones (those of the track mesh it
hears on the track topic, and the placed cones as the engine says they stand or lie) and the
other cars (their footprint boxes at the poses their
dynamics publish), those within ``range_m``. Class ids as FSOCO names them, score 1; a car's
detection id is its name, a cone's its number on the track."""

from __future__ import annotations

import threading
from collections import deque
from functools import partial

from vision_msgs.msg import (
    Detection3D,
    Detection3DArray,
    ObjectHypothesis,
    ObjectHypothesisWithPose,
)

from arsim_bridge import qos
from arsim_bridge.common import planar, set_pose_2d, to_ns, to_time, track_world
from arsim_bridge.republishers.base import CarFrame, SensorContext
from arsim_core.config.sensors import ObjectsSpec
from arsim_core.engine.cones import CONES_ARRAY
from arsim_core.sensors.objects import (
    Box3D,
    cars_around,
    placed_cone_boxes,
    seen_from,
    track_cones,
)
from arsim_msgs.msg import CarState, TrackGeometry

POSES_KEPT = 8  # frames of each other car's pose kept, to pick the one of the frame published


class ObjectsRepublisher:
    def __init__(self, ctx: SensorContext) -> None:
        self.ctx = ctx
        self.spec: ObjectsSpec = ctx.spec
        node, scenario = ctx.node, ctx.scenario
        self.pub = node.create_publisher(Detection3DArray, ctx.topic, qos.SENSOR)
        self.cones: list[Box3D] = []
        self.footprints = {car.name: car.profile.footprint for car in scenario.cars}
        self.poses: dict[str, deque[tuple[int, tuple[float, float, float]]]] = {}
        self.lock = threading.Lock()  # states arrive on the executor, frames on their thread
        node.create_subscription(TrackGeometry, scenario.topic_map.track_topic, self._on_track,
                                 qos.LATCHED)
        for car in scenario.cars:
            if car.name != ctx.car:
                self.poses[car.name] = deque(maxlen=POSES_KEPT)
                node.create_subscription(CarState, car.names.state_topic,
                                         partial(self._on_state, car.name), qos.STREAM)

    def _on_track(self, msg: TrackGeometry) -> None:
        world = track_world(msg)
        self.cones = track_cones(world.vertices, world.triangles, world.labels)

    def _on_state(self, car: str, msg: CarState) -> None:
        with self.lock:
            self.poses[car].append((to_ns(msg.header.stamp), planar(msg.pose)))

    def static_transforms(self) -> list:
        return []

    def _pose_at(self, car: str, time_ns: int) -> tuple[float, float, float] | None:
        """The other car's pose at ``time_ns``, or its latest before it, or its latest."""
        with self.lock:
            kept = list(self.poses[car])
        before = [pose for stamp, pose in kept if stamp <= time_ns]
        return before[-1] if before else (kept[-1][1] if kept else None)

    def publish(self, frame: CarFrame) -> None:
        if not self.ctx.due(frame.step):
            return
        poses = {car: pose for car in self.poses
                 if (pose := self._pose_at(car, frame.time_ns)) is not None}
        state = frame.state
        placed = frame.arrays.get(CONES_ARRAY)
        cones = self.cones if placed is None else [*self.cones, *placed_cone_boxes(placed)]
        boxes = seen_from((state.x, state.y, state.yaw),
                          [*cones, *cars_around(self.ctx.car, poses, self.footprints)],
                          self.spec.range_m)
        array = Detection3DArray()
        array.header.stamp = to_time(frame.time_ns)
        array.header.frame_id = self.ctx.base_frame
        array.detections = [detection(box, array.header) for box in boxes]
        self.pub.publish(array)


def detection(box: Box3D, header: object) -> Detection3D:
    found = Detection3D(id=box.id)
    found.header = header
    set_pose_2d(found.bbox.center, box.x, box.y, box.yaw)
    found.bbox.center.position.z = box.z
    found.bbox.size.x, found.bbox.size.y, found.bbox.size.z = box.length, box.width, box.height
    found.results = [ObjectHypothesisWithPose(
        hypothesis=ObjectHypothesis(class_id=box.name, score=1.0))]
    found.results[0].pose.pose = found.bbox.center
    return found
