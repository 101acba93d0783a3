"""A follow-the-gap driver in its own process laps the default track without touching a wall."""

from __future__ import annotations

from laps import assert_follow_the_gap_laps
from simharness import UNPACED


def test_follow_the_gap_completes_a_lap_without_touching_a_wall(simulation) -> None:
    assert_follow_the_gap_laps(simulation(settings={'simulation': {'real_time_factor': UNPACED}}))
