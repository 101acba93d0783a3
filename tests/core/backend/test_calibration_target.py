"""The calibration scenario end to end, in process: OpenCV finds the checkerboard in 20 or more
views of the shipped scenario (config/calibration/checkerboard.yaml) and its calibration gives
back the camera the profile configures, for the plumb_bob lens of calibration_car and for an
equidistant fisheye; the depth and class-id images of a lens camera stay aligned with its
colour image; a camera whose lens were ignored fails the same check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import yaml

from arsim_core import labels
from arsim_core.config.scenario import Scenario, load_scenario
from arsim_core.config.sensors import CameraSpec
from arsim_core.engine import Engine, TrackWorld
from arsim_core.geometry import rotation_matrix
from arsim_core.lens import project
from arsim_core.pinhole import OPTICAL_ROTATION
from arsim_core.track import load_track

ROOT = Path(__file__).resolve().parents[3]
SCENARIO = ROOT / 'config' / 'calibration' / 'checkerboard.yaml'
CAMERA = 'calib_cam'
FRAMES_PER_POSE = 4  # one image of the 10 Hz camera per pose at 40 frames/s
FISHEYE = {'fx': 330.0, 'fy': 330.0, 'cx': 321.0, 'cy': 238.5,
           'distortion_model': 'equidistant', 'distortion': [0.03, -0.01, 0.002, 0.0]}
MIN_VIEWS = 20
TOLERANCE = 0.01  # of each of fx, fy, cx, cy
MAX_RMS_PX = 0.5
K1_TOLERANCE = 0.02


def scenario_with(tmp_path: Path, camera: dict[str, Any] | None = None,
                  drop: tuple[str, ...] = ()) -> Scenario:
    """The shipped scenario, one image per pose, its camera changed by ``camera`` (keys to
    drop first)."""
    profile = yaml.safe_load((ROOT / 'config' / 'cars' / 'calibration_car.yaml').read_text())
    spec = profile['Sensors'][CAMERA]
    for key in drop:
        spec.pop(key)
    spec.update(camera or {})
    (tmp_path / 'car.yaml').write_text(yaml.safe_dump(profile))
    data = yaml.safe_load(SCENARIO.read_text())
    data['cars'][0]['profile'] = str(tmp_path / 'car.yaml')
    data['calibration_target']['frames_per_pose'] = FRAMES_PER_POSE
    (tmp_path / 'scenario.yaml').write_text(yaml.safe_dump(data))
    return load_scenario(tmp_path / 'scenario.yaml', ROOT)


def views(scenario: Scenario) -> list[dict[str, np.ndarray]]:
    """The camera's images, one set per pose of the board, from an engine in process."""
    engine = Engine(scenario)
    name, shown = f'ego/{CAMERA}', []
    target = scenario.calibration_target
    assert target is not None
    try:
        engine.load_track(TrackWorld.from_track(load_track(scenario.track.name, ROOT / 'maps'),
                                                scenario.track.scene))
        frame = engine.reset()
        for _ in range(FRAMES_PER_POSE * len(target.poses)):
            if f'{name}/rgb' in frame.sensors:  # copied: a renderer may reuse its arrays
                shown.append({o: frame.sensors[f'{name}/{o}'].copy()
                              for o in ('rgb', 'depth', 'semantic')})
            frame = engine.advance()
    finally:
        engine.close()
    assert len(shown) == len(target.poses)
    return shown


def corners(rgb: np.ndarray, pattern: tuple[int, int]) -> np.ndarray | None:
    """The board's inner corners (n, 2) as OpenCV finds them, or None."""
    found, points = cv2.findChessboardCornersSB(cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY), pattern,
                                                flags=cv2.CALIB_CB_ACCURACY)
    return points.reshape(-1, 2).astype(np.float64) if found else None


def calibrate(scenario: Scenario, shown: list[dict[str, np.ndarray]]
              ) -> tuple[int, float, np.ndarray, np.ndarray]:
    """Views used, RMS reprojection error [px], K and D of OpenCV's calibration of
    ``shown`` with the camera's model (the fisheye's for an equidistant lens)."""
    target = scenario.calibration_target
    assert target is not None
    pattern = target.inner_corners
    board = np.zeros((pattern[0] * pattern[1], 3))
    board[:, :2] = np.mgrid[0:pattern[0], 0:pattern[1]].T.reshape(-1, 2) * target.square_size
    found = [c for c in (corners(v['rgb'], pattern) for v in shown) if c is not None]
    spec = scenario.cars[0].profile.sensor(CAMERA)
    assert isinstance(spec, CameraSpec)
    size = (spec.width, spec.height)
    criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 200, 1e-12)
    if spec.distortion_model == 'equidistant':
        rms, k, d, _, _ = cv2.fisheye.calibrate(
            [board.reshape(1, -1, 3)] * len(found), [c.reshape(1, -1, 2) for c in found],
            size, None, None, flags=cv2.CALIB_RECOMPUTE_EXTRINSIC | cv2.CALIB_FIX_SKEW,
            criteria=criteria)
    else:
        rms, k, d, _, _ = cv2.calibrateCamera(
            [board.astype(np.float32)] * len(found), [c.astype(np.float32) for c in found],
            size, None, None, criteria=criteria)
    return len(found), float(rms), k, d.ravel()


