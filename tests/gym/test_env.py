"""``arsim/Race-v0``, the single environment, on real tracks with the real engine: the
registration a user relies on, the Gymnasium API contract, reproducibility, reset poses, bad
input, termination and truncation, race metrics, opponents, rendering and cameras."""

from __future__ import annotations

import importlib
import math
import os
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from arsim_core.engine import CarRaceStatus
from arsim_core.errors import ConfigError, TrackError
from arsim_core.policies import PurePursuit
from arsim_gym.env import KEYWORDS, RaceEnv

ENV_ID = 'arsim_gym:arsim/Race-v0'
SHARED_TRACKS = Path(__file__).resolve().parents[3] / 'shared' / 'tracks'
OBS_KEYS = {'scan', 'pose', 'velocity', 'steering', 'lap_fraction', 'progress', 'laps',
            'lap_time'}
RANDOMIZATION = {'friction': [0.8, 1.1], 'mass_scale': [0.9, 1.1],
                 'scan_noise_std': [0.0, 0.03],
                 'start': {'along': [0.0, 1.0], 'lateral': [-0.2, 0.2], 'yaw': [-0.1, 0.1]}}
MakeEnv = Callable[..., RaceEnv]

# --- the acceptance contract: a fresh interpreter, nothing but gymnasium imported ----------
ACCEPTANCE = '''\
import gymnasium

env = gymnasium.make("arsim_gym:arsim/Race-v0", track={track!r}, num_cars=1, timestep=0.01)
obs, info = env.reset(seed=0)
assert env.observation_space.contains(obs), "reset: observation outside the space"
start = float(obs["progress"][0])
for _ in range(30):
    obs, reward, terminated, truncated, info = env.step([0.0, 2.0])
    assert env.observation_space.contains(obs), "step: observation outside the space"
print("TRACK", env.unwrapped.setup.track.name)
print("GAINED", float(obs["progress"][0]) - start)
print("FLAGS", terminated, truncated)
env.close()
'''
ACCEPTANCE_TRACKS = {
    'arsim_ring': ('arsim_ring', 'arsim_ring'),
    'spielberg': (str(SHARED_TRACKS / 'f1tenth_racetracks' / 'Spielberg' / 'Spielberg_map.yaml'),
                  'Spielberg'),
    'monza': (str(SHARED_TRACKS / 'tum_racetrack_database' / 'Monza.csv'), 'Monza'),
}


