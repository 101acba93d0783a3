"""Vehicle dynamics in a running simulation, observed and driven from other processes.

A node of one's own replaces arsim's dynamics for a car declared ``dynamics: external``
(docs/dynamics-node.md); a user model named in a profile drives a car; a model that produces NaN
resets only its own car; and one scene mixes models and integrators.
"""

from __future__ import annotations

import cmath
import math
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from ackermann_msgs.msg import AckermannDriveStamped
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import LaserScan
from simharness import Probe, Simulation, installed_resources, ros_env, stop_process

from arsim_core.config.scenario import CarSpec, Scenario, load_scenario
from arsim_core.engine.collisions import start_poses
from arsim_core.track import load_track
from arsim_msgs.msg import CarState, SimEvent
from arsim_msgs.srv import ResetCars

HERE = Path(__file__).resolve().parent
CUSTOM_NODE = HERE / 'custom_dynamics_node.py'
USER_MODELS = HERE / 'models' / 'bicycle.py'
STARTUP_S = 60.0
RUN_S = 60.0
WHEELBASE_M = 0.3302  # the custom node's unicycle turns at v tan(d) / WHEELBASE_M


def stamp_ns(stamp) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def yaw_of(q) -> float:
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def planar(pose) -> tuple[float, float, float]:
    return pose.position.x, pose.position.y, yaw_of(pose.orientation)


def angle_diff(a: float, b: float) -> float:
    return (a - b + math.pi) % (2.0 * math.pi) - math.pi


def profile_copy(directory: Path, name: str, **keys: str) -> Path:
    """config/cars/f1tenth.yaml with top-level ``keys`` replaced, everything else untouched."""
    text = (installed_resources() / 'config' / 'cars' / 'f1tenth.yaml').read_text()
    for key, value in keys.items():
        text, count = re.subn(rf'^{key}: *\S+', f'{key}: {value}', text, flags=re.MULTILINE)
        assert count == 1, f'no single top-level {key!r} in f1tenth.yaml'
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f'{name}.yaml'
    path.write_text(text)
    return path


def user_model(profile_dir: Path, class_name: str) -> str:
    """``model:`` value naming a class in tests/e2e/models, relative to the profile."""
    return f'{os.path.relpath(USER_MODELS, profile_dir)}:{class_name}'


class Observer:
    """A probe on the simulation's domain: records clock, states, odometry, scans and events,
    and keeps publishing each car's drive command from a timer (discovery may drop the first
    messages, and the bridge waits for a driver that answers)."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.scenario: Scenario = load_scenario(sim.settings_file, installed_resources())
        self.probe = Probe(sim.domain_id)
        node = self.probe.node
        self.clocks: list[int] = []
        self.events: list[SimEvent] = []
        self.states: dict[str, list[CarState]] = {}
        self.odoms: dict[str, list[Odometry]] = {}
        self.scans: dict[str, list[LaserScan]] = {}
        self.commands: dict[str, AckermannDriveStamped] = {}
        track = load_track(self.scenario.track.name, installed_resources() / 'maps')
        self.starts = start_poses(self.scenario.cars, track.start_pose)
        node.create_subscription(Clock, '/clock', lambda m: self.clocks.append(stamp_ns(m.clock)),
                                 100)
        node.create_subscription(SimEvent, self.scenario.topic_map.event_topic,
                                 self.events.append, 100)
        publishers = {}
        for car in self.scenario.cars:
            n = car.names
            self.states[car.name], self.odoms[car.name] = [], []
            self.scans[car.name] = []
            node.create_subscription(CarState, n.state_topic, self.states[car.name].append, 100)
            node.create_subscription(Odometry, n.odom_topic, self.odoms[car.name].append, 100)
            node.create_subscription(LaserScan, n.sensor_topics['scan'],
                                     self.scans[car.name].append, 100)
            publishers[car.name] = node.create_publisher(AckermannDriveStamped, n.drive_topic, 10)
            self.commands[car.name] = AckermannDriveStamped()

        def publish() -> None:
            for name, publisher in publishers.items():
                publisher.publish(self.commands[name])
        node.create_timer(0.02, publish)

    def car(self, name: str) -> CarSpec:
        return self.scenario.car(name)

    def drive(self, car: str, speed: float, steering_angle: float = 0.0) -> None:
        self.commands[car].drive.speed = speed
        self.commands[car].drive.steering_angle = steering_angle

    def start_pose(self, car: str) -> tuple[float, float, float]:
        return self.starts[car]

    def moved(self, car: str) -> float:
        """How far the car's latest state is from its start pose [m]."""
        if not self.states[car]:
            return 0.0
        return self.distance_from_start(car, self.states[car][-1])

    def distance_from_start(self, car: str, state: CarState) -> float:
        """How far ``state`` puts the car from its start pose [m]."""
        x, y, _ = planar(state.pose)
        x0, y0, _ = self.start_pose(car)
        return math.hypot(x - x0, y - y0)

    def wait(self, done: Callable[[], bool], timeout_s: float = RUN_S) -> None:
        assert self.probe.spin_until(done, timeout_s), self.sim.log

    def frame_ns(self) -> int:
        return self.scenario.frame_period_ns

    def close(self) -> None:
        self.probe.close()


