"""``arsim-fit`` on a bag of the real F1TENTH stack down to its VESC: the car driven through the
VESC topic map (``f1tenth_vesc``) by a follow-the-gap driver on /drive and nodes doing what
f1tenth/vesc's ``ackermann_to_vesc`` and ``vesc_to_odom`` do, recorded from the ROS graph. The
fit reads the VESC's own commands (ERPM, servo position) and ``vesc_to_odom``'s /odom, as it
would on the car, and gives back the hidden car's drive timing and acceleration limit."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml
from laps import DRIVER, DRIVER_WAITED_FOR
from rosgraph_msgs.msg import Clock
from simharness import UNPACED, Probe, driver_process, installed_resources, ros_env

from arsim_core.config.profile import load_profile

VESC_NODES = Path(__file__).resolve().parents[1] / 'drivers' / 'vesc_nodes.py'
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


def test_a_vesc_stack_bag_gives_back_the_hidden_car(simulation, tmp_path) -> None:
    bag = tmp_path / 'bag'
    sim = simulation(settings={
        'simulation': {**DRIVER_WAITED_FOR, 'real_time_factor': UNPACED},
        'topic_map': 'f1tenth_vesc', 'recording': {'directory': str(bag)},
        'cars': [{'name': 'ego', 'profile': str(hidden_car(tmp_path))}]})
    driver_process(VESC_NODES, sim.domain_id)
    driver_process(DRIVER, sim.domain_id, '--speed', '3.0')
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
    report = (out / 'report.html').read_text()
    assert '/commands/motor/speed' in report and '/commands/servo/position' in report
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
