"""What the bridge publishes for a Formula Student track: the mission status of every car
(arsim_msgs/MissionStatus), the placed cones as they stand or lie in the world frame and, with a
topic map that names one, the ego's AS state as EUFS sim's eufs_msgs/CanState.

eufs_msgs is imported only when a track has cones or a topic map asks for the AS state, so a
workspace without it runs every other track.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from rclpy.duration import Duration
from rclpy.node import Node

from arsim_bridge import qos
from arsim_bridge.common import to_time
from arsim_core import labels
from arsim_core.config.scenario import Scenario
from arsim_core.engine import Engine
from arsim_core.engine.cones import CONE_DOWN, ConeField
from arsim_core.engine.missions import MISSION, OFF_COURSE, MissionControl, as_results
from arsim_core.engine.referee import Event
from arsim_core.track.fs.referee import AsState, MissionResult
from arsim_msgs.msg import MissionResult as MissionResultMsg
from arsim_msgs.msg import MissionStatus

FS_EVENTS = frozenset({MISSION, CONE_DOWN, OFF_COURSE})
AS_STATES = {AsState.OFF: MissionResultMsg.AS_OFF, AsState.READY: MissionResultMsg.AS_READY,
             AsState.DRIVING: MissionResultMsg.AS_DRIVING,
             AsState.EMERGENCY: MissionResultMsg.AS_EMERGENCY,
             AsState.FINISHED: MissionResultMsg.AS_FINISHED}
# eufs_msgs/CanState: the AS states share the numbers above; the missions.
AMI_STATES = {'acceleration': 11, 'skidpad': 12, 'autocross': 13, 'trackdrive': 14}
CONE_FIELDS = {labels.CONE_BLUE: 'blue_cones', labels.CONE_YELLOW: 'yellow_cones',
               labels.CONE_ORANGE: 'orange_cones', labels.CONE_BIG_ORANGE: 'big_orange_cones'}
FINAL_ACK_S = 1.0


def cone_array(rows: np.ndarray, frame: str, time_ns: int) -> Any:
    """eufs_msgs/ConeArrayWithCovariance of cone rows (x, y, ..., label) in ``frame``."""
    from eufs_msgs.msg import ConeArrayWithCovariance, ConeWithCovariance
    from geometry_msgs.msg import Point

    msg = ConeArrayWithCovariance()
    msg.header.stamp = to_time(time_ns)
    msg.header.frame_id = frame
    for label, field in CONE_FIELDS.items():
        chosen = rows[rows[:, -1] == label]
        setattr(msg, field, [ConeWithCovariance(point=Point(x=float(x), y=float(y)))
                             for x, y in chosen[:, :2].tolist()])
    return msg


class FsOutputs:
    """The bridge's Formula Student topics; each publishes only when its part changed."""

    def __init__(self, node: Node, scenario: Scenario) -> None:
        self.node = node
        self.topics = scenario.topic_map
        self.ego = scenario.cars[0].name
        self.mission_pub = node.create_publisher(MissionStatus, self.topics.mission_topic,
                                                 qos.LATCHED)
        self._cones_pub: Any = None
        self._as_pub: Any = None
        self._missions: MissionControl | None = None  # the one last published
        self._cones: tuple[ConeField, int] | None = None  # and the cones' version

    def publish(self, engine: Engine, events: Sequence[Event], time_ns: int) -> None:
        """After a frame is judged: the mission status on a new mission or an FS event, the
        cones when they moved."""
        fs_events = [event for event in events if event.kind in FS_EVENTS]
        for event in fs_events:
            self.node.get_logger().info(event.detail.replace('; ', '\n    '))
        missions = engine.missions
        if missions is not None and (missions is not self._missions or fs_events):
            self._missions = missions
            self.publish_mission(missions, time_ns, final=False)
        cones = engine.cones
        if cones is not None and self._cones != (cones, cones.version):
            self._cones = (cones, cones.version)
            if self._cones_pub is None:
                from eufs_msgs.msg import ConeArrayWithCovariance

                self._cones_pub = self.node.create_publisher(
                    ConeArrayWithCovariance, self.topics.cones_topic, qos.LATCHED)
            self._cones_pub.publish(cone_array(cones.state_rows(), self.topics.world_frame,
                                               time_ns))

    def publish_mission(self, missions: MissionControl, time_ns: int, final: bool) -> None:
        results = missions.results
        msg = MissionStatus(mission=missions.mission.kind, final=final,
                            cars=[result_message(name, r) for name, r in results.items()])
        msg.header.stamp = to_time(time_ns)
        msg.header.frame_id = self.topics.world_frame
        self.mission_pub.publish(msg)
        ego = results.get(self.ego)
        if self.topics.as_state_topic and ego is not None:
            if self._as_pub is None:
                from eufs_msgs.msg import CanState

                self._as_pub = self.node.create_publisher(CanState, self.topics.as_state_topic,
                                                          qos.LATCHED)
            self._as_pub.publish(self._as_pub.msg_type(
                as_state=AS_STATES[ego.state], ami_state=AMI_STATES[missions.mission.kind]))

    def finish(self, engine: Engine) -> None:
        """At the end of the run: every car's result in the log and, final, on the topic."""
        missions = engine.missions
        if missions is None:
            return
        self.node.get_logger().info(f'{missions.mission.kind} results:\n'
                                    + as_results(missions.results))
        self.publish_mission(missions, engine.time_ns, final=True)
        self.mission_pub.wait_for_all_acked(Duration(seconds=FINAL_ACK_S))


def result_message(car: str, result: MissionResult) -> MissionResultMsg:
    def seconds(value: float | None) -> float:
        return math.nan if value is None else float(value)

    return MissionResultMsg(
        car_id=car, as_state=AS_STATES[result.state],
        lap_times=[float(t) for t in result.lap_times], run_time=seconds(result.run_time),
        cones_down=result.cones_down, off_courses=result.off_courses,
        penalty_s=float(result.penalty_s), total_time=seconds(result.total_time),
        dnf=result.dnf)
