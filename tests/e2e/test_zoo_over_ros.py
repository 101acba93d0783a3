"""The driver zoo on the ROS graph: cars whose ``driver`` names a line driver are driven from
the bridge, on their own drive topics as a stack's commands would go out, and a
follow_the_gap car by the autopilot node, through its scans; a three-car race runs to the
chequered flag with its classification written (docs/race-control.md, "The driver zoo")."""

from __future__ import annotations

from pathlib import Path

import yaml
from ackermann_msgs.msg import AckermannDriveStamped
from simharness import UNPACED, Probe, installed_resources

from arsim_core.config.scenario import load_scenario


def test_zoo_drivers_race_to_the_flag_over_ros(simulation, tmp_path: Path) -> None:
    classification = tmp_path / 'classification.yaml'
    sim = simulation(settings={
        'simulation': {'real_time_factor': UNPACED},
        'race': {'event': {'classification_file': str(classification), 'sessions': [
            {'kind': 'race', 'laps': 1, 'start': 'standing', 'lights': 2,
             'light_interval_s': 0.5, 'cool_down_s': 30.0}]}},
        'cars': [{'name': 'car3', 'profile': 'f1tenth', 'driver': 'follow_the_gap'},
                 {'name': 'ego', 'profile': 'f1tenth', 'driver': 'club'},
                 {'name': 'car2', 'profile': 'f1tenth', 'driver': 'novice'}]})
    scenario = load_scenario(sim.settings_file, installed_resources())
    probe = Probe(sim.domain_id)
    commands: list[AckermannDriveStamped] = []
    try:
        probe.node.create_subscription(AckermannDriveStamped,
                                       scenario.car('ego').names.drive_topic,
                                       commands.append, 100)
        assert probe.spin_until(lambda: 'classification written to' in sim.log, 240.0), \
            sim.log
    finally:
        probe.close()
    assert 'built-in drivers: car2 (novice), ego (club)' in sim.log, sim.log
    assert 'autopilot (follow the gap) drives car3' in sim.log, sim.log
    # the bridge drove ego on its drive topic, in sim time, and held it for the lights
    assert any(c.drive.speed > 1.0 for c in commands), commands[-3:]
    stamps = [c.header.stamp.sec + 1e-9 * c.header.stamp.nanosec for c in commands]
    assert stamps == sorted(stamps)
    assert all(c.drive.speed == 0.0 for c, t in zip(commands, stamps, strict=True) if t < 0.9)
    written = yaml.safe_load(classification.read_text())
    assert written['finished'] is True, written
    rows = {row['car']: row for row in written['classification']}
    assert set(rows) == {'ego', 'car2', 'car3'}
    assert all(row['status'] == 'finished' and row['laps'] == 1 for row in rows.values()), (
        rows, sim.log)
    assert sim.stop() == 0, sim.log


def test_a_gym_policy_is_refused_over_ros_with_its_key(simulation) -> None:
    sim = simulation(settings={'cars': [
        {'name': 'ego', 'profile': 'f1tenth', 'driver': 'my_policies.fast:policy'}]})
    assert sim.process.wait(120) != 0
    assert 'cars[0].driver (ego): a Gym policy (my_policies.fast:policy) drives only in ' \
           'process' in sim.log, sim.log
