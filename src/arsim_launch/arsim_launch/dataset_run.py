"""One run of ``arsim-dataset generate``: a scenario simulated in this process, straight into
a bag, with no DDS and no sockets, so any number of runs side by side cannot disturb each other.

The engine (``arsim_core.engine``) integrates the cars, renders their sensors and computes the
IMU, GNSS and wheel odometry (their noise from the run's seed) in process; the built-in driver
(``arsim_core.policies.autopilot``) drives every car on its 2D scans; each frame goes through
the publishing code of the ROS nodes (``arsim_bridge.car_outputs``), which only packs the
engine's values into messages, and whose publishers here write into the bag
(``arsim_bridge.bag_node``). So the bag holds the same topics, types, frames and QoS as
``record:=`` of the same scenario: /clock, odometry, /tf, /tf_static, every sensor's messages
with their ground truth, the track's latched topics (/map, its mesh, markers and lines) and the
final race results. The events, the robot description and the drivers' commands are not in it.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rosgraph_msgs.msg import Clock

from arsim_bridge import qos
from arsim_bridge.bag_node import BagNode, BagRecording
from arsim_bridge.car_outputs import CarOutputs
from arsim_bridge.car_state_msg import car_state_message
from arsim_bridge.clip_packer import clip_recorder
from arsim_bridge.common import to_time
from arsim_bridge.fanout import car_frame
from arsim_bridge.msg_definitions import message_text
from arsim_bridge.race_status import race_status
from arsim_bridge.track_node import TrackOutputs
from arsim_core.config.scenario import Scenario, load_scenario
from arsim_core.config.sensors import Lidar2DSpec
from arsim_core.engine import Engine, Frame, InProcessRenderer, TrackWorld
from arsim_core.engine.randomization import Draw, Randomization
from arsim_core.engine.render import RenderPoses
from arsim_core.engine.schedule import SensorKey
from arsim_core.log_limit import LogLimit
from arsim_core.policies import FollowTheGap, autopilot
from arsim_core.protocol import framing
from arsim_core.protocol.messages import (
    FanoutFrame,
    FrameMeta,
    InitialSettings,
    TrackRequest,
    UpdateReply,
)
from arsim_core.recording.bag import BagSummary, BagWriter
from arsim_core.track import Track
from arsim_launch.arguments import launch_overrides
from arsim_launch.nodes import validate
from arsim_launch.resources import resources_dir
from arsim_msgs.msg import CarState, RaceStatus

DRIVERS = ('follow_the_gap', 'none')


@dataclass(frozen=True)
class RunJob:
    """What one run is: everything a worker needs, as plain values (it crosses processes and
    machines as JSON)."""

    index: int
    seed: int
    bag: str  # a new folder
    scenario: str  # the scenario file
    arguments: Mapping[str, str]  # launch arguments: track, cars, profile, topic_map
    randomization: Mapping[str, Any] | str | None  # its keys, or a file of them
    recording: Mapping[str, Any]  # the scenario's recording section, replaced key by key
    duration_s: float
    driver: str

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class KeptReplyRenderer:
    """The in-process embedded backend through its protocol face, keeping the description of
    every frame name it has rendered: the republishers need them (encodings), which the
    engine's in-process shortcut leaves out."""

    def __init__(self) -> None:
        self.inner = InProcessRenderer()
        self.backend = self.inner.backend  # the randomisation sets sensor noise on it
        self.meta: dict[str, FrameMeta] = {}

    def start(self, settings: InitialSettings, timeout_s: float) -> Mapping[str, Any]:
        return self.inner.start(settings, timeout_s)

    def switch_track(self, step: int, time_ns: int, track: TrackRequest) -> None:
        self.inner.switch_track(step, time_ns, track)

    def send(self, step: int, time_ns: int, poses: RenderPoses,
             due: Sequence[SensorKey]) -> None:
        self.inner.send(step, time_ns, poses, due)

    def receive(self) -> framing.Message:
        reply = self.inner.receive()
        self.meta.update(UpdateReply.from_wire(reply).meta)
        return reply

    def close(self) -> None:
        self.inner.close()


