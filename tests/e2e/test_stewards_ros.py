"""Race control over ROS: the rear-end of tests/core/engine/test_race_control.py constructed on
the ROS graph (two cars placed in one lane of arsim_ring's straight, the one behind driven into
the other at 4 m/s closing speed through its drive topic) gets the documented verdict, a time
penalty for the car behind, as a RULING on /arsim/events (docs/race-control.md)."""

from __future__ import annotations

import math

from ackermann_msgs.msg import AckermannDriveStamped
from simharness import UNPACED, Probe, installed_resources

from arsim_core.config.scenario import load_scenario
from arsim_core.track import load_track
from arsim_msgs.msg import SimEvent


def test_a_rear_end_on_the_ros_graph_is_a_time_penalty_for_the_car_behind(simulation) -> None:
    x, y, yaw = load_track('arsim_ring', installed_resources() / 'maps').start_pose
    ahead = (x + 2.0 * math.cos(yaw), y + 2.0 * math.sin(yaw), yaw)
    sim = simulation(settings={
        'simulation': {'wait_for_drivers': False, 'start_on_first_command': True,
                       'real_time_factor': UNPACED},
        'cars': [{'name': 'ego', 'profile': 'f1tenth', 'pose': [x, y, yaw]},
                 {'name': 'car2', 'profile': 'f1tenth', 'pose': list(ahead)}]})
    scenario = load_scenario(sim.settings_file, installed_resources())
    probe = Probe(sim.domain_id)
    try:
        events: list[SimEvent] = []
        node = probe.node
        node.create_subscription(SimEvent, scenario.topic_map.event_topic, events.append, 100)
        commands = {'ego': 5.0, 'car2': 1.0}
        publishers = {car: node.create_publisher(AckermannDriveStamped,
                                                 scenario.car(car).names.drive_topic, 10)
                      for car in commands}

        def drive() -> None:
            for car, speed in commands.items():
                command = AckermannDriveStamped()
                command.drive.speed = speed
                publishers[car].publish(command)

        node.create_timer(0.05, drive)
        rulings = lambda: [e for e in events if e.kind == SimEvent.RULING]  # noqa: E731
        assert probe.spin_until(lambda: bool(rulings()), 60.0), \
            ([(e.kind, e.car_id, e.detail) for e in events], sim.log)
        ruling = rulings()[0]
        assert ruling.car_id == 'ego' and ruling.other == 'car2', ruling
        assert ruling.detail.startswith('time_penalty +5 s (rear_end): '), ruling.detail
        assert any(e.kind == SimEvent.COLLISION for e in events)
    finally:
        probe.close()
    assert sim.stop() == 0, sim.log
