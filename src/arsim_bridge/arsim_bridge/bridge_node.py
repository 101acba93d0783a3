"""The bridge: the ROS face of the engine's lockstep loop.

It owns /clock, hears the cars' states, drivers, track and reset requests on ROS, and fans
rendered frames out to the sensor republishers over ZeroMQ. The loop itself (clock -> car
states -> referee -> render -> fan-out -> drivers) is ``arsim_core.engine.lockstep``.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import rclpy
import zmq
from ackermann_msgs.msg import AckermannDriveStamped
from rclpy.duration import Duration
from rclpy.executors import Executor
from rclpy.publisher import Publisher
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Float64, Header

from arsim_bridge import qos, stopping
from arsim_bridge.clip_packer import clip_recorder
from arsim_bridge.common import (
    declare_scenario,
    planar,
    pose_2d,
    run_node,
    to_ns,
    to_time,
    track_world,
)
from arsim_bridge.fanout import car_frame, car_topic, encode_car_frame
from arsim_bridge.fs_outputs import FsOutputs
from arsim_bridge.ledger import CountingNode
from arsim_bridge.race_status import race_status
from arsim_bridge.sim_events import sim_event
from arsim_core import endpoints
from arsim_core.config.drivers import ZOO_NAMES
from arsim_core.config.race_event import classification_path
from arsim_core.config.scenario import CarSpec, Scenario
from arsim_core.drivers.pilots import LockstepPilots
from arsim_core.engine import (
    CarState,
    Drivers,
    Engine,
    InProcessRenderer,
    Judgement,
    Lockstep,
    ProtocolRenderer,
    Renderer,
    TrackWorld,
)
from arsim_core.engine.lockstep import PING_PERIOD_S
from arsim_core.engine.pacing import Pacing
from arsim_core.engine.race_event import EventState, results_table, write_classification
from arsim_core.engine.stewards import Ruling
from arsim_core.errors import ArsimError
from arsim_core.protocol import framing
from arsim_core.protocol.messages import UpdateReply
from arsim_core.recording.ledger import BRIDGE, STATUS_TOPIC
from arsim_core.track import load_track
from arsim_core.view.feed import ViewFeed
from arsim_msgs.msg import (
    CarCommand,
    CarReset,
    RaceStatus,
    RecordingStatus,
    SimEvent,
    TrackGeometry,
)
from arsim_msgs.msg import CarState as CarStateMsg
from arsim_msgs.srv import ResetCars

if TYPE_CHECKING:
    from arsim_core.view.web_server import WebView

RACE_PERIOD_S = 0.1  # /arsim/race at 10 Hz of sim time
FINAL_ACK_S = 1.0  # how long the final results may take to reach their subscribers


class Bridge(CountingNode):
    """Everything the lockstep loop sends and waits for, on ROS and the fan-out socket."""

    def __init__(self, **node_options: Any) -> None:
        super().__init__('bridge', **node_options)
        self.scenario: Scenario = declare_scenario(self)
        self.engine: Engine | None = None
        self.drivers = Drivers()
        self.track: TrackWorld | None = None
        self.states: dict[str, tuple[int, CarState]] = {}
        topics = self.scenario.topic_map
        self.start_counting(self.scenario, BRIDGE)
        self.recording: RecordingStatus | None = None  # the recorder's last word, if it records
        if self.scenario.recording.directory is not None:
            self.create_subscription(RecordingStatus, STATUS_TOPIC, self.on_recording,
                                     qos.LATCHED)
        self.clock_pub = self.create_publisher(Clock, '/clock', qos.CLOCK)
        self.event_pub = self.create_publisher(SimEvent, topics.event_topic, qos.STREAM)
        self.race_pub = self.create_publisher(RaceStatus, topics.race_topic, qos.LATCHED)
        self.fs = FsOutputs(self, self.scenario)
        self.reset_pubs = {car.name: self.create_publisher(CarReset, car.names.reset_topic,
                                                           qos.STREAM)
                           for car in self.scenario.cars}
        self.create_subscription(TrackGeometry, 'track', self.on_track, qos.LATCHED)
        self.create_service(ResetCars, 'reset_cars', self.on_reset_cars)
        for car in self.scenario.cars:
            self.create_subscription(CarStateMsg, car.names.state_topic, self.on_state,
                                     qos.STREAM)
            if self.scenario.wait_for_drivers or self.scenario.start_on_first_command:
                self.hear_drivers(car)
        self.fanout: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.XPUB)
        self.fanout.setsockopt(zmq.LINGER, 0)
        try:
            endpoints.bind(self.fanout, self.scenario.backend.frames_address,
                           f'{self.scenario.source}: backend.frames_address',
                           allow_remote=self.scenario.backend.allow_remote)
        except ArsimError:
            self.fanout.close()
            raise
        self.subscribed: set[bytes] = set()
        self._race_due = 0
        self._classified = False  # the race event's classification written
        self.view_feed: ViewFeed | None = None  # the web view's, when there is one
        self.clips = clip_recorder(self.scenario, odom_origin=self._start_pose,
                                   log=lambda line: self.log('info', line))
        self._quiet_until: dict[tuple[str, int, str], float] = {}  # throttled log lines
        self._drive_pubs: dict[str, Publisher] = {}  # the built-in drivers' drive topics
        self.incidents: list[dict[str, Any]] = []  # the stewards' rulings, for the classification
        self.report_published(0)

    # --- ROS callbacks ----------------------------------------------------------------------
    def on_track(self, msg: TrackGeometry) -> None:
        self.track = track_world(msg)

    def on_reset_cars(self, request: ResetCars.Request,
                      response: ResetCars.Response) -> ResetCars.Response:
        known = [car.name for car in self.scenario.cars]
        unknown = sorted(set(request.cars) - set(known))
        if unknown:
            response.success = False
            response.message = f'unknown car(s) {unknown}; the cars are {known}'
            return response
        if self.engine is None or self.engine.world is None:
            response.success = False
            response.message = 'no track yet; the simulation is still starting'
            return response
        cars = list(request.cars) or known
        self.publish(Judgement((), self.engine.reset_to_start(cars)), self.engine.time_ns)
        response.success = True
        response.message = f'reset {cars} to their start poses'
        return response

    def on_state(self, msg: CarStateMsg) -> None:
        if msg.car_id in self.reset_pubs:
            x, y, yaw = planar(msg.pose)
            self.states[msg.car_id] = (to_ns(msg.header.stamp), CarState(
                x, y, yaw, msg.twist.linear.x, msg.twist.linear.y, msg.twist.angular.z,
                msg.accel.linear.x, msg.accel.linear.y, msg.steering_angle,
                msg.pose.position.z))

    def hear_drivers(self, car: CarSpec) -> None:
        """Count a driver as answered when its command reached the car: as arsim's dynamics
        node says (a command reaches each subscriber at its own moment, so the bridge's own
        copy may come first), or, for a car a user's node integrates, on the command topics."""
        heard = functools.partial(self.on_command, car.name)
        if not car.external_dynamics:
            self.create_subscription(Header, car.names.answered_topic, heard, qos.STREAM)
            return
        if car.names.vesc is None:
            self.create_subscription(AckermannDriveStamped, car.names.drive_topic, heard,
                                     qos.STREAM)
        else:  # ackermann_to_vesc's last message of a command reaches the car
            self.create_subscription(Float64, car.names.vesc.servo_topic, heard, qos.STREAM)
        self.create_subscription(CarCommand, car.names.command_topic, heard, qos.STREAM)

    def on_command(self, car: str, _msg: object) -> None:
        self.drivers.heard(car)

    def on_recording(self, msg: RecordingStatus) -> None:
        self.recording = msg

    # --- built-in drivers --------------------------------------------------------------------
    def pilots(self, engine: Engine) -> LockstepPilots | None:
        """The line drivers of the cars that name one (``cars[i].driver``), driving them on
        their drive topics as a stack would; None where no car has a built-in driver."""
        if not any(car.driver in ZOO_NAMES for car in self.scenario.cars):
            return None
        pilots = LockstepPilots(engine, self.send_drive, load_track(
            self.scenario.track.name, self.scenario.resources / 'maps'))
        self._drive_pubs = {car: self.create_publisher(
            AckermannDriveStamped, self.scenario.car(car).names.drive_topic, qos.STREAM)
            for car in sorted(pilots.cars)}
        if pilots.cars:
            self.log('info', 'built-in drivers: ' + ', '.join(
                f'{car} ({pilots.drivers[car]})' for car in sorted(pilots.cars)))
        return pilots

    def send_drive(self, car: str, steering: float, speed: float, time_ns: int) -> None:
        command = AckermannDriveStamped()
        command.header.stamp = to_time(time_ns)
        command.header.frame_id = self.scenario.car(car).names.base_frame
        command.drive.steering_angle, command.drive.speed = float(steering), float(speed)
        self._drive_pubs[car].publish(command)

    # --- the Link the lockstep loop runs over -----------------------------------------------
    def publish_clock(self, time_ns: int) -> None:
        self.clock_pub.publish(Clock(clock=to_time(time_ns)))

    def spin_until(self, done: Callable[[], bool], timeout_s: float,
                   every: Callable[[], None] | None = None) -> bool:
        deadline = time.monotonic() + timeout_s
        next_ping = 0.0
        while not done():
            now = time.monotonic()
            if now > deadline:
                return False
            if every is not None and now >= next_ping:
                every()
                next_ping = now + PING_PERIOD_S
            stopping.spin_once(self.serving(), timeout_sec=0.01)
        return True

    def serving(self) -> Executor:
        """The executor this node was added to (``run_nodes``), which the loop spins."""
        executor = self.executor
        if executor is None:
            msg = 'the bridge must be added to an executor before it runs'
            raise RuntimeError(msg)
        return executor

    def car_state(self, car: str) -> tuple[int, CarState] | None:
        return self.states.get(car)

    def take_track(self) -> TrackWorld | None:
        track, self.track = self.track, None
        return track

    def publish(self, judgement: Judgement, time_ns: int) -> None:
        world_frame = self.scenario.topic_map.world_frame
        for event in judgement.events:
            self.event_pub.publish(sim_event(event, time_ns, world_frame))
            if isinstance(event, Ruling):
                self.incidents.append(event.record(time_ns * 1e-9))
        if self.clips is not None and judgement.events:
            self.clips.events(time_ns, judgement.events)
        for placement in judgement.placements:
            reset = CarReset(car_id=placement.car, pose=pose_2d(*placement.pose),
                             speed=float(placement.speed))
            reset.header.stamp = to_time(time_ns)
            reset.header.frame_id = world_frame
            self.reset_pubs[placement.car].publish(reset)
        if self.engine is not None:
            self.fs.publish(self.engine, judgement.events, time_ns)
        if self.engine is not None and time_ns >= self._race_due:
            self._race_due = time_ns + int(RACE_PERIOD_S * 1e9)
            self.publish_race(time_ns, final=False)
        self.report_published(time_ns)

    def publish_race(self, time_ns: int, final: bool) -> None:
        assert self.engine is not None
        metrics, world = self.engine.metrics, self.engine.world
        if metrics is None or world is None:
            return
        event = self.engine.event
        state = None if event is None else event.state
        msg = race_status(metrics, world.name, final, state)
        msg.header.stamp = to_time(time_ns)
        msg.header.frame_id = self.scenario.topic_map.world_frame
        self.race_pub.publish(msg)
        if state is not None and (state.finished or final) and not self._classified:
            self.write_classification(state)

    def write_classification(self, state: EventState) -> None:
        """The event's classification in the log and, where the run writes files, as YAML
        (once: when the event ends, else when the simulation stops)."""
        self._classified = True
        settings = self.scenario.race.event
        rows = state.classification or state.results
        self.log('info', f'race event {"classification" if state.finished else "results so far"}'
                         f' ({state.session}):\n{results_table(rows)}')
        path = None if settings is None else classification_path(
            settings, self.scenario.recording.directory)
        if path is not None:
            try:
                write_classification(state, path, self.incidents)
            except OSError as exc:
                self.log('error', f'cannot write the classification to {path}: {exc}')
            else:
                self.log('info', f'classification written to {path}')

    def republishers_ready(self) -> bool:
        wanted = {car_topic(car.name) for car in self.scenario.cars}
        return self._drain_subscriptions() >= wanted

    def recording_ready(self) -> bool:
        return self.recording is not None and self.recording.ready

    def recorded_until(self) -> int | None:
        return None if self.recording is None or not self.recording.ready \
            else to_ns(self.recording.held_until)

    def _drain_subscriptions(self) -> set[bytes]:
        while self.fanout.poll(0):
            event = self.fanout.recv()
            (self.subscribed.add if event[:1] == b'\x01' else self.subscribed.discard)(event[1:])
        return self.subscribed

    def deliver(self, time_ns: int, states: Mapping[str, CarState],
                reply: framing.Message, computed: UpdateReply) -> None:
        sensors = UpdateReply.from_wire(reply).by_car()
        computed_by_car = computed.by_car()
        self._drain_subscriptions()
        sent = {}
        for name, state in states.items():
            frame = sent[name] = car_frame(name, state, sensors.get(name),
                                           computed_by_car.get(name))
            self.fanout.send_multipart(encode_car_frame(frame, reply.step, time_ns),
                                       copy=False)
        if self.clips is not None:
            self.clips.observe(reply.step, time_ns, sent)
        if self.view_feed is not None:
            self.view_feed.offer(time_ns, states, reply)

    def ok(self) -> bool:
        return rclpy.ok()

    def log(self, level: str, text: str, throttle_s: float = 0.0) -> None:
        """Log for the lockstep loop. rclpy keys a logger's severity and throttle on the line
        that calls it and refuses a change (ValueError), so every level has its own line here
        and throttling is done per line of the caller instead."""
        if throttle_s > 0.0:
            caller = sys._getframe(1)
            site, now = (caller.f_code.co_filename, caller.f_lineno, level), time.monotonic()
            if now < self._quiet_until.get(site, 0.0):
                return
            self._quiet_until[site] = now + throttle_s
        logger = self.get_logger()
        if level == 'error':
            logger.error(text)
        elif level == 'warn':
            logger.warning(text)
        else:
            logger.info(text)

    def _start_pose(self, car: str) -> tuple[float, float, float] | None:
        """Where ``car`` started, which odometry relative to the start counts from."""
        return None if self.engine is None else self.engine.start_poses.get(car)

    def close(self) -> None:
        if self.clips is not None:
            self.clips.close()
        self.fanout.close()


