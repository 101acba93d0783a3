"""Baseline: how many ``env.step()`` calls per second f1tenth_gym v1.0 makes on this machine.

Measures the upstream Gymnasium environment ``gymnasium.make('f1tenth_gym:f1tenth-v0')``
(f1tenth_gym, branch ``v1.0.0``) so that arsim's own benchmark can print both figures side by
side. Each configuration is the Spielberg map, the single-track (``st``) model, the RK4
integrator, a 0.01 s timestep and the default observation (``original``: a 1080-beam scan for
every agent on every step), with 1, 2, 4 and 8 agents all given the same fixed action
``[steer 0.0 rad, speed 1.0 m/s]``. Each configuration is warmed up first (numba compiles on
the first calls), then a fixed number of steps is timed (about 3 s each on a 2-core machine).
When an episode ends the environment is reset, and the reset is left out of the timing.
Prints one line per configuration::

    BENCH f1tenth_gym_steps_per_s_1car <value> steps_per_s
    BENCH f1tenth_gym_steps_per_s_2cars <value> steps_per_s

and with ``--vector 256``, 256 one-car environments stepped together in Gymnasium's
``SyncVectorEnv``::

    BENCH f1tenth_gym_vector_256_env_steps_per_s <value> env_steps_per_s

The map is read from ``--map`` (a ROS map yaml next to its image, with the optional
``<track>_centerline.csv`` / ``<track>_raceline.csv`` beside it), never downloaded: f1tenth_gym
fetches a map given by name from the internet, so this script builds an ``f1tenth_gym``
``Track`` from the local files and passes it through the env's ``map`` config key.

This script imports nothing from arsim and must run under the f1tenth_gym venv's python.
f1tenth_gym v1.0 is not on PyPI; install it from a checkout of its ``v1.0.0`` branch
(this baseline was set up from commit 5a301bd0ae1ceaf7dec653e7549c8d099db58a6b), its
dependencies come from PyPI::

    python3 -m venv /tmp/f1tenth_gym_venv
    /tmp/f1tenth_gym_venv/bin/python -m pip install /tmp/f1tenth_gym_src   # the v1.0.0 checkout
    # where GitHub is reachable, the same without a checkout:
    # /tmp/f1tenth_gym_venv/bin/python -m pip install \
    #     'f1tenth_gym @ git+https://github.com/f1tenth/f1tenth_gym.git@v1.0.0'
    /tmp/f1tenth_gym_venv/bin/python bench/f1tenth_gym_baseline.py --cars 1 2 4 8

arsim's ``make bench`` runs this script when the environment variable
``ARSIM_F1TENTH_GYM_PYTHON`` points at that interpreter (e.g.
``ARSIM_F1TENTH_GYM_PYTHON=/tmp/f1tenth_gym_venv/bin/python make bench``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
from f1tenth_gym.envs.track import Raceline, Track
from PIL import Image

DEFAULT_MAP = (
    Path(__file__).resolve().parents[2]
    / 'shared/tracks/f1tenth_racetracks/Spielberg/Spielberg_map.yaml'
)
# Timed steps per agent count, chosen for about 3 s each on a 2-core machine.
DEFAULT_STEPS = {1: 12000, 2: 3000, 4: 700, 8: 170, 20: 30}
STEER = 0.0  # rad, first column of f1tenth_gym's action
SPEED = 1.0  # m/s, second column of f1tenth_gym's action


def load_track(map_yaml: Path) -> Track:
    """Build an f1tenth_gym Track from a local map yaml, as ``Track.from_track_name`` would."""
    map_yaml = map_yaml.resolve()
    name = map_yaml.stem.removesuffix('_map')
    spec = Track.load_spec(track=name, filespec=str(map_yaml))
    image_path = map_yaml.parent / spec.image
    image = Image.open(image_path).transpose(Image.Transpose.FLIP_TOP_BOTTOM)
    occupancy = np.array(image).astype(np.float32)
    occupancy[occupancy <= 128] = 0.0
    occupancy[occupancy > 128] = 255.0

    centerline_csv = map_yaml.parent / f'{name}_centerline.csv'
    raceline_csv = map_yaml.parent / f'{name}_raceline.csv'
    centerline = (
        Raceline.from_centerline_file(centerline_csv) if centerline_csv.exists() else None
    )
    raceline = Raceline.from_raceline_file(raceline_csv) if raceline_csv.exists() else centerline
    if raceline is None:
        raise SystemExit(
            f'{map_yaml.parent} has neither {centerline_csv.name} nor {raceline_csv.name}: '
            "f1tenth_gym's reset needs one to place the cars"
        )
    return Track(
        spec=spec,
        occupancy_map=occupancy,
        filepath=str(image_path.with_suffix('')),
        ext=image_path.suffix,
        centerline=centerline,
        raceline=raceline,
    )


def make_env(track: Track, cars: int) -> gym.Env:
    return gym.make(
        'f1tenth_gym:f1tenth-v0',
        config={
            'map': track,
            'num_agents': cars,
            'model': 'st',
            'integrator': 'rk4',
            'timestep': 0.01,
            'observation_config': {'type': 'original'},
        },
    )


def vector_steps_per_second(track: Track, envs: int, steps: int, seed: int) -> float:
    """Env-steps per second of ``envs`` one-car environments in a Gymnasium
    ``SyncVectorEnv`` (f1tenth_gym has no vector env of its own), ``steps`` vector steps
    timed after a tenth as many untimed; the vector env resets an env when it ends."""
    vector = gym.vector.SyncVectorEnv([lambda: make_env(track, 1) for _ in range(envs)])
    try:
        action = np.tile(np.array([[STEER, SPEED]]), (envs, 1, 1))
        vector.reset(seed=seed)
        for _ in range(max(2, steps // 10)):
            vector.step(action)
        start = time.perf_counter()
        for _ in range(steps):
            vector.step(action)
        return envs * steps / (time.perf_counter() - start)
    finally:
        vector.close()


def steps_per_second(track: Track, cars: int, steps: int, warmup: int, seed: int) -> float:
    """Time ``steps`` env steps with ``cars`` agents, leaving resets out."""
    env = make_env(track, cars)
    try:
        action = np.tile(np.array([STEER, SPEED]), (cars, 1))
        env.reset(seed=seed)
        for _ in range(warmup):
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                env.reset()
        env.reset()

        done = 0
        elapsed = 0.0
        while done < steps:
            start = time.perf_counter()
            while done < steps:
                _, _, terminated, truncated, _ = env.step(action)
                done += 1
                if terminated or truncated:
                    break
            elapsed += time.perf_counter() - start
            if done < steps:
                env.reset()
        return steps / elapsed
    finally:
        env.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--map', type=Path, default=DEFAULT_MAP, help='map yaml')
    parser.add_argument('--cars', type=int, nargs='+', default=[1, 2, 4, 8])
    parser.add_argument(
        '--steps', type=int, default=None, help='timed steps per configuration (default: ~3 s)'
    )
    parser.add_argument('--warmup', type=int, default=None, help='untimed steps first')
    parser.add_argument('--seed', type=int, default=12345)
    parser.add_argument('--vector', type=int, nargs='*', default=[],
                        help='also one-car environments this many at a time (SyncVectorEnv)')
    args = parser.parse_args(argv)

    if not args.map.is_file():
        parser.error(f'map yaml not found: {args.map}')
    track = load_track(args.map)
    for cars in args.cars:
        steps = args.steps or DEFAULT_STEPS.get(cars, max(100, 12000 // (cars * cars)))
        warmup = args.warmup if args.warmup is not None else max(50, steps // 10)
        rate = steps_per_second(track, cars, steps, warmup, args.seed)
        suffix = 's' if cars > 1 else ''
        print(f'BENCH f1tenth_gym_steps_per_s_{cars}car{suffix} {rate:.4g} steps_per_s', flush=True)
    for envs in args.vector:
        steps = args.steps or max(20, 12000 // envs)
        rate = vector_steps_per_second(track, envs, steps, args.seed)
        print(f'BENCH f1tenth_gym_vector_{envs}_env_steps_per_s {rate:.4g} env_steps_per_s',
              flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
