"""The republishers' side of the computed sensors: a frame's values are taken as the engine
made them, and a frame in the wrong layout is refused naming it (the sensor node drops it)."""

from __future__ import annotations

import numpy as np
import pytest

from arsim_bridge.republishers.base import CarFrame
from arsim_core.errors import ProtocolError
from arsim_core.sensors.kinematics import PlanarState


def frame(values: np.ndarray) -> CarFrame:
    return CarFrame(0, 0, PlanarState(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0), {'ego/imu': values}, {})


def test_values_in_the_layout_are_passed_on() -> None:
    values = np.arange(10, dtype=np.float64)
    assert frame(values).computed('ego', 'imu', 'imu') is values
    assert frame(values).computed('ego', 'gnss', 'gnss') is None  # not due


@pytest.mark.parametrize('values', [np.zeros(3), np.zeros(10, np.float32), np.zeros((10, 1))])
def test_a_frame_in_another_layout_is_refused_naming_it(values: np.ndarray) -> None:
    with pytest.raises(ProtocolError, match=r'frame ego/imu: imu values are float64 \(10,\)'):
        frame(values).computed('ego', 'imu', 'imu')
