"""Calibration drives recorded from arsim, for the tests of ``arsim-fit`` and its benchmark.

A scripted driver gives a car whose profile the fit is not told (the "hidden" car: other
actuators, limits and tyres, with command noise) the manoeuvres docs/digital-twins.md asks a
real car for; the in-process engine simulates it, computes its IMU and wheel odometry with
their noise, and every frame goes through the dataset runner's writer (the ROS nodes'
publishing code) into a bag, beside the driver's ``/drive`` commands, as a real car's
recording holds them. A wide, empty ring leaves room for every manoeuvre.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from ackermann_msgs.msg import AckermannDriveStamped

from arsim_bridge import qos
from arsim_bridge.common import to_time
from arsim_core.config.scenario import load_scenario
from arsim_core.engine import Engine, TrackWorld
from arsim_core.track import TrackOptions, track_from_centerline
from arsim_launch.dataset_run import KeptReplyRenderer, _Writer

REPO = Path(__file__).resolve().parents[2]
RADIUS = 60.0  # of the ring's centre line [m]; 45 m of room on either side
TOPICS = ['/drive', '/odom', '/sensors/imu/raw', '/ground_truth/odom', '/clock']
#: What the hidden car differs in from config/cars/f1tenth.yaml (the fit's start).
HIDDEN = {
    'steering_dead_time': 0.05, 'steering_lag': 0.06, 'drive_dead_time': 0.075,
    'drive_lag': 0.12, 'max_steering_rate': 2.4, 'max_acceleration': 6.5,
    'cornering_stiffness_front': 4.1, 'cornering_stiffness_rear': 6.3,
    'kp_accelerate_forward': 3.5, 'kp_brake_forward': 14.0,
}
TOPIC_MAP = {
    'description': 'a calibration drive: noisy wheel odometry on /odom, the IMU, ground truth',
    'world_frame': 'arsim_world', 'map_topic': '/arsim/map',
    'initialpose_topic': '/initialpose', 'goal_pose_topic': '/goal_pose',
    'ego': {'odom_topic': '/ground_truth/odom', 'drive_topic': '/drive', 'odom_frame': 'odom',
            'odom_relative_to_start': True, 'base_frame': 'base_link',
            'sensor_topic': '/{sensor}', 'sensor_frame': '{sensor}',
            'sensors': {'imu': {'topic': '/sensors/imu/raw', 'frame': 'imu'},
                        'wheel_odom': {'topic': '/odom', 'frame': 'odom'}}},
    'opponents': {'odom_topic': '/{car}/odom', 'drive_topic': '/{car}/drive',
                  'odom_frame': '{car}/odom', 'odom_relative_to_start': True,
                  'base_frame': '{car}/base_link', 'sensor_topic': '/{car}/{sensor}',
                  'sensor_frame': '{car}/{sensor}'},
}
SENSORS = {
    'imu': {'type': 'imu', 'position': [0.0, 0.0, 0.05], 'rate_hz': 40.0,
            'accel_noise_std': 0.05, 'gyro_noise_std': 0.002},
    'wheel_odom': {'type': 'wheel_odometry', 'rate_hz': 40.0, 'speed_noise_std': 0.02,
                   'steering_noise_std': 0.005},
}


def hidden_profile(folder: Path, hidden: dict[str, float] | None = None) -> Path:
    """config/cars/f1tenth.yaml changed as ``hidden`` says (default ``HIDDEN``), with command
    noise, an IMU and wheel odometry instead of its LiDAR."""
    h = HIDDEN if hidden is None else hidden
    profile: dict[str, Any] = yaml.safe_load((REPO / 'config/cars/f1tenth.yaml').read_text())
    car = profile['CarParameters']
    car['steering']['max_rate'], car['steering']['min_rate'] = \
        h['max_steering_rate'], -h['max_steering_rate']
    car['longitudinal']['max_acceleration'] = h['max_acceleration']
    car['tyre']['cornering_stiffness_front'] = h['cornering_stiffness_front']
    car['tyre']['cornering_stiffness_rear'] = h['cornering_stiffness_rear']
    speed = profile['Controller']['speed']
    speed['kp_accelerate_forward'] = h['kp_accelerate_forward']
    speed['kp_brake_forward'] = h['kp_brake_forward']
    profile['Actuators'] = {
        'steering': {'dead_time': h['steering_dead_time'], 'lag': h['steering_lag'],
                     'noise_std': 0.002},
        'drive': {'dead_time': h['drive_dead_time'], 'lag': h['drive_lag'], 'noise_std': 0.02}}
    profile['Sensors'] = copy.deepcopy(SENSORS)
    path = folder / 'hidden_car.yaml'
    path.write_text(yaml.safe_dump(profile, sort_keys=False))
    return path


Driver = Callable[[float], tuple[float, float]]


def calibration(t: float) -> tuple[float, float]:
    """(speed [m/s], steering angle [rad]) at ``t`` [s]: a 30 s programme, repeated with the
    turns the other way round: speed steps up and down, steering steps, circles at three
    speeds, a slalom."""
    side = 1.0 if (t // 30.0) % 2 == 0 else -1.0
    t %= 30.0
    table: list[tuple[float, float, float | Callable[[float], float]]] = [
        (2.0, 1.5, 0.0), (4.0, 3.5, 0.0), (5.5, 1.0, 0.0),  # speed steps
        (6.5, 2.5, 0.3), (7.5, 2.5, -0.3), (8.2, 2.5, 0.15), (8.9, 2.5, -0.15),
        (12.0, 1.5, 0.38), (15.0, 3.0, -0.2), (18.0, 4.2, 0.09),  # circles
        (23.0, 3.0, lambda s: 0.25 * math.sin(2.0 * math.pi * 0.7 * s)),  # slalom
        (24.0, 0.0, 0.0), (26.0, 3.0, -0.05), (27.5, 0.5, 0.0), (30.0, 2.0, 0.3),
    ]
    for end, speed, steering in table:
        if t < end:
            angle = steering(t) if callable(steering) else steering
            return speed, side * angle
    return 0.0, 0.0


def gentle(t: float) -> tuple[float, float]:
    """A car rolling slowly straight on: nothing a fit could learn the limits from."""
    return 0.6, 0.0


def record(bag: Path, profile: Path, duration_s: float, driver: Driver = calibration,
           seed: int = 1, topics: list[str] | None = None, storage: str = 'mcap') -> int:
    """Simulate ``duration_s`` of ``driver`` on the car of ``profile`` into ``bag`` (its
    ``topics``, default ``TOPICS``, in ``storage``); the number of frames. Fails if the car
    leaves the drive (a collision placed it anew)."""
    folder = bag.parent
    topic_map = folder / 'calibration_topics.yaml'
    topic_map.write_text(yaml.safe_dump(TOPIC_MAP, sort_keys=False))
    scenario = load_scenario(REPO / 'config/sim.yaml', REPO, {
        'cars': [{'name': 'ego', 'profile': str(profile)}], 'topic_map': str(topic_map),
        'track': {'map_resolution': 0.5, 'scene': 'none'},
        'collisions': {'response': 'stop'},
        'recording': {'directory': str(bag), 'topics': TOPICS if topics is None else topics,
                      'storage': storage}})
    angles = np.linspace(0.0, 2.0 * math.pi, 240, endpoint=False)
    centre = np.column_stack([RADIUS * np.cos(angles), RADIUS * np.sin(angles)])
    widths = np.full(len(angles), 45.0)
    track = track_from_centerline('calibration_ring', centre, widths, widths,
                                  TrackOptions(name='calibration_ring'))
    renderer = KeptReplyRenderer()
    engine = Engine(scenario, renderer, seed=seed)
    try:
        engine.load_track(TrackWorld.from_track(track))
        writer = _Writer(scenario, engine, renderer, track, bag)
        drive = writer.recording.node('/').create_publisher(AckermannDriveStamped, '/drive',
                                                            qos.STREAM)
        frame = engine.reset()
        writer.write(frame)
        last = round(duration_s * 1e9 / engine.period_ns)
        while frame.step < last:
            speed, steering = driver(frame.time_ns * 1e-9)
            problem = engine.drive('ego', speed, steering)
            assert problem is None, problem
            msg = AckermannDriveStamped()
            msg.header.stamp = to_time(frame.time_ns)
            msg.drive.speed, msg.drive.steering_angle = speed, steering
            drive.publish(msg)
            frame = engine.advance()
            assert not frame.judgement.placements, f'the car was placed anew at t={frame.time_ns}'
            writer.write(frame)
        writer.close(frame)
    finally:
        engine.close()
    return frame.step
