"""Motion blur and rolling shutter of the embedded backend's cameras (backend.motion_blur): a
turning camera's colour image smears along its motion and a standing one's does not; a
rolling shutter shifts the top rows by the motion of their readout time, class ids with them;
the same frames twice are the same images."""

from __future__ import annotations

import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from arsim_core.backend.motion_blur import earlier_pose
from arsim_core.backend.server import EmbeddedBackend
from arsim_core.backend.timeline import Timeline
from arsim_core.config.scenario import SceneSettings
from arsim_core.engine import TrackWorld
from arsim_core.pinhole import Intrinsics
from arsim_core.protocol.messages import CarSettings, InitialSettings, in_process
from arsim_core.track import load_track

PERIOD = 50_000_000
WIDTH, HEIGHT, FOV = 320, 240, 1.4
K = Intrinsics.from_fov(WIDTH, HEIGHT, FOV)
CAMERA = {'name': 'cam', 'type': 'camera', 'rate_hz': 20.0,
          'mount': [0.0, 0.0, 0.25, 0.0, 0.05, 0.0], 'width': WIDTH, 'height': HEIGHT,
          'fov': FOV, 'near': 0.05, 'far': 60.0, 'outputs': ['rgb', 'semantic']}
YAW_STEP = 0.1  # rad per frame: 2 rad/s, turning left


@pytest.fixture(scope='module')
def hall(repo_root: Path) -> tuple[TrackWorld, tuple[float, ...]]:
    track = load_track('arsim_ring', repo_root / 'maps')
    x, y, yaw = track.start_pose
    return TrackWorld.from_track(track, SceneSettings('hall')), (x, y, 0.0, 0.0, 0.0, yaw + 0.3)


def second_frame(hall, camera: dict, yaw_step: float = YAW_STEP) -> dict[str, np.ndarray]:
    """The images of the second frame of a car that turned by ``yaw_step`` since the first."""
    world, (x, y, z, roll, pitch, yaw) = hall
    settings = InitialSettings(track=world.track_request(), frame_period_ns=PERIOD,
                               cars=(CarSettings('ego', None, (camera,)),))
    backend = EmbeddedBackend()
    backend.apply(InitialSettings.from_wire(in_process(settings)))
    backend.render_frames(PERIOD, {'ego': (x, y, z, roll, pitch, yaw - yaw_step)},
                          [('ego', 'cam')])
    frames = backend.render_frames(2 * PERIOD, {'ego': (x, y, z, roll, pitch, yaw)},
                                   [('ego', 'cam')])
    return {name.rsplit('/', 1)[1]: np.array(image) for name, image in frames.items()}


CENTRE = (slice(80, 160), slice(100, 220))  # where a turn moves pixels along the rows only


def smeared(image: np.ndarray, length: int, along_rows: bool = True,
            ahead: bool = True) -> np.ndarray:
    """``image`` averaged over ``length`` pixels beside each pixel, along its row or its
    column, on the side ``ahead`` (growing u or v) or behind."""
    shape = (1, length) if along_rows else (length, 1)
    anchor = (0 if ahead else length - 1, 0) if along_rows else (0, 0 if ahead else length - 1)
    return cv2.filter2D(image.astype(np.float32), -1, np.ones(shape, np.float32) / length,
                        anchor=anchor)


def difference(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(np.float32) - b.astype(np.float32))[CENTRE].mean())


def test_a_turning_camera_smears_along_its_motion(hall) -> None:
    camera = {**CAMERA, 'motion_blur': {'exposure_time': 0.02, 'samples': 8}}
    sharp, blurred = second_frame(hall, CAMERA), second_frame(hall, camera)
    # Turning left at 2 rad/s for 20 ms at fx = 190 px/rad: each pixel saw, during the
    # exposure, what the frame shows up to 8 px to its right.
    along = difference(blurred['rgb'], smeared(sharp['rgb'], 8))
    assert along < 0.3 * difference(blurred['rgb'], sharp['rgb'])
    assert along < 0.3 * difference(blurred['rgb'], smeared(sharp['rgb'], 8, ahead=False))
    assert along < 0.3 * difference(blurred['rgb'], smeared(sharp['rgb'], 8, along_rows=False))
    np.testing.assert_array_equal(blurred['semantic'], sharp['semantic'])  # ground truth stays
    np.testing.assert_array_equal(second_frame(hall, camera)['rgb'], blurred['rgb'])


