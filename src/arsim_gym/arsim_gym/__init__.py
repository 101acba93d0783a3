"""Gymnasium environments on the arsim engine. Importing this module registers them, so both
``import arsim_gym; gymnasium.make("arsim/Race-v0")`` and Gymnasium's own
``gymnasium.make("arsim_gym:arsim/Race-v0")`` work (Gymnasium 1.x loads no plugins itself).

See docs/gym.md for the keywords, observations, rewards and domain randomisation, the vector
environment (``make_vec``), the same on Ray actors (``arsim_gym.ray_vector.RayRaceVectorEnv``,
which ``gymnasium.make_vec("arsim/RaceOnRay-v0", num_envs)`` makes, so moving training onto a
Ray cluster changes the id only) and the PettingZoo one (``arsim_gym.parallel.parallel_env``).
"""

from gymnasium.envs.registration import register, registry

RACE_ID = 'arsim/Race-v0'
RAY_RACE_ID = 'arsim/RaceOnRay-v0'  # the same races; make_vec runs them on Ray actors

if RACE_ID not in registry:
    register(id=RACE_ID, entry_point='arsim_gym.env:RaceEnv',
             vector_entry_point='arsim_gym.vector:RaceVectorEnv')
if RAY_RACE_ID not in registry:
    register(id=RAY_RACE_ID, entry_point='arsim_gym.env:RaceEnv',
             vector_entry_point='arsim_gym.ray_vector:RayRaceVectorEnv')

__all__ = ['RACE_ID', 'RAY_RACE_ID']
