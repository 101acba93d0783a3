"""Train a racing policy with the cross-entropy method on the native vector environment.

    python -m arsim_gym.examples.cem [--track arsim_ring] [--generations 12] [--seed 0]

The policy is linear: the scan, reduced to 12 sector minima (in metres), and a bias give a
steering angle and a speed. Each generation samples one candidate per environment of a
16-environment vector env, drives every candidate for ``--seconds`` of sim time (its episode
ends at a collision), scores it by the metres it covered along the centerline, and refits the
sampling distribution to the best quarter. It needs no download and no GPU; it prints the
best and mean score per generation and, at the end, a lap of the best policy.
"""

from __future__ import annotations

import argparse
import time

import gymnasium
import numpy as np

import arsim_gym  # noqa: F401  (registers arsim/Race-v0)

SECTORS = 12
FEATURES = SECTORS + 1  # sector minima and a bias


def features(scan: np.ndarray) -> np.ndarray:
    """(n, FEATURES): the minimum range of each of SECTORS equal sectors, and a 1."""
    n = scan.shape[0]
    sectors = scan[:, : scan.shape[1] // SECTORS * SECTORS].reshape(n, SECTORS, -1).min(axis=2)
    return np.concatenate([sectors, np.ones((n, 1), np.float32)], axis=1)


def act(weights: np.ndarray, scan: np.ndarray, low: np.ndarray,
        high: np.ndarray) -> np.ndarray:
    """Actions (n, 2) of n linear policies ``weights`` (n, 2, FEATURES)."""
    raw = np.einsum('nkf,nf->nk', weights, features(scan))
    return np.clip(raw, low, high).astype(np.float32)


def evaluate(envs: gymnasium.vector.VectorEnv, weights: np.ndarray, steps: int,
             seed: int) -> np.ndarray:
    """Metres covered by each candidate (one per environment) before its first collision."""
    obs, _ = envs.reset(seed=seed)
    space = envs.single_action_space
    assert isinstance(space, gymnasium.spaces.Box)
    low, high = space.low, space.high
    start = obs['progress'][:, 0].copy()
    score = np.zeros(envs.num_envs)
    running = np.ones(envs.num_envs, dtype=bool)
    for _ in range(steps):
        obs, _, terminated, truncated, _ = envs.step(act(weights, obs['scan'], low, high))
        score[running] = obs['progress'][running, 0] - start[running]
        running &= ~(terminated | truncated)
        if not running.any():
            break
    return score


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--track', default='arsim_ring')
    parser.add_argument('--generations', type=int, default=12)
    parser.add_argument('--seconds', type=float, default=20.0, help='sim time per episode')
    parser.add_argument('--envs', type=int, default=16)
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args()

    envs = gymnasium.make_vec('arsim_gym:arsim/Race-v0', num_envs=args.envs,
                              vectorization_mode='vector_entry_point', track=args.track,
                              timestep=0.01)
    rng = np.random.default_rng(args.seed)
    mean = np.zeros((2, FEATURES))
    mean[1, -1] = 1.0  # start by creeping forward
    std = np.full((2, FEATURES), 0.5)
    elite = max(2, args.envs // 4)
    steps = round(args.seconds / 0.01)
    started = time.monotonic()
    for generation in range(args.generations):
        candidates = mean + std * rng.standard_normal((args.envs, 2, FEATURES))
        scores = evaluate(envs, candidates, steps, seed=args.seed + generation)
        best = candidates[np.argsort(scores)[-elite:]]
        mean, std = best.mean(axis=0), best.std(axis=0) + 0.02
        print(f'generation {generation:2d}: best {scores.max():6.1f} m, mean '
              f'{scores.mean():6.1f} m ({time.monotonic() - started:.0f} s)', flush=True)
    envs.close()

    env = gymnasium.make('arsim_gym:arsim/Race-v0', track=args.track, timestep=0.01,
                         max_laps=1, max_time=120.0)
    obs, _ = env.reset(seed=args.seed)
    space = env.action_space
    assert isinstance(space, gymnasium.spaces.Box)
    low, high = space.low, space.high
    terminated = truncated = False
    while not (terminated or truncated):
        action = act(mean[None], obs['scan'][None], low, high)[0]
        obs, _, terminated, truncated, info = env.step(action)
    race = info['race']
    outcome = f'lap in {race.lap_times[0]:.2f} s' if race.laps else \
        f'{race.progress:.1f} m before {"a collision" if terminated else "the time limit"}'
    print(f'best policy: {outcome}')
    env.close()
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