@pytest.fixture(scope='module')
def acceptance_runs(tmp_path_factory: pytest.TempPathFactory
                    ) -> dict[str, subprocess.Popen[str]]:
    """The acceptance script for every track, started together (each pays the compile of
    the ray-casting kernels, so running them side by side saves most of the wait). The
    children inherit this environment, PYTHONPATH included, and run outside the repository."""
    folder = tmp_path_factory.mktemp('acceptance')
    runs = {}
    for key, (track, _) in ACCEPTANCE_TRACKS.items():
        if track != 'arsim_ring' and not Path(track).is_file():
            continue
        script = folder / f'{key}.py'
        script.write_text(ACCEPTANCE.format(track=track))
        runs[key] = subprocess.Popen([sys.executable, str(script)], cwd=folder,
                                     env=dict(os.environ), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
    yield runs
    for process in runs.values():
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize('key', list(ACCEPTANCE_TRACKS))
def test_acceptance_script_in_a_fresh_interpreter(
        acceptance_runs: dict[str, subprocess.Popen[str]], key: str) -> None:
    if key not in acceptance_runs:
        pytest.skip(f'{ACCEPTANCE_TRACKS[key][0]} not found')
    out, err = acceptance_runs[key].communicate(timeout=300)
    assert acceptance_runs[key].returncode == 0, f'stdout:\n{out}\nstderr:\n{err}'
    lines = dict(line.split(' ', 1) for line in out.splitlines() if ' ' in line)
    assert lines['TRACK'] == ACCEPTANCE_TRACKS[key][1]
    assert float(lines['GAINED']) > 0.1, out  # 0.3 s at up to 2 m/s, straight ahead
    assert lines['FLAGS'] == 'False False'


def test_import_registers_and_importing_again_is_harmless() -> None:
    import arsim_gym

    env = gymnasium.make('arsim/Race-v0')
    try:
        assert isinstance(env.unwrapped, RaceEnv)
        obs, _ = env.reset(seed=1)
        assert env.observation_space.contains(obs)
    finally:
        env.close()
    importlib.reload(arsim_gym)
    importlib.reload(arsim_gym)
    spec = gymnasium.spec('arsim/Race-v0')
    assert spec.entry_point == 'arsim_gym.env:RaceEnv'
    assert spec.vector_entry_point == 'arsim_gym.vector:RaceVectorEnv'
    env = gymnasium.make(ENV_ID, track='arsim_ring', num_cars=1)
    try:
        assert isinstance(env.unwrapped, RaceEnv)
    finally:
        env.close()


@pytest.mark.parametrize('keywords', [{}, {'control': 'all', 'num_cars': 2},
                                      {'action': 'accel'}],
                         ids=['default', 'all-2-cars', 'accel'])
def test_gymnasium_env_checker_passes(make_env: MakeEnv, keywords: dict[str, Any]) -> None:
    env = make_env(**keywords)
    with warnings.catch_warnings():
        # the checker's advice about unbounded and non-normalised Boxes is not a failure
        warnings.simplefilter('ignore', UserWarning)
        check_env(env, skip_render_check=True)


def test_observation_keys_shapes_dtypes_and_scan_range(make_env: MakeEnv,
                                                      noisy_profile: Path) -> None:
    env = make_env(profile=str(noisy_profile))
    space = env.observation_space
    assert set(space.spaces) == OBS_KEYS
    spec = env.setup.scan['ego']
    assert space['scan'].shape == (spec.beams,)
    low, high = np.float32(spec.range_min), np.float32(spec.range_max)
    obs, _ = env.reset(seed=0)
    observations = [obs]
    for _ in range(700):  # straight into the wall: scans from far to touching
        obs, _, terminated, _, _ = env.step([0.0, 3.0])
        observations.append(obs)
        if terminated:
            break
    assert terminated
    for obs in observations:
        assert set(obs) == OBS_KEYS
        for key, value in obs.items():
            assert value.shape == space[key].shape, key
            assert value.dtype == space[key].dtype, key
        assert space.contains(obs)
        scan = obs['scan']
        assert np.all(np.isfinite(scan))
        assert scan.min() >= low and scan.max() <= high
    assert observations[-1]['scan'].min() < 0.5 < observations[0]['scan'].min()


# --- reproducibility ----------------------------------------------------------------------
def _actions(n: int = 300, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([rng.uniform(-0.3, 0.3, n), rng.uniform(0.0, 4.0, n)],
                    axis=1).astype(np.float32)


def _rollout(env: RaceEnv, seed: int, actions: np.ndarray) -> list[tuple[Any, ...]]:
    obs, _ = env.reset(seed=seed)
    record: list[tuple[Any, ...]] = [(obs,)]
    for action in actions:
        obs, reward, terminated, truncated, _ = env.step(action)
        record.append((obs, reward, terminated, truncated))
    return record


def _identical(a: list[tuple[Any, ...]], b: list[tuple[Any, ...]]) -> bool:
    for x, y in zip(a, b, strict=True):
        obs_x, obs_y = x[0], y[0]
        if obs_x.keys() != obs_y.keys() or not all(
                np.array_equal(obs_x[k], obs_y[k]) for k in obs_x):
            return False
        if x[1:] != y[1:]:
            return False
    return True


@pytest.mark.parametrize('case', ['plain', 'randomized', 'noisy'])
def test_same_seed_same_actions_is_bit_identical(make_env: MakeEnv, noisy_profile: Path,
                                                 case: str) -> None:
    keywords: dict[str, Any] = {
        'plain': {}, 'randomized': {'randomization': RANDOMIZATION},
        'noisy': {'profile': str(noisy_profile)}}[case]
    actions = _actions()
    env = make_env(**keywords)
    first = _rollout(env, 11, actions)
    again = _rollout(env, 11, actions)
    fresh = _rollout(make_env(**keywords), 11, actions)
    assert _identical(first, again)
    assert _identical(first, fresh)
    other = _rollout(env, 12, actions)
    # nothing is random without randomisation or noise: the seed cannot matter then
    assert _identical(first, other) == (case == 'plain')


# --- reset poses --------------------------------------------------------------------------
def test_reset_poses_place_the_car(make_env: MakeEnv, pose_ahead: Callable[..., Any]) -> None:
    env = make_env()
    pose = pose_ahead(env.setup.track, 10.0)
    for option in ([list(pose)], np.array([pose]), {'ego': pose}):
        obs, info = env.reset(seed=0, options={'poses': option})
        np.testing.assert_allclose(obs['pose'], pose, atol=1e-5)
        np.testing.assert_array_equal(obs['velocity'], 0.0)
        assert obs['progress'][0] == pytest.approx(10.0, abs=0.2)
        assert info['race'].progress == pytest.approx(10.0, abs=0.2)
        obs, *_ = env.step([0.0, 0.0])  # it stays there: no placement undone a frame later
        np.testing.assert_allclose(obs['pose'][:2], pose[:2], atol=1e-3)
    obs, _ = env.reset(seed=0)  # and without the option, back on the grid
    np.testing.assert_allclose(obs['pose'], env.engine.start_poses['ego'], atol=1e-5)


def test_reset_poses_mapping_moves_only_the_cars_named(make_env: MakeEnv,
                                                       pose_ahead: Callable[..., Any]) -> None:
    env = make_env(num_cars=2, control='all')
    pose = pose_ahead(env.setup.track, 20.0)
    obs, _ = env.reset(seed=0, options={'poses': {'opp1': pose}})
    np.testing.assert_allclose(obs['pose'][1], pose, atol=1e-5)
    np.testing.assert_allclose(obs['pose'][0], env.engine.start_poses['ego'], atol=1e-5)


@pytest.mark.parametrize('poses', [
    [[1.0, 2.0]], [[6.5, 0.0, 0.0], [7.5, 0.0, 0.0]], [[math.nan, 0.0, 0.0]],
    [[math.inf, 0.0, 0.0]], [6.5, 0.0, 0.0, 1.0], {'ego': (6.5, 0.0)},
    'abc',
    {'nobody': (6.5, 0.0, 0.0)},
], ids=['two-numbers', 'too-many-rows', 'nan', 'inf', 'flat-four', 'mapping-short', 'string',
        'mapping-unknown-car'])
def test_malformed_reset_poses_raise_value_error_naming_poses(make_env: MakeEnv,
                                                              poses: Any) -> None:
    env = make_env()
    try:
        env.reset(seed=0, options={'poses': poses})
    except ValueError as exc:
        assert 'poses' in str(exc), str(exc)
    except Exception as exc:  # noqa: BLE001 - any other type is the failure shown
        raise AssertionError(f'{type(exc).__name__}: {exc}') from exc
    else:
        raise AssertionError('no error')
    obs, _ = env.reset(seed=0)  # the env is still usable
    assert env.observation_space.contains(obs)


def test_unknown_reset_option_is_refused(make_env: MakeEnv) -> None:
    env = make_env()
    with pytest.raises(ValueError, match='pose'):
        env.reset(seed=0, options={'pose': [[6.5, 0.0, 0.0]]})


# --- bad input ----------------------------------------------------------------------------
def test_unknown_keyword_lists_the_valid_ones() -> None:
    with pytest.raises(TypeError, match='bogus') as caught:
        RaceEnv(track='arsim_ring', num_cars=1, bogus=1)
    for keyword in ('track', 'num_cars', 'timestep', *KEYWORDS):
        assert keyword in str(caught.value)
    with pytest.raises(TypeError, match='max_step'):
        gymnasium.make(ENV_ID, track='arsim_ring', max_step=3)


def test_unknown_observed_sensor_is_named() -> None:
    with pytest.raises(ConfigError, match='nope'):
        RaceEnv(track='arsim_ring', num_cars=1, observe=('nope',))


@pytest.mark.parametrize('track', ['no_such_track', '/nonexistent/folder/track.yaml',
                                   '/nonexistent/folder/track.csv'])
def test_missing_track_is_an_arsim_error_naming_it(track: str) -> None:
    with pytest.raises((TrackError, ConfigError)) as caught:
        RaceEnv(track=track, num_cars=1)
    assert track in str(caught.value)


@pytest.mark.parametrize('bad', [(math.nan, 1.0), (0.1, math.nan), (math.inf, 1.0),
                                 (0.1, -math.inf), (0.1, 100.0), (2.0, 1.0), (0.1, -50.0)],
                         ids=['nan-steer', 'nan-speed', 'inf-steer', 'inf-speed',
                              'too-fast', 'steer-out', 'too-slow'])
def test_invalid_action_is_ignored_with_a_warning(make_env: MakeEnv,
                                                  bad: tuple[float, float]) -> None:
    env, reference = make_env(), make_env()
    env.reset(seed=0)
    reference.reset(seed=0)
    command = np.array([0.15, 2.0], np.float32)
    for _ in range(20):
        env.step(command)
        reference.step(command)
    for _ in range(30):
        with pytest.warns(UserWarning, match='ignoring'):
            obs, reward, terminated, truncated, _ = env.step(np.array(bad, np.float32))
        expected, expected_reward, *_ = reference.step(command)  # the last command again
        for key in obs:
            np.testing.assert_array_equal(obs[key], expected[key], err_msg=key)
        assert reward == expected_reward
        assert not terminated and not truncated
    assert obs['velocity'][0] > 1.0  # still driving on the last command


def test_invalid_accel_action_keeps_the_previous_inputs(make_env: MakeEnv) -> None:
    env, reference = make_env(action='accel'), make_env(action='accel')
    env.reset(seed=0)
    reference.reset(seed=0)
    command = np.array([0.5, 2.0], np.float32)  # steering rate, acceleration
    for _ in range(10):
        env.step(command)
        reference.step(command)
    for bad in ((math.nan, 0.0), (0.0, 1000.0)):
        with pytest.warns(UserWarning, match='ignoring'):
            obs, *_ = env.step(np.array(bad, np.float32))
        expected, *_ = reference.step(command)
        np.testing.assert_array_equal(obs['pose'], expected['pose'])
        np.testing.assert_array_equal(obs['steering'], expected['steering'])


def test_invalid_row_with_control_all_only_holds_that_car(make_env: MakeEnv) -> None:
    env, reference = make_env(num_cars=2, control='all'), make_env(num_cars=2, control='all')
    env.reset(seed=0)
    reference.reset(seed=0)
    first = np.array([[0.0, 1.0], [0.0, 0.5]], np.float32)
    env.step(first)
    reference.step(first)
    with pytest.warns(UserWarning, match='non-finite'):
        obs, *_ = env.step(np.array([[0.0, 2.0], [math.nan, math.nan]], np.float32))
    expected, *_ = reference.step(np.array([[0.0, 2.0], [0.0, 0.5]], np.float32))
    np.testing.assert_array_equal(obs['pose'], expected['pose'])
    np.testing.assert_array_equal(obs['velocity'], expected['velocity'])


def test_actions_on_the_space_bounds_are_applied_without_a_warning(make_env: MakeEnv) -> None:
    for action in ('speed', 'accel'):
        env = make_env(action=action)
        env.reset(seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            env.step(env.action_space.high)
            env.step(env.action_space.low)
            env.step(env.action_space.high.astype(np.float64))


# --- termination and truncation -----------------------------------------------------------
def test_driving_into_the_wall_terminates(make_env: MakeEnv) -> None:
    env = make_env()
    env.reset(seed=0)
    for step in range(1, 1001):
        obs, reward, terminated, truncated, info = env.step([0.0, 3.0])
        assert not truncated
        steps = step
        if terminated:
            break
        assert not info['collision']
    assert terminated, 'no collision within 10 s of driving straight at 3 m/s'
    assert steps > 100  # it had 16 m of straight road first
    assert info['collision']
    assert any(event.kind == 'collision' for event in info['events'])
    assert reward < -0.5  # the default collision penalty is 1


@pytest.mark.parametrize(('timestep', 'max_time', 'steps'), [(0.01, 0.5, 50), (0.02, 0.5, 25),
                                                              (0.01, 0.03, 3)])
def test_max_time_truncates(make_env: MakeEnv, timestep: float, max_time: float,
                            steps: int) -> None:
    env = make_env(timestep=timestep, max_time=max_time)
    for _ in range(2):  # and again after a reset
        env.reset(seed=0)
        for step in range(1, steps + 1):
            _, _, terminated, truncated, info = env.step([0.0, 1.0])
            assert not terminated
            assert truncated == (step == steps), step
        assert info['time'] == pytest.approx(max_time)


def _pure_pursuit(env: RaceEnv, speed_scale: float = 0.7) -> PurePursuit:
    p = env.engine.configs['ego'].params
    driver = PurePursuit(env.setup.track.centerline, wheelbase=p.body.wheelbase,
                         max_steering=p.steering.max_angle, max_speed=p.longitudinal.max_speed,
                         friction=p.tyre.friction, speed_scale=speed_scale)
    driver.reset(env.engine.states['ego'].pose)
    return driver


def test_max_laps_truncates_when_the_lap_is_completed(make_env: MakeEnv,
                                                     pose_ahead: Callable[..., Any]) -> None:
    """Progress counts from the start line, so a car placed just before it has a whole lap
    ahead; placed 30 m past it (under half a lap), it needs the remaining 37 m only."""
    env = make_env(max_laps=1, reward='lap')
    length = env.setup.track.length
    obs, _ = env.reset(seed=0, options={'poses': [pose_ahead(env.setup.track, 30.0)]})
    assert obs['progress'][0] == pytest.approx(30.0, abs=0.2)
    driver = _pure_pursuit(env)
    rewards = []
    for _ in range(3000):
        steer, speed = driver.act(env.engine.states['ego'])
        obs, reward, terminated, truncated, info = env.step([steer, speed])
        rewards.append(reward)
        assert not terminated
        assert truncated == (obs['laps'][0] >= 1)
        if truncated:
            break
    assert truncated
    assert obs['laps'][0] == 1 and info['race'].laps == 1
    assert info['race'].progress >= length
    assert rewards[-1] == 1.0 and sum(rewards) == 1.0
    assert len(info['race'].lap_times) == 1


# --- race metrics -------------------------------------------------------------------------
def test_progress_grows_and_rewards_sum_to_it(make_env: MakeEnv) -> None:
    env = make_env()
    obs, info = env.reset(seed=0)
    assert isinstance(info['race'], CarRaceStatus) and info['race'].name == 'ego'
    start = info['race'].progress
    previous, total = obs['progress'][0], 0.0
    driver = _pure_pursuit(env)
    for _ in range(800):
        steer, speed = driver.act(env.engine.states['ego'])
        obs, reward, terminated, _, info = env.step([steer, speed])
        assert not terminated
        assert obs['progress'][0] >= previous - 1e-4
        previous = obs['progress'][0]
        total += reward
        status = env.engine.metrics.status('ego')
        assert info['race'] == status
        assert obs['progress'][0] == np.float32(status.progress)
        assert obs['lap_fraction'][0] == np.float32(status.lap_fraction)
        assert obs['lap_time'][0] == np.float32(status.lap_time)
    gained = info['race'].progress - start
    assert gained > 20.0  # 8 s behind a pure-pursuit driver
    assert total == pytest.approx(gained, abs=1e-6)


def test_driving_backwards_loses_progress(make_env: MakeEnv) -> None:
    env = make_env()
    env.reset(seed=0)
    for _ in range(100):
        obs, reward, *_ = env.step([0.0, -1.0])
    assert obs['progress'][0] < -0.5
    assert reward < 0.0


# --- opponents ----------------------------------------------------------------------------


@pytest.mark.parametrize(('num_cars', 'policy'), [
    (2, 'pure_pursuit'),
    (3, 'pure_pursuit'),
    (3, 'follow_the_gap'),
])
def test_opponents_drive_while_the_ego_stands(make_env: MakeEnv, pose_ahead: Callable[..., Any],
                                              num_cars: int, policy: str) -> None:
    env = make_env(num_cars=num_cars, opponents=policy)
    opponents = env.names[1:]
    assert env.names[0] == 'ego' and len(opponents) == num_cars - 1
    metrics = env.engine.metrics
    # the ego parks half a lap ahead, out of the way of the cars behind it on the grid
    ego = pose_ahead(env.setup.track, env.setup.track.length / 2.0)
    obs, _ = env.reset(seed=0, options={'poses': {'ego': ego}})
    start = {name: metrics.status(name).progress for name in env.names}
    for _ in range(200):
        obs, _, terminated, _, _ = env.step([0.0, 0.0])
        assert not terminated
    gained = {name: metrics.status(name).progress - start[name] for name in opponents}
    assert all(value > 3.0 for value in gained.values()), gained
    assert metrics.status('ego').progress == pytest.approx(start['ego'], abs=1e-3)
    np.testing.assert_allclose(obs['pose'], ego, atol=1e-3)


def test_no_opponent_policy_leaves_them_parked(make_env: MakeEnv) -> None:
    env = make_env(num_cars=2, opponents='none')
    env.reset(seed=0)
    start = env.engine.states['opp1'].pose
    for _ in range(100):
        env.step([0.0, 1.0])
    np.testing.assert_allclose(env.engine.states['opp1'].pose, start, atol=1e-6)


# --- control='all' ------------------------------------------------------------------------
def test_control_all_has_a_car_axis(make_env: MakeEnv, pose_ahead: Callable[..., Any]) -> None:
    env = make_env(num_cars=2, control='all')
    assert env.action_space.shape == (2, 2)
    obs, info = env.reset(seed=0, options={
        'poses': {'ego': pose_ahead(env.setup.track, 20.0)}})
    assert set(info['race']) == {'ego', 'opp1'}
    for key, value in obs.items():
        assert value.shape == (2, *env.observation_space[key].shape[1:]), key
        assert value.shape[0] == 2
    assert env.observation_space.contains(obs)
    start = obs['pose'].copy()
    opp1_start = info['race']['opp1'].progress
    for _ in range(50):  # only the second row drives
        obs, _, terminated, _, info = env.step(np.array([[0.0, 0.0], [0.0, 2.0]], np.float32))
        assert not terminated
    np.testing.assert_allclose(obs['pose'][0], start[0], atol=1e-5)
    assert np.hypot(*(obs['pose'][1, :2] - start[1, :2])) > 0.5
    assert info['race']['opp1'].progress > opp1_start + 0.5
    assert obs['progress'][1, 0] == np.float32(info['race']['opp1'].progress)


# --- rendering ----------------------------------------------------------------------------
def test_rgb_array_render_shows_the_car_moving(make_env: MakeEnv) -> None:
    env = make_env(render_mode='rgb_array')
    env.reset(seed=0)
    first = env.render()
    assert isinstance(first, np.ndarray)
    assert first.ndim == 3 and first.shape[2] == 3 and first.dtype == np.uint8
    assert first.shape[0] > 100 and first.shape[1] > 100
    assert len(np.unique(first.reshape(-1, 3), axis=0)) > 2  # a picture, not a blank
    for _ in range(60):
        env.step([0.0, 3.0])
    second = env.render()
    assert second.shape == first.shape
    assert np.any(second != first)
    np.testing.assert_array_equal(env.render(), second)  # nothing changes without a step


def test_no_render_mode_renders_nothing(make_env: MakeEnv) -> None:
    env = make_env()
    env.reset(seed=0)
    assert env.render() is None
    with pytest.raises(ValueError, match='render_mode'):
        make_env(render_mode='human')


# --- an opted-in camera -------------------------------------------------------------------
def _camera_env(make_env: MakeEnv, profile: Path, **keywords: Any) -> RaceEnv:
    try:
        return make_env(profile=str(profile), observe=('cam',), **keywords)
    except Exception as exc:  # a machine without any camera renderer
        if any(word in str(exc) for word in ('EGL', 'OpenGL', 'moderngl')):
            pytest.skip(f'no camera renderer here: {exc}')
        raise


def test_observed_camera_is_in_the_observation(make_env: MakeEnv, camera_profile: Path) -> None:
    env = _camera_env(make_env, camera_profile)
    keys = [key for key in env.observation_space.spaces if key.startswith('cam')]
    assert keys == ['cam_rgb']
    assert env.observation_space['cam_rgb'].shape == (48, 64, 3)
    assert env.observation_space['cam_rgb'].dtype == np.uint8
    obs, _ = env.reset(seed=0)
    images = [obs['cam_rgb'].copy()]
    for _ in range(40):
        obs, *_ = env.step([0.0, 3.0])
    images.append(obs['cam_rgb'].copy())
    for image in images:
        assert image.shape == (48, 64, 3) and image.dtype == np.uint8
    assert env.observation_space.contains(obs)
    assert images[0].std() > 1.0  # not a blank frame
    assert np.any(images[0] != images[1])  # the view changed as the car moved


def test_camera_with_control_all_gets_a_car_axis(make_env: MakeEnv, camera_profile: Path) -> None:
    env = _camera_env(make_env, camera_profile, num_cars=2, control='all')
    obs, _ = env.reset(seed=0)
    assert obs['cam_rgb'].shape == (2, 48, 64, 3)
    assert env.observation_space.contains(obs)


def _kept(make: Callable[[], RaceEnv]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """An observation as returned, and a copy taken then, after 20 more steps."""
    env = make()
    obs, _ = env.reset(seed=0)
    copy = {key: value.copy() for key, value in obs.items()}
    for _ in range(20):
        env.step([0.0, 3.0])
    return obs, copy


def test_observations_are_not_overwritten_by_later_steps(make_env: MakeEnv) -> None:
    obs, copy = _kept(make_env)
    for key in obs:
        np.testing.assert_array_equal(obs[key], copy[key], err_msg=key)


def test_camera_observations_are_not_overwritten_by_later_steps(make_env: MakeEnv,
                                                                camera_profile: Path) -> None:
    obs, copy = _kept(lambda: _camera_env(make_env, camera_profile))
    np.testing.assert_array_equal(obs['cam_rgb'], copy['cam_rgb'])
