"""``arsim-fit`` on a bag recorded from the ROS graph (``recording.directory``), as a user
records a run: a hidden car (drive dead time and lag, a lower acceleration limit, a noisy IMU)
driven by the built-in follow-the-gap driver, fitted from the shipped F1TENTH profile by the
installed ``arsim-fit`` command. In the ROS pipeline a message reaches the recorder a frame
after it was taken; the fit reads measurements at their stamps, so that frame is not taken
for the car's own dead time."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml
from rosgraph_msgs.msg import Clock
from simharness import UNPACED, Probe, installed_resources, ros_env

from arsim_core.config.profile import load_profile

DRIVE_S = 30.0
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


def test_a_bag_recorded_on_the_ros_graph_gives_back_the_hidden_car(simulation,
                                                                   tmp_path) -> None:
    bag = tmp_path / 'bag'
    sim = simulation(settings={
        'simulation': {'autopilot': 'follow_the_gap', 'real_time_factor': UNPACED},
        'recording': {'directory': str(bag)},
        'cars': [{'name': 'ego', 'profile': str(hidden_car(tmp_path))}]})
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
    out = tmp_path / 'fitted'
    out.mkdir()
    done = subprocess.run(
        ['arsim-fit', str(bag), '--profile', 'f1tenth', '-o', str(out / 'car.yaml'),
         '--report', str(out / 'report.html'), '--quiet'],
        capture_output=True, text=True, timeout=300, env=ros_env(sim.domain_id))
    assert done.returncode == 0, done.stderr
    before, after = map(float, re.search(r'replay error ([\d.]+)% -> ([\d.]+)%',
                                         done.stdout).groups())
    assert before / after >= 5.0, done.stdout
    identified = set(re.search(r'^identified: (.*)$', done.stdout, re.M).group(1).split(', '))
    assert set(HIDDEN) <= identified, done.stdout
    vehicle = load_profile(out / 'car.yaml').vehicle
    got = {'drive_dead_time': vehicle.actuators.drive_dead_time,
           'drive_lag': vehicle.actuators.drive_lag,
           'max_acceleration': vehicle.params.longitudinal.max_acceleration}
    for name, value in HIDDEN.items():
        assert got[name] == pytest.approx(value, rel=0.1), (name, got, done.stdout)
    # what the hidden car shares with the shipped one comes back as it is
    assert vehicle.actuators.steering_dead_time == pytest.approx(0.0, abs=0.0025)
    assert vehicle.params.tyre.cornering_stiffness_front == pytest.approx(4.718, rel=0.03)
