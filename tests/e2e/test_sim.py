"""End to end: the simulation as users run it, observed and driven from other processes."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from ackermann_msgs.msg import AckermannDriveStamped
from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import OccupancyGrid, Odometry
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import LaserScan
from simharness import Probe
from tf2_msgs.msg import TFMessage

STARTUP_S = 60.0
FRAME_NS = 25_000_000
# Deep enough to keep the latched message of every publisher (description and sensor nodes).
LATCHED = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


def stamp_ns(stamp) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def on_a_frame(stamp: int, probe: Probe, clocks: list) -> bool:
    """A stamp is sim time when it is a frame time (40 Hz) that /clock reaches. The probe takes
    one message per topic and wakeup and the simulation runs far faster than real time, so the
    latest /clock it has taken may lag the latest scan: it spins until /clock catches up."""
    return stamp % FRAME_NS == 0 and stamp >= stamp_ns(clocks[0].clock) - FRAME_NS \
        and probe.spin_until(lambda: stamp_ns(clocks[-1].clock) >= stamp, 10.0)


def static_pairs(messages: list[TFMessage]) -> set[tuple[str, str]]:
    """(parent, child) of every transform on /tf_static so far."""
    return {(t.header.frame_id, t.child_frame_id) for m in messages for t in m.transforms}


class Recorder:
    """Keeps every message of a few topics, for assertions after the fact."""

    def __init__(self, probe: Probe, topics: dict[str, tuple[type, object]]) -> None:
        self.messages: dict[str, list] = {topic: [] for topic in topics}
        for topic, (kind, qos) in topics.items():
            probe.node.create_subscription(kind, topic, self.messages[topic].append, qos)

    def __getitem__(self, topic: str) -> list:
        return self.messages[topic]


@pytest.fixture
def probe_factory():
    probes: list[Probe] = []

    def make(domain_id: int) -> Probe:
        probes.append(Probe(domain_id))
        return probes[-1]

    yield make
    for probe in probes:
        probe.close()


def test_default_topic_map_publishes_clock_scan_odom_and_tf(module_simulation,
                                                            probe_factory) -> None:
    sim = module_simulation()  # shared with the /initialpose test, which only resets the car
    probe = probe_factory(sim.domain_id)
    rec = Recorder(probe, {'/clock': (Clock, 10), '/scan': (LaserScan, 10),
                           '/ego_racecar/odom': (Odometry, 10), '/tf': (TFMessage, 100),
                           '/tf_static': (TFMessage, LATCHED), '/map': (OccupancyGrid, LATCHED)})
    assert probe.spin_until(lambda: len(rec['/scan']) >= 20 and rec['/ego_racecar/odom']
                            and rec['/tf'] and len(rec['/clock']) >= 2, STARTUP_S), sim.log
    clocks = [stamp_ns(m.clock) for m in rec['/clock']]
    assert clocks == sorted(clocks) and clocks[-1] > clocks[0]

    scan = rec['/scan'][-1]
    assert len(scan.ranges) == 1080
    assert scan.header.frame_id == 'ego_racecar/laser'
    assert math.isclose(scan.angle_max - scan.angle_min, 4.7, rel_tol=1e-6)
    assert (scan.range_min, scan.range_max) == (0.0, 30.0)
    ranges = np.asarray(scan.ranges)
    assert np.all(np.isfinite(ranges) | np.isposinf(ranges))
    assert 0.1 < np.nanmin(ranges) < 30.0
    assert on_a_frame(stamp_ns(scan.header.stamp), probe, rec['/clock'])

    odom = rec['/ego_racecar/odom'][-1]
    assert (odom.header.frame_id, odom.child_frame_id) == ('map', 'ego_racecar/base_link')
    assert on_a_frame(stamp_ns(odom.header.stamp), probe, rec['/clock'])

    dynamic = {(t.header.frame_id, t.child_frame_id) for m in rec['/tf'] for t in m.transforms}
    assert ('map', 'ego_racecar/base_link') in dynamic
    laser = ('ego_racecar/base_link', 'ego_racecar/laser')
    assert probe.spin_until(lambda: laser in static_pairs(rec['/tf_static']) and rec['/map'],
                            10.0), static_pairs(rec['/tf_static'])
    grid = rec['/map'][-1]
    assert grid.header.frame_id == 'map' and 100 in set(grid.data)


def test_real_car_topic_map_has_odom_frame_and_static_laser(simulation, probe_factory) -> None:
    sim = simulation(arguments=('topic_map:=f1tenth_car',))
    probe = probe_factory(sim.domain_id)
    rec = Recorder(probe, {'/scan': (LaserScan, 10), '/odom': (Odometry, 10),
                           '/tf': (TFMessage, 100), '/tf_static': (TFMessage, LATCHED)})
    assert probe.spin_until(lambda: len(rec['/odom']) >= 5 and rec['/scan'] and rec['/tf']
                            and ('base_link', 'laser') in static_pairs(rec['/tf_static']),
                            STARTUP_S), sim.log
    assert rec['/scan'][-1].header.frame_id == 'laser'
    odom = rec['/odom'][0]
    assert (odom.header.frame_id, odom.child_frame_id) == ('odom', 'base_link')
    assert abs(odom.pose.pose.position.x) < 1e-6 and abs(odom.pose.pose.position.y) < 1e-6
    dynamic = {(t.header.frame_id, t.child_frame_id) for m in rec['/tf'] for t in m.transforms}
    assert dynamic == {('odom', 'base_link')}
    laser = next(t for m in rec['/tf_static'] for t in m.transforms
                 if t.child_frame_id == 'laser')
    assert laser.header.frame_id == 'base_link'
    assert (laser.transform.translation.x, laser.transform.translation.z) == \
        pytest.approx((0.27, 0.11))


def test_initialpose_resets_the_car(module_simulation, probe_factory) -> None:
    sim = module_simulation()
    probe = probe_factory(sim.domain_id)
    rec = Recorder(probe, {'/ego_racecar/odom': (Odometry, 10)})
    drive = probe.node.create_publisher(AckermannDriveStamped, '/drive', 10)
    reset = probe.node.create_publisher(PoseWithCovarianceStamped, '/initialpose', 10)
    assert probe.spin_until(lambda: rec['/ego_racecar/odom'], STARTUP_S), sim.log
    start = rec['/ego_racecar/odom'][0].pose.pose.position
    command = AckermannDriveStamped()
    command.drive.speed = 1.0
    # Publish continuously: the first messages may go out before discovery has matched us.
    probe.node.create_timer(0.05, lambda: drive.publish(command))

    def moved() -> bool:
        p = rec['/ego_racecar/odom'][-1].pose.pose.position
        return math.hypot(p.x - start.x, p.y - start.y) > 0.3
    assert probe.spin_until(moved, 30.0), sim.log

    command.drive.speed = 0.0
    probe.spin_until(lambda: abs(rec['/ego_racecar/odom'][-1].twist.twist.linear.x) < 1e-3, 30.0)
    target = PoseWithCovarianceStamped()
    target.header.frame_id = 'map'
    target.pose.pose.position.x, target.pose.pose.position.y = start.x, start.y
    target.pose.pose.orientation.w = 1.0
    reset.publish(target)

    def at_target() -> bool:
        odom = rec['/ego_racecar/odom'][-1]
        p = odom.pose.pose.position
        return math.hypot(p.x - start.x, p.y - start.y) < 1e-6 and \
            abs(odom.pose.pose.orientation.z) < 1e-9
    assert probe.spin_until(at_target, 30.0), sim.log


def test_load_track_switches_the_running_simulation(simulation, probe_factory,
                                                    shared_tracks) -> None:
    from arsim_core.track import load_track
    from arsim_msgs.srv import LoadTrack

    sim = simulation()
    probe = probe_factory(sim.domain_id)
    rec = Recorder(probe, {'/ego_racecar/odom': (Odometry, 10), '/clock': (Clock, 10)})
    assert probe.spin_until(lambda: rec['/ego_racecar/odom'], STARTUP_S), sim.log
    client = probe.node.create_client(LoadTrack, '/arsim/load_track')
    assert client.wait_for_service(timeout_sec=10.0)

    future = client.call_async(LoadTrack.Request(track=str(shared_tracks / 'nope.csv')))
    assert probe.spin_until(future.done, 30.0) and not future.result().success
    assert 'nope.csv' in future.result().message

    spielberg = shared_tracks / 'f1tenth_racetracks' / 'Spielberg' / 'Spielberg_map.yaml'
    future = client.call_async(LoadTrack.Request(track=str(spielberg)))
    assert probe.spin_until(future.done, 60.0) and future.result().success, \
        future.result().message
    x, y, _ = load_track(spielberg).start_pose

    def at_new_start() -> bool:
        p = rec['/ego_racecar/odom'][-1].pose.pose.position
        return math.hypot(p.x - x, p.y - y) < 1e-3
    assert probe.spin_until(at_new_start, 60.0), sim.log
    # The odometry at the new start can arrive before the line that says so is written.
    assert sim.wait_for_log('track switched to', 30.0), sim.log
    count = len(rec['/clock'])
    assert probe.spin_until(lambda: len(rec['/clock']) > count + 40, 30.0)  # still running


def ros_graph(probe: Probe) -> dict[str, object]:
    """What a stack sees of a simulation: nodes, topics with their types, and each topic's
    publishers (node, QoS) — the probe's own left out."""
    node = probe.node
    topics = {name: tuple(types) for name, types in node.get_topic_names_and_types()}
    publishers = {
        topic: sorted((info.node_namespace, info.node_name, info.qos_profile.reliability,
                       info.qos_profile.durability, info.qos_profile.depth)
                      for info in node.get_publishers_info_by_topic(topic)
                      if info.node_name != node.get_name())
        for topic in topics}
    nodes = sorted((ns, name) for name, ns in node.get_node_names_and_namespaces()
                   if name != node.get_name())
    return {'nodes': nodes, 'topics': topics, 'publishers': publishers}


