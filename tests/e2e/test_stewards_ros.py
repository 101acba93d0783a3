"""Race control over ROS: the incidents of tests/core/engine/test_race_control.py constructed
on the ROS graph, each getting its documented verdict (docs/race-control.md) as a RULING on
/arsim/events. The cars are placed by the scenario's poses on arsim_ring's main straight; this
process is their driver, answering each scan on their drive topics with a speed and a steering
angle computed from their states on the graph, as the engine's cases compute them:

- a rear-end: the car behind, in the other's lane, at 5 m/s against 1 m/s: a time penalty;
- a dive-bomb: a car 3 m back in the left lane at 6 m/s turning right once level with the car
  in the right lane at 1.5 m/s: a drive-through;
- an unsafe rejoin: a car off the track (the ring's centerline with 0.5 m half widths and no
  walls, so the car is free to be off it) steering back into the lane of a car coming at
  4 m/s: a time penalty for the rejoining car.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ackermann_msgs.msg import AckermannDriveStamped
from builtin_interfaces.msg import Time
from rclpy.publisher import Publisher
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import LaserScan
from simharness import UNPACED, Probe, Simulation, installed_resources

from arsim_core.config.scenario import load_scenario
from arsim_core.track import load_track
from arsim_msgs.msg import CarState, SimEvent

Pose = tuple[float, float, float]
#: Each car's (speed [m/s], steering angle [rad]) from every car's latest pose.
Drive = Callable[[Mapping[str, Pose]], dict[str, tuple[float, float]]]
OTHER = 'car2'
RUN_OFF = 0.5  # [m] the half width of the track in the rejoin case (the ring's is 1.1 m)
#: [s] of wall time the simulation waits for an answer: lockstep even on a busy machine
DRIVER_TIMEOUT_S = 2.0
CONES_FROM = 150  # the first centerline point with cones: 13 m past the cars in that case


def on_straight(start: Pose, ahead: float, left: float) -> Pose:
    """A pose ``ahead`` m along the start pose's heading and ``left`` m to its left."""
    x, y, yaw = start
    return (x + ahead * math.cos(yaw) - left * math.sin(yaw),
            y + ahead * math.sin(yaw) + left * math.cos(yaw), yaw)


def along_and_left(start: Pose, pose: Pose) -> tuple[float, float]:
    """Where ``pose`` is from ``start``: metres along its heading and to its left."""
    x0, y0, yaw = start
    dx, dy = pose[0] - x0, pose[1] - y0
    return (dx * math.cos(yaw) + dy * math.sin(yaw), -dx * math.sin(yaw) + dy * math.cos(yaw))


def yaw_of(state: CarState) -> float:
    q = state.pose.orientation
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def ring_start() -> Pose:
    return load_track('arsim_ring', installed_resources() / 'maps').start_pose


