"""Domain randomisation: loading (a mapping or a YAML file) and its errors, seeded draws, and
what a reset does with them: vehicle parameters, LiDAR noise, the track and the car count."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from arsim_core.engine.randomization import KEYS, RANGE_KEYS, Randomization
from arsim_core.errors import ConfigError
from arsim_gym.env import RaceEnv

MakeEnv = Callable[..., RaceEnv]
FULL = {'friction': [0.8, 1.1], 'mass_scale': [0.9, 1.1], 'max_acceleration': [7.0, 9.51],
        'max_steering': [0.35, 0.42], 'max_steering_rate': [2.5, 3.2],
        'max_speed': [8.0, 20.0], 'steering_dead_time': [0.0, 0.03], 'steering_lag': [0.0, 0.05],
        'drive_dead_time': [0.0, 0.03], 'drive_lag': [0.0, 0.1], 'steering_noise_std': [0.0, 0.01],
        'drive_noise_std': [0.0, 0.1],
        'scan_noise_std': [0.0, 0.02], 'scan_dropout': [0.0, 0.01], 'scan_latency': [0.0, 0.05],
        'start': {'along': [0.0, 2.0], 'lateral': [-0.2, 0.2], 'yaw': [-0.1, 0.1]},
        'opponents': [0, 3]}


# --- loading ------------------------------------------------------------------------------
def test_load_from_a_mapping_and_from_yaml_agree(tmp_path: Path) -> None:
    path = tmp_path / 'randomization.yaml'
    path.write_text(yaml.safe_dump(FULL))
    from_mapping = Randomization.load(FULL)
    assert Randomization.load(path) == from_mapping
    assert Randomization.load(str(path)) == from_mapping
    assert dict(from_mapping.ranges) == {key: tuple(FULL[key]) for key in RANGE_KEYS}
    assert dict(from_mapping.start) == {key: tuple(v) for key, v in FULL['start'].items()}
    assert from_mapping.opponents == (0, 3)
    tracks = Randomization.load({'tracks': ['arsim_ring', '/some/track.yaml']})
    assert tracks.tracks == ('arsim_ring', '/some/track.yaml')
    assert Randomization.load({'random_track': {'seeds': [3, 9]}}).random_seeds == (3, 9)


def test_nothing_to_randomise() -> None:
    for source in (None, {}):
        nothing = Randomization.load(source)
        assert not nothing.ranges and not nothing.start and not nothing.tracks
        assert nothing.opponents is None and nothing.random_seeds is None
        draw = nothing.draw(np.random.default_rng(0))
        assert draw.track is None and draw.num_cars is None and not draw.values


def test_unknown_key_names_the_file_and_the_key(tmp_path: Path) -> None:
    path = tmp_path / 'dr.yaml'
    path.write_text('friction: [0.8, 1.1]\nfrictoin: [0.8, 1.1]\n')
    with pytest.raises(ConfigError) as caught:
        Randomization.load(path)
    message = str(caught.value)
    assert str(path) in message and 'frictoin' in message
    assert all(key in message for key in KEYS)  # the valid keys are listed
    nested = tmp_path / 'nested.yaml'
    nested.write_text('start: {along: [0, 1], sideways: [0, 1]}\n')
    with pytest.raises(ConfigError, match='sideways') as caught:
        Randomization.load(nested)
    assert str(nested) in str(caught.value)
    with pytest.raises(ConfigError, match=r'randomization.*mass_scal\b'):
        Randomization.load({'mass_scal': [0.9, 1.1]})


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match='nothing.yaml'):
        Randomization.load(tmp_path / 'nothing.yaml')


@pytest.mark.parametrize(('source', 'key'), [
    ({'friction': [1.1, 0.8]}, 'friction'),
    ({'friction': [1.0]}, 'friction'),
    ({'friction': 1.0}, 'friction'),
    ({'mass_scale': [0.9, float('nan')]}, 'mass_scale'),
    ({'max_speed': ['8', 20]}, 'max_speed'),
    ({'scan_dropout': [True, 0.1]}, 'scan_dropout'),
    ({'start': {'yaw': [0.1, -0.1]}}, 'yaw'),
    ({'start': [0.0, 1.0]}, 'start'),
    ({'opponents': [0.5, 2]}, 'opponents'),
    ({'opponents': [-1, 2]}, 'opponents'),
    ({'opponents': [3, 1]}, 'opponents'),
    ({'tracks': []}, 'tracks'),
    ({'tracks': 'arsim_ring'}, 'tracks'),
    ({'random_track': {'seeds': [9, 3]}}, 'seeds'),
    ({'random_track': {'seeds': [0, 9]}, 'tracks': ['arsim_ring']}, 'random_track'),
], ids=lambda v: v if isinstance(v, str) else None)
def test_bad_range_names_the_key(source: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=rf'\b{key}\b'):
        Randomization.load(source)


@pytest.mark.parametrize('source', [
    {'friction': [-1.0, -0.5]}, {'mass_scale': [-1.0, 0.0]}, {'max_speed': [-5.0, -1.0]},
    {'max_steering': [-0.4, -0.1]}, {'scan_noise_std': [-0.5, -0.1]},
    {'scan_dropout': [1.5, 2.0]}], ids=lambda v: next(iter(v)))
def test_impossible_values_are_refused(source: dict[str, Any]) -> None:
    try:
        Randomization.load(source)
    except ConfigError as exc:
        assert next(iter(source)) in str(exc)
    else:
        raise AssertionError(f'{source} loaded')


# --- draws --------------------------------------------------------------------------------
def test_draws_are_deterministic_per_seed_and_within_their_ranges() -> None:
    randomization = Randomization.load({**FULL, 'tracks': ['a', 'b', 'c']})
    first = randomization.draw(np.random.default_rng(4))
    assert randomization.draw(np.random.default_rng(4)) == first
    assert randomization.draw(np.random.default_rng(5)) != first
    rng = np.random.default_rng(0)
    opponents, tracks = set(), set()
    for _ in range(300):
        draw = randomization.draw(rng)
        for key in RANGE_KEYS:
            low, high = FULL[key]
            assert low <= draw.values[key] <= high, key
        for key, (low, high) in FULL['start'].items():
            assert low <= draw.start[key] <= high, key
        opponents.add(draw.opponents)
        tracks.add(draw.track)
        assert draw.num_cars == draw.opponents + 1
    assert opponents == {0, 1, 2, 3}  # whole numbers, both ends included
    assert tracks == {'a', 'b', 'c'}


def test_start_jitter_moves_the_grid_along_and_across(make_env: MakeEnv) -> None:
    env = make_env(randomization={'start': {'along': [1.0, 1.0], 'lateral': [0.2, 0.2],
                                            'yaw': [0.05, 0.05]}})
    obs, _ = env.reset(seed=0)
    x, y, yaw = env.engine.start_poses['ego']
    c, s = np.cos(yaw), np.sin(yaw)
    np.testing.assert_allclose(obs['pose'], (x + c - 0.2 * s, y + s + 0.2 * c, yaw + 0.05),
                               atol=1e-5)
    assert obs['progress'][0] == pytest.approx(1.0, abs=0.05)


# --- what a reset applies -----------------------------------------------------------------
def test_friction_and_mass_reach_every_vehicle(make_env: MakeEnv) -> None:
    ranges = {'friction': [0.5, 0.7], 'mass_scale': [1.5, 2.0]}
    env = make_env(num_cars=2, opponents='none', randomization=ranges)
    base = {name: env.base_configs[name].params for name in env.names}
    drawn = []
    for seed in (0, 0, 1):
        env.reset(seed=seed)
        values = []
        for name in env.names:
            params = env.engine.configs[name].params
            friction, scale = params.tyre.friction, params.body.mass / base[name].body.mass
            assert 0.5 <= friction <= 0.7
            assert 1.5 <= scale <= 2.0
            assert params.body.yaw_inertia / base[name].body.yaw_inertia == pytest.approx(scale)
            values.append((friction, scale))
        assert values[0] == values[1]  # every car gets the episode's values
        drawn.append(values[0])
    assert drawn[0] == drawn[1] != drawn[2]
    assert base['ego'].tyre.friction == pytest.approx(1.0489)  # the profile's, untouched


def _drive(env: RaceEnv, action: tuple[float, float], steps: int) -> dict[str, np.ndarray]:
    env.reset(seed=0)
    for _ in range(steps):
        obs, *_ = env.step(np.array(action, np.float32))
    return obs


def test_drawn_vehicle_limits_change_the_driving(make_env: MakeEnv) -> None:
    slow = _drive(make_env(randomization={'max_speed': [2.0, 2.0]}), (0.0, 10.0), 150)
    fast = _drive(make_env(), (0.0, 10.0), 150)
    assert slow['velocity'][0] == pytest.approx(2.0, abs=0.05)
    assert fast['velocity'][0] > 5.0
    turn = (0.4, 5.0)
    slippery = _drive(make_env(randomization={'friction': [0.3, 0.3]}), turn, 80)
    grippy = _drive(make_env(randomization={'friction': [1.0, 1.0]}), turn, 80)
    assert np.abs(slippery['pose'] - grippy['pose']).max() > 0.05


def test_drawn_actuator_dead_times_and_lags_reach_the_cars(make_env: MakeEnv) -> None:
    ranges = {'steering_dead_time': [0.02, 0.04], 'drive_dead_time': [0.05, 0.05],
              'drive_lag': [0.1, 0.2]}
    env = make_env(num_cars=2, opponents='none', randomization=ranges)
    env.reset(seed=3)
    for name in env.names:
        actuators = env.engine.configs[name].actuators
        assert 0.02 <= actuators.steering_dead_time <= 0.04
        assert actuators.drive_dead_time == 0.05
        assert 0.1 <= actuators.drive_lag <= 0.2
        assert actuators.steering_lag == 0.0  # not drawn: the profile's
    standing = _drive(make_env(randomization={'drive_dead_time': [0.05, 0.05]}), (0.0, 2.0), 5)
    rolling = _drive(make_env(), (0.0, 2.0), 5)
    assert standing['velocity'][0] == 0.0 < rolling['velocity'][0]


@pytest.mark.parametrize('ranges', [{'scan_noise_std': [0.05, 0.1]},
                                    {'scan_dropout': [0.2, 0.3]}], ids=lambda v: next(iter(v)))
def test_scan_noise_is_applied(make_env: MakeEnv, ranges: dict[str, list[float]]) -> None:
    clean, _ = make_env().reset(seed=0)
    noisy, _ = make_env(randomization=ranges).reset(seed=0)
    differs = np.abs(noisy['scan'] - clean['scan']) > 1e-3
    assert differs.mean() > 0.1, f'{differs.sum()} of {differs.size} beams differ'


def test_scan_noise_reaches_the_vector_batch(make_vector: Callable[..., Any]) -> None:
    """The batched vector environment applies the drawn LiDAR noise (its reset does not
    reseed the renderer)."""
    clean, _ = make_vector(2).reset(seed=0)
    noisy, _ = make_vector(2, randomization={'scan_noise_std': [0.05, 0.1]}).reset(seed=0)
    differs = np.abs(noisy['scan'] - clean['scan']) > 1e-3
    assert differs.mean() > 0.5


def test_tracks_list_switches_the_track(make_env: MakeEnv, spielberg: Path) -> None:
    env = make_env(randomization={'tracks': ['arsim_ring', str(spielberg)]})
    seen = {}
    for seed in range(8):
        obs, _ = env.reset(seed=seed)
        name = env.setup.track.name
        assert env.engine.world.name == name
        start = env.engine.start_poses['ego']
        np.testing.assert_allclose(obs['pose'], start, atol=1e-5)
        assert env.observation_space.contains(obs)
        seen.setdefault(name, []).append(seed)
        for _ in range(30):
            obs, _, terminated, _, _ = env.step([0.0, 2.0])
        assert not terminated and obs['progress'][0] > 0.1, name
    assert set(seen) == {'arsim_ring', 'Spielberg'}
    seed = seen['Spielberg'][0]
    env.reset(seed=seed)
    assert env.setup.track.name == 'Spielberg'


def test_same_named_track_drawn_again_keeps_the_engine(make_env: MakeEnv) -> None:
    env = make_env(randomization={'tracks': ['arsim_ring']})
    env.reset(seed=0)
    engine = env.engine
    env.reset(seed=1)
    assert env.engine is engine


def test_same_track_by_path_drawn_again_keeps_the_engine(make_env: MakeEnv,
                                                        spielberg: Path) -> None:
    env = make_env(track=str(spielberg), randomization={'tracks': [str(spielberg)]})
    env.reset(seed=0)
    engine = env.engine
    env.reset(seed=1)
    assert env.setup.track.name == 'Spielberg'
    assert env.engine is engine


def test_random_track_is_named_by_its_seed(make_env: MakeEnv) -> None:
    env = make_env(randomization={'random_track': {'seeds': [0, 1000]}})
    names = []
    for seed in (0, 1, 2, 0):
        obs, _ = env.reset(seed=seed)
        name = env.setup.track.name
        match = re.fullmatch(r'random_(\d+)', name)
        assert match and 0 <= int(match.group(1)) <= 1000, name
        assert env.engine.world.name == name
        np.testing.assert_allclose(obs['pose'], env.engine.start_poses['ego'], atol=1e-5)
        names.append(name)
        for _ in range(30):
            obs, *_ = env.step([0.0, 2.0])
        assert obs['progress'][0] > 0.1, name
    assert names[3] == names[0]
    assert len(set(names)) >= 2
    fixed = make_env(randomization={'random_track': {'seeds': [7, 7]}})
    fixed.reset(seed=3)
    assert fixed.setup.track.name == 'random_7'


def test_opponents_range_changes_the_number_of_cars(make_env: MakeEnv) -> None:
    env = make_env(randomization={'opponents': [0, 2]})
    space = env.observation_space
    # reset(seed=s) draws from a generator seeded s: a seed for every count, found up front
    seeds: dict[int, int] = {}
    for seed in range(100):
        seeds.setdefault(env.randomization.draw(np.random.default_rng(seed)).opponents, seed)
    assert set(seeds) == {0, 1, 2}
    for opponents, seed in [*sorted(seeds.items()), (0, seeds[0]), (2, seeds[2])]:
        obs, _ = env.reset(seed=seed)
        assert env.names == ('ego', *(f'opp{i}' for i in range(1, opponents + 1)))
        assert set(env.engine.states) == set(env.names)
        assert sorted(env._policies) == list(env.names[1:])
        assert env.observation_space == space and space.contains(obs)
        np.testing.assert_allclose(obs['pose'], env.engine.start_poses['ego'], atol=1e-5)


def test_control_all_with_an_opponents_range_keeps_fixed_spaces(make_env: MakeEnv) -> None:
    try:
        env = make_env(control='all', randomization={'opponents': [0, 2]})
    except (ConfigError, ValueError):
        return  # refusing the combination is as good
    action_space, observation_space = env.action_space, env.observation_space
    for seed in range(4):
        obs, _ = env.reset(seed=seed)
        assert env.action_space == action_space
        assert observation_space.contains(obs)
