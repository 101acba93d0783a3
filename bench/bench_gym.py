"""Stepping speed of the Gymnasium environment, beside f1tenth_gym's on the same machine.

The set-up is f1tenth_gym v1.0's default: the F1TENTH car with the single-track model, RK4,
timestep 0.01 s, a 1080-beam scan every step, a fixed action (straight at 1 m/s, reset when an
episode ends; resets are not timed). Figures:

* ``gym_steps_per_s_1car``: ``gymnasium.make("arsim_gym:arsim/Race-v0")``, one car;
* ``gym_steps_per_s_8cars``: eight cars, every car scanning every step (``control="all"``);
* ``gym_vector_16_env_steps_per_s``: ``make_vec`` with 16 environments of one car;
* ``gym_steps_per_s_20cars`` and ``gym_vector_256_env_steps_per_s``: a field of twenty cars,
  and 256 environments, at scale (``threads=2`` only);
* ``gym_vector_256_noscan_env_steps_per_s``: the 256 environments with ``scan=False`` (the
  car's state observed, no LiDAR rendered);
* ``gym_ray_vector_env_steps_per_s``: the same 16 environments in two Ray actors of one thread
  each (``arsim_gym.ray_vector``, a local Ray of two CPUs), printed beside the in-process
  figure;
* ``gym_steps_per_s_1car_actuators``: one car whose profile adds ``ACTUATORS`` (dead times,
  lags and command noise, docs/dynamics.md), what a sim-to-real set-up costs beside the ideal
  car of ``gym_steps_per_s_1car``.

Each is measured with ``threads=2`` (the scans spread over two cores, where the machine has
them; the rest of a step runs in one thread) and again with ``threads=1`` (``_1thread``).

When ``ARSIM_F1TENTH_GYM_PYTHON`` names a Python with f1tenth_gym v1.0 installed (see
``bench/f1tenth_gym_baseline.py``), its figures for 1, 8 and 20 cars and 256 environments (in
Gymnasium's ``SyncVectorEnv``) are measured right after ours and printed as
``f1tenth_gym_steps_per_s_*`` and ``f1tenth_gym_vector_256_env_steps_per_s``, with the ratios
``gym_speedup_vs_f1tenth_gym_*``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from benchkit import F1TENTH_GYM_ENV, Row, main, sized, skip_reason, smoke, take_smoke_flag

SECONDS = 3.0
WARMUP_STEPS = 200
_RATES = (('gym_steps_per_s_1car', 'steps_per_s'), ('gym_steps_per_s_8cars', 'steps_per_s'),
          ('gym_vector_16_env_steps_per_s', 'env_steps_per_s'))
# (ours, f1tenth_gym's, what the ratio is named after, unit) of the rows beside f1tenth_gym
BESIDE = (*((f'gym_steps_per_s_{cars}', f'f1tenth_gym_steps_per_s_{cars}', cars, 'steps_per_s')
            for cars in ('1car', '8cars', '20cars')),
          ('gym_vector_256_env_steps_per_s', 'f1tenth_gym_vector_256_env_steps_per_s',
           'vector_256', 'env_steps_per_s'))
ROWS = (*(Row(f'{name}{suffix}', unit) for suffix in ('', '_1thread') for name, unit in _RATES),
        Row('gym_steps_per_s_20cars', 'steps_per_s'),
        Row('gym_vector_256_env_steps_per_s', 'env_steps_per_s'),
        Row('gym_vector_256_noscan_env_steps_per_s', 'env_steps_per_s'),
        Row('gym_steps_per_s_1car_actuators', 'steps_per_s'),
        Row('gym_ray_vector_env_steps_per_s', 'env_steps_per_s'),
        *(row for _, theirs, ratio, unit in BESIDE
          for row in (Row(theirs, unit, ('f1tenth_gym',)),
                      Row(f'gym_speedup_vs_f1tenth_gym_{ratio}', 'x', ('f1tenth_gym',)))))
SPIELBERG = Path(__file__).resolve().parents[2] / 'shared/tracks/f1tenth_racetracks/Spielberg'
#: A real car's actuators, roughly: a servo and a VESC a frame or two late, lagging, inexact.
ACTUATORS = {'steering': {'dead_time': 0.02, 'lag': 0.05, 'noise_std': 0.005},
             'drive': {'dead_time': 0.03, 'lag': 0.1, 'noise_std': 0.05}}


def track() -> str:
    """Spielberg from the shared F1TENTH maps, as f1tenth_gym's default, else (and in a smoke
    run, where loading Spielberg would take most of the time) our ring."""
    yaml = SPIELBERG / 'Spielberg_map.yaml'
    return str(yaml) if yaml.is_file() and not smoke() else 'arsim_ring'


def steps_per_second(step: Any, reset: Any, seconds: float | None = None) -> float:
    """Steps per wall second over about ``seconds`` (default ``SECONDS``, less in a smoke
    run); ``step`` returns True when the episode ends, and the reset that follows is not
    timed."""
    seconds = seconds if seconds is not None else sized(SECONDS, 0.1)
    for _ in range(sized(WARMUP_STEPS, 5)):  # warm-up: caches, first-call costs
        if step():
            reset()
    steps, elapsed = 0, 0.0
    while elapsed < seconds:
        started = time.perf_counter()
        done = False
        for _ in range(500):
            steps += 1
            if step():
                done = True
                break
        elapsed += time.perf_counter() - started
        if done:
            reset()
    return steps / elapsed


def single(num_cars: int, threads: int, profile: str | None = None) -> float:
    import gymnasium

    env = gymnasium.make('arsim_gym:arsim/Race-v0', track=track(), num_cars=num_cars,
                         timestep=0.01, control='ego' if num_cars == 1 else 'all',
                         threads=threads, **({'profile': profile} if profile else {}))
    env.reset(seed=0)
    action = np.tile(np.array([0.0, 1.0], np.float32), (num_cars, 1)).reshape(
        env.action_space.shape)

    def step() -> bool:
        _, _, terminated, truncated, _ = env.step(action)
        return bool(terminated or truncated)

    rate = steps_per_second(step, lambda: env.reset())
    env.close()
    return rate


def vector(num_envs: int, threads: int, scan: bool = True) -> float:
    import gymnasium

    envs = gymnasium.make_vec('arsim_gym:arsim/Race-v0', num_envs=num_envs,
                              vectorization_mode='vector_entry_point', track=track(),
                              timestep=0.01, threads=threads, scan=scan)
    envs.reset(seed=0)
    actions = np.tile(np.array([0.0, 1.0], np.float32), (num_envs, 1))
    rate = steps_per_second(lambda: bool(envs.step(actions)[2].all()), lambda: None)
    envs.close()
    return rate * num_envs


def ray_vector(num_envs: int, actors: int) -> float:
    """``vector(num_envs, 1)`` with the environments shared by ``actors`` Ray actors of one
    thread each, on a local Ray of ``actors`` CPUs started (and stopped) here; starting Ray
    and the actors is not timed."""
    import logging

    import ray

    from arsim_gym.ray_vector import RayRaceVectorEnv

    os.environ.setdefault('RAY_USAGE_STATS_ENABLED', '0')
    ray.init(address='local', num_cpus=actors, include_dashboard=False,
             logging_level=logging.WARNING, log_to_driver=False)
    try:
        envs = RayRaceVectorEnv(num_envs, num_actors=actors, track=track(), timestep=0.01,
                                threads=1)
        envs.reset(seed=0)
        actions = np.tile(np.array([0.0, 1.0], np.float32), (num_envs, 1))
        rate = steps_per_second(lambda: bool(envs.step(actions)[2].all()), lambda: None)
        envs.close()
    finally:
        ray.shutdown()
    return rate * num_envs


def actuated(threads: int) -> float:
    """``single(1, threads)`` with the F1TENTH profile plus ``ACTUATORS``."""
    from arsim_gym.setup import resources_dir

    data = yaml.safe_load((resources_dir() / 'config' / 'cars' / 'f1tenth.yaml').read_text())
    data['Actuators'] = ACTUATORS
    with tempfile.TemporaryDirectory(prefix='arsim-bench-gym-') as folder:
        profile = Path(folder) / 'f1tenth_actuated.yaml'
        profile.write_text(yaml.safe_dump(data))
        return single(1, threads, str(profile))


def f1tenth_gym(python: str) -> dict[str, float]:
    """f1tenth_gym's figures from its own interpreter (it needs Gymnasium 0.29)."""
    script = Path(__file__).resolve().parent / 'f1tenth_gym_baseline.py'
    smoke = sized([], ['--steps', '20', '--warmup', '2'])
    out = subprocess.run([python, str(script), '--cars', '1', '8', '20', '--vector', '256',
                          *smoke], capture_output=True, text=True, check=True).stdout
    return {line.split()[1]: float(line.split()[2]) for line in out.splitlines()
            if line.startswith('BENCH ')}