def spin_bridge(bridge: Bridge) -> None:
    """The lockstep loop, serving the process's executor (every node of a one-process run)
    whenever it waits."""
    settings = bridge.scenario.backend
    renderer: Renderer
    if bridge.scenario.one_process and settings.kind == 'embedded':  # no backend process
        renderer = InProcessRenderer()
    else:
        renderer = ProtocolRenderer(settings.address, settings.timeout_s, stopping.requested)
    # The backend's sensor noise and the engine's computed sensors (IMU, GNSS, wheel odometry)
    # draw from the scenario's seed, so a run repeats its noise and another seed varies it.
    engine = Engine(bridge.scenario, renderer, dynamics=False, seed=bridge.scenario.seed)
    bridge.engine = engine
    pacing = Pacing(bridge.scenario.real_time_factor)
    view = _start_web_view(bridge, engine, pacing)
    lockstep = Lockstep(engine, bridge, pacing, bridge.pilots(engine))
    try:
        lockstep.start()
        lockstep.run()
    finally:
        if view is not None:
            view.stop()
        if engine.metrics is not None:
            bridge.get_logger().info('results:\n' + engine.metrics.table())
            if rclpy.ok():
                bridge.publish_race(engine.time_ns, final=True)
                bridge.race_pub.wait_for_all_acked(Duration(seconds=FINAL_ACK_S))
        if engine.event is not None and not bridge._classified:
            bridge.write_classification(engine.event.state)
        if rclpy.ok():
            bridge.fs.finish(engine)
        engine.close()
        bridge.close()


def _start_web_view(bridge: Bridge, engine: Engine, pacing: Pacing) -> WebView | None:
    """The page of ``view: web``, served from this process; a view that cannot start is
    reported and the simulation goes on without it."""
    settings = bridge.scenario.view
    if settings.kind != 'web':
        return None
    from arsim_core.view.web_server import WebView  # aiohttp, only for a run that shows it

    feed = ViewFeed(bridge.scenario, engine, pacing)
    server = WebView(feed, settings.host, settings.port, bridge.log)
    try:
        url = server.start()
    except ArsimError as exc:
        bridge.log('error', f'{exc}; the simulation goes on without the view')
        return None
    bridge.view_feed = feed
    bridge.log('info', f'web view: open {url} in a browser')
    return server


def main() -> int:
    return run_node(Bridge, spin_bridge)