@pytest.fixture
def observe():
    observers: list[Observer] = []

    def make(sim: Simulation) -> Observer:
        observers.append(Observer(sim))
        return observers[-1]

    yield make
    for observer in observers:
        observer.close()


def command_lines(sim: Simulation) -> str:
    """The command lines of every process the simulation's runner started, in one text: node
    names appear in them whether a node runs alone or in a container."""
    lines = []
    for pid in sim.session_processes():
        try:
            lines.append(Path(f'/proc/{pid}/cmdline').read_bytes().replace(b'\0', b' ').decode())
        except OSError:
            continue
    return '\n'.join(lines)


def start_custom_node(sim: Simulation, scenario: Scenario, car: CarSpec) -> subprocess.Popen:
    """tests/e2e/custom_dynamics_node.py for ``car``, remapped as the launcher remaps ours."""
    n, m = car.names, scenario.topic_map
    remaps = {'state': n.state_topic, 'drive': n.drive_topic, 'reset': n.reset_topic,
              'track': m.track_topic, 'events': m.event_topic}
    args = [sys.executable, str(CUSTOM_NODE), '--ros-args', '-p', f'car:={car.name}',
            '-p', f'world_frame:={m.world_frame}']
    for source, target in remaps.items():
        args += ['-r', f'{source}:={target}']
    log = (sim.workdir / 'custom_node.log').open('wb')
    return subprocess.Popen(args, env=ros_env(sim.domain_id), stdout=log,
                            stderr=subprocess.STDOUT)


def unicycle(start: tuple[float, float, float], v: float, w: float,
             t: float) -> tuple[float, float, float]:
    """Where a unicycle at constant (v, w) is after t seconds: the position turns about the
    centre of its circle, z(t) = c + (z0 - c) e^(i w t)."""
    x0, y0, yaw0 = start
    z0 = complex(x0, y0)
    centre = z0 + 1j * (v / w) * cmath.exp(1j * yaw0)
    z = centre + (z0 - centre) * cmath.exp(1j * w * t)
    return z.real, z.imag, yaw0 + w * t


