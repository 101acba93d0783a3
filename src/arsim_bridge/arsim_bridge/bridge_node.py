"""The bridge: owns sim time, steps the simulation in lockstep and talks to the backend.

Each frame it publishes /clock, waits until every car's dynamics node has published its state
for that time, asks the backend to render the sensors that are due, and fans the frames out to
the sensor republishers. Synchronous: as fast as possible, or paced to a real-time factor.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import rclpy
import zmq
from ackermann_msgs.msg import AckermannDriveStamped
from rclpy.node import Node
from rosgraph_msgs.msg import Clock

from arsim_bridge import qos
from arsim_bridge.common import (
    declare_scenario,
    new_executor,
    planar,
    run_node,
    to_ns,
    to_time,
    yaw_of,
)
from arsim_bridge.frames import car_topic, encode_car_frame
from arsim_bridge.referee import Referee
from arsim_core import protocol
from arsim_core.backend.client import BackendClient
from arsim_core.config.scenario import Scenario
from arsim_core.errors import ArsimError
from arsim_core.sensors.beams import frames_per_sample
from arsim_msgs.msg import CarCommand, CarState, TrackGeometry
from arsim_msgs.srv import ResetCars

STATUS_PERIOD_S = 10.0
PING_PERIOD_S = 0.2


class Bridge(Node):
    """Holds the ROS side of the bridge; the stepping loop lives in ``Stepper``."""

    def __init__(self) -> None:
        super().__init__('bridge')
        self.scenario: Scenario = declare_scenario(self)
        self.track: TrackGeometry | None = None
        self.track_changed = False
        self.time_ns = 0
        self.states: dict[str, CarState] = {}
        self.car_names = {car.name for car in self.scenario.cars}
        self.commanded: set[str] = set()  # cars whose driver spoke since their last data
        self.silent_drivers: set[str] = set()  # not waited for until they speak again
        self.clock_pub = self.create_publisher(Clock, '/clock', qos.CLOCK)
        self.referee = Referee(self, self.scenario)
        self.create_subscription(TrackGeometry, 'track', self.on_track, qos.LATCHED)
        self.create_service(ResetCars, 'reset_cars', self.on_reset_cars)
        for car in self.scenario.cars:
            self.create_subscription(CarState, car.names.state_topic, self.on_state, qos.STREAM)
            if self.scenario.wait_for_drivers:
                heard = functools.partial(self.on_command, car.name)
                self.create_subscription(AckermannDriveStamped, car.names.drive_topic, heard,
                                         qos.STREAM)
                self.create_subscription(CarCommand, car.names.command_topic, heard,
                                         qos.STREAM)

    def on_track(self, msg: TrackGeometry) -> None:
        self.track = msg
        self.track_changed = True

    def on_reset_cars(self, request: ResetCars.Request,
                      response: ResetCars.Response) -> ResetCars.Response:
        known = [car.name for car in self.scenario.cars]
        unknown = sorted(set(request.cars) - set(known))
        if unknown:
            response.success = False
            response.message = f'unknown car(s) {unknown}; the cars are {known}'
            return response
        if self.referee.world is None:
            response.success = False
            response.message = 'no track yet; the simulation is still starting'
            return response
        cars = list(request.cars) or known
        self.referee.reset_to_start(cars, self.time_ns)
        response.success = True
        response.message = f'reset {cars} to their start poses'
        return response

    def on_state(self, msg: CarState) -> None:
        if msg.car_id in self.car_names:
            self.states[msg.car_id] = msg

    def on_command(self, car: str, _msg: object) -> None:
        self.commanded.add(car)
        self.silent_drivers.discard(car)

    def publish_clock(self, time_ns: int) -> None:
        self.time_ns = time_ns
        self.clock_pub.publish(Clock(clock=to_time(time_ns)))


@dataclass(frozen=True)
class InFlight:
    """A frame the backend is rendering: its time, the car states it shows, the cars scanned."""

    time_ns: int
    states: dict[str, CarState]
    scanned: set[str]


class Stepper:
    """The lockstep loop: clock -> car states -> backend render -> sensor fan-out."""

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge
        self.scenario = bridge.scenario
        self.log = bridge.get_logger()
        self.executor = new_executor()
        self.executor.add_node(bridge)
        settings = self.scenario.backend
        self.client = BackendClient(settings.address, settings.timeout_s)
        self.fanout = zmq.Context.instance().socket(zmq.XPUB)
        self.fanout.setsockopt(zmq.LINGER, 0)
        try:
            self.fanout.bind(settings.frames_address)
        except zmq.ZMQError as exc:
            self.client.close()
            msg = (f'cannot bind backend.frames_address {settings.frames_address}: {exc} '
                   f'(is another simulation running?)')
            raise ArsimError(msg) from exc
        self.subscribed: set[bytes] = set()
        self.in_flight: InFlight | None = None
        # Only what the backend renders is requested; IMU, GNSS and odometry are computed by
        # the republishers from the car state every frame carries.
        period = self.scenario.frame_period_ns
        self.due_every = {(car.name, s.name): frames_per_sample(s.rate_hz, period)
                          for car in self.scenario.cars for s in car.profile.sensors
                          if s.rendered}

    def spin_until(self, done: Callable[[], bool], timeout_s: float,
                   every: Callable[[], None] | None = None) -> bool:
        """Process callbacks until ``done``; calls ``every`` each PING_PERIOD_S while waiting."""
        deadline = time.monotonic() + timeout_s
        next_ping = 0.0
        while not done():
            now = time.monotonic()
            if now > deadline:
                return False
            if every is not None and now >= next_ping:
                every()
                next_ping = now + PING_PERIOD_S
            self.executor.spin_once(timeout_sec=0.01)
        return True

    def start(self) -> None:
        """Track -> backend Ready -> every car at t=0 -> every republisher connected."""
        startup = self.scenario.backend.startup_timeout_s
        if not self.spin_until(lambda: self.bridge.track is not None, startup):
            msg = f'no track geometry on {self.scenario.topic_map.track_topic} after {startup} s'
            raise ArsimError(msg)
        self.log.info(f'connecting to the backend at {self.scenario.backend.address}')
        ready = self.client.request(protocol.INITIAL_SETTINGS, 0, 0, self._initial_settings(),
                                    self._track_arrays(), timeout_ms=int(startup * 1000))
        self.log.info(f'backend {ready.header.get("backend")!r} ready with track '
                      f'{ready.header.get("track")!r}')
        self.bridge.track_changed = False
        self.bridge.referee.set_track(self.bridge.track)
        names = [c.name for c in self.scenario.cars]
        if not self.spin_until(lambda: self._cars_at(0), startup,
                               every=lambda: self.bridge.publish_clock(0)):
            missing = [n for n in names if not self._car_at(n, 0)]
            msg = f'dynamics node(s) of {missing} did not answer /clock within {startup} s'
            raise ArsimError(msg)
        wanted = {car_topic(n) for n in names}
        if not self.spin_until(lambda: self._drain_subscriptions() >= wanted, startup):
            msg = f'sensor republisher(s) did not connect to {self.scenario.backend.frames_address}'
            raise ArsimError(msg)
        self.log.info(f'{len(names)} car(s) ready; stepping at {self.scenario.frame_rate_hz} Hz, '
                      f'real-time factor {self.scenario.real_time_factor or "max"}')

    def _initial_settings(self) -> dict:
        track = self.bridge.track
        return {'world_frame': self.scenario.topic_map.world_frame,
                'frame_period_ns': self.scenario.frame_period_ns,
                'track': {'name': track.name},
                'cars_visible': self.scenario.collisions.cars_visible,
                'cars': [{'id': car.name,
                          'footprint': [car.profile.footprint.length, car.profile.footprint.width,
                                        car.profile.footprint.height],
                          'sensors': [s.to_wire() for s in car.profile.sensors]}
                         for car in self.scenario.cars]}

    def _track_arrays(self) -> dict[str, np.ndarray]:
        track = self.bridge.track
        return {'track_vertices': np.asarray(track.vertices, dtype=np.float32).reshape(-1, 3),
                'track_triangles': np.asarray(track.triangles, dtype=np.uint32).reshape(-1, 3),
                'track_labels': np.asarray(track.labels, dtype=np.uint8)}

    def _car_at(self, name: str, time_ns: int) -> bool:
        state = self.bridge.states.get(name)
        return state is not None and to_ns(state.header.stamp) == time_ns

    def _cars_at(self, time_ns: int) -> bool:
        return all(self._car_at(c.name, time_ns) for c in self.scenario.cars)

    def _drain_subscriptions(self) -> set[bytes]:
        while self.fanout.poll(0):
            event = self.fanout.recv()
            (self.subscribed.add if event[:1] == b'\x01' else self.subscribed.discard)(event[1:])
        return self.subscribed

    def loop(self) -> None:
        """Pipelined: the backend renders frame k while the bridge fans frame k-1 out, the
        dynamics nodes integrate frame k+1 and the bridge collects and judges it. Drivers still
        get frame k-1's data before /clock moves on to k+1."""
        period = self.scenario.frame_period_ns
        rtf = self.scenario.real_time_factor
        timeout = self.scenario.backend.timeout_s
        wall_start = time.monotonic()
        status_at = wall_start + STATUS_PERIOD_S
        step = 1
        self.bridge.publish_clock(period)
        while rclpy.ok():
            now = step * period
            if not self.spin_until(functools.partial(self._cars_at, now), timeout):
                late = [c.name for c in self.scenario.cars if not self._car_at(c.name, now)]
                self.log.warn(f'dynamics of {late} late at t={now / 1e9:.3f} s; reusing their '
                              f'last state', throttle_duration_sec=2.0)
            if rtf > 0.0:
                delay = wall_start + now / 1e9 / rtf - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            states = {car.name: self.bridge.states[car.name] for car in self.scenario.cars}
            self.bridge.referee.judge(states, now)
            rendered = self._collect()
            if self.bridge.track_changed:
                self._switch_track(step, now)
            self._request_render(step, now, states)
            if rendered is not None:
                self._deliver(*rendered)
            self.bridge.publish_clock(now + period)
            if time.monotonic() >= status_at:
                status_at += STATUS_PERIOD_S
                self.log.info(f'sim time {now / 1e9:.1f} s, real-time factor '
                              f'{now / 1e9 / (time.monotonic() - wall_start):.1f}')
            step += 1

    def _switch_track(self, step: int, now: int) -> None:
        """Hand a new track to the backend and the referee, and every car to its new start.

        The cars move in the frame the referee starts judging them on the new track, so no car
        is ever judged against the walls of the other one.
        """
        self.bridge.track_changed = False
        self.client.request(protocol.TRACK, step, now, {'track': {'name': self.bridge.track.name}},
                            self._track_arrays())
        self.bridge.referee.set_track(self.bridge.track)
        self.bridge.referee.reset_to_start([car.name for car in self.scenario.cars], now)
        self.log.info(f'track switched to {self.bridge.track.name!r}')

    def _wait_for_drivers(self, scanned: set[str], now: int) -> None:
        """Wait until the driver of every car that just got sensor data has answered.

        Only drivers that answered last time are waited for: a silent one (none running, a
        teleop between key presses) costs one timeout, then the sim runs on without it until it
        speaks again.
        """
        bridge = self.bridge
        awaited = scanned - bridge.silent_drivers
        if awaited and not self.spin_until(lambda: awaited <= bridge.commanded,
                                           self.scenario.driver_timeout_s):
            silent = awaited - bridge.commanded
            bridge.silent_drivers |= silent
            self.log.info(f'no command from the driver(s) of {sorted(silent)} within '
                          f'{self.scenario.driver_timeout_s} s of the scan at '
                          f't={now / 1e9:.3f} s; running on without waiting for them',
                          throttle_duration_sec=10.0)

    def _request_render(self, step: int, now: int, states: dict[str, CarState]) -> None:
        """Ask the backend for frame ``step`` with the sensors due then; it is collected and
        fanned out once the next frame's car states are in."""
        cars = [{'id': name, 'pose': [s.pose.position.x, s.pose.position.y, s.pose.position.z,
                                      0.0, 0.0, yaw_of(s.pose)]}
                for name, s in states.items()]
        render = [{'car': car, 'sensor': sensor} for (car, sensor), every
                  in self.due_every.items() if step % every == 0]
        self.client.send(protocol.UPDATE, step, now, {'cars': cars, 'render': render})
        self.in_flight = InFlight(now, states, {r['car'] for r in render})

    def _collect(self) -> tuple[InFlight, protocol.Message] | None:
        """The frame the backend has been rendering, with its reply; None before the first."""
        if self.in_flight is None:
            return None
        frame, self.in_flight = self.in_flight, None
        return frame, self.client.receive()

    def _deliver(self, frame: InFlight, reply: protocol.Message) -> None:
        """Fan a rendered frame out to the republishers and, if the scenario asks for it, wait
        for the drivers of the cars that got sensor data."""
        self.bridge.commanded.clear()  # what counts as an answer arrives after this data
        meta = protocol.frame_meta(reply)
        self._drain_subscriptions()
        for name, s in frame.states.items():
            names = [n for n, m in meta.items() if m.get('car') == name]
            state = {'pose': list(planar(s.pose)),
                     'twist': [s.twist.linear.x, s.twist.linear.y, s.twist.angular.z],
                     'accel': [s.accel.linear.x, s.accel.linear.y],
                     'steering_angle': s.steering_angle}
            self.fanout.send_multipart(
                encode_car_frame(name, reply.step, frame.time_ns, state,
                                 {n: reply.arrays[n] for n in names},
                                 {n: {k: v for k, v in meta[n].items()
                                      if k not in ('name', 'dtype', 'shape')} for n in names}),
                copy=False)
        if self.scenario.wait_for_drivers:
            self._wait_for_drivers(frame.scanned, frame.time_ns)

    def close(self) -> None:
        self.client.close()
        self.fanout.close()


def _spin(bridge: Bridge) -> None:
    stepper = Stepper(bridge)
    try:
        stepper.start()
        stepper.loop()
    finally:
        stepper.close()


def main() -> int:
    return run_node(Bridge, _spin)
