"""The ground truth of one car at one frame, as the engine hands it to every face."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from typing import NamedTuple

import numpy as np

from arsim_core.backend.timeline import PoseRows
from arsim_core.geometry import Pose2D


class CarState(NamedTuple):
    """Planar state of a car's base_link: world pose, velocities and accelerations in its own
    frame (REP-103), and the front wheel angle. Dynamics models and external dynamics nodes
    both reduce to this; the referee, the renderer and the race metrics read nothing else.
    A named tuple: immutable, and quick to make for every car in every frame."""

    x: float
    y: float
    yaw: float
    vx: float = 0.0
    vy: float = 0.0
    yaw_rate: float = 0.0
    ax: float = 0.0
    ay: float = 0.0
    steering_angle: float = 0.0
    z: float = 0.0

    @property
    def pose(self) -> Pose2D:
        return self.x, self.y, self.yaw

    def render_pose(self) -> list[float]:
        """x, y, z, roll, pitch, yaw as the backend protocol moves a car."""
        return [self.x, self.y, self.z, 0.0, 0.0, self.yaw]

    def problem(self, max_speed: float) -> str | None:
        """Why this state cannot be a real car's (non-finite, or faster than ``max_speed``),
        or None: the engine refuses such a state instead of letting it reach the referee."""
        total = (self.x + self.y + self.z + self.yaw + self.vx + self.vy + self.yaw_rate
                 + self.ax + self.ay + self.steering_angle)
        if not math.isfinite(total):  # a NaN or an infinity anywhere makes the sum one
            return 'non-finite value in the state'
        speed = math.hypot(self.vx, self.vy)
        if speed > max_speed:
            return f'speed {speed:.1f} m/s above {max_speed:g} m/s'
        return None


#: Columns of a ``StateTable``'s rows: ``CarState``'s fields in order.
COLUMNS = CarState._fields
X, Y, YAW, Z = (COLUMNS.index(name) for name in ('x', 'y', 'yaw', 'z'))
AX, AY = COLUMNS.index('ax'), COLUMNS.index('ay')
#: The columns of the planar state (``Vehicle.planar_state``): pose, body velocity, steering.
PLANAR = np.array([COLUMNS.index(name) for name in
                   ('x', 'y', 'yaw', 'vx', 'vy', 'yaw_rate', 'steering_angle')])


class StateTable(MutableMapping[str, CarState]):
    """Car states of one frame as the rows of one array (``COLUMNS``), by car name: what the
    engine's batched path hands the referee, the race metrics and the renderer without making
    a ``CarState`` per car; one is made when a state is looked up."""

    def __init__(self, names: Sequence[str], rows: np.ndarray,
                 index: Mapping[str, int] | None = None) -> None:
        self.names = tuple(names)
        self.rows = rows
        self._index = index if index is not None else {
            name: i for i, name in enumerate(self.names)}

    def __getitem__(self, name: str) -> CarState:
        return CarState._make(self.rows[self._index[name]].tolist())

    def __setitem__(self, name: str, state: CarState) -> None:
        self.rows[self._index[name]] = state

    def __delitem__(self, name: str) -> None:
        msg = 'a StateTable has a row for each of its cars'
        raise TypeError(msg)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def copy(self) -> StateTable:
        return StateTable(self.names, self.rows.copy(), self._index)

    def render_poses(self) -> PoseRows:
        """Every car's x, y, z, roll, pitch, yaw as ``CarState.render_pose`` gives them, as
        rows of one array."""
        poses = np.zeros((len(self.names), 6))
        poses[:, 0] = self.rows[:, X]
        poses[:, 1] = self.rows[:, Y]
        poses[:, 2] = self.rows[:, Z]
        poses[:, 5] = self.rows[:, YAW]
        return PoseRows(self.names, poses, self._index)


def state_rows(states: Mapping[str, CarState]) -> np.ndarray:
    """(cars, len(COLUMNS)) float64: ``states`` as one array, in their order."""
    if isinstance(states, StateTable):
        return states.rows
    return np.array(list(states.values()), np.float64).reshape(len(states), len(COLUMNS))