def problems(spec: CameraSpec, count: int, rms: float, k: np.ndarray,
             d: np.ndarray) -> list[str]:
    """What a calibration says against the camera's configuration; none: it is recovered."""
    configured = spec.intrinsics
    found = {'fx': k[0, 0], 'fy': k[1, 1], 'cx': k[0, 2], 'cy': k[1, 2]}
    print(f'{spec.distortion_model}: {count} views, RMS {rms:.3f} px, '
          + ', '.join(f'{key} {value:.2f} (configured {getattr(configured, key):.2f}, '
                      f'{100 * (value / getattr(configured, key) - 1):+.2f} %)'
                      for key, value in found.items())
          + f', D {np.round(d, 4).tolist()} (configured {list(spec.distortion)})')
    trouble = [f'{key} {value:.2f}, configured {getattr(configured, key):.2f}'
               for key, value in found.items()
               if not abs(value / getattr(configured, key) - 1.0) < TOLERANCE]
    if count < MIN_VIEWS:
        trouble.append(f'only {count} views')
    if not rms < MAX_RMS_PX:
        trouble.append(f'RMS {rms:.3f} px')
    k1 = spec.distortion[0] if spec.distortion else 0.0
    if not abs(d[0] - k1) < K1_TOLERANCE:
        trouble.append(f'k1 {d[0]:.4f}, configured {k1}')
    return trouble


@pytest.fixture(scope='module')
def plumb_bob(tmp_path_factory: pytest.TempPathFactory
              ) -> tuple[Scenario, list[dict[str, np.ndarray]]]:
    scenario = load_scenario(SCENARIO, ROOT, {'calibration_target':
                                              {'frames_per_pose': FRAMES_PER_POSE}})
    return scenario, views(scenario)


def test_opencv_recovers_the_plumb_bob_camera(plumb_bob) -> None:
    scenario, shown = plumb_bob
    spec = scenario.cars[0].profile.sensor(CAMERA)
    assert spec.distortion_model == 'plumb_bob'
    assert problems(spec, *calibrate(scenario, shown)) == []


def test_opencv_recovers_an_equidistant_fisheye(tmp_path: Path) -> None:
    scenario = scenario_with(tmp_path, FISHEYE)
    spec = scenario.cars[0].profile.sensor(CAMERA)
    assert problems(spec, *calibrate(scenario, views(scenario))) == []


def test_a_camera_rendered_without_its_lens_fails_the_check(tmp_path: Path,
                                                            plumb_bob) -> None:
    """The same views through an ideal pinhole of the same K: calibrated, they are no
    plumb_bob camera of calibration_car, so the check above can fail."""
    scenario, _ = plumb_bob
    lensless = scenario_with(tmp_path, drop=('distortion_model', 'distortion', 'lens_oversample'))
    result = calibrate(lensless, views(lensless))
    assert problems(scenario.cars[0].profile.sensor(CAMERA), *result) != []


def test_depth_and_classes_stay_aligned_with_colour_under_the_lens(plumb_bob) -> None:
    """The board's class-id pixels are where its outline projects through the lens, and the
    depth at each corner OpenCV finds in the colour image is that corner's distance along the
    optical axis."""
    scenario, shown = plumb_bob
    target = scenario.calibration_target
    spec = scenario.cars[0].profile.sensor(CAMERA)
    assert target is not None and isinstance(spec, CameraSpec) and spec.lens is not None
    half_w, half_h = (s / 2.0 for s in target.size_m)
    edge = np.linspace(-1.0, 1.0, 200)
    outline = np.concatenate([np.column_stack([np.zeros(200), half_w * edge, np.full(200, z)])
                              for z in (half_h, -half_h)]
                             + [np.column_stack([np.zeros(200), np.full(200, y), half_h * edge])
                                for y in (half_w, -half_w)])
    camera = np.array([spec.mount.x, spec.mount.y, spec.mount.z])
    (columns, rows), size = target.squares, target.square_size
    inner = np.array([[0.0, (columns / 2.0 - 1 - i) * size, (rows / 2.0 - 1 - j) * size]
                      for j in range(rows - 1) for i in range(columns - 1)])
    checked = 0
    for pose, images in zip(target.poses, shown, strict=True):
        rotation, position = rotation_matrix(*pose[3:]), np.array(pose[:3])

        def optical(points: np.ndarray, r: np.ndarray = rotation,
                    p: np.ndarray = position) -> np.ndarray:
            return (points @ r.T + p - camera) @ OPTICAL_ROTATION

        # the outline, in order around the board, projected through the lens and filled
        around = np.concatenate([outline[:200], outline[400:600][::-1],
                                 outline[200:400][::-1], outline[600:]])
        polygon = project(spec.intrinsics, spec.lens, optical(around))
        expected = np.zeros((spec.height, spec.width), np.uint8)
        cv2.fillPoly(expected, [np.round(polygon * 16).astype(np.int32)], 1, shift=4)
        seen = images['semantic'] == labels.CALIBRATION_TARGET
        union = np.logical_or(seen, expected).sum()
        assert np.logical_and(seen, expected).sum() / union > 0.96
        found = corners(images['rgb'], target.inner_corners)
        if found is None:
            continue
        truth = optical(inner)
        pixels = project(spec.intrinsics, spec.lens, truth)
        nearest = np.linalg.norm(found[:, None] - pixels[None], axis=2).argmin(axis=1)
        assert np.linalg.norm(found - pixels[nearest], axis=1).max() < 1.0
        u, v = np.round(found).astype(int).T
        assert np.all(seen[v, u])
        np.testing.assert_allclose(images['depth'][v, u], truth[nearest, 2], atol=0.01)
        checked += 1
    assert checked >= MIN_VIEWS
