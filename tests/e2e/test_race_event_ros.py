"""A race event on the ROS graph: /arsim/race carries the session, the flag, the start lights
and the laps or time remaining over real DDS as the event runs its practice and its race;
two cars that nobody drives are retired (DNF) and the event still finishes, with the
classification written as a file (docs/race-control.md, "Race formats")."""

from __future__ import annotations

import math
from pathlib import Path

import yaml
from ackermann_msgs.msg import AckermannDriveStamped
from simharness import Probe, installed_resources

from arsim_core.config.scenario import load_scenario
from arsim_msgs.msg import CarRaceStatus, RaceStatus


def test_race_topic_carries_the_event_session_and_flag(simulation, tmp_path: Path) -> None:
    classification = tmp_path / 'results' / 'classification.yaml'
    sim = simulation(settings={
        # sim time waits for the probe's command, then runs at twice real time: every
        # message of the event reaches the probe
        'simulation': {'wait_for_drivers': False, 'start_on_first_command': True,
                       'real_time_factor': 2.0},
        'race': {'event': {
            'retire_after_s': 1.0, 'classification_file': str(classification),
            'sessions': [
                {'kind': 'practice', 'name': 'free practice', 'duration_s': 1.0,
                 'cool_down_s': 0.0},
                {'kind': 'race', 'laps': 3, 'start': 'standing', 'lights': 2,
                 'light_interval_s': 0.5, 'cool_down_s': 0.5}]}},
        'cars': [{'name': 'ego', 'profile': 'f1tenth'},
                 {'name': 'car2', 'profile': 'f1tenth'}]})
    scenario = load_scenario(sim.settings_file, installed_resources())
    probe = Probe(sim.domain_id)
    try:
        messages: list[RaceStatus] = []
        topic = scenario.topic_map.race_topic
        probe.node.create_subscription(RaceStatus, topic, messages.append, 100)
        assert probe.spin_until(lambda: probe.node.count_publishers(topic) > 0, 60.0), sim.log
        drive = probe.node.create_publisher(AckermannDriveStamped,
                                            scenario.car('ego').names.drive_topic, 10)
        assert probe.spin_until(lambda: drive.get_subscription_count() > 0, 30.0), sim.log
        drive.publish(AckermannDriveStamped())  # speed 0: sim time starts, nobody drives
        assert probe.spin_until(lambda: any(m.event_finished for m in messages), 90.0), (
            [(m.session, m.flag, m.lights) for m in messages[-5:]], sim.log)
    finally:
        probe.close()
    practice = [m for m in messages if m.session == 'free practice']
    assert practice, sim.log
    assert all(m.session_kind == RaceStatus.SESSION_PRACTICE and m.session_index == 0
               for m in practice)
    green = [m for m in practice if m.flag == RaceStatus.FLAG_GREEN]
    assert green and all(m.laps_remaining == -1 for m in green)
    remaining = [m.time_remaining for m in green]
    assert remaining == sorted(remaining, reverse=True) and 0.0 < remaining[0] <= 1.0
    race = [m for m in messages if m.session == 'race']
    assert all(m.session_kind == RaceStatus.SESSION_RACE and m.session_index == 1
               for m in race)
    lights = [m.lights for m in race if m.flag == RaceStatus.FLAG_LIGHTS]
    assert lights and set(lights) <= {0, 1, 2} and 1 in lights and lights == sorted(lights)
    started = [m for m in race if m.flag == RaceStatus.FLAG_GREEN]
    assert started and started[0].laps_remaining == 3
    assert math.isnan(started[0].time_remaining)
    assert all(c.status == CarRaceStatus.STATUS_RUNNING for c in started[0].cars)
    # nobody drives: both cars are retired, the flag falls and the event ends
    last = messages[-1]
    assert last.event_finished and last.flag == RaceStatus.FLAG_CHEQUERED
    assert sorted(c.car_id for c in last.cars) == ['car2', 'ego']
    assert {c.status for c in last.cars} == {CarRaceStatus.STATUS_DNF}
    assert sorted(c.session_position for c in last.cars) == [1, 2]
    assert all(c.penalty_time == 0.0 and c.warnings == 0 for c in last.cars)
    assert sim.wait_for_log('classification written to', 10.0), sim.log
    written = yaml.safe_load(classification.read_text())
    assert written['finished'] is True
    assert [(row['car'], row['status']) for row in written['classification']] == [
        ('ego', 'dnf'), ('car2', 'dnf')]
    assert [s['name'] for s in written['sessions']] == ['free practice', 'race']
    assert sim.stop() == 0, sim.log
