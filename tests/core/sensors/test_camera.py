"""Cameras of the embedded backend over a real socket: depth against analytic distances, the
published intrinsics against where the renderer drew known points, class ids against the
geometry; with OpenGL and with the ray-cast fallback."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scenes import HALF, HEIGHT, initial_settings, update
from simharness import backend_process

from arsim_core import labels
from arsim_core.geometry import rotation_matrix
from arsim_core.pinhole import OPTICAL_ROTATION, Intrinsics
from arsim_core.protocol import framing
from arsim_core.protocol.appearance import DEFAULT, sky_colors

PERIOD = 50_000_000
WIDTH, HEIGHT_PX, FOV = 320, 240, 1.4
CAM_X, CAM_Z = 1.0, 0.8  # the camera looks along +x at the wall x = HALF
CAMERA = {'name': 'cam', 'type': 'camera', 'rate_hz': 20.0, 'mount': [0, 0, CAM_Z, 0, 0, 0],
          'width': WIDTH, 'height': HEIGHT_PX, 'fov': FOV, 'near': 0.05, 'far': 50.0,
          'outputs': ['rgb', 'depth', 'semantic']}
K = Intrinsics.from_fov(WIDTH, HEIGHT_PX, FOV)


@pytest.fixture(params=['opengl', 'rays'], scope='module')
def camera_backend(request):
    """One backend process per camera renderer for the module (each test its own session)."""
    with backend_process(ARSIM_CAMERA_RENDERER=request.param) as client:
        yield client


def render(client, poses: dict[str, list[float]] | None = None, camera: dict | None = None,
           **settings) -> dict[str, np.ndarray]:
    initial_settings(client, [camera or CAMERA], split_label=labels.CONE_BLUE, **settings)
    poses = poses or {'ego': [CAM_X, 0.0, 0.0, 0.0, 0.0, 0.0]}
    reply = update(client, 1, PERIOD, poses, ['cam'])
    meta = framing.frame_meta(reply)
    assert {n: (m['encoding'], m['stamp_ns']) for n, m in meta.items()} == {
        'ego/cam/rgb': ('rgb8', PERIOD), 'ego/cam/depth': ('32FC1', PERIOD),
        'ego/cam/semantic': ('mono8', PERIOD)}
    return {name.rsplit('/', 1)[1]: array for name, array in reply.arrays.items()}


def test_depth_matches_analytic_distances(camera_backend) -> None:
    images = render(camera_backend)
    depth, semantic = images['depth'], images['semantic']
    assert depth.shape == (HEIGHT_PX, WIDTH) and depth.dtype == np.float32
    wall = np.isin(semantic, [labels.BARRIER, labels.CONE_BLUE])
    assert wall.sum() > 0.2 * wall.size
    np.testing.assert_allclose(depth[wall], HALF - CAM_X, atol=1e-3)  # a plane facing it
    rows = np.arange(HEIGHT_PX)[:, None].repeat(WIDTH, axis=1)
    ground = semantic == labels.GROUND
    assert ground.sum() > 0.1 * ground.size
    # a pixel row below the horizon sees the ground at depth Z = height * fy / (v - cy)
    np.testing.assert_allclose(depth[ground], CAM_Z * K.fy / (rows[ground] - K.cy), atol=1e-3)
    assert np.all(np.isposinf(depth[semantic == labels.NONE]))


def test_camera_info_projects_points_onto_the_pixels_drawn(camera_backend) -> None:
    semantic = render(camera_backend)['semantic']
    # The wall x = HALF is cone-blue for y > 0 (left in the image) and barrier for y < 0.
    for z in (0.3, 0.8, 1.5):
        point = np.array([[0.0, -(z - CAM_Z), HALF - CAM_X]])  # optical x, y, z
        u, v = K.project(point)[0]
        row = semantic[round(v)]
        switch = np.flatnonzero((row[:-1] == labels.CONE_BLUE) & (row[1:] == labels.BARRIER))
        assert len(switch) == 1 and abs(switch[0] + 0.5 - u) <= 1.0
    # the top edge of the wall, z = HEIGHT, at y = -1: the sky above, the barrier below
    u, v = K.project(np.array([[1.0, -(HEIGHT - CAM_Z), HALF - CAM_X]]))[0]
    column = semantic[:, round(u)]
    edge = np.flatnonzero((column[:-1] == labels.NONE) & (column[1:] == labels.BARRIER))
    assert len(edge) == 1 and abs(edge[0] + 0.5 - v) <= 1.0


def test_class_ids_match_the_geometry_and_other_cars(camera_backend) -> None:
    rival = [3.0, 0.0, 0.0, 0.0, 0.0, 0.0]  # 0.6 x 0.4 x 0.5 box, rear face at x = 2.7
    images = render(camera_backend, {'ego': [CAM_X, 0, 0, 0, 0, 0], 'rival': rival},
                    footprints={'rival': [0.6, 0.4, 0.5]}, others=('rival',))
    semantic, depth, rgb = images['semantic'], images['depth'], images['rgb']
    u, v = K.project(np.array([[0.0, -(0.25 - CAM_Z), 2.7 - CAM_X]]))[0]
    assert semantic[round(v), round(u)] == labels.CAR
    assert depth[round(v), round(u)] == pytest.approx(2.7 - CAM_X, abs=1e-3)
    assert semantic[0, WIDTH // 2] == labels.NONE  # sky above the wall
    assert semantic[-1, WIDTH // 2] == labels.GROUND
    assert rgb.shape == (HEIGHT_PX, WIDTH, 3) and rgb.dtype == np.uint8
    colors = {label: rgb[semantic == label].mean(axis=0) for label in
              (labels.NONE, labels.GROUND, labels.CAR, labels.CONE_BLUE)}
    assert colors[labels.CONE_BLUE][2] > colors[labels.CONE_BLUE][0] + 50  # blue
    assert colors[labels.GROUND][1] > colors[labels.GROUND][2]  # green
    assert colors[labels.CAR][0] > colors[labels.CAR][1] + 50  # red


def test_a_camera_does_not_see_its_own_car(camera_backend) -> None:
    footprints = {'ego': [4.0, 4.0, 3.0]}  # a box around the camera
    images = render(camera_backend, footprints=footprints)
    assert not np.any(images['semantic'] == labels.CAR)


def test_pixel_noise_has_the_configured_spread(camera_backend) -> None:
    clean = render(camera_backend)['rgb']
    images = render(camera_backend, camera={**CAMERA, 'noise_std': 8.0,
                                            'depth_noise_std': 0.01})
    semantic, depth = images['semantic'], images['depth']
    wall = semantic == labels.BARRIER
    error = depth[wall] - (HALF - CAM_X)
    assert abs(error.mean()) < 0.002 and 0.008 < error.std() < 0.012
    ground = semantic == labels.GROUND  # textured: the noise is what differs from a clean frame
    green = images['rgb'][ground][:, 1].astype(float) - clean[ground][:, 1]
    assert 5.0 < green.std() < 12.0


def test_the_horizontal_field_of_view_is_the_configured_one(camera_backend) -> None:
    semantic = render(camera_backend, {'ego': [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]})['semantic']
    # the image edges look at y = +-(HALF) tan(FOV / 2) on the wall x = HALF
    assert math.tan(FOV / 2) * HALF < HALF  # both edges still on the +x wall
    assert semantic[HEIGHT_PX // 2, 0] == labels.CONE_BLUE
    assert semantic[HEIGHT_PX // 2, -1] == labels.BARRIER


@pytest.mark.parametrize('outputs', [['rgb'], ['depth'], ['semantic', 'rgb']])
def test_any_subset_of_outputs_renders(camera_backend, outputs: list[str]) -> None:
    initial_settings(camera_backend, [{**CAMERA, 'outputs': outputs}])
    reply = update(camera_backend, 1, PERIOD, {'ego': [CAM_X, 0, 0, 0, 0, 0]}, ['cam'])
    assert sorted(reply.arrays) == sorted(f'ego/cam/{o}' for o in outputs)


def test_a_colour_only_camera_draws_the_same_image_as_one_with_every_output(
        camera_backend) -> None:
    looking_up = {**CAMERA, 'mount': [0, 0, CAM_Z, 0, -0.5, 0]}  # sky in the upper half
    full = render(camera_backend, camera=looking_up)
    initial_settings(camera_backend, [{**looking_up, 'outputs': ['rgb']}],
                     split_label=labels.CONE_BLUE)
    reply = update(camera_backend, 1, PERIOD, {'ego': [CAM_X, 0, 0, 0, 0, 0]}, ['cam'])
    rgb = reply.arrays['ego/cam/rgb']
    sky = full['semantic'] == labels.NONE
    assert 0.1 < sky.mean() < 0.9
    assert np.array_equal(rgb, full['rgb'])
    # the sky's gradient from the horizon up, by each pixel's view direction in the world
    to_world = rotation_matrix(0.0, -0.5, 0.0) @ OPTICAL_ROTATION
    directions = K.pixel_directions()[sky] @ to_world.T
    expected_sky = sky_colors(directions, DEFAULT) * 255.0
    assert np.abs(rgb[sky].astype(float) - expected_sky).max() <= 2.0
    assert np.ptp(rgb[sky][:, 0]) > 20  # a gradient, not one colour
