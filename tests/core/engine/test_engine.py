"""The engine in process: reset, drive and advance with real vehicles, the real referee and
the embedded backend called directly."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest
import yaml

from arsim_core.engine import CarState, Engine, Frame, Placement, TrackWorld
from arsim_core.engine.collisions import BARRIER, CollisionWorld, start_poses
from arsim_core.engine.referee import COLLISION, MODEL_ERROR, RESET
from arsim_core.errors import ArsimError

WHEELBASE = 0.15875 + 0.17145  # lf + lr of config/cars/f1tenth.yaml [m]
FRAMES = 200


def pure_pursuit(centerline: np.ndarray, state: CarState, lookahead: float = 1.0) -> float:
    """Steering angle that points the car at the centerline point ``lookahead`` metres past
    the nearest one (the centerline runs in the driving direction)."""
    nearest = int(np.argmin(np.hypot(*(centerline - [state.x, state.y]).T)))
    segments = np.hypot(*(np.roll(centerline, -1, axis=0) - centerline).T)
    ahead, target = 0.0, nearest
    while ahead < lookahead:
        ahead += segments[target]
        target = (target + 1) % len(centerline)
    dx, dy = centerline[target] - [state.x, state.y]
    alpha = math.atan2(dy, dx) - state.yaw
    return math.atan(2.0 * WHEELBASE * math.sin(alpha) / lookahead)


def closed_length(centerline: np.ndarray) -> float:
    return float(np.hypot(*(np.roll(centerline, -1, axis=0) - centerline).T).sum())


def centerline_pose(world: TrackWorld, fraction: float) -> tuple[float, float, float]:
    """The centerline point ``fraction`` of the points past the start pose, heading along."""
    c = world.centerline
    first = int(np.argmin(np.hypot(*(c - world.start_pose[:2]).T)))
    i = (first + int(fraction * len(c))) % len(c)
    dx, dy = c[(i + 1) % len(c)] - c[i]
    return float(c[i][0]), float(c[i][1]), math.atan2(dy, dx)


@pytest.fixture
def engine_on(ring):
    """``engine_on(scenario, seed=0, track=ring)``: an engine with its first track loaded."""
    made: list[Engine] = []

    def make(scenario, seed: int = 0, track: TrackWorld = ring) -> Engine:
        engine = Engine(scenario, seed=seed)
        engine.load_track(track)
        made.append(engine)
        return engine

    yield make
    for engine in made:
        engine.close()


def run(engine: Engine, frames: int = FRAMES, seed: int | None = None) -> list[Frame]:
    """Reset, then ``frames`` frames of the same weaving commands for every car."""
    out = [engine.reset(seed=seed)]
    for k in range(frames):
        for i, name in enumerate(engine.names):
            engine.drive(name, 2.0 + 0.5 * i, 0.3 * math.sin(0.05 * k + i))
        out.append(engine.advance())
    return out


def assert_identical(a: Sequence[Frame], b: Sequence[Frame]) -> None:
    assert len(a) == len(b)
    for fa, fb in zip(a, b, strict=True):
        assert (fa.step, fa.time_ns) == (fb.step, fb.time_ns)
        assert fa.states == fb.states, fa.step
        assert fa.judgement == fb.judgement, fa.step
        assert fa.sensors.keys() == fb.sensors.keys(), fa.step
        for name, array in fa.sensors.items():
            other = fb.sensors[name]
            assert array.dtype == other.dtype and array.tobytes() == other.tobytes(), \
                (fa.step, name)


@pytest.mark.parametrize(('speed', 'steering', 'reason'), [
    (math.nan, 0.0, 'non-finite'), (2.0, math.inf, 'non-finite'),
    (25.0, 0.0, 'speed outside'), (2.0, -0.9, 'steering_angle outside')])
def test_a_refused_drive_command_leaves_the_car_on_its_last_one(
        make_scenario, engine_on, speed: float, steering: float, reason: str) -> None:
    """The rule of the ROS drive topics holds for every caller of the engine (the dataset
    runner's drivers too): NaN or beyond the car's limits is ignored, with the reason."""
    steady, refused = (engine_on(make_scenario()) for _ in range(2))
    steady.reset()
    refused.reset()
    for engine in (steady, refused):
        assert engine.drive('ego', 2.0, 0.1) is None
    problem = refused.drive('ego', speed, steering)
    assert problem is not None and reason in problem
    for _ in range(20):
        assert steady.advance().states == refused.advance().states


# --- reset ------------------------------------------------------------------------------------
def test_same_seed_and_commands_give_bit_identical_states_and_noisy_scans(
        make_scenario, engine_on, noisy_profile):
    scenario = make_scenario(('ego', 'opp'), profile=noisy_profile)
    first = run(engine_on(scenario, seed=7))
    assert all(set(f.sensors) >= {'ego/scan', 'opp/scan'} for f in first)
    assert first[-1].states['ego'].pose != first[0].states['ego'].pose
    assert_identical(first, run(engine_on(scenario, seed=7)))

    again = engine_on(scenario, seed=1)
    run(again)  # some history first: a reset with the seed must forget it
    assert_identical(first, run(again, seed=7))
    assert_identical(first, run(again, seed=7))

    other = run(engine_on(scenario, seed=8))
    for fa, fb in zip(first, other, strict=True):
        assert fa.states == fb.states  # noise is in the sensors only
        assert not np.array_equal(fa.sensors['ego/scan'], fb.sensors['ego/scan']), fa.step

    noiseless = run(engine_on(make_scenario(('ego', 'opp'))), frames=0)
    with np.errstate(invalid='ignore'):  # beams without a return in both: inf - inf
        diff = first[0].sensors['ego/scan'] - noiseless[0].sensors['ego/scan']
    finite = np.isfinite(diff)
    assert finite.sum() > 500 and 0.005 < float(np.std(diff[finite])) < 0.02


def test_commands_for_all_cars_at_once_drive_as_one_car_at_a_time(make_scenario, engine_on):
    names = ('ego', 'opp', 'third')
    one_by_one, all_at_once = (engine_on(make_scenario(names)) for _ in range(2))
    assert [fleet.names for fleet in all_at_once.fleets] == [names]  # one call steps them
    one_by_one.reset()
    all_at_once.reset()
    speed, steer = np.array([2.0, 9.0, -0.5]), np.array([0.05, -0.4, 0.0])
    active = np.array([True, True, False])
    for _ in range(40):
        for i in np.flatnonzero(active):
            one_by_one.drive(names[i], float(speed[i]), float(steer[i]))
        all_at_once.drive_all(speed, steer, active)
        apart, together = one_by_one.advance(), all_at_once.advance()
        assert apart.states == together.states
    rows = all_at_once.planar_states()
    expected = [[s.x, s.y, s.yaw, s.vx, s.vy, s.yaw_rate, s.steering_angle]
                for s in together.states.values()]
    assert rows.tolist() == expected
    assert rows[2, 3] == 0.0 and rows[0, 3] > 1.0  # the inactive car never moved


def test_reset_puts_cars_at_the_poses_given(make_scenario, engine_on, ring):
    engine = engine_on(make_scenario(('ego', 'opp')))
    pose = centerline_pose(ring, 0.3)
    frame = engine.reset(poses={'opp': pose})
    assert frame.step == 0 and frame.time_ns == 0
    assert frame.states['opp'].pose == pytest.approx(pose, abs=1e-12)
    assert frame.states['ego'].pose == pytest.approx(engine.start_poses['ego'], abs=1e-12)
    assert engine.vehicles['opp'].pose == pytest.approx(pose, abs=1e-12)
    assert frame.judgement.events == ()
    assert engine.metrics.status('opp').progress == pytest.approx(
        0.3 * engine.metrics.length, abs=0.5)
    frame = engine.advance()
    assert frame.states['opp'].pose == pytest.approx(pose, abs=1e-9)  # at rest, stays


def test_reset_refuses_unknown_cars_by_name(make_scenario, engine_on):
    engine = engine_on(make_scenario(('ego', 'opp')))
    with pytest.raises(ArsimError, match=r"unknown car\(s\) \['ghost'\].*\['ego', 'opp'\]"):
        engine.reset(poses={'ego': (6.0, 0.0, 0.0), 'ghost': (7.0, 0.0, 0.0)})


def test_reset_before_a_track_is_refused(make_scenario):
    engine = Engine(make_scenario())
    with pytest.raises(ArsimError, match='load a track'):
        engine.reset()


# --- advance ----------------------------------------------------------------------------------
def test_a_reset_to_start_lands_in_the_next_frame_with_a_reset_event(make_scenario, engine_on):
    engine = engine_on(make_scenario(('ego', 'opp')))
    engine.reset()
    for _ in range(20):
        engine.drive('ego', 3.0, 0.0)
        engine.advance()
    start = engine.start_poses['ego']
    assert engine.states['ego'].x > start[0] + 0.5
    placements = engine.reset_to_start(['ego'])
    assert placements == (Placement('ego', start, 0.0),)
    assert engine.states['ego'].x > start[0] + 0.5  # not before the next frame
    frame = engine.advance()
    assert [(e.car, e.kind) for e in frame.judgement.events] == [('ego', RESET)]
    assert frame.states['ego'].pose == pytest.approx(start, abs=1e-12)
    assert frame.states['ego'].vx == 0.0
    frame = engine.advance()
    assert frame.judgement.events == ()


@pytest.mark.parametrize('response', ['stop', 'bounce'])
def test_a_collision_places_the_car_at_its_last_free_pose_in_the_next_frame(
        make_scenario, engine_on, response):
    engine = engine_on(make_scenario(collisions={'response': response}))
    engine.reset(poses={'ego': (8.0, 0.0, math.pi / 2)})  # 1 m from the left barrier
    previous = engine.states['ego']
    for _ in range(100):
        engine.drive('ego', 3.0, 0.0)
        frame = engine.advance()
        if frame.judgement.events:
            break
        previous = frame.states['ego']
    else:
        pytest.fail('the car never reached the barrier')
    hit = frame.states['ego']
    assert [(e.car, e.kind, e.other) for e in frame.judgement.events] == [
        ('ego', COLLISION, BARRIER)]
    speed = -0.5 * hit.vx if response == 'bounce' else 0.0
    assert hit.vx > 2.0
    assert frame.judgement.placements == (Placement('ego', previous.pose, speed),)
    after = engine.advance()
    assert [(e.car, e.kind) for e in after.judgement.events] == [('ego', RESET)]
    assert after.states['ego'].pose == pytest.approx(previous.pose, abs=1e-9)
    assert after.states['ego'].vx == pytest.approx(speed, abs=1e-9)
    assert engine.metrics.status('ego').collisions == 1


def nan_state(engine: Engine, car: str) -> None:
    """Make ``car``'s model state NaN, as a diverging integration would."""
    x = engine.vehicles[car]._x
    x[:] = [math.nan] * len(x)


def test_a_diverged_model_is_reported_and_the_car_sent_to_its_start(make_scenario, engine_on):
    engine = engine_on(make_scenario(('ego', 'opp')))
    engine.reset()
    for _ in range(20):
        engine.drive('ego', 3.0, 0.1)
        engine.advance()
    opp = engine.states['opp']  # on the grid behind ego's start pose, at rest
    nan_state(engine, 'ego')
    frame = engine.advance()  # no exception
    assert [(e.car, e.kind) for e in frame.judgement.events] == [('ego', MODEL_ERROR),
                                                                 ('ego', RESET)]
    assert frame.states['ego'].pose == pytest.approx(engine.start_poses['ego'], abs=1e-12)
    assert frame.states['ego'].vx == 0.0
    assert frame.states['opp'] == opp  # the other car is not touched
    assert 'ego/scan' in frame.sensors and np.isfinite(frame.sensors['ego/scan']).any()
    engine.drive('ego', 1.0, 0.0)
    frame = engine.advance()
    assert frame.judgement.events == ()
    assert frame.states['ego'].x > engine.start_poses['ego'][0]


def test_a_model_error_past_half_a_lap_credits_no_lap(make_scenario, engine_on, ring):
    engine = engine_on(make_scenario())
    engine.reset(poses={'ego': centerline_pose(ring, 0.45)})
    frame = None
    while engine.metrics.status('ego').progress < 0.55 * engine.metrics.length:
        state = engine.states['ego']
        engine.drive('ego', 3.0, pure_pursuit(ring.centerline, state))
        frame = engine.advance()
        assert frame.time_ns < 10e9 and not frame.judgement.events
    nan_state(engine, 'ego')
    frame = engine.advance()
    assert [e.kind for e in frame.judgement.events] == [MODEL_ERROR, RESET]
    status = engine.metrics.status('ego')
    assert status.laps == 0 and status.lap_times == ()
    assert abs(status.progress) < 1.0  # back on the grid


# --- race metrics -------------------------------------------------------------------------------
def test_a_car_following_the_centerline_completes_a_lap(make_scenario, engine_on, ring):
    engine = engine_on(make_scenario())
    speed = 3.0
    frame = engine.reset()
    assert engine.metrics.status('ego').laps == 0
    length = closed_length(ring.centerline)
    assert engine.metrics.length == pytest.approx(length)
    while not engine.metrics.lap_completed('ego'):
        engine.drive('ego', speed, pure_pursuit(ring.centerline, frame.states['ego']))
        frame = engine.advance()
        assert not frame.judgement.events, frame.judgement
        assert frame.time_ns < 2 * length / speed * 1e9, 'no lap in twice the time'
    status = engine.metrics.status('ego')
    assert status.laps == 1 and len(status.lap_times) == 1
    lap = status.lap_times[0]
    assert length / speed < lap < 10 * length / speed
    # timed within the frame that completed it
    assert frame.time_ns * 1e-9 - engine.period_ns * 1e-9 < lap <= frame.time_ns * 1e-9
    assert status.collisions == 0 and status.time_off_track == 0.0


# --- a second track -----------------------------------------------------------------------------
def test_load_track_moves_renderer_referee_and_metrics_to_the_new_track(
        make_scenario, engine_on, ring, random_world, repo_root, tmp_path):
    # exact scans (no noise, no LiDAR effects): the same poses must give the same bits
    profile = yaml.safe_load((repo_root / 'config' / 'cars' / 'f1tenth.yaml').read_text())
    profile['Sensors']['scan'].update(noise_per_m=0.0, detection_range=0.0,
                                      beam_divergence=0.0)
    (tmp_path / 'exact.yaml').write_text(yaml.safe_dump(profile))
    scenario = make_scenario(('ego', 'opp'), profile=str(tmp_path / 'exact.yaml'))
    engine = engine_on(scenario)
    on_ring = engine.reset()
    for _ in range(10):
        engine.drive('ego', 2.0, 0.0)
        engine.advance()

    new = start_poses(scenario.cars, random_world.start_pose)
    placements = engine.load_track(random_world)
    assert placements == tuple(Placement(name, new[name], 0.0) for name in ('ego', 'opp'))
    assert engine.world is random_world and engine.start_poses == new
    assert engine.metrics.length == pytest.approx(closed_length(random_world.centerline))
    assert engine.metrics.length != pytest.approx(closed_length(ring.centerline))

    frame = engine.advance()
    assert sorted((e.car, e.kind) for e in frame.judgement.events) == [
        ('ego', RESET), ('opp', RESET)]
    assert frame.judgement.placements == ()
    for name in ('ego', 'opp'):
        assert frame.states[name].pose == pytest.approx(new[name], abs=1e-12)
        assert not np.array_equal(frame.sensors[f'{name}/scan'],
                                  on_ring.sensors[f'{name}/scan'])

    # the scans now come from the new track: the same poses give what an engine started on
    # it renders, and not what the ring showed there
    ring_poses = {name: s.pose for name, s in on_ring.states.items()}
    fresh = engine_on(scenario, track=random_world).reset(poses=ring_poses)
    switched = engine.reset(poses=ring_poses)
    for name in ('ego', 'opp'):
        scan = switched.sensors[f'{name}/scan']
        assert np.array_equal(scan, fresh.sensors[f'{name}/scan'])
        assert not np.array_equal(scan, on_ring.sensors[f'{name}/scan'])

    # and the referee judges the new barriers: driving straight off the new start hits one
    frame = engine.reset()
    for _ in range(400):
        engine.drive('ego', 3.0, 0.0)
        frame = engine.advance()
        if frame.judgement.events:
            break
    assert [(e.car, e.kind, e.other) for e in frame.judgement.events] == [
        ('ego', COLLISION, BARRIER)]
    assert engine.metrics.status('ego').collisions == 1
    ring_barriers = CollisionWorld(ring.vertices, ring.triangles.astype(np.int64), ring.labels)
    half = [[scenario.cars[0].profile.footprint.length / 2,
             scenario.cars[0].profile.footprint.width / 2]]
    assert not ring_barriers.contacts_at(['ego'], [frame.states['ego'].pose], half, False), \
        'the ring has a barrier there too: this contact proves nothing'


def test_lap_time_on_a_new_track_starts_at_the_switch(make_scenario, engine_on, random_world):
    engine = engine_on(make_scenario())
    engine.reset()
    for _ in range(120):  # 3 s on the ring
        engine.drive('ego', 2.0, 0.0)
        engine.advance()
    engine.load_track(random_world)
    engine.advance()
    assert engine.metrics.status('ego').lap_time <= 2 * engine.period_ns * 1e-9


def test_sensor_noise_still_follows_the_seed_after_a_track_switch(
        make_scenario, engine_on, noisy_profile, random_world):
    scenario = make_scenario(profile=noisy_profile)
    scans = []
    for seed in (5, 6):
        engine = engine_on(scenario, seed=seed)
        engine.load_track(random_world)
        scans.append(engine.reset().sensors['ego/scan'])
    assert not np.array_equal(scans[0], scans[1])


def test_frames_carry_the_computed_sensors_when_due_seeded_from_the_run_seed(
        engine_on, make_scenario, tmp_path, repo_root) -> None:
    import yaml

    profile = yaml.safe_load((repo_root / 'config' / 'cars' / 'f1tenth.yaml').read_text())
    profile['Sensors'].update({
        'imu': {'type': 'imu', 'position': [0.1, 0.0, 0.05], 'rate_hz': 40.0,
                'accel_noise_std': 0.05},
        'gnss': {'type': 'gnss', 'position': [0.0, 0.0, 0.4], 'rate_hz': 10.0,
                 'origin': [48.2626, 11.6681, 480.0], 'horizontal_noise_std': 0.5},
        'wheel_odom': {'type': 'wheel_odometry', 'rate_hz': 20.0, 'speed_noise_std': 0.1}})
    path = tmp_path / 'computed_car.yaml'
    path.write_text(yaml.safe_dump(profile, sort_keys=False))
    scenario = make_scenario(cars=('ego', 'opp'), profile=str(path))
    frames = run(engine_on(scenario, seed=3), 8)
    for frame in frames:
        names = set(frame.sensors)
        assert {'ego/imu', 'opp/imu', 'ego/scan'} <= names
        assert ('ego/gnss' in names) == (frame.step % 4 == 0)
        assert ('opp/wheel_odom' in names) == (frame.step % 2 == 0)
        assert frame.sensors['ego/imu'].shape == (10,)
    # at rest at t=0: +g on z, up to the noise
    assert frames[0].sensors['ego/imu'][9] == pytest.approx(9.81, abs=0.5)
    assert frames[-1].sensors['ego/wheel_odom'][0] > 0.0  # it drove forwards
    same, other = run(engine_on(scenario, seed=3), 8), run(engine_on(scenario, seed=4), 8)
    for a, b, c in zip(frames, same, other, strict=True):
        assert np.array_equal(a.sensors['ego/imu'], b.sensors['ego/imu'])
        assert not np.array_equal(a.sensors['ego/imu'], c.sensors['ego/imu'])
