"""Car states as records and as rows of one array (arsim_core.engine.state)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arsim_core.engine.state import COLUMNS, CarState, StateTable, state_rows

STATES = {'ego': CarState(1.0, 2.0, 0.5, vx=3.0, yaw_rate=0.1, steering_angle=0.2, z=0.05),
          'opp': CarState(-4.0, 0.5, -3.0, vy=0.3, ax=1.0)}


def table() -> StateTable:
    return StateTable(list(STATES), state_rows(STATES).copy())


def test_a_table_reads_and_writes_the_records_it_was_made_from() -> None:
    states = table()
    assert dict(states) == STATES and list(states) == ['ego', 'opp']
    assert state_rows(states) is states.rows and states.rows.shape == (2, len(COLUMNS))
    moved = CarState(7.0, 8.0, 1.0)
    states['opp'] = moved
    assert states['opp'] == moved and states['ego'] == STATES['ego']
    with pytest.raises(KeyError):
        states['nobody']
    with pytest.raises(TypeError, match='row for each'):
        del states['ego']


def test_a_copy_is_independent() -> None:
    states = table()
    kept = states.copy()
    states['ego'] = CarState(0.0, 0.0, math.pi)
    assert kept['ego'] == STATES['ego']


def test_render_poses_are_the_records_render_poses() -> None:
    poses = table().render_poses()
    assert list(poses) == ['ego', 'opp']
    for name, pose in poses.items():
        np.testing.assert_array_equal(pose, STATES[name].render_pose())
