"""The computed sensors (IMU, GNSS, wheel odometry) against the documented formulas and their
seeding: the run seed, the car and the sensor each pick a noise stream of their own."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from arsim_core.engine import CarState
from arsim_core.geometry import rotation_matrix
from arsim_core.sensors.computed import LAYOUTS, ComputedSensors, quaternion
from arsim_core.sensors.geodesy import enu_to_geodetic
from arsim_core.sensors.kinematics import PlanarState, body_acceleration, specific_force

ORIGIN = [48.2626, 11.6681, 480.0]
# After the profile's scan (index 0): imu 1, gnss 2, wheel_odom 3.
COMPUTED = {
    'imu': {'type': 'imu', 'position': [0.1, 0.05, 0.05], 'rotation': [0.0, 0.0, 0.2],
            'rate_hz': 40.0, 'accel_noise_std': 0.05, 'gyro_noise_std': 0.01,
            'orientation_noise_std': 0.002, 'accel_bias': [0.01, 0.0, -0.02],
            'gyro_bias': [0.0, 0.001, 0.0]},
    'gnss': {'type': 'gnss', 'position': [0.0, 0.1, 0.4], 'rate_hz': 10.0, 'origin': ORIGIN,
             'horizontal_noise_std': 0.5, 'vertical_noise_std': 1.0},
    'wheel_odom': {'type': 'wheel_odometry', 'rate_hz': 20.0, 'speed_noise_std': 0.1,
                   'steering_noise_std': 0.02},
}
PERIOD_NS = 25_000_000  # config/sim.yaml: 40 Hz


@pytest.fixture
def sensor_profile(tmp_path: Path, repo_root: Path) -> str:
    profile = yaml.safe_load((repo_root / 'config' / 'cars' / 'f1tenth.yaml').read_text())
    profile['Sensors'].update(COMPUTED)
    path = tmp_path / 'computed_car.yaml'
    path.write_text(yaml.safe_dump(profile, sort_keys=False))
    return str(path)


@pytest.fixture
def scenario(make_scenario, sensor_profile):
    return make_scenario(cars=('ego', 'opp'), profile=sensor_profile)


def state(k: int, car: int = 0) -> CarState:
    """A weaving, speeding-up car at frame ``k``."""
    t = k * PERIOD_NS * 1e-9
    return CarState(1.0 + 2.0 * t + car, -0.5 + 0.3 * t * t, 0.2 + 0.4 * t, 2.0 + 0.5 * t,
                    0.05 * math.sin(t), 0.4 + 0.1 * math.cos(3 * t), 0.7, -0.1,
                    0.1 * math.sin(2 * t))


def run(sensors: ComputedSensors, frames: int = 24, cars: tuple[str, ...] = ('ego', 'opp'),
        accelerations: bool = False) -> list[dict[str, np.ndarray]]:
    return [sensors.compute(k, k * PERIOD_NS, {name: state(k, i) for i, name in
                                              enumerate(cars)}, accelerations)
            for k in range(frames)]


def test_each_sensor_is_there_when_due_in_its_layout(scenario) -> None:
    frames = run(ComputedSensors(scenario, 3))
    for k, frame in enumerate(frames):
        due = {'imu'} | ({'gnss'} if k % 4 == 0 else set()) | \
            ({'wheel_odom'} if k % 2 == 0 else set())
        assert set(frame) == {f'{car}/{s}' for car in ('ego', 'opp') for s in due}, k
        for name, values in frame.items():
            kind = COMPUTED[name.split('/')[1]]['type']
            assert values.dtype == np.float64 and values.shape == (len(LAYOUTS[kind]),)
            assert np.all(np.isfinite(values))


def test_the_same_seed_gives_identical_values_another_seed_other_noise(scenario) -> None:
    first, again = run(ComputedSensors(scenario, 3)), run(ComputedSensors(scenario, 3))
    other = run(ComputedSensors(scenario, 4))
    for a, b, c in zip(first, again, other, strict=True):
        assert a.keys() == b.keys() == c.keys()
        for name in a:
            assert np.array_equal(a[name], b[name]), name
            assert not np.array_equal(a[name], c[name]), name


def test_every_car_and_sensor_draws_from_its_own_stream(scenario) -> None:
    both = run(ComputedSensors(scenario, 3))
    alone = run(ComputedSensors(scenario, 3), cars=('ego',))
    for with_opp, without in zip(both, alone, strict=True):
        for name, values in without.items():  # the other car changes nothing of ego's
            assert np.array_equal(values, with_opp[name]), name
    # the same state, another car: other noise
    sensors = ComputedSensors(scenario, 3)
    same = sensors.compute(0, 0, {'ego': state(0), 'opp': state(0)})
    for sensor in COMPUTED:
        assert not np.array_equal(same[f'ego/{sensor}'], same[f'opp/{sensor}']), sensor


def test_reset_with_a_seed_starts_every_stream_afresh(scenario) -> None:
    sensors = ComputedSensors(scenario, 3)
    first = run(sensors, 6)
    sensors.reset(3)
    again = run(sensors, 6)
    for a, b in zip(first, again, strict=True):
        assert all(np.array_equal(a[name], b[name]) for name in a)


def test_values_are_the_documented_formulas_with_the_seeded_noise(scenario) -> None:
    seed, frames = 11, 9
    got = run(ComputedSensors(scenario, seed), frames, cars=('ego',))
    imu_rng, gnss_rng, odom_rng = (np.random.default_rng([seed, 0, i]) for i in (1, 2, 3))
    imu = COMPUTED['imu']
    wheelbase = 0.15875 + 0.17145  # config/cars/f1tenth.yaml
    lever, mount = np.array(imu['position']), rotation_matrix(*imu['rotation'])
    previous = None
    x = y = yaw = 0.0
    last = None
    for k in range(frames):
        s, time_ns = state(k), k * PERIOD_NS
        now = PlanarState(time_ns, s.x, s.y, s.yaw, s.vx, s.vy, s.yaw_rate, s.steering_angle)
        # IMU: specific force, rates and orientation, with bias and noise, in that order
        force = specific_force(body_acceleration(previous, now), s.yaw_rate, 9.81, lever, mount)
        force += np.asarray(imu['accel_bias']) + imu_rng.normal(0.0, 0.05, 3)
        rate = mount.T @ np.array([0.0, 0.0, s.yaw_rate])
        rate += np.asarray(imu['gyro_bias']) + imu_rng.normal(0.0, 0.01, 3)
        roll, pitch, noisy_yaw = imu_rng.normal(0.0, 0.002, 3)
        q = quaternion(rotation_matrix(roll, pitch, noisy_yaw + s.yaw) @ mount)
        assert got[k]['ego/imu'].tolist() == [*q, *rate, *force]
        previous = now
        if k % 4 == 0:  # GNSS: the antenna's position, east, north and up noise
            c, si = math.cos(s.yaw), math.sin(s.yaw)
            east = s.x + c * 0.0 - si * 0.1 + gnss_rng.normal(0.0, 0.5)
            north = s.y + si * 0.0 + c * 0.1 + gnss_rng.normal(0.0, 0.5)
            up = 0.4 + gnss_rng.normal(0.0, 1.0)
            assert got[k]['ego/gnss'].tolist() == list(enu_to_geodetic(east, north, up,
                                                                       tuple(ORIGIN)))
        if k % 2 == 0:  # wheel odometry: noisy speed, then steering; Euler integration
            speed = s.vx + odom_rng.normal(0.0, 0.1)
            steering = s.steering_angle + odom_rng.normal(0.0, 0.02)
            rate_z = speed * math.tan(steering) / wheelbase
            if last is not None:
                dt = (time_ns - last) * 1e-9
                x += speed * math.cos(yaw) * dt
                y += speed * math.sin(yaw) * dt
                yaw += rate_z * dt
            last = time_ns
            rate_std = math.hypot(math.tan(steering) / wheelbase * 0.1,
                                  abs(speed) / wheelbase / math.cos(steering) ** 2 * 0.02)
            assert got[k]['ego/wheel_odom'].tolist() == [x, y, yaw, speed, rate_z, steering,
                                                        0.1 ** 2, rate_std ** 2]
    assert x > 0.3  # it integrated the drive: 0.2 s at about 2 m/s


def test_with_accelerations_the_imu_reads_the_states_ax_ay(scenario) -> None:
    differenced = run(ComputedSensors(scenario, 5), 3)
    measured = run(ComputedSensors(scenario, 5), 3, accelerations=True)
    # the same draws: only the acceleration differs, by the states' ax = 0.7, ay = -0.1
    mount = rotation_matrix(*COMPUTED['imu']['rotation'])
    for k in (1, 2):
        prev, now = state(k - 1), state(k)
        ax, ay, _ = body_acceleration(
            PlanarState((k - 1) * PERIOD_NS, *prev[:6]), PlanarState(k * PERIOD_NS, *now[:6]))
        change = mount.T @ np.array([0.7 - ax, -0.1 - ay, 0.0])
        assert measured[k]['ego/imu'][7:] - differenced[k]['ego/imu'][7:] == \
            pytest.approx(change, abs=1e-9)
        assert np.array_equal(measured[k]['ego/imu'][:7], differenced[k]['ego/imu'][:7])


def test_frame_meta_describes_the_computed_frames(scenario) -> None:
    sensors = ComputedSensors(scenario, 0)
    meta = sensors.frame_meta(['ego/imu', 'opp/gnss', 'ego/scan'], 75_000_000)
    assert set(meta) == {'ego/imu', 'opp/gnss'}
    assert meta['opp/gnss'] == ('opp', 'gnss', 'gnss', 'gnss', 75_000_000)


def test_wheel_encoders_integrate_every_frame_and_read_when_due(make_scenario, tmp_path,
                                                                 repo_root) -> None:
    """Due every fourth frame, the encoders still roll in every frame: at 2 m/s, by frame 20
    (0.5 s) each wheel has rolled 1 m on the f1tenth car's wheels."""
    profile = yaml.safe_load((repo_root / 'config' / 'cars' / 'f1tenth.yaml').read_text())
    profile['Sensors']['encoders'] = {'type': 'wheel_encoders', 'rate_hz': 10.0,
                                      'ticks_per_revolution': 512, 'gear_ratio': 2.0,
                                      'track_width': 0.24}
    path = tmp_path / 'encoder_car.yaml'
    path.write_text(yaml.safe_dump(profile, sort_keys=False))
    sensors = ComputedSensors(make_scenario(cars=('ego',), profile=str(path)))
    straight = CarState(0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    frames = [sensors.compute(k, k * PERIOD_NS, {'ego': straight}) for k in range(24)]
    assert [k for k, frame in enumerate(frames) if 'ego/encoders' in frame] == [0, 4, 8, 12,
                                                                               16, 20]
    radius = profile['CarParameters']['tyre']['wheel_radius']
    ticks = math.floor(2.0 * 20 * PERIOD_NS * 1e-9 / (2.0 * math.pi * radius) * 1024)
    values = frames[20]['ego/encoders']
    assert values.shape == (len(LAYOUTS['wheel_encoders']),)
    assert values[:2].tolist() == [ticks, ticks]
    assert values[4:].tolist() == pytest.approx([2.0 / radius] * 2)
