"""Camera lenses: the keys of a profile's camera, the refusals of lenses that cannot be rendered
(naming file, line and key), the rays found through each model against OpenCV's projection,
the wire and Ready's capabilities, and a camera without a lens costing nothing more."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from arsim_core.backend.camera import Camera
from arsim_core.config.profile import load_profile
from arsim_core.config.sensors import CameraSpec
from arsim_core.errors import ConfigError, ProtocolError
from arsim_core.lens import MAX_HALF_ANGLE, MODELS, Lens, project, rays, resampling
from arsim_core.pinhole import Intrinsics
from arsim_core.protocol import wire
from arsim_core.protocol.messages import CarSettings, InitialSettings, Ready, TrackRequest
from arsim_core.protocol.target import CalibrationTarget

CAMERA = {'type': 'camera', 'position': [0.2, 0, 0.2], 'rate_hz': 20.0, 'width': 320,
          'height': 240, 'outputs': ['rgb', 'depth', 'semantic']}
PLUMB_BOB = {'fx': 210.0, 'fy': 212.0, 'cx': 161.0, 'cy': 118.0,
             'distortion_model': 'plumb_bob', 'distortion': [-0.25, 0.08, 0.0005, -0.0003, -0.01]}
LENSES = [
    (Intrinsics(320, 240, 210.0, 212.0, 161.0, 118.0), Lens('plumb_bob', (-0.25, 0.08, 0.0005,
                                                                          -0.0003, -0.01))),
    (Intrinsics(320, 240, 200.0, 200.0, 159.5, 119.5),
     Lens('rational_polynomial', (0.1, 0.01, 0.0005, -0.0003, 0.0, 0.4, 0.05, 0.0))),
    (Intrinsics(320, 240, 165.0, 165.0, 160.5, 119.0), Lens('equidistant', (0.03, -0.01, 0.002,
                                                                            0.0))),
]


def camera(write_profile, **keys) -> CameraSpec:
    spec = load_profile(write_profile({'cam': {**CAMERA, **keys}})).sensor('cam')
    assert isinstance(spec, CameraSpec)
    return spec


def test_a_lens_parses_to_the_model_the_renderer_and_camera_info_use(write_profile) -> None:
    spec = camera(write_profile, **PLUMB_BOB)
    assert spec.intrinsics == Intrinsics(320, 240, 210.0, 212.0, 161.0, 118.0)
    assert spec.lens == Lens('plumb_bob', (-0.25, 0.08, 0.0005, -0.0003, -0.01))
    assert spec.to_wire()['lens'] == {'model': 'plumb_bob', 'fx': 210.0, 'fy': 212.0,
                                      'cx': 161.0, 'cy': 118.0,
                                      'distortion': [-0.25, 0.08, 0.0005, -0.0003, -0.01]}
    assert spec.fov_rad == pytest.approx(2 * math.atan(160 / 210))  # for peers without lenses
    fisheye = camera(write_profile, fov_rad=2.0, distortion_model='equidistant',
                     distortion=[0, 0, 0, 0])
    assert fisheye.intrinsics.fx == pytest.approx(160.0)  # r = f theta spans the fov
    plain = camera(write_profile, fov_rad=1.5)
    assert plain.lens is None and 'lens' not in plain.to_wire()


@pytest.mark.parametrize(('keys', 'key', 'expected'), [
    ({**PLUMB_BOB, 'distortion': [0.0, -0.2, 0.0, 0.0, 0.0]}, 'distortion',
     'folds the image: its radius stops growing'),
    ({'fx': 120.0, 'fy': 120.0, 'distortion_model': 'equidistant',
      'distortion': [0.0, 0.0, 0.0, 0.0]}, 'fx', 'more than 80 deg off the optical axis'),
    ({'fov_rad': 2.9, 'distortion_model': 'equidistant', 'distortion': [0, 0, 0, 0]},
     'fov_rad', 'which the renderer cannot cover'),
    ({**PLUMB_BOB, 'distortion': [-0.25, 0.08, 0.0, 0.0]}, 'distortion',
     'expected 5 coefficients [k1, k2, p1, p2, k3] for plumb_bob'),
    ({**PLUMB_BOB, 'distortion_model': 'equidistant'}, 'distortion',
     'expected 4 coefficients [k1, k2, k3, k4] for equidistant'),
    ({**PLUMB_BOB, 'distortion_model': 'kannala'}, 'distortion_model',
     "expected one of ['equidistant', 'plumb_bob', 'rational_polynomial']"),
    ({'fov_rad': 1.5, 'distortion': [0, 0, 0, 0, 0]}, 'distortion', 'needs a distortion_model'),
    ({'fov_rad': 1.5, 'fx': 200.0, 'fy': 200.0}, 'fov_rad', 'give either fov_rad or'),
    ({'fx': 200.0}, 'fy', 'missing'),
    ({'fx': 200.0, 'fy': 200.0, 'cx': 400.0}, 'cx', 'expected a number'),
])
def test_a_lens_that_cannot_be_rendered_stops_start_up_naming_file_line_and_key(
        write_profile, keys: dict, key: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        camera(write_profile, **keys)
    message = str(caught.value)
    assert re.search(rf'car\.yaml:\d+: Sensors\.cam\.{key}: ', message), message
    assert expected in message


@pytest.mark.parametrize(('intrinsics', 'lens'), LENSES, ids=lambda v: getattr(v, 'model', ''))
def test_each_pixels_ray_projects_back_onto_it_through_opencv(intrinsics: Intrinsics,
                                                              lens: Lens) -> None:
    pixels = np.stack(np.meshgrid(np.linspace(0, 319, 45), np.linspace(0, 239, 35)),
                      axis=-1).reshape(-1, 2)
    found = rays(intrinsics, lens, pixels)
    back = project(intrinsics, lens, np.column_stack([found, np.ones(len(found))]))
    assert np.abs(back - pixels).max() < 1e-3
    assert len(lens.coefficients) == len(MODELS[lens.model])
    # the furthest ray is within what the ideal image covers, and that image holds them all
    angles = np.arctan(np.hypot(*found.T))
    assert angles.max() < MAX_HALF_ANGLE
    ideal = resampling(intrinsics, lens).ideal
    u, v = found[:, 0] * ideal.fx + ideal.cx, found[:, 1] * ideal.fy + ideal.cy
    assert u.min() > 0 and v.min() > 0 and u.max() < ideal.width - 1 \
        and v.max() < ideal.height - 1


@pytest.mark.parametrize(('intrinsics', 'lens'), [
    *LENSES, (Intrinsics.from_fov(256, 512, 1.5), Lens('plumb_bob', (-0.1, 0.02, 0.0, 0.0, 0.0)))],
    ids=lambda v: getattr(v, 'model', ''))
def test_the_ideal_image_is_as_fine_as_the_output_along_each_axis(intrinsics: Intrinsics,
                                                                   lens: Lens) -> None:
    """Output pixels a pixel apart along u (v) read ideal pixels at least a pixel apart along
    u (v), everywhere, and no finer than needed: somewhere exactly a pixel apart."""
    ideal = resampling(intrinsics, lens).ideal
    pixels = np.stack(np.meshgrid(np.arange(intrinsics.width), np.arange(intrinsics.height)),
                      axis=-1).reshape(-1, 2).astype(np.float64)
    found = rays(intrinsics, lens, pixels)
    for axis, focal in enumerate((ideal.fx, ideal.fy)):
        neighbours = rays(intrinsics, lens, pixels + np.eye(2)[axis])
        apart = np.abs(neighbours - found)[:, axis] * focal
        assert apart.min() == pytest.approx(1.0, abs=0.01)


def test_a_tall_wide_angle_image_is_rendered_with_fewer_columns_than_rows_need() -> None:
    """A 256 x 512 camera seeing 123 degrees vertically: its corners are densest along v, so
    the ideal image's u axis keeps the centre's density (30 % fewer pixels than one focal
    length for both axes)."""
    intrinsics = Intrinsics.from_fov(256, 512, 1.5)
    ideal = resampling(intrinsics, Lens('plumb_bob', (-0.1, 0.02, 0.0, 0.0, 0.0))).ideal
    assert ideal.fx == pytest.approx(intrinsics.fx, rel=0.1)
    assert ideal.fy > 1.4 * ideal.fx


def test_a_camera_without_a_lens_is_rendered_as_it_is_published(write_profile) -> None:
    """No resampling, so no per-frame cost: the renderer's image is the published one."""
    plain = Camera.from_wire('ego', camera(write_profile, fov_rad=1.5).to_wire(), 0)
    assert plain.resampling is None
    pinhole = Camera.from_wire('ego', camera(write_profile, fx=200.0, fy=190.0, cx=150.0,
                                             cy=120.0).to_wire(), 0)
    assert pinhole.resampling is None and pinhole.intrinsics.fy == 190.0
    lensed = Camera.from_wire('ego', camera(write_profile, **PLUMB_BOB).to_wire(), 0)
    assert lensed.resampling is not None
    assert lensed.resampling.ideal.width > 320 and lensed.resampling.linear[0].shape[:2] == \
        (240, 320)


