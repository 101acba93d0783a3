"""The calibration target of InitialSettings: a checkerboard the backend places in the scene
and moves through a list of poses, one after the other, ``frames_per_pose`` frames each.

Board frame: origin at the board's centre, the board in its y-z plane, its printed side
facing -x, so a board at pose ``[d, 0, h, 0, 0, 0]`` in a car's base_link stands upright ``d``
metres ahead of the car, facing it; its columns run along -y (left to right as the car sees
them) and its rows along -z (top to bottom), the top-left square black. Poses are in the
base_link of ``car`` when one is named, else in the world frame.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from arsim_core.errors import ProtocolError
from arsim_core.protocol import wire

CHECKERBOARD = 'checkerboard'
KINDS = (CHECKERBOARD,)
MAX_SQUARES = 64  # a side
MIN_SQUARES = 2
MAX_SQUARE_M = 10.0
MAX_POSES = 4096
MAX_FRAMES_PER_POSE = 1_000_000


@dataclass(frozen=True)
class CalibrationTarget:
    """A checkerboard of ``squares`` (columns, rows) squares of ``square_size`` metres in a
    white ``margin`` [m], at ``poses`` (x, y, z, roll, pitch, yaw) in turn."""

    squares: tuple[int, int]
    square_size: float
    margin: float
    poses: tuple[tuple[float, ...], ...]  # x, y, z, roll, pitch, yaw [m, rad]
    frames_per_pose: int = 1
    car: str = ''  # poses in this car's base_link; '': in the world frame
    kind: str = CHECKERBOARD

    @property
    def inner_corners(self) -> tuple[int, int]:
        """What OpenCV's ``findChessboardCorners`` takes as the pattern size."""
        return self.squares[0] - 1, self.squares[1] - 1

    @property
    def size_m(self) -> tuple[float, float]:
        """Width and height of the board, margin included [m]."""
        return (self.squares[0] * self.square_size + 2.0 * self.margin,
                self.squares[1] * self.square_size + 2.0 * self.margin)

    def pose_index(self, time_ns: int, frame_period_ns: int) -> int:
        """Which pose the board holds at ``time_ns``."""
        frame = round(time_ns / frame_period_ns) if frame_period_ns > 0 else 0
        return (frame // self.frames_per_pose) % len(self.poses)

    def to_wire(self) -> dict[str, Any]:
        return {'kind': self.kind, 'squares': list(self.squares),
                'square_size': self.square_size, 'margin': self.margin,
                'poses': [list(p) for p in self.poses],
                'frames_per_pose': self.frames_per_pose, 'car': self.car}

    @classmethod
    def from_wire(cls, value: Any) -> CalibrationTarget:
        """The header's ``calibration_target`` object, every value within its limits."""
        where = 'calibration_target'
        if not isinstance(value, dict):
            msg = f'header: key {where!r} must be an object, got {wire.show(value)}'
            raise ProtocolError(msg)
        kind = wire.text(value, 'kind', where, CHECKERBOARD)
        if kind not in KINDS:
            msg = f'{where}: key \'kind\' must be one of {list(KINDS)}, got {wire.show(kind)}'
            raise ProtocolError(msg)
        squares = value.get('squares')
        if not (isinstance(squares, list) and len(squares) == 2 and all(
                type(n) is int and MIN_SQUARES <= n <= MAX_SQUARES for n in squares)):
            msg = (f'{where}: key \'squares\' must be 2 integers in [{MIN_SQUARES}, '
                   f'{MAX_SQUARES}], got {wire.show(squares)}')
            raise ProtocolError(msg)
        poses = value.get('poses')
        if not isinstance(poses, list) or not 1 <= len(poses) <= MAX_POSES:
            msg = f'{where}: key \'poses\' must be a list of 1 to {MAX_POSES} poses'
            raise ProtocolError(msg)
        checked = tuple(tuple(wire.numbers({'pose': p}, 'pose', 6, f'{where}, pose {i}',
                                           -wire.MAX_COORDINATE, wire.MAX_COORDINATE))
                        for i, p in enumerate(poses))
        return cls(
            squares=(squares[0], squares[1]),
            square_size=wire.number(value, 'square_size', where, 0.0, MAX_SQUARE_M,
                                    open_low=True),
            margin=wire.number(value, 'margin', where, 0.0, MAX_SQUARE_M),
            poses=checked,
            frames_per_pose=wire.integer(value, 'frames_per_pose', where, 1,
                                         MAX_FRAMES_PER_POSE, 1),
            car=wire.text(value, 'car', where, ''), kind=kind)


def from_header(header: Mapping[str, Any]) -> CalibrationTarget | None:
    """The optional ``calibration_target`` of an InitialSettings header."""
    value = header.get('calibration_target')
    return None if value is None else CalibrationTarget.from_wire(value)

