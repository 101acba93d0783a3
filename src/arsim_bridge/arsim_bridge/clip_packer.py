"""Incident clips packed by the ROS nodes' own publishing code, for the faces that run races
(the bridge, ``arsim-dataset generate``): which frames, cars and events go into a clip is
``arsim_core.race_control.clips``'s rule; this only turns them into the messages a normal
recording holds, on the same topics: /clock, each car's ``CarState`` and odometry, /tf and
/tf_static, the involved cars' sensors (``car_outputs``) and /arsim/events with the verdict.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path

from rosgraph_msgs.msg import Clock

from arsim_bridge import qos
from arsim_bridge.bag_node import BagRecording
from arsim_bridge.car_outputs import CarOutputs
from arsim_bridge.common import pose_2d, to_time
from arsim_bridge.msg_definitions import definition
from arsim_bridge.sim_events import sim_event
from arsim_core.config.recording import TopicSelection
from arsim_core.config.scenario import CarSpec, Scenario
from arsim_core.geometry import Pose2D
from arsim_core.protocol.messages import FanoutFrame
from arsim_core.race_control.clips import Clip, ClipRecorder
from arsim_core.recording.mcap_file import McapFile
from arsim_msgs.msg import CarState, SimEvent

Origins = Callable[[str], Pose2D | None]


class ScenarioClipPacker:
    """Packs the clips of ``scenario``'s cars. ``odom_origin(car)`` is where the car's
    odometry starts, for a topic map whose odometry is relative to the start (None: the
    first pose the clip shows)."""

    def __init__(self, scenario: Scenario, odom_origin: Origins | None = None) -> None:
        self.scenario = scenario
        self.odom_origin = odom_origin or (lambda _car: None)

    def __call__(self, clip: Clip, file: McapFile) -> None:
        scenario, topics = self.scenario, self.scenario.topic_map
        recording = BagRecording(file, TopicSelection())
        bridge = recording.node('/arsim')
        clock = bridge.create_publisher(Clock, '/clock', qos.CLOCK)
        events = bridge.create_publisher(SimEvent, topics.event_topic, qos.STREAM)
        involved = set(clip.incident.cars)
        cars = [car for car in scenario.cars
                if any(car.name in frame.cars for frame in clip.frames)]
        states = {car.name: bridge.create_publisher(CarState, car.names.state_topic,
                                                    qos.STREAM) for car in cars}
        outputs = {car.name: CarOutputs(
            recording.node('/arsim', {'odom': car.names.odom_topic}), scenario,
            car if car.name in involved else _without_sensors(car)) for car in cars}
        models = {car.name: car.profile.vehicle.model_name for car in cars}
        first = clip.frames[0].time_ns if clip.frames else clip.incident.time_ns
        recording.time_ns = first
        for name, output in outputs.items():
            output.odom_origin = self.odom_origin(name)
            output.publish_static()
        pending = sorted(clip.events, key=lambda item: item[0])
        world = topics.world_frame
        for frame in clip.frames:
            recording.time_ns = frame.time_ns
            while pending and pending[0][0] <= frame.time_ns:
                stamp, event = pending.pop(0)
                recording.time_ns = max(stamp, first)
                events.publish(sim_event(event, stamp, world))
                recording.time_ns = frame.time_ns
            clock.publish(Clock(clock=to_time(frame.time_ns)))
            for name, sent in frame.cars.items():
                if name in outputs:
                    states[name].publish(_state(sent, models[name], frame.time_ns, world))
                    outputs[name].publish(frame.step, frame.time_ns, sent)
        for stamp, event in pending:  # after the last frame (a run that ended first)
            recording.time_ns = max(stamp, first)
            events.publish(sim_event(event, stamp, world))


def clip_recorder(scenario: Scenario, directory: Path | None = None,
                  odom_origin: Origins | None = None,
                  log: Callable[[str], None] | None = None) -> ClipRecorder | None:
    """The incident clip recorder of ``scenario`` (``race.clips``) packing with the ROS
    nodes' code, into ``directory`` (default ``race.clips.directory``); None where
    the scenario asks for no clips."""
    settings = scenario.race.clips
    if not settings.enabled:
        return None
    return ClipRecorder(settings, [car.name for car in scenario.cars],
                        ScenarioClipPacker(scenario, odom_origin), _schema, directory, log)


@functools.cache
def _schema(msgtype: str) -> str:
    """A type's ``ros2msg`` definition, read from the installed ``.msg`` files once."""
    return definition(msgtype)


def _without_sensors(car: CarSpec) -> CarSpec:
    """``car`` as a clip shows a car not involved: its state, odometry and TF only."""
    return dataclasses.replace(car, profile=dataclasses.replace(car.profile, sensors=()))


def _state(sent: FanoutFrame, model: str, time_ns: int, world_frame: str) -> CarState:
    """The car's ``CarState`` as its dynamics node publishes it, from the fanned-out state
    (its model's raw state vector is not part of a frame, so it stays empty)."""
    msg = CarState(car_id=sent.car, model=model, steering_angle=float(sent.steering_angle))
    msg.header.stamp = to_time(time_ns)
    msg.header.frame_id = world_frame
    msg.pose = pose_2d(*sent.pose)
    msg.twist.linear.x, msg.twist.linear.y, msg.twist.angular.z = \
        (float(v) for v in sent.twist)
    if sent.accel is not None:
        msg.accel.linear.x, msg.accel.linear.y = (float(v) for v in sent.accel[:2])
    return msg
