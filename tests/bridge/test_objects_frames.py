"""The objects republisher's side: the engine's rows become boxes with the ids the ROS topic
has always carried (a car's name, a cone's number), and a row no engine makes is refused naming
the frame (the sensor node drops it)."""

from __future__ import annotations

import numpy as np
import pytest

from arsim_bridge.republishers.base import CarFrame
from arsim_bridge.republishers.objects import boxes
from arsim_core import labels
from arsim_core.errors import ProtocolError
from arsim_core.sensors.kinematics import PlanarState

CARS = ('ego', 'opp', 'car3')


def frame(values: np.ndarray) -> CarFrame:
    return CarFrame(0, 0, PlanarState(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
                    {'ego/boxes': values}, {})


def test_rows_become_boxes_named_as_on_the_topic() -> None:
    rows = np.array([[1.0, 2.0, 0.15, 0.0, 0.2, 0.2, 0.3, labels.CONE_BLUE, 7],
                     [4.0, -1.0, 0.1, 0.5, 0.58, 0.31, 0.2, labels.CAR, 2]])
    found = boxes(frame(rows).computed('ego', 'boxes', 'objects'), CARS, 'ego/boxes')
    assert [(b.name, b.id) for b in found] == [('blue_cone', '7'), ('car', 'car3')]
    assert (found[1].x, found[1].yaw, found[1].length, found[1].height) == (4.0, 0.5, 0.58, 0.2)
    assert boxes(frame(np.zeros((0, 9))).computed('ego', 'boxes', 'objects'), CARS,
                 'ego/boxes') == []  # nothing in range


@pytest.mark.parametrize('values', [np.zeros(9), np.zeros((2, 8)), np.zeros((2, 9), np.float32)])
def test_a_frame_in_another_layout_is_refused_naming_it(values: np.ndarray) -> None:
    with pytest.raises(ProtocolError, match=r'frame ego/boxes: objects values are float64 '
                                            r'\(n, 9\)'):
        frame(values).computed('ego', 'boxes', 'objects')


@pytest.mark.parametrize(('label', 'number'), [
    (labels.CAR, 3), (labels.CAR, -1), (labels.CONE_BLUE, 1.5), (labels.CONE_BLUE, np.nan),
    (labels.BARRIER, 0), (np.inf, 0)])
def test_a_row_no_engine_makes_is_refused_naming_the_frame(label: float, number: float) -> None:
    rows = np.array([[1.0, 2.0, 0.1, 0.0, 0.2, 0.2, 0.3, label, number]])
    with pytest.raises(ProtocolError, match='frame ego/boxes: an objects row has label'):
        boxes(rows, CARS, 'ego/boxes')