def test_a_custom_node_drives_an_external_car_in_lockstep(simulation, observe) -> None:
    """A unicycle node of our own answers /clock for the ego: the odometry follows the
    unicycle exactly, and every frame is one the node integrated to. At real time, so the
    probe takes every message; unpaced, the car would reach a wall before it had."""
    sim = simulation(settings={'simulation': {'real_time_factor': 1.0},
                               'cars': [{'name': 'ego', 'profile': 'f1tenth',
                                         'dynamics': 'external'}]})
    obs = observe(sim)
    node = start_custom_node(sim, obs.scenario, obs.car('ego'))
    try:
        v, steering = 1.0, 0.03125  # exact in AckermannDrive's float32
        w = v * math.tan(steering) / WHEELBASE_M
        obs.drive('ego', v, steering)

        def moving() -> list[Odometry]:
            return [o for o in obs.odoms['ego'] if o.twist.twist.linear.x == v]
        period = obs.frame_ns()
        obs.wait(lambda: len(moving()) >= 60 and len(obs.scans['ego']) >= 20 and obs.clocks
                 and obs.clocks[-1] - obs.clocks[0] >= 60 * period)
        assert node.poll() is None, (sim.workdir / 'custom_node.log').read_text()

        processes = command_lines(sim)
        assert 'ego_sensors' in processes and 'ego_dynamics' not in processes, processes
        assert {s.model for s in obs.states['ego']} == {'unicycle'}

        # The car follows the unicycle from its first moving sample on, for 60 frames (its circle
        # reaches a wall after about 4 s).
        first, *later = moving()[:60]
        assert stamp_ns(later[-1].header.stamp) - stamp_ns(first.header.stamp) == 59 * period
        t0 = stamp_ns(first.header.stamp)
        for odom in later:
            x, y, yaw = planar(odom.pose.pose)
            ex, ey, eyaw = unicycle(planar(first.pose.pose), v, w,
                                    (stamp_ns(odom.header.stamp) - t0) * 1e-9)
            assert math.hypot(x - ex, y - ey) < 1e-6, (odom, (ex, ey))
            assert abs(angle_diff(yaw, eyaw)) < 1e-6
            assert odom.twist.twist.angular.z == pytest.approx(w, abs=1e-9)
        travelled = math.dist(planar(first.pose.pose)[:2], planar(later[-1].pose.pose)[:2])
        assert travelled > 1.0

        # Lockstep: /clock moves frame by frame; odometry and scans carry frame times, and each
        # odometry message is the node's state for that very frame. (/clock may match after the
        # scans do, so scans are only bounded above by the clock.)
        clocks = obs.clocks
        assert clocks == sorted(clocks) and clocks[-1] - clocks[0] >= 60 * period
        assert all(c % period == 0 for c in clocks)
        stamps = [stamp_ns(s.header.stamp) for s in obs.scans['ego']]
        assert all(s % period == 0 and s <= clocks[-1] for s in stamps)
        assert stamps == sorted(set(stamps))
        states = {stamp_ns(s.header.stamp): s for s in obs.states['ego']}
        for odom in later:
            state = states[stamp_ns(odom.header.stamp)]
            assert planar(state.pose) == pytest.approx(planar(odom.pose.pose), abs=1e-12)
        assert 'late at' not in sim.log and 'did not answer' not in sim.log, sim.log

        # The bridge's reset service reaches the external node like ours: a RESET event, and
        # the state of that frame is the start pose.
        def resets() -> list[SimEvent]:
            return [e for e in obs.events if e.car_id == 'ego' and e.kind == SimEvent.RESET]
        assert not resets()
        client = obs.probe.node.create_client(ResetCars, '/arsim/reset_cars')
        assert client.wait_for_service(timeout_sec=10.0)
        future = client.call_async(ResetCars.Request(cars=['ego']))
        obs.wait(future.done, 10.0)
        assert future.result().success
        obs.wait(lambda: bool(resets()))
        at = stamp_ns(resets()[0].header.stamp)
        obs.wait(lambda: at in {stamp_ns(s.header.stamp) for s in obs.states['ego']})
        state = next(s for s in obs.states['ego'] if stamp_ns(s.header.stamp) == at)
        assert planar(state.pose) == pytest.approx(obs.start_pose('ego'), abs=1e-9)
    finally:
        stop_process(node)


def test_a_user_model_named_in_a_profile_drives_a_car(simulation, observe, tmp_path) -> None:
    profiles = tmp_path / 'profiles'
    model = user_model(profiles, 'RearAxleBicycle')
    profile = profile_copy(profiles, 'bicycle', model=model)
    sim = simulation(settings={'cars': [{'name': 'ego', 'profile': str(profile)}]})
    obs = observe(sim)
    obs.drive('ego', 2.0)
    # Odometry comes from another publisher than the state: wait for it as well.
    obs.wait(lambda: obs.moved('ego') > 1.5 and obs.odoms['ego']
             and obs.odoms['ego'][-1].twist.twist.linear.x > 1.0)

    # The first state past 1.5 m, not the latest: unpaced, the car may have reached the wall
    # ahead by the time the odometry arrives.
    state = next(s for s in obs.states['ego'] if obs.distance_from_start('ego', s) > 1.5)
    assert state.model == model
    assert len(state.model_state) == 5  # x, y, steering angle, speed, yaw
    assert state.model_state[3] == pytest.approx(2.0, abs=0.2)
    assert state.twist.linear.x == state.model_state[3] and state.twist.linear.y == 0.0
    x0, y0, yaw0 = obs.start_pose('ego')
    x, y, _ = planar(state.pose)
    assert abs(angle_diff(math.atan2(y - y0, x - x0), yaw0)) < 0.05  # straight ahead
    assert not [e for e in obs.events if e.kind == SimEvent.MODEL_ERROR]


