"""``arsim/Race-v0`` as a native vector environment: batched spaces, equivalence with the
single environment, Gymnasium's next-step autoreset and per-environment truncation, on both
the batched path (one engine, a ghost car per environment) and N separate environments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from arsim_core._jit import NUMBA_ENABLED, THREADED_ROWS
from arsim_gym.env import RaceEnv
from arsim_gym.vector import RaceVectorEnv

MakeEnv = Callable[..., RaceEnv]
MakeVector = Callable[..., RaceVectorEnv]
JITTER = {'start': {'along': [0.0, 1.0], 'lateral': [-0.2, 0.2], 'yaw': [-0.1, 0.1]}}
NO_NOISE = {'friction': [0.8, 1.1], 'mass_scale': [0.9, 1.1], 'max_speed': [5.0, 20.0],
            **JITTER}
# late, lagging and noisy actuators: command noise draws from each race's own stream
ACTUATORS = {'steering_noise_std': [0.01, 0.02], 'drive_noise_std': [0.1, 0.2],
             'drive_dead_time': [0.02, 0.05], 'steering_lag': [0.02, 0.05], **JITTER}
# the same single-car race on each path: N ghost cars in one engine, or N RaceEnvs
PATHS = {'batched': {},
         'separate-2-cars': {'num_cars': 2, 'opponents': 'none'},
         'separate-randomized-opponents': {'randomization': {'opponents': [0, 0]}}}


def _batched(env: RaceVectorEnv) -> bool:
    return env.core.packed


@pytest.fixture
def reference(make_env: MakeEnv) -> Callable[..., RaceEnv]:
    """A single RaceEnv with the vector's keywords, reset with ``seed``."""

    def make(seed: int, **keywords: Any) -> RaceEnv:
        env = make_env(**keywords)
        env.reset(seed=seed)
        return env

    return make


def test_make_vec_batches_the_spaces() -> None:
    env = gymnasium.make_vec('arsim_gym:arsim/Race-v0', num_envs=4,
                             vectorization_mode='vector_entry_point', track='arsim_ring')
    try:
        vector = env.unwrapped
        assert isinstance(vector, RaceVectorEnv)
        assert env.num_envs == 4
        assert env.metadata['autoreset_mode'] == AutoresetMode.NEXT_STEP
        single = RaceEnv(track='arsim_ring')
        try:
            assert env.single_observation_space == single.observation_space
            assert env.single_action_space == single.action_space
        finally:
            single.close()
        assert env.action_space.shape == (4, 2)
        for key, space in env.single_observation_space.spaces.items():
            assert env.observation_space[key].shape == (4, *space.shape), key
            assert env.observation_space[key].dtype == space.dtype, key
        obs, info = env.reset(seed=3)
        assert env.observation_space.contains(obs)
        assert set(info) >= {'time'}
        obs, rewards, terminated, truncated, _ = env.step(env.action_space.sample())
        assert env.observation_space.contains(obs)
        assert rewards.shape == terminated.shape == truncated.shape == (4,)
    finally:
        env.close()


@pytest.mark.parametrize('path', list(PATHS))
def test_reset_seed_gives_each_env_its_own_episode(make_vector: MakeVector, reference: Any,
                                                   path: str) -> None:
    keywords = {**PATHS[path]}
    keywords['randomization'] = {**keywords.get('randomization', {}), **JITTER}
    vector = make_vector(4, **keywords)
    assert _batched(vector) == (path == 'batched')
    obs, _ = vector.reset(seed=30)
    poses = obs['pose']
    assert len({tuple(p) for p in poses.tolist()}) == 4  # four different start jitters
    for i in range(4):
        single = reference(30 + i, **keywords)
        np.testing.assert_allclose(poses[i], single.engine.states['ego'].pose, atol=1e-5)
    again, _ = vector.reset(seed=30)
    np.testing.assert_array_equal(again['pose'], poses)
    listed, _ = vector.reset(seed=[30, 31, 32, 33])
    np.testing.assert_array_equal(listed['pose'], poses)
    with pytest.raises(ValueError, match='seed'):
        vector.reset(seed=[1, 2])


@pytest.mark.parametrize('randomization', [None, NO_NOISE, ACTUATORS],
                         ids=['plain', 'randomized', 'actuators'])