def test_a_standing_camera_is_not_blurred(hall) -> None:
    camera = {**CAMERA, 'motion_blur': {'exposure_time': 0.05, 'samples': 8},
              'rolling_shutter': {'readout_time': 0.03}}
    still = second_frame(hall, camera, yaw_step=0.0)
    sharp = second_frame(hall, CAMERA, yaw_step=0.0)
    np.testing.assert_array_equal(still['rgb'], sharp['rgb'])
    np.testing.assert_array_equal(still['semantic'], sharp['semantic'])


def row_shift(image: np.ndarray, reference: np.ndarray, rows: slice) -> int:
    """The horizontal shift [px] of ``reference``'s rows that best matches ``image``'s, in the
    middle columns."""
    grey, before = (np.atleast_3d(a).astype(float).mean(axis=2) for a in (image, reference))
    shifts = range(-25, 26)
    mismatch = [np.abs(grey[rows, CENTRE[1]] - np.roll(before, s, axis=1)[rows, CENTRE[1]])
                .mean() for s in shifts]
    return list(shifts)[int(np.argmin(mismatch))]


def test_a_rolling_shutter_shifts_each_row_by_its_readout_time(hall) -> None:
    readout = 0.03
    sharp = second_frame(hall, CAMERA)
    rolled = second_frame(hall, {**CAMERA, 'rolling_shutter': {'readout_time': readout}})
    # Row v is read (239 - v) / 239 of 30 ms before the frame, when the camera looked that
    # much of 0.06 rad further right: what it shows lies that much of 0.06 rad * fx further
    # left than in the frame (the rows above 60 show only sky).
    full = -YAW_STEP / (PERIOD * 1e-9) * readout * K.fx
    for first in (60, 120, 200, 228):
        rows = slice(first, first + 12)
        expected = full * (HEIGHT - 1 - (first + 5.5)) / (HEIGHT - 1)
        assert row_shift(rolled['rgb'], sharp['rgb'], rows) == pytest.approx(expected, abs=1.5)
    for first in (80, 100):  # the class ids moved with the colour
        rows = slice(first, first + 12)
        expected = full * (HEIGHT - 1 - (first + 5.5)) / (HEIGHT - 1)
        assert row_shift(rolled['semantic'], sharp['semantic'], rows) == \
            pytest.approx(expected, abs=1.5)


def test_a_lens_camera_is_blurred_through_its_lens(hall) -> None:
    lens = {'model': 'plumb_bob', 'fx': K.fx, 'fy': K.fy, 'cx': K.cx, 'cy': K.cy,
            'distortion': [-0.2, 0.05, 0.0, 0.0, 0.0]}
    sharp = second_frame(hall, {**CAMERA, 'lens': lens})
    blurred = second_frame(hall, {**CAMERA, 'lens': lens,
                                  'motion_blur': {'exposure_time': 0.02, 'samples': 8}})
    along = difference(blurred['rgb'], smeared(sharp['rgb'], 8))
    assert along < 0.4 * difference(blurred['rgb'], sharp['rgb'])
    assert along < 0.4 * difference(blurred['rgb'], smeared(sharp['rgb'], 8, along_rows=False))


def test_the_earlier_pose_holds_the_last_frames_velocity_and_yaw_rate() -> None:
    timeline = Timeline()
    timeline.add(0, {'ego': [0.0, 0.0, 0.0, 0.0, 0.0, 3.1]})
    assert earlier_pose(timeline, 'ego', 0.01) is None  # one frame: no motion known
    timeline.add(PERIOD, {'ego': [1.0, 0.5, 0.0, 0.0, 0.0, -3.1]})  # across +-pi
    pose = earlier_pose(timeline, 'ego', 0.025)
    assert pose is not None
    np.testing.assert_allclose(pose[:2], [0.5, 0.25])
    assert math.remainder(pose[5] - 3.1 - (2 * math.pi - 6.2) / 2, 2 * math.pi) == \
        pytest.approx(0.0, abs=1e-9)
