"""The VESC topic map (``topic_map: f1tenth_vesc``): a stack drives the car through the same
nodes as on the real F1TENTH car. A follow-the-gap driver publishes /drive, nodes doing what
f1tenth/vesc's ``ackermann_to_vesc`` and ``vesc_to_odom`` do turn it into VESC commands and the
VESC's telemetry back into /odom, each in its own process; the car laps the default track, and
that odometry's speed is the car's true speed at every frame."""

from __future__ import annotations

from pathlib import Path

from laps import DRIVER, DRIVER_WAITED_FOR
from nav_msgs.msg import Odometry
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from simharness import UNPACED, Probe, driver_process

from arsim_msgs.msg import RaceStatus

VESC_NODES = Path(__file__).resolve().parents[1] / 'drivers' / 'vesc_nodes.py'
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


def stamp_ns(odom: Odometry) -> int:
    return odom.header.stamp.sec * 1_000_000_000 + odom.header.stamp.nanosec


def test_ackermann_to_vesc_and_vesc_to_odom_drive_a_lap(simulation) -> None:
    sim = simulation(settings={
        'simulation': {**DRIVER_WAITED_FOR, 'real_time_factor': UNPACED},
        'topic_map': 'f1tenth_vesc'})
    driver_process(VESC_NODES, sim.domain_id)
    driver_process(DRIVER, sim.domain_id, '--speed', '3.0')
    probe = Probe(sim.domain_id)
    try:
        race: list[RaceStatus] = []
        vesc_odom: dict[int, float] = {}
        truth: dict[int, float] = {}
        node = probe.node
        node.create_subscription(RaceStatus, '/arsim/race', race.append, LATCHED)
        node.create_subscription(Odometry, '/odom', lambda m: vesc_odom.__setitem__(
            stamp_ns(m), m.twist.twist.linear.x), 100)
        node.create_subscription(Odometry, '/ground_truth/odom', lambda m: truth.__setitem__(
            stamp_ns(m), m.twist.twist.linear.x), qos_profile_sensor_data)
        assert probe.spin_until(lambda: race and race[-1].cars[0].laps >= 1, 240.0), \
            (race[-1].cars[0] if race else None, sim.log)
        assert race[-1].cars[0].collisions == 0, race[-1].cars[0]
        # vesc_to_odom is the only /odom: arsim's own odometry went to /ground_truth/odom.
        assert node.count_publishers('/odom') == 1
        same = sorted(set(vesc_odom) & set(truth))
        assert len(same) > 200, (len(vesc_odom), len(truth))
        moving = [t for t in same if abs(truth[t]) >= 0.05]  # vesc_to_odom zeroes below
        assert max(truth[t] for t in moving) > 2.0
        assert max(abs(vesc_odom[t] - truth[t]) for t in moving) < 1e-6
    finally:
        probe.close()
    assert sim.stop() == 0, sim.log
