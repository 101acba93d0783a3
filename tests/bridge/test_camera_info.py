"""CameraInfo carries exactly the camera model the backend renders: K and P from the
intrinsics, the lens's distortion model and coefficients in OpenCV's order, R the identity."""

from __future__ import annotations

from pathlib import Path

import pytest

from arsim_bridge.republishers.camera import camera_info
from arsim_core.config.profile import load_profile
from arsim_core.config.sensors import CameraSpec, Mount

ROOT = Path(__file__).resolve().parents[2]
IDENTITY = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]


def test_the_calibration_cameras_info_carries_its_lens() -> None:
    spec = load_profile(ROOT / 'config' / 'cars' / 'calibration_car.yaml').sensor('calib_cam')
    info = camera_info(spec, 'ego_racecar/calib_cam_optical')
    assert info.distortion_model == 'plumb_bob'
    assert list(info.d) == [-0.25, 0.08, 0.0005, -0.0003, -0.01]
    assert list(info.k) == [420.0, 0.0, 322.5, 0.0, 420.0, 236.0, 0.0, 0.0, 1.0]
    assert list(info.p) == [420.0, 0.0, 322.5, 0.0, 0.0, 420.0, 236.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    assert list(info.r) == IDENTITY
    assert (info.width, info.height) == (640, 480)


@pytest.mark.parametrize(('model', 'coefficients'), [
    ('rational_polynomial', (0.1, 0.01, 0.0005, -0.0003, 0.0, 0.4, 0.05, 0.0)),
    ('equidistant', (0.03, -0.01, 0.002, 0.0)),
])
def test_every_model_reaches_camera_info_as_configured(model: str,
                                                       coefficients: tuple) -> None:
    spec = CameraSpec(name='cam', mount=Mount(0, 0, 0, 0, 0, 0), rate_hz=10.0, width=320,
                      height=240, fov_rad=1.6, near_clip=0.05, far_clip=50.0,
                      focal=(200.0, 201.0, 158.0, 121.0), distortion_model=model,
                      distortion=coefficients)
    info = camera_info(spec, 'cam_optical')
    assert info.distortion_model == model and tuple(info.d) == coefficients
    assert list(info.k) == [200.0, 0.0, 158.0, 0.0, 201.0, 121.0, 0.0, 0.0, 1.0]


def test_a_camera_without_a_lens_is_an_ideal_plumb_bob() -> None:
    spec = CameraSpec(name='cam', mount=Mount(0, 0, 0, 0, 0, 0), rate_hz=10.0, width=320,
                      height=240, fov_rad=1.6, near_clip=0.05, far_clip=50.0)
    info = camera_info(spec, 'cam_optical')
    assert info.distortion_model == 'plumb_bob' and list(info.d) == [0.0] * 5
    assert info.k[2] == 159.5 and info.k[5] == 119.5