@pytest.mark.parametrize('path', ['batched', 'separate-2-cars'])
def test_env_i_behaves_as_a_single_env_seeded_s_plus_i(make_vector: MakeVector,
                                                      make_env: MakeEnv, path: str,
                                                      randomization: dict | None) -> None:
    keywords = {**PATHS[path], 'randomization': randomization}
    n, seed, steps = 4, 20, 150
    vector = make_vector(n, **keywords)
    rng = np.random.default_rng(5)
    actions = np.stack([rng.uniform(-0.3, 0.3, (steps, n)), rng.uniform(0.0, 3.0, (steps, n))],
                       axis=-1).astype(np.float32)
    obs, _ = vector.reset(seed=seed)
    batch = [(obs, np.zeros(n))]
    for action in actions:
        obs, rewards, terminated, truncated, _ = vector.step(action)
        assert not terminated.any() and not truncated.any()  # no autoreset in this test
        batch.append((obs, rewards))
    for i in range(n):
        single = make_env(**keywords)
        obs, _ = single.reset(seed=seed + i)
        singles = [(obs, 0.0)]
        for action in actions[:, i]:
            obs, reward, *_ = single.step(action)
            singles.append((obs, reward))
        for k, ((v_obs, v_rewards), (s_obs, s_reward)) in enumerate(
                zip(batch, singles, strict=True)):
            where = f'env {i}, step {k}'
            np.testing.assert_allclose(v_obs['pose'][i], s_obs['pose'], atol=1e-5, err_msg=where)
            np.testing.assert_allclose(v_obs['scan'][i], s_obs['scan'], atol=1e-4, err_msg=where)
            np.testing.assert_allclose(v_obs['progress'][i], s_obs['progress'], atol=1e-4,
                                       err_msg=where)
            assert v_rewards[i] == pytest.approx(s_reward, abs=1e-6), where
    assert np.ptp(batch[-1][0]['pose'][:, 0]) > 0.1  # the envs really went their own ways


@pytest.mark.parametrize('path', list(PATHS))
def test_next_step_autoreset_of_one_env(make_vector: MakeVector, reference: Any,
                                        path: str) -> None:
    keywords = PATHS[path]
    vector = make_vector(4, **keywords)
    first, _ = vector.reset(seed=0)
    crawler = reference(1, **keywords)  # env 1 creeps forward, envs 2 and 3 stand
    action = np.zeros((4, 2), np.float32)
    action[0, 1], action[1, 1] = 3.0, 0.5
    for step in range(1, 1001):
        obs, rewards, terminated, truncated, _ = vector.step(action)
        expected, *_ = crawler.step(action[1])
        np.testing.assert_allclose(obs['pose'][1], expected['pose'], atol=1e-5)
        assert not truncated.any()
        steps = step
        if terminated.any():
            break
    assert terminated.tolist() == [True, False, False, False], f'step {steps}'
    assert rewards[0] < -0.5  # the collision penalty
    # the next step: env 0's first observation, reward 0, no flags; its action is ignored
    obs, rewards, terminated, truncated, info = vector.step(action)
    expected, *_ = crawler.step(action[1])
    assert not terminated.any() and not truncated.any()
    assert rewards[0] == 0.0
    for key in obs:
        np.testing.assert_allclose(obs[key][0], first[key][0], atol=1e-6, err_msg=key)
    for key in ('pose', 'velocity', 'scan', 'progress', 'laps'):  # the standing envs
        np.testing.assert_allclose(obs[key][2:], first[key][2:], atol=1e-6, err_msg=key)
    assert np.all(obs['lap_time'][1:] > 5.0)  # their episodes ran on
    np.testing.assert_allclose(obs['pose'][1], expected['pose'], atol=1e-5)
    assert rewards[1] > 0.0 and rewards[2] == 0.0
    assert info['time'][0] == 0.0
    assert info['time'][1] == pytest.approx((steps + 1) * 0.01)
    # and env 0 drives again from there
    obs, rewards, terminated, truncated, _ = vector.step(action)
    assert obs['velocity'][0, 0] > 0.0 and rewards[0] > 0.0
    assert not terminated.any() and not truncated.any()


@pytest.mark.parametrize('path', ['batched', 'separate-2-cars'])
def test_max_time_truncates_each_env_on_its_own_clock(make_vector: MakeVector,
                                                      path: str) -> None:
    """Env 0 crashes early and restarts, so its episodes are out of step with the others'."""
    limit = 400  # steps of 0.01 s
    vector = make_vector(3, max_time=limit * 0.01, **PATHS[path])
    vector.reset(seed=0)
    action = np.zeros((3, 2), np.float32)
    action[0, 1], action[1:, 1] = 8.0, 0.3
    ends: dict[str, list[list[int]]] = {'terminated': [[], [], []], 'truncated': [[], [], []]}
    autoreset = np.zeros(3, bool)
    for step in range(1, 2 * limit + 10):
        obs, rewards, terminated, truncated, info = vector.step(action)
        assert np.all(rewards[autoreset] == 0.0)
        assert not np.any((terminated | truncated) & autoreset)
        assert np.all(info['time'][autoreset] == 0.0)
        for name, flags in (('terminated', terminated), ('truncated', truncated)):
            for i in np.flatnonzero(flags):
                ends[name][i].append(step)
        if terminated[0]:
            action[0, 1] = 0.0  # after its crash env 0 stands
        autoreset = terminated | truncated
    crash = ends['terminated'][0]
    assert len(crash) == 1 and crash[0] < limit
    assert ends['truncated'][0] == [crash[0] + 1 + limit]
    for i in (1, 2):
        assert ends['terminated'][i] == []
        assert ends['truncated'][i] == [limit, 2 * limit + 1]