def test_a_diverging_model_resets_only_its_car(simulation, observe, tmp_path) -> None:
    """FragileBicycle returns NaN above 1.5 m/s: its car is reported and put back at the start,
    while the other car (ST) drives on and the clock keeps moving."""
    profiles = tmp_path / 'profiles'
    fragile = profile_copy(profiles, 'fragile', model=user_model(profiles, 'FragileBicycle'))
    sim = simulation(settings={
        'collisions': {'response': 'ghost'},
        'cars': [{'name': 'ego', 'profile': str(fragile)},
                 {'name': 'opp_racecar', 'profile': 'f1tenth'}]})
    obs = observe(sim)
    obs.drive('ego', 3.0)
    obs.drive('opp_racecar', 3.0)
    period = obs.frame_ns()

    def errors() -> list[SimEvent]:
        """Model errors whose frame's state was recorded too (the first ones may precede
        discovery; the model keeps failing each time the car speeds up again)."""
        recorded = {stamp_ns(s.header.stamp) for s in obs.states['ego']}
        return [e for e in obs.events if e.kind == SimEvent.MODEL_ERROR
                and stamp_ns(e.header.stamp) in recorded]
    # /clock may match later than the events and states do: guard the empty list.
    obs.wait(lambda: errors() and obs.clocks and obs.clocks[-1] > stamp_ns(
        errors()[0].header.stamp) + 40 * period and obs.moved('opp_racecar') > 1.0)

    error = errors()[0]
    at = stamp_ns(error.header.stamp)
    assert error.car_id == 'ego' and 'diverged' in error.detail
    following = obs.events[obs.events.index(error) + 1:]
    reset = next(e for e in following if e.car_id == 'ego')
    assert reset.kind == SimEvent.RESET and stamp_ns(reset.header.stamp) == at
    assert not [e for e in obs.events if e.car_id == 'opp_racecar'
                and e.kind in (SimEvent.MODEL_ERROR, SimEvent.RESET)]

    # The state of the error's frame is the car back at its start, at rest.
    state = next(s for s in obs.states['ego'] if stamp_ns(s.header.stamp) == at)
    assert planar(state.pose) == pytest.approx(obs.start_pose('ego'), abs=1e-9)
    assert state.model_state[3] == 0.0
    before = [s for s in obs.states['ego'] if stamp_ns(s.header.stamp) == at - period]
    assert not before or before[0].model_state[3] > 1.0  # it was driving until then

    # The other car never stopped.
    opp = [s for s in obs.states['opp_racecar'] if stamp_ns(s.header.stamp) > at]
    assert opp and opp[-1].model == 'st' and opp[-1].twist.linear.x > 2.0
    assert 'resetting the car' in sim.log and sim.process.poll() is None


def test_one_scene_mixes_models_and_integrators(simulation, observe, tmp_path) -> None:
    """ks + Euler, st + RK4 (the default profile) and std + RK4 at 1 kHz, side by side."""
    profiles = tmp_path / 'profiles'
    ks = profile_copy(profiles, 'ks_euler', model='ks', integrator='euler')
    std = profile_copy(profiles, 'std_1khz', model='std', physics_rate_hz='1000.0')
    cars = {'kinematic': ('ks', 5), 'single_track': ('st', 7), 'drift': ('std', 9)}
    sim = simulation(settings={
        'collisions': {'response': 'ghost'},
        'cars': [{'name': 'kinematic', 'profile': str(ks)},
                 {'name': 'single_track', 'profile': 'f1tenth'},
                 {'name': 'drift', 'profile': str(std)}]})
    obs = observe(sim)
    for car in cars:
        obs.drive(car, 2.0)
    obs.wait(lambda: all(obs.moved(car) > 1.0 for car in cars))

    period = obs.frame_ns()
    for car, (model, size) in cars.items():
        state = obs.states[car][-1]
        assert (state.model, len(state.model_state)) == (model, size), car
        assert state.twist.linear.x > 1.0, car
        assert all(stamp_ns(s.header.stamp) % period == 0 for s in obs.states[car])
    used = {car: obs.car(car).profile.vehicle for car in cars}
    assert {car: (c.model_name, c.integrator, c.physics_rate_hz) for car, c in used.items()} == {
        'kinematic': ('ks', 'euler', 200.0), 'single_track': ('st', 'rk4', 200.0),
        'drift': ('std', 'rk4', 1000.0)}
    assert not [e for e in obs.events if e.kind == SimEvent.MODEL_ERROR]
