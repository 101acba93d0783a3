"""``autopilot: follow_the_gap``: with no stack of the user's running, the built-in driver laps
the default track cleanly, through the car's own /scan and /drive like any driver, and the
bridge waits for its every command."""

from __future__ import annotations

from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from simharness import UNPACED, Probe

from arsim_msgs.msg import RaceStatus

LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


def test_the_autopilot_laps_the_default_track_without_a_collision(simulation) -> None:
    sim = simulation(settings={'simulation': {'autopilot': 'follow_the_gap',
                                              'real_time_factor': UNPACED}})
    probe = Probe(sim.domain_id)
    try:
        race: list[RaceStatus] = []
        probe.node.create_subscription(RaceStatus, '/arsim/race', race.append, LATCHED)
        assert probe.spin_until(lambda: race and race[-1].cars[0].laps >= 2, 240.0), \
            (race[-1].cars[0] if race else None, sim.log)
        ego = race[-1].cars[0]
        assert ego.collisions == 0, ego
        assert 'autopilot (follow the gap) drives ego (/scan -> /drive)' in sim.log
        assert 'no command from the driver' not in sim.log  # it answered every scan
    finally:
        probe.close()
    assert sim.stop() == 0, sim.log


def test_a_car_without_a_2d_lidar_is_named(simulation, tmp_path, repo_root) -> None:
    import yaml

    profile = yaml.safe_load((repo_root / 'config' / 'cars' / 'f1tenth.yaml').read_text())
    del profile['Sensors']['scan']
    path = tmp_path / 'blind.yaml'
    path.write_text(yaml.safe_dump(profile))
    sim = simulation(settings={'simulation': {'autopilot': 'follow_the_gap'},
                               'cars': [{'name': 'ego', 'profile': str(path)}]})
    assert sim.process.wait(120) != 0
    assert f"autopilot: car 'ego' ({path}) has no 2D LiDAR to drive by" in sim.log, sim.log