def fanout_frames(frame: Frame, engine: Engine,
                  rendered: Mapping[str, FrameMeta]) -> dict[str, FanoutFrame]:
    """Every car's frame as the bridge fans it out to its ROS nodes: its state, its rendered
    sensors (``rendered``: their descriptions, a ``KeptReplyRenderer``'s) and its computed
    ones, each stamped when it was captured."""
    sensors = _described(frame, rendered)
    computed = _described(frame, engine.computed.frame_meta(frame.sensors, 0))
    return {name: car_frame(name, frame.states[name], sensors.get(name), computed.get(name))
            for name in engine.names}


def _described(frame: Frame, meta: Mapping[str, FrameMeta]) -> dict[str, UpdateReply]:
    """The frame's sensors that ``meta`` describes, by car, stamped when each was captured
    (a late sensor's sample arrives frames after)."""
    described = {name: meta[name]._replace(stamp_ns=frame.stamp_ns(name))
                 for name in frame.sensors if name in meta}
    if not described:
        return {}
    return UpdateReply({name: frame.sensors[name] for name in described}, described).by_car()


def run(job: Mapping[str, Any]) -> dict[str, Any]:
    """Simulate ``job`` (``RunJob.to_json``) into its bag; what the run produced."""
    spec = RunJob(**job)
    started = time.monotonic()
    draw = Randomization.load(spec.randomization).draw(np.random.default_rng(spec.seed))
    scenario, track = _scenario(spec, draw)
    renderer = KeptReplyRenderer()
    engine = Engine(scenario, renderer, seed=spec.seed)
    try:
        engine.load_track(TrackWorld.from_track(track, scenario.track.scene))
        draw.apply(engine, dict(engine.configs))
        writer = _Writer(scenario, engine, renderer, track, Path(spec.bag))
        drivers = _drivers(scenario, spec.driver)
        frame = engine.reset(draw.start_poses(engine.start_poses, track))
        writer.write(frame)
        last_step = round(spec.duration_s * 1e9 / engine.period_ns)
        refused = LogLimit()
        while frame.step < last_step:
            for name, (scan, policy) in drivers.items():
                ranges = frame.sensors.get(f'{name}/{scan.name}')
                if ranges is not None:
                    steering, speed = policy.act(np.asarray(ranges, np.float32))
                    problem = engine.drive(name, float(speed), float(steering))
                    line = problem and refused.admit(
                        f'run {spec.index}: {name}: ignoring drive command ({problem}): '
                        f'speed={speed} steering_angle={steering}')
                    if line:
                        print(line, file=sys.stderr, flush=True)
            frame = engine.advance()
            writer.write(frame)
        summary = writer.close(frame)
    finally:
        engine.close()
    laps = {} if engine.metrics is None else \
        {c.name: c.laps for c in engine.metrics.standings()}
    return {'index': spec.index, 'seed': spec.seed, 'bag': spec.bag, 'track': track.name,
            'cars': len(scenario.cars), 'frames': frame.step + 1,
            'sim_s': frame.time_ns / 1e9, 'wall_s': time.monotonic() - started,
            'messages': dict(summary.counts), 'bag_bytes': summary.size_bytes,
            'laps': laps, 'drawn': dict(draw.values),
            'clips': [] if writer.clips is None else [str(s.path) for s in writer.clips.written]}