@pytest.mark.parametrize(('lens', 'expected'), [
    ({'model': 'fisheye'}, "key 'model' must be one of"),
    ({'model': 'plumb_bob', 'fx': 200.0, 'fy': 200.0, 'cx': 160.0, 'cy': 120.0,
      'distortion': [0.1]}, "key 'distortion' must be 5 numbers for plumb_bob"),
    ({'model': 'plumb_bob', 'fx': -1.0, 'fy': 200.0, 'cx': 160.0, 'cy': 120.0,
      'distortion': [0.1] * 5}, "key 'fx' must be a number in (0,"),
    ({'model': 'equidistant', 'fx': 200.0, 'fy': 200.0, 'cx': 160.0, 'cy': 120.0,
      'distortion': [1e9] * 4}, "key 'distortion' must be 4 numbers"),
    ('plumb_bob', "key 'lens' must be an object"),
])
def test_the_wire_refuses_a_malformed_lens_naming_the_key(write_profile, lens: object,
                                                          expected: str) -> None:
    spec = {**camera(write_profile, fov_rad=1.5).to_wire(), 'lens': lens}
    with pytest.raises(ProtocolError, match=re.escape(expected)):
        wire.sensor(spec, 'car ego')


def test_a_folding_lens_on_the_wire_is_refused_by_the_backend(write_profile) -> None:
    spec = camera(write_profile, **PLUMB_BOB).to_wire()
    spec['lens'] = {**spec['lens'], 'distortion': [0.0, -0.2, 0.0, 0.0, 0.0]}
    wire.sensor(spec, 'car ego')  # the limits hold; the fold is the renderer's to find
    with pytest.raises(ProtocolError, match="camera 'cam': the plumb_bob distortion .* folds"):
        Camera.from_wire('ego', spec, 0)


