"""Incident clips on the ROS run: the rear-end of tests/e2e/test_stewards_ros.py (two cars in
one lane of arsim_ring's straight, the one behind driven into the other through its drive
topic) with ``race.clips`` set writes one clip, which MCAP's own reader with its ROS 2 decoder
opens: both cars' states and scans around the incident and the verdict, on /arsim/events and in
the file's metadata (docs/race-control.md, "Clips")."""

from __future__ import annotations

import math
from pathlib import Path

from ackermann_msgs.msg import AckermannDriveStamped
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
from simharness import UNPACED, Probe, installed_resources

from arsim_core.config.scenario import load_scenario
from arsim_core.track import load_track
from arsim_msgs.msg import SimEvent

BEFORE_S, AFTER_S = 0.5, 0.5  # the contact comes about 0.7 s after the start


def test_a_rear_end_on_the_ros_graph_writes_a_clip(simulation, tmp_path: Path) -> None:
    x, y, yaw = load_track('arsim_ring', installed_resources() / 'maps').start_pose
    ahead = (x + 2.0 * math.cos(yaw), y + 2.0 * math.sin(yaw), yaw)
    clips = tmp_path / 'clips'
    sim = simulation(settings={
        'simulation': {'wait_for_drivers': False, 'start_on_first_command': True,
                       'real_time_factor': UNPACED},
        'race': {'clips': {'directory': str(clips), 'before_s': BEFORE_S,
                           'after_s': AFTER_S}},
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
            if any(e.kind == SimEvent.RULING for e in events):
                commands['ego'] = 0.0  # one incident: ego stays behind from then on
            for car, speed in commands.items():
                command = AckermannDriveStamped()
                command.drive.speed = speed
                publishers[car].publish(command)

        node.create_timer(0.05, drive)
        assert probe.spin_until(lambda: any(clips.glob('*.mcap')), 90.0), \
            ([(e.kind, e.car_id, e.detail) for e in events], sim.log)
    finally:
        probe.close()
    assert sim.stop() == 0, sim.log
    rulings = [e for e in events if e.kind == SimEvent.RULING]
    assert rulings and rulings[0].car_id == 'ego', rulings
    stamp = rulings[0].header.stamp
    time_s = stamp.sec + stamp.nanosec * 1e-9
    files = sorted(clips.glob('*.mcap'))
    assert files[0].name == f't{time_s:08.3f}_ego-car2_rear_end.mcap', files

    topics: dict[str, list[tuple[float, object]]] = {}
    with files[0].open('rb') as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        for _, channel, message, decoded in reader.iter_decoded_messages():
            topics.setdefault(channel.topic, []).append((message.log_time / 1e9, decoded))
        stream.seek(0)
        metadata = {m.name: m.metadata for m in make_reader(stream).iter_metadata()}
    for car in ('ego', 'car2'):
        times = [t for t, _ in topics[scenario.car(car).names.state_topic]]
        assert abs(times[0] - (time_s - BEFORE_S)) <= 0.05 and \
            abs(times[-1] - (time_s + AFTER_S)) <= 0.05, (car, times[0], times[-1], time_s)
        scans = topics[scenario.car(car).names.sensor_topics['scan']]
        assert len(scans) > 10
    verdicts = [m for _, m in topics['/arsim/events'] if m.kind == SimEvent.RULING]
    assert verdicts[0].detail == rulings[0].detail, verdicts
    incident = metadata['arsim.incident']
    assert (incident['rule'], incident['verdict'], incident['cars']) == \
        ('rear_end', 'time_penalty', 'ego,car2')