def loads_numba(pid: int) -> bool:
    """Whether process ``pid`` has numba's compiled modules mapped, i.e. imported numba."""
    return '/numba/' in Path(f'/proc/{pid}/maps').read_text()


def program_of(pid: int) -> str:
    """The file name of the program process ``pid`` runs (``-m arsim_launch`` for the launcher)."""
    args = Path(f'/proc/{pid}/cmdline').read_bytes().split(b'\0')
    return 'arsim_launch' if b'arsim_launch' in args else Path(args[1].decode()).name


def test_only_the_processes_that_step_cars_import_numba(module_simulation) -> None:
    """The launcher, the track loader, the sensor republishers and the description never step a
    car, so they spare themselves numba's import, a third of their start-up; the processes
    that step cars, cast rays or judge contacts have it."""
    sim = module_simulation(settings={'simulation': {'one_process': False}})
    assert sim.wait_for_log('ready; stepping', STARTUP_S), sim.log
    numba = {program_of(pid): loads_numba(pid) for pid in sim.session_processes()}
    assert numba == {'arsim_launch': False, 'track_loader': False, 'sensors': False,
                     'description': False, 'backend': True, 'bridge': True, 'dynamics': True}


def test_one_process_and_a_process_per_node_show_stacks_the_same_graph(module_simulation,
                                                                       probe_factory) -> None:
    one = module_simulation()  # the default
    split = module_simulation(settings={'simulation': {'one_process': False}})
    split_probe, one_probe = probe_factory(split.domain_id), probe_factory(one.domain_id)
    for sim, probe in ((split, split_probe), (one, one_probe)):
        scans = Recorder(probe, {'/scan': (LaserScan, 10)})['/scan']
        assert probe.spin_until(lambda scans=scans: len(scans) >= 10, STARTUP_S), sim.log
    # Discovery may still be adding publishers: the graphs settle within seconds.
    assert one_probe.spin_until(lambda: ros_graph(one_probe) == ros_graph(split_probe), 20.0), \
        (ros_graph(one_probe), ros_graph(split_probe))
    assert len(split.session_processes()) >= 7  # runner, backend, bridge, track, car nodes
    assert len(one.session_processes()) == 2, one.log  # the runner and the simulation
    # That the default's car drives, test_initialpose_resets_the_car checks on this very run.
