"""A follow-the-gap driver in its own process laps the default track without touching a wall."""

from __future__ import annotations

from laps import LAP_SIMULATION, assert_follow_the_gap_laps


def test_follow_the_gap_completes_a_lap_without_touching_a_wall(simulation) -> None:
    assert_follow_the_gap_laps(simulation(settings=LAP_SIMULATION))
