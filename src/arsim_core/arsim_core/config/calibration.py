"""The scenario's ``calibration_target`` section: a checkerboard that the backend shows the
cars' cameras, moved through a list of poses (docs/sensors.md, "Calibration targets").

Every value is checked here, against the limits the protocol enforces
(``arsim_core.protocol.target``), so a bad board stops the launch naming the file, the line and
the key.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from arsim_core.protocol.target import (
    CHECKERBOARD,
    MAX_FRAMES_PER_POSE,
    MAX_POSES,
    MAX_SQUARE_M,
    MAX_SQUARES,
    MIN_SQUARES,
    CalibrationTarget,
)
from arsim_core.yaml_fields import Section

KEYS = frozenset({'kind', 'squares', 'square_size', 'margin', 'frame', 'frames_per_pose',
                  'poses'})
WORLD = 'world'
MAX_POSE_COORDINATE = 1e6  # [m], [rad]


def load_calibration_target(section: Section, cars: Sequence[str]) -> CalibrationTarget:
    """The board of ``section``; ``cars`` are the scenario's car names (``frame`` names one,
    or ``world``; the default is the first car)."""
    section.reject_unknown(KEYS)
    section.string('kind', CHECKERBOARD, choices=(CHECKERBOARD,))
    squares = section.raw('squares', what='[columns, rows] of squares')
    if not (isinstance(squares, list) and len(squares) == 2 and all(
            isinstance(n, int) and not isinstance(n, bool) and MIN_SQUARES <= n <= MAX_SQUARES
            for n in squares)):
        section.fail(f'expected [columns, rows] of squares, each an integer from {MIN_SQUARES} '
                     f'to {MAX_SQUARES}, got {squares!r:.80}', 'squares')
    size = section.number('square_size', minimum=0.0, exclusive_minimum=True,
                          maximum=MAX_SQUARE_M)
    frame = section.string('frame', cars[0], choices=(*cars, WORLD))
    poses = section.raw('poses', what='a list of poses [x, y, z, roll, pitch, yaw]')
    if not isinstance(poses, list) or not 1 <= len(poses) <= MAX_POSES:
        section.fail(f'expected a list of 1 to {MAX_POSES} poses [x, y, z, roll, pitch, yaw] '
                     f'[m, rad], got {poses!r:.80}', 'poses')
    for index, pose in enumerate(poses):
        if not (isinstance(pose, list) and len(pose) == 6 and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                and abs(v) <= MAX_POSE_COORDINATE for v in pose)):
            section.fail(f'expected a pose [x, y, z, roll, pitch, yaw] of 6 finite numbers '
                         f'[m, rad], got {pose!r:.80}', f'poses[{index}]')
    frames = section.integer('frames_per_pose', 1, minimum=1)
    if frames > MAX_FRAMES_PER_POSE:
        section.fail(f'expected at most {MAX_FRAMES_PER_POSE} frames, got {frames}',
                     'frames_per_pose')
    return CalibrationTarget(
        squares=(squares[0], squares[1]), square_size=size,
        margin=section.number('margin', size, minimum=0.0, maximum=MAX_SQUARE_M),
        poses=tuple(tuple(float(v) for v in pose) for pose in poses),
        frames_per_pose=frames, car='' if frame == WORLD else frame)