def run() -> list[tuple[str, float, str]]:
    threads = min(2, os.cpu_count() or 1)
    figures = []
    for count, suffix in ((threads, ''), (1, '_1thread')):
        figures += [(f'gym_steps_per_s_1car{suffix}', single(1, count), 'steps_per_s'),
                    (f'gym_steps_per_s_8cars{suffix}', single(8, count), 'steps_per_s'),
                    (f'gym_vector_16_env_steps_per_s{suffix}', vector(16, count),
                     'env_steps_per_s')]
        if not suffix:  # beside the in-process figure: its 16 envs over two 1-thread actors
            figures.append(('gym_ray_vector_env_steps_per_s', ray_vector(16, 2),
                            'env_steps_per_s'))
    figures += [('gym_steps_per_s_20cars', single(sized(20, 3), threads), 'steps_per_s'),
                ('gym_vector_256_env_steps_per_s', vector(sized(256, 4), threads),
                 'env_steps_per_s'),
                ('gym_vector_256_noscan_env_steps_per_s',
                 vector(sized(256, 4), threads, scan=False), 'env_steps_per_s'),
                ('gym_steps_per_s_1car_actuators', actuated(threads), 'steps_per_s')]
    if not skip_reason('bench_gym', 'f1tenth_gym'):
        theirs = f1tenth_gym(os.environ[F1TENTH_GYM_ENV])
        ours = {name: value for name, value, _ in figures}
        for mine, name, ratio, unit in BESIDE:
            if name in theirs:
                figures += [(name, theirs[name], unit),
                            (f'gym_speedup_vs_f1tenth_gym_{ratio}', ours[mine] / theirs[name],
                             'x')]
    return figures


if __name__ == '__main__':
    take_smoke_flag()
    sys.exit(main(run, ROWS))
