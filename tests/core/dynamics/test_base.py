"""Defaults of the VehicleModel interface (arsim_core.dynamics.base)."""

from __future__ import annotations

import math

import pytest

from arsim_core.dynamics import F1TENTH, SingleTrack, VehicleModel


class PlainST(SingleTrack):
    """ST without its analytic read-outs, so the generic defaults are used."""

    body_velocity = classmethod(VehicleModel.body_velocity.__func__)  # type: ignore[attr-defined]
    body_acceleration = classmethod(  # type: ignore[assignment]
        VehicleModel.body_acceleration.__func__)  # type: ignore[attr-defined]


@pytest.mark.parametrize('state', [
    [1.0, 2.0, 0.2, 4.0, 0.7, 1.5, 0.1],
    [0.0, 0.0, -0.3, 8.0, -2.5, -2.0, -0.2],
])
def test_generic_read_outs_match_the_analytic_ones(state: list[float]) -> None:
    u = (0.5, 1.0)
    assert PlainST.body_velocity(state, F1TENTH) == pytest.approx(
        SingleTrack.body_velocity(state, F1TENTH), rel=1e-12)
    assert PlainST.body_acceleration(state, u, F1TENTH) == pytest.approx(
        SingleTrack.body_acceleration(state, u, F1TENTH), rel=1e-7, abs=1e-7)


def test_default_layout_and_pose() -> None:
    x = SingleTrack.initial_state(1.0, 2.0, 3.0, 4.0, F1TENTH)
    assert x == [1.0, 2.0, 0.0, 4.0, 3.0, 0.0, 0.0]
    assert SingleTrack.pose(x) == (1.0, 2.0, 3.0)
    assert SingleTrack.speed(x) == 4.0
    assert SingleTrack.steering_angle(x) == 0.0
    assert SingleTrack.describe()['reference_point'] == 'centre of gravity'
    assert math.isclose(sum(SingleTrack.derivative(x, (0.0, 0.0), F1TENTH)[:2]), 4.0 *
                        (math.cos(3.0) + math.sin(3.0)))