@pytest.fixture
def narrow_ring(tmp_path: Path) -> Path:
    """arsim_ring's centerline with the track edges ``RUN_OFF`` m out and no walls, room to be
    off the track; cones mark the edges away from the main straight, as the ROS map needs
    something to draw."""
    source = installed_resources() / 'maps' / 'arsim_ring' / 'centerline.csv'
    xy = np.array([[float(v) for v in line.split(',')[:2]]
                   for line in source.read_text().splitlines()
                   if line and not line.startswith('#')])
    heading = np.arctan2(*(np.roll(xy, -1, axis=0) - np.roll(xy, 1, axis=0)).T[::-1])
    normal = np.stack([-np.sin(heading), np.cos(heading)], axis=1)  # to the left
    folder = tmp_path / 'narrow_ring'
    folder.mkdir()
    (folder / 'centerline.csv').write_text(
        '# x_m,y_m,w_tr_right_m,w_tr_left_m\n'
        + ''.join(f'{x},{y},{RUN_OFF},{RUN_OFF}\n' for x, y in xy))
    cones = [(xy[i] + side * (RUN_OFF + 0.2) * normal[i], colour)
             for i in range(CONES_FROM, len(xy) - CONES_FROM // 2, 20)
             for side, colour in ((1.0, 'blue'), (-1.0, 'yellow'))]
    (folder / 'cones.csv').write_text(
        '# x_m,y_m,class\n' + ''.join(f'{x},{y},{c}\n' for (x, y), c in cones))
    (folder / 'track.yaml').write_text(
        'name: narrow_ring\nformat: tum_csv\nfile: centerline.csv\nunits: m\n'
        'start: {index: 20, direction: forward}\ncones: cones.csv\noptions: {walls: none}\n')
    return folder


def rulings_on_the_graph(simulation: Callable[..., Simulation], poses: Mapping[str, Pose],
                         drive: Drive, track: str | Path = 'arsim_ring') -> list[SimEvent]:
    """Start a simulation with the cars at ``poses`` and be every car's driver, answering each
    of its scans with what ``drive`` says from the cars' latest states on the graph, until the
    first RULING on the event topic; all events until then.

    The simulation waits for each answer (``wait_for_drivers``), so a command always follows
    the frame it was computed from by the pipeline's two frames (docs/dynamics-node.md),
    however busy the machine: steering from states over DDS against a free-running
    simulation turned in early or late by a frame or two, enough to change the incident.
    """
    settings: dict[str, Any] = {
        'simulation': {'wait_for_drivers': True, 'driver_timeout_s': DRIVER_TIMEOUT_S,
                       'start_on_first_command': True, 'real_time_factor': UNPACED},
        'track': {'name': str(track)},
        'cars': [{'name': car, 'profile': 'f1tenth', 'pose': list(pose)}
                 for car, pose in poses.items()]}
    sim = simulation(settings=settings)
    scenario = load_scenario(sim.settings_file, installed_resources())
    probe = Probe(sim.domain_id)
    events: list[SimEvent] = []
    try:
        node = probe.node
        node.create_subscription(SimEvent, scenario.topic_map.event_topic, events.append, 100)
        now = dict(poses)

        def seen(state: CarState) -> None:
            p = state.pose.position
            now[state.car_id] = (p.x, p.y, yaw_of(state))

        publishers: dict[str, Publisher] = {}

        def command(car: str, stamp: Time | None = None) -> None:
            speed, steer = drive(now)[car]
            message = AckermannDriveStamped()
            if stamp is not None:
                message.header.stamp = stamp
            message.drive.speed = speed
            message.drive.steering_angle = steer
            publishers[car].publish(message)

        for car in poses:
            names = scenario.car(car).names
            publishers[car] = node.create_publisher(AckermannDriveStamped, names.drive_topic, 10)
            node.create_subscription(CarState, names.state_topic, seen, 10)
            node.create_subscription(
                LaserScan, names.sensor_topics['scan'],
                lambda scan, car=car: command(car, scan.header.stamp), qos_profile_sensor_data)
        # Both cars start together: no command goes out before every drive topic is matched.
        assert probe.spin_until(
            lambda: all(p.get_subscription_count() > 0 for p in publishers.values()), 30.0), \
            sim.log
        for car in poses:
            command(car)
        assert probe.spin_until(lambda: any(e.kind == SimEvent.RULING for e in events), 60.0), \
            ([(e.kind, e.car_id, e.detail) for e in events], sim.log)
    finally:
        probe.close()
    assert sim.stop() == 0, sim.log
    return events


def rulings(events: list[SimEvent]) -> list[SimEvent]:
    return [e for e in events if e.kind == SimEvent.RULING]


def the_cars_touched(events: list[SimEvent]) -> bool:
    """Whether the referee saw the two cars touch (not a car and a barrier)."""
    return any(e.kind == SimEvent.COLLISION and {e.car_id, e.other} == {'ego', OTHER}
               for e in events)


def test_a_rear_end_on_the_ros_graph_is_a_time_penalty_for_the_car_behind(simulation) -> None:
    start = ring_start()
    events = rulings_on_the_graph(
        simulation, {'ego': start, OTHER: on_straight(start, 2.0, 0.0)},
        lambda _: {'ego': (5.0, 0.0), OTHER: (1.0, 0.0)})
    ruling = rulings(events)[0]
    assert ruling.car_id == 'ego' and ruling.other == OTHER, ruling
    assert ruling.detail.startswith('time_penalty +5 s (rear_end): '), ruling.detail
    assert the_cars_touched(events), [(e.kind, e.car_id, e.detail) for e in events]


def test_a_dive_bomb_from_three_metres_back_on_the_ros_graph_is_a_drive_through(
        simulation) -> None:
    """ego 3 m back in the left lane at 6 m/s, car2 in the right lane at 1.5 m/s; ego turns
    right into car2 once its centre is 1 m behind car2's: alongside at the contact (about
    1.1 s in, past the stewards' 1 s of history), more than a car length behind a second
    earlier."""
    start = ring_start()

    def drive(now: Mapping[str, Pose]) -> dict[str, tuple[float, float]]:
        ego, other = along_and_left(start, now['ego'])[0], along_and_left(start, now[OTHER])[0]
        return {'ego': (6.0, -0.25 if ego >= other - 1.0 else 0.0), OTHER: (1.5, 0.0)}

    events = rulings_on_the_graph(
        simulation, {'ego': on_straight(start, 0.0, 0.3), OTHER: on_straight(start, 3.0, -0.3)},
        drive)
    [ruling] = rulings(events)
    assert ruling.car_id == 'ego' and ruling.other == OTHER, ruling
    assert ruling.detail.startswith('drive_through +20 s (dive_bomb): '), ruling.detail
    assert the_cars_touched(events), [(e.kind, e.car_id, e.detail) for e in events]


def test_rejoining_into_the_path_of_a_car_on_the_ros_graph_is_an_unsafe_rejoin(
        simulation, narrow_ring: Path) -> None:
    """ego off the track, 0.8 m left of the centerline (0.5 m half width), 3 m ahead at
    1.5 m/s, steers back onto the lane 0.2 m left of the centerline, into the path of car2
    coming along that lane at 4 m/s: ego is at fault, although car2 runs into it."""
    start = load_track(narrow_ring).start_pose
    lane = 0.2

    def drive(now: Mapping[str, Pose]) -> dict[str, tuple[float, float]]:
        left = along_and_left(start, now['ego'])[1]
        heading = math.remainder(now['ego'][2] - start[2], math.tau)
        steer = min(max(-1.2 * (left - lane) - 1.5 * heading, -0.15), 0.15)
        return {'ego': (1.5, steer), OTHER: (4.0, 0.0)}

    events = rulings_on_the_graph(
        simulation,
        {'ego': on_straight(start, 3.0, 0.8), OTHER: on_straight(start, 0.0, lane)},
        drive, track=narrow_ring)
    [ruling] = rulings(events)
    assert ruling.car_id == 'ego' and ruling.other == OTHER, ruling
    assert ruling.detail.startswith('time_penalty +5 s (unsafe_rejoin): '), ruling.detail
    assert the_cars_touched(events), [(e.kind, e.car_id, e.detail) for e in events]