def _scenario(spec: RunJob, draw: Draw) -> tuple[Scenario, Track]:
    """The run's scenario: the file with the launch arguments, the drawn track and number of
    cars, and the recording section; and its track, loaded."""
    resources = resources_dir()
    settings = Path(spec.scenario)
    arguments = dict(spec.arguments)
    if draw.num_cars is not None:
        arguments['cars'] = str(draw.num_cars)
    if isinstance(draw.track, str):
        arguments['track'] = draw.track
    overrides = launch_overrides(arguments, settings, resources)
    overrides['recording'] = {**overrides.get('recording', {}), **spec.recording,
                              'directory': spec.bag}
    scenario = load_scenario(settings, resources, overrides)
    if isinstance(draw.track, Track):
        return scenario, draw.track
    return scenario, validate(scenario)


def _drivers(scenario: Scenario, driver: str) -> dict[str, tuple[Lidar2DSpec, FollowTheGap]]:
    if driver == 'none':
        return {}
    return {car.name: autopilot(car) for car in scenario.cars}


class _Writer:
    """Frames into the bag, through the ROS nodes' publishing code."""

    def __init__(self, scenario: Scenario, engine: Engine, renderer: KeptReplyRenderer,
                 track: Track, path: Path) -> None:
        self.scenario, self.engine, self.renderer = scenario, engine, renderer
        self.world_frame = scenario.topic_map.world_frame
        bag = BagWriter.for_recording(scenario.recording, path, message_text)
        self.recording = BagRecording(bag, scenario.recording.selection)
        bridge = self.recording.node('/arsim')
        self.clock = bridge.create_publisher(Clock, '/clock', qos.CLOCK)
        self.race = bridge.create_publisher(RaceStatus, scenario.topic_map.race_topic,
                                            qos.LATCHED)
        self.cars = {car.name: CarOutputs(self._car_node(car.names.odom_topic), scenario, car)
                     for car in scenario.cars}
        for outputs in self.cars.values():
            outputs.publish_static()
        topics = scenario.topic_map
        track_outputs = TrackOutputs(self.recording.node(
            '/arsim', {'map': topics.map_topic, 'track': topics.track_topic}), scenario)
        track_outputs.publish(track_outputs.build(track))
        # each car's state, as its dynamics node publishes it in a live run
        self.state_pubs = {car.name: bridge.create_publisher(CarState, car.names.state_topic,
                                                             qos.STREAM)
                           for car in scenario.cars}
        self._checkpoint_ns = 0
        # incident clips (race.clips), each run's in a folder named after its bag
        clips = scenario.race.clips.directory
        self.clips = clip_recorder(
            scenario, None if clips is None else clips / path.name,
            lambda car: self.cars[car].odom_origin,
            lambda line: print(line, file=sys.stderr, flush=True))

    def _car_node(self, odom_topic: str) -> BagNode:
        return self.recording.node('/arsim', {'odom': odom_topic})

    def write(self, frame: Frame) -> None:
        self.recording.time_ns = frame.time_ns
        self.clock.publish(Clock(clock=to_time(frame.time_ns)))
        for car, publisher in self.state_pubs.items():
            publisher.publish(car_state_message(car, self.engine.vehicles[car], frame.time_ns,
                                                self.world_frame))
        sent = fanout_frames(frame, self.engine, self.renderer.meta)
        for name, outputs in self.cars.items():
            outputs.publish(frame.step, frame.time_ns, sent[name])
        if self.clips is not None:
            self.clips.observe(frame.step, frame.time_ns, sent)
            self.clips.events(frame.time_ns, frame.judgement.events)
        if frame.time_ns - self._checkpoint_ns >= 1_000_000_000:  # a killed run stays readable
            self._checkpoint_ns = frame.time_ns
            self.recording.bag.checkpoint()

    def close(self, frame: Frame) -> BagSummary:
        """The final race results (latched), then the bag closed."""
        metrics, world = self.engine.metrics, self.engine.world
        if metrics is not None and world is not None:
            msg = race_status(metrics, world.name, final=True)
            msg.header.stamp = to_time(frame.time_ns)
            msg.header.frame_id = self.world_frame
            self.race.publish(msg)
        if self.clips is not None:
            self.clips.close()
        return self.recording.bag.close()