def test_ready_says_what_a_scenario_needs_that_a_backend_cannot_render(write_profile) -> None:
    board = CalibrationTarget(squares=(9, 7), square_size=0.03, margin=0.03,
                              poses=((0.8, 0.0, 0.2, 0.0, 0.0, 0.0),), car='ego')
    settings = InitialSettings(
        track=TrackRequest('t', np.zeros((3, 3), np.float32), np.array([[0, 1, 2]], np.uint32)),
        cars=(CarSettings('ego', None, (camera(write_profile, **PLUMB_BOB).to_wire(),)),),
        calibration_target=board)
    assert settings.lenses() == {('ego', 'cam'): 'plumb_bob'}
    capable = Ready('b', 't', (), ('pinhole', 'plumb_bob'), ('checkerboard',))
    assert capable.unrenderable(settings) == []
    older = Ready('old', 't')  # a peer that sends no capabilities renders neither
    assert older.unrenderable(settings) == [
        "car 'ego' camera 'cam' has a plumb_bob lens",
        'the scenario places a checkerboard calibration target',
        "backend 'old' renders lenses [] and calibration targets []"]
    wired = InitialSettings.from_wire(_decoded(settings))
    assert wired.calibration_target == board
    assert Ready.from_wire(_decoded(capable)).lenses == ('pinhole', 'plumb_bob')


def _decoded(body):
    from arsim_core.protocol import framing
    from arsim_core.protocol.messages import encode

    return framing.decode([bytes(f) for f in encode(body, 0, 0)])
