"""``arsim-fit`` on bags recorded from the ROS graph (``recording.directory``), as a user
records a run, fitted from the shipped F1TENTH profile by the installed ``arsim-fit`` command.
The hidden car has a drive dead time and lag, a lower acceleration limit and a noisy IMU; it
is driven either by the built-in follow-the-gap driver on /drive, or as the real F1TENTH stack
down to its VESC (the ``f1tenth_vesc`` topic map, a follow-the-gap driver on /drive and nodes
doing what f1tenth/vesc's ``ackermann_to_vesc`` and ``vesc_to_odom`` do), when the fit reads
the VESC's own commands (ERPM, servo position) and ``vesc_to_odom``'s /odom as it would on the
car. In the ROS pipeline a message reaches the recorder a frame after it was taken; the fit
reads measurements at their stamps, so that frame is not taken for the car's own dead time."""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest
import yaml
from laps import DRIVER, DRIVER_WAITED_FOR
from rclpy.serialization import deserialize_message
from rosgraph_msgs.msg import Clock
from simharness import UNPACED, Probe, Simulation, driver_process, installed_resources, ros_env
from std_msgs.msg import Header

from arsim_core.config.profile import load_profile
from arsim_core.fit.bagfile import read_bag
from arsim_core.fit.figures import replay_errors
from arsim_core.fit.recording import read_recording
from arsim_core.fit.replay import Replay, compared_erpm_gain, plan

VESC_NODES = Path(__file__).resolve().parents[1] / 'drivers' / 'vesc_nodes.py'
DRIVE_S = 30.0
FRAME_NS = 25_000_000  # the default 40 Hz, as fast as the LiDAR the driver answers
HIDDEN = {'drive_dead_time': 0.025, 'drive_lag': 0.05, 'max_acceleration': 8.0}


def hidden_car(folder: Path) -> Path:
    profile = yaml.safe_load((installed_resources() / 'config/cars/f1tenth.yaml').read_text())
    profile['Actuators'] = {'drive': {'dead_time': HIDDEN['drive_dead_time'],
                                      'lag': HIDDEN['drive_lag']}}
    profile['CarParameters']['longitudinal']['max_acceleration'] = HIDDEN['max_acceleration']
    profile['Sensors']['imu'] = {'type': 'imu', 'position': [0.0, 0.0, 0.05], 'rate_hz': 40.0,
                                 'accel_noise_std': 0.05, 'gyro_noise_std': 0.005}
    path = folder / 'hidden.yaml'
    path.write_text(yaml.safe_dump(profile))
    return path


def record_and_fit(sim: Simulation, bag: Path, out: Path) -> str:
    """Let ``sim`` run ``DRIVE_S`` of sim time, stop it (closing its bag) and fit the bag;
    what ``arsim-fit`` printed. Its fitted profile and report are in ``out``."""
    probe = Probe(sim.domain_id)
    try:
        now = [0.0]
        probe.node.create_subscription(
            Clock, '/clock', lambda m: now.__setitem__(0, m.clock.sec + m.clock.nanosec * 1e-9),
            10)
        assert probe.spin_until(lambda: now[0] >= DRIVE_S, 240.0), sim.log
    finally:
        probe.close()
    assert sim.stop() == 0, sim.log
    out.mkdir()
    done = subprocess.run(
        ['arsim-fit', str(bag), '--profile', 'f1tenth', '-o', str(out / 'car.yaml'),
         '--report', str(out / 'report.html'), '--quiet'],
        capture_output=True, text=True, timeout=300, env=ros_env(sim.domain_id))
    assert done.returncode == 0, done.stderr
    return done.stdout


def hidden_car_replay_error(bag: Path, hidden: Path) -> float:
    """How well the hidden car itself replays ``bag`` [%]: the floor of any fit, set by the
    IMU's noise against what the drive excites, which varies from run to run."""
    vehicle = load_profile(hidden).vehicle
    recording = read_recording(bag, vehicle.vesc)
    replay = Replay(recording, plan(recording))
    errors = replay_errors(replay, replay.simulate(vehicle),
                           compared_erpm_gain(recording, vehicle))
    return 100.0 * errors.replay_error