def test_batched_reset_poses_give_one_pose_per_env(make_vector: MakeVector) -> None:
    vector = make_vector(2)
    poses = [[7.0, 0.0, 0.0], [8.0, 0.2, 0.1]]
    obs, _ = vector.reset(seed=0, options={'poses': poses})
    np.testing.assert_allclose(obs['pose'], poses, atol=1e-6)


def test_reset_poses_mean_the_same_on_the_separate_path(make_vector: MakeVector) -> None:
    vector = make_vector(2, **PATHS['separate-randomized-opponents'])
    poses = [[7.0, 0.0, 0.0], [8.0, 0.2, 0.1]]
    obs, _ = vector.reset(seed=0, options={'poses': poses})
    np.testing.assert_allclose(obs['pose'], poses, atol=1e-6)


def test_batched_reset_with_too_few_poses_names_the_option(make_vector: MakeVector) -> None:
    vector = make_vector(2)
    with pytest.raises(ValueError, match='poses'):
        vector.reset(seed=0, options={'poses': [[7.0, 0.0, 0.0]]})


def test_vector_rejects_a_bad_env_count() -> None:
    with pytest.raises(ValueError, match='num_envs'):
        RaceVectorEnv(0, track='arsim_ring')


def test_a_packed_env_draws_the_sensor_noise_of_its_single_env(make_vector: MakeVector,
                                                              make_env: MakeEnv,
                                                              repo_root: Any) -> None:
    """With the users' profile (LiDAR noise and effects on), env i of the batched path scans
    what a single env seeded s + i scans, bit for bit: a packed race's sensors draw as their
    race's only car, not as the i-th car of the shared engine."""
    profile = str(repo_root / 'config' / 'cars' / 'f1tenth.yaml')
    n, seed = 3, 7
    vector = make_vector(n, profile=profile)
    assert _batched(vector)
    singles = [make_env(profile=profile) for _ in range(n)]
    obs, _ = vector.reset(seed=seed)
    expected = [env.reset(seed=seed + i)[0] for i, env in enumerate(singles)]
    action = np.tile(np.float32([0.05, 1.5]), (n, 1))
    for step in range(60):
        for i in range(n):
            np.testing.assert_array_equal(obs['scan'][i], expected[i]['scan'],
                                          err_msg=f'env {i}, step {step}')
        obs, *_ = vector.step(action)
        expected = [env.step(action[i])[0] for i, env in enumerate(singles)]
    assert not np.array_equal(obs['scan'][0], obs['scan'][1])  # each its own noise


@pytest.mark.skipif(not NUMBA_ENABLED, reason="the threads are numba's")
def test_threads_step_a_large_vector_exactly_as_one_thread(make_vector: MakeVector) -> None:
    """With ``threads`` > 1, THREADED_ROWS or more races step their dynamics and race metrics
    over numba's threads: the same numbers, bit for bit, through crashes and autoresets."""
    envs = THREADED_ROWS
    serial, threaded = (make_vector(envs, threads=threads, scan=False, max_time=0.6,
                                    randomization=JITTER) for threads in (1, 2))
    engine = threaded.core.sims[0].engine
    assert [fleet.threads for fleet in engine.fleets] == [2]
    assert engine.metrics is not None and engine.metrics.threads == 2
    actions = np.random.default_rng(4).uniform(threaded.action_space.low,
                                               threaded.action_space.high,
                                               (150, *threaded.action_space.shape))
    first, second = serial.reset(seed=1)[0], threaded.reset(seed=1)[0]
    ended = 0
    for action in actions:
        for key in first:
            np.testing.assert_array_equal(second[key], first[key], err_msg=key)
        first, *one = serial.step(action)
        second, *other = threaded.step(action)
        for a, b in zip(one[:3], other[:3], strict=True):
            np.testing.assert_array_equal(b, a)
        ended += int(one[1].sum() + one[2].sum())
    assert ended > envs  # every race's time ran out at least once; some crashed
