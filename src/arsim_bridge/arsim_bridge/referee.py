"""The referee: finds collisions each frame, reports them and applies the scene's response.

Runs inside the bridge, between "every car reached frame k" and "/clock moves to k+1", so a
reset it sends is applied by the dynamics node in the very next frame. It also places the cars
at their start poses (reset service, track switch): only the latest reset a node receives before
a frame counts, so placing and collision resets must come from one place that knows which wins.
"""

from __future__ import annotations

import numpy as np
from geometry_msgs.msg import Pose
from rclpy.node import Node

from arsim_bridge import qos
from arsim_bridge.common import planar, pose_2d, to_time
from arsim_core.config.scenario import Scenario
from arsim_core.race import BARRIER, CollisionWorld, footprint_polygon, start_poses
from arsim_msgs.msg import CarReset, CarState, SimEvent, TrackGeometry

BOUNCE_RESTITUTION = 0.5  # share of the speed a car keeps, reversed, after a bounce


class Referee:
    def __init__(self, node: Node, scenario: Scenario) -> None:
        self.node = node
        self.scenario = scenario
        self.world: CollisionWorld | None = None
        self.free_pose: dict[str, Pose] = {}  # last pose of each car without contact
        self.start_pose: dict[str, Pose] = {}
        self.in_contact: set[tuple[str, str]] = set()
        self.event_pub = node.create_publisher(SimEvent, scenario.topic_map.event_topic,
                                               qos.STREAM)
        self.reset_pubs = {car.name: node.create_publisher(CarReset, car.names.reset_topic,
                                                           qos.STREAM)
                           for car in scenario.cars}

    def set_track(self, track: TrackGeometry) -> None:
        vertices = np.asarray(track.vertices, dtype=np.float32).reshape(-1, 3)
        triangles = np.asarray(track.triangles, dtype=np.int64).reshape(-1, 3)
        labels = np.asarray(track.labels, dtype=np.uint8)
        self.world = CollisionWorld(vertices, triangles, labels)
        self.free_pose.clear()
        self.in_contact.clear()
        self.start_pose = {name: pose_2d(*pose) for name, pose
                           in start_poses(self.scenario.cars, planar(track.start_pose)).items()}

    def judge(self, states: dict[str, CarState], now: int) -> None:
        """Report new contacts and send resets according to the collision response."""
        if self.world is None:
            return
        cars = {car.name: car for car in self.scenario.cars}
        bodies = {name: footprint_polygon(planar(s.pose), cars[name].profile.footprint)
                  for name, s in states.items()}
        response = self.scenario.collisions.response
        contacts = self.world.contacts(bodies, car_to_car=response != 'ghost')
        touching = {(c.car, c.other) for c in contacts}
        for car, other in sorted(touching - self.in_contact):
            self._event(car, other, now)
        self.in_contact = touching
        hit = {car for car, _ in touching}
        for name, state in states.items():
            if name not in hit:
                self.free_pose[name] = state.pose
            elif name in self.free_pose:
                speed = 0.0 if response != 'bounce' else \
                    -BOUNCE_RESTITUTION * state.twist.linear.x
                self._reset(name, self.free_pose[name], speed, now)

    def _event(self, car: str, other: str, now: int) -> None:
        event = SimEvent(car_id=car, kind=SimEvent.COLLISION, other=other,
                         detail=f'{car} touched {"a barrier" if other == BARRIER else other}')
        event.header.stamp = to_time(now)
        event.header.frame_id = self.scenario.topic_map.world_frame
        self.event_pub.publish(event)

    def _reset(self, car: str, pose: Pose, speed: float, now: int) -> None:
        msg = CarReset(car_id=car, pose=pose, speed=float(speed))
        msg.header.stamp = to_time(now)
        msg.header.frame_id = self.scenario.topic_map.world_frame
        self.reset_pubs[car].publish(msg)

    def reset_to_start(self, cars: list[str], now: int) -> None:
        """Send ``cars`` to their start poses on the current track, at rest.

        Their last free poses are forgotten, so a contact seen before the reset lands cannot
        send a car back there: the start pose is the last reset its node receives.
        """
        for car in cars:
            self.free_pose.pop(car, None)
            self._reset(car, self.start_pose[car], 0.0, now)