def answered_stamps(bag: Path, topic: str) -> list[int]:
    """The stamps [ns] of what the car's dynamics node said on ``topic`` (``answered``: the
    clock time it had stepped to when a driver's command reached it), from the first after
    the hold at t = 0."""
    contents = read_bag(bag, lambda name, _type: name == topic)
    headers = [deserialize_message(data, Header) for _, data in contents.topics[topic].messages]
    stamps = [h.stamp.sec * 1_000_000_000 + h.stamp.nanosec for h in headers]
    return [stamp for stamp in stamps if stamp > 0]


def assert_hidden_car_found(printed: str, fitted: Path, floor: float) -> None:
    """The fitted car replays the bag as well as the hidden car does (``floor``, its replay
    error, within 10 %), the start profile at least three times worse, and the hidden values
    are identified within 10 %."""
    before, after = map(float, re.search(r'replay error ([\d.]+)% -> ([\d.]+)%',
                                         printed).groups())
    assert after <= 1.1 * floor, (floor, printed)
    assert before >= 3.0 * floor, (floor, printed)
    identified = set(re.search(r'^identified: (.*)$', printed, re.M).group(1).split(', '))
    assert set(HIDDEN) <= identified, printed
    vehicle = load_profile(fitted).vehicle
    got = {'drive_dead_time': vehicle.actuators.drive_dead_time,
           'drive_lag': vehicle.actuators.drive_lag,
           'max_acceleration': vehicle.params.longitudinal.max_acceleration}
    for name, value in HIDDEN.items():
        assert got[name] == pytest.approx(value, rel=0.1), (name, got, printed)


def test_a_bag_recorded_on_the_ros_graph_gives_back_the_hidden_car(simulation,
                                                                   tmp_path) -> None:
    bag, hidden = tmp_path / 'bag', hidden_car(tmp_path)
    sim = simulation(settings={
        'simulation': {'autopilot': 'follow_the_gap', 'real_time_factor': UNPACED},
        'recording': {'directory': str(bag)},
        'cars': [{'name': 'ego', 'profile': str(hidden)}]})
    printed = record_and_fit(sim, bag, tmp_path / 'fitted')
    assert_hidden_car_found(printed, tmp_path / 'fitted' / 'car.yaml',
                            hidden_car_replay_error(bag, hidden))
    # what the hidden car shares with the shipped one comes back as it is
    vehicle = load_profile(tmp_path / 'fitted' / 'car.yaml').vehicle
    assert vehicle.actuators.steering_dead_time == pytest.approx(0.0, abs=0.0025)
    assert vehicle.params.tyre.cornering_stiffness_front == pytest.approx(4.718, rel=0.03)


def test_a_vesc_stack_bag_gives_back_the_hidden_car(simulation, tmp_path) -> None:
    bag, hidden = tmp_path / 'bag', hidden_car(tmp_path)
    sim = simulation(settings={
        'simulation': {**DRIVER_WAITED_FOR, 'real_time_factor': UNPACED},
        'topic_map': 'f1tenth_vesc', 'recording': {'directory': str(bag)},
        'cars': [{'name': 'ego', 'profile': str(hidden)}]})
    driver_process(VESC_NODES, sim.domain_id)
    driver_process(DRIVER, sim.domain_id, '--speed', '3.0')
    printed = record_and_fit(sim, bag, tmp_path / 'fitted')
    report = (tmp_path / 'fitted' / 'report.html').read_text()
    assert '/commands/motor/speed' in report and '/commands/servo/position' in report
    assert_hidden_car_found(printed, tmp_path / 'fitted' / 'car.yaml',
                            hidden_car_replay_error(bag, hidden))
    # every answer to a scan reached the car before the next /clock: one frame apart each
    stamps = answered_stamps(bag, '/arsim/ego/answered')
    assert len(stamps) > 0.9 * DRIVE_S * 1e9 / FRAME_NS, len(stamps)
    steps = Counter(b - a for a, b in pairwise(stamps))
    assert set(steps) == {FRAME_NS}, steps
