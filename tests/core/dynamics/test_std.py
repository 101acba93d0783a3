"""STD model against CommonRoad's vehicle_dynamics_std (arsim_core.dynamics.std)."""

from __future__ import annotations

import pytest

from .commonroad_ref import (
    check_derivatives,
    check_trajectories,
    vm,  # noqa: F401  (skips the module without commonroad)
)


@pytest.mark.parametrize('car', ['f1tenth', 'full_scale'])
def test_derivatives_match_commonroad(car: str) -> None:
    check_derivatives('std', car, n=4000, seed=13)


@pytest.mark.parametrize('car', ['f1tenth', 'full_scale'])
@pytest.mark.parametrize('integrator', ['euler', 'rk4'])
@pytest.mark.parametrize('scenario', ['low_speed', 'full_lock', 'braking', 'drifting', 'reverse'])
def test_trajectories_match_commonroad(car: str, integrator: str, scenario: str) -> None:
    check_trajectories('std', car, integrator, scenario)
