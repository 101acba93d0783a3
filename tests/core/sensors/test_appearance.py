"""Appearance of camera images: textured surfaces with contrast the flat colours never had,
class ids and depth that no appearance changes, cones with their stripes, the car model inside
its footprint, the scenario's ``appearance`` section and its travel in InitialSettings."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from arsim_core import labels
from arsim_core.backend.car_model import car_mesh
from arsim_core.backend.materials import TYRE
from arsim_core.backend.server import EmbeddedBackend
from arsim_core.config.scenario import SceneSettings, load_scenario
from arsim_core.description import wheels
from arsim_core.engine import TrackWorld
from arsim_core.engine.render import initial_settings
from arsim_core.errors import ConfigError, ProtocolError
from arsim_core.geometry import Footprint, Wheels
from arsim_core.protocol import framing
from arsim_core.protocol.appearance import DEFAULT, Appearance, AppearanceRanges
from arsim_core.protocol.messages import CarSettings, InitialSettings, TrackRequest, in_process
from arsim_core.track import load_track
from arsim_core.track.mesh import join_meshes, placed_cones_mesh
from arsim_core.track.model import Cones, TrackMesh

PERIOD = 50_000_000
CAMERA = {'name': 'cam', 'type': 'camera', 'rate_hz': 20.0,
          'mount': [0.0, 0.0, 0.25, 0.0, 0.1, 0.0],
          'width': 320, 'height': 240, 'fov': 1.4, 'near': 0.05, 'far': 60.0,
          'outputs': ['rgb', 'depth', 'semantic']}
RENDERERS = ['opengl', 'rays']


@pytest.fixture(scope='module')
def hall(repo_root: Path) -> tuple[TrackWorld, tuple[float, ...]]:
    """arsim_ring in its hall, and a pose on the start line looking along the track towards
    the hall's walls, pillars and furniture."""
    track = load_track('arsim_ring', repo_root / 'maps')
    x, y, yaw = track.start_pose
    return TrackWorld.from_track(track, SceneSettings('hall')), (x, y, 0.0, 0.0, 0.0, yaw + 0.3)


def render(track: TrackRequest, pose: tuple[float, ...], appearance: Appearance = DEFAULT,
           camera: dict | None = None) -> dict[str, np.ndarray]:
    """One frame of ``camera`` from ``pose`` by the embedded backend, InitialSettings read
    back from the wire as a backend reads it."""
    settings = InitialSettings(track=track, frame_period_ns=PERIOD, appearance=appearance,
                               cars=(CarSettings('ego', None, (camera or CAMERA,)),))
    backend = EmbeddedBackend()
    backend.apply(InitialSettings.from_wire(in_process(settings)))
    frames = backend.render_frames(PERIOD, {'ego': pose}, [('ego', 'cam')])
    return {name.rsplit('/', 1)[1]: np.array(image) for name, image in frames.items()}


def local_contrast(rgb: np.ndarray, semantic: np.ndarray, block: int = 8) -> float:
    """Mean over the 8 x 8 blocks that show one class (not the sky) of their grey levels'
    standard deviation: texture inside surfaces, no edges between them."""
    grey = rgb.astype(float).mean(axis=2)
    height, width = (side // block * block for side in grey.shape)

    def blocks(image: np.ndarray) -> np.ndarray:
        return image[:height, :width].reshape(height // block, block, width // block, block) \
            .swapaxes(1, 2).reshape(-1, block * block)

    grey_blocks, classes = blocks(grey), blocks(semantic)
    single = (classes == classes[:, :1]).all(axis=1) & (classes[:, 0] != labels.NONE)
    assert single.sum() > 200
    return float(grey_blocks[single].std(axis=1).mean())


@pytest.fixture(params=RENDERERS)
def renderer(request, monkeypatch) -> str:
    monkeypatch.setenv('ARSIM_CAMERA_RENDERER', request.param)
    return request.param


# --- (a) texture ---------------------------------------------------------------------------
def test_surfaces_have_texture_where_flat_colours_had_none(hall, renderer) -> None:
    world, pose = hall
    textured = render(world.track_request(), pose)
    flat = render(world.track_request(), pose, Appearance(texture_contrast=0.0))
    # Flat shading (the renderer before textures, and texture_contrast 0) measures about
    # 0.2 here: only blocks across two faces of one object differ inside.
    assert local_contrast(flat['rgb'], flat['semantic']) < 1.0
    assert local_contrast(textured['rgb'], textured['semantic']) > 4.0


# --- (b) what appearance never changes ---------------------------------------------------------
def test_class_ids_and_depth_are_the_same_under_any_appearance(hall, renderer) -> None:
    world, pose = hall
    track = world.track_request()
    default = render(track, pose)
    other = render(track, pose, Appearance(sun_azimuth_rad=-2.0, sun_elevation_rad=0.3,
                                           sun_intensity=2.0, sky_intensity=0.5, exposure=1.7,
                                           texture_seed=7, color_jitter=0.6))
    flat = render(track, pose, Appearance(texture_contrast=0.0))
    for images in (other, flat):
        np.testing.assert_array_equal(images['semantic'], default['semantic'])
        np.testing.assert_array_equal(images['depth'], default['depth'])
    reseeded = render(track, pose, Appearance(texture_seed=7))
    np.testing.assert_array_equal(reseeded['semantic'], default['semantic'])
    changed = np.any(reseeded['rgb'] != default['rgb'], axis=2)
    assert changed[default['semantic'] != labels.NONE].mean() > 0.3  # another texture
    assert not changed[default['semantic'] == labels.NONE].any()  # the same sky


def test_light_follows_the_sun_and_the_exposure(hall, renderer) -> None:
    world, pose = hall
    track = world.track_request()
    road = render(track, pose)['semantic'] == labels.ROAD

    def road_grey(appearance: Appearance) -> float:
        return float(render(track, pose, appearance)['rgb'][road].mean())

    base = road_grey(DEFAULT)
    assert road_grey(Appearance(sun_elevation_rad=0.1)) < base - 10  # low sun, flat road
    assert road_grey(Appearance(exposure=0.4)) < 0.85 * base
    assert road_grey(Appearance(sun_intensity=0.0)) < road_grey(Appearance(sun_intensity=2.0))


# --- cones and cars ------------------------------------------------------------------------------
def test_cones_wear_their_stripes_standing_and_lying(renderer) -> None:
    kinds = [labels.CONE_BLUE, labels.CONE_YELLOW, labels.CONE_BIG_ORANGE]
    cones = Cones(np.array([[1.5, 0.4], [1.5, -0.4], [2.0, 0.0], [1.2, 0.0]]),
                  np.array([*kinds, labels.CONE_ORANGE]))
    lying = np.full((4, 3), np.nan)
    lying[3] = [1.2, 0.0, 1.6]  # knocked over, its tip pointing to the left
    side = 20.0
    ground = TrackMesh(np.array([[-side, -side, -0.001], [side, -side, -0.001],
                                 [side, side, -0.001], [-side, side, -0.001]], np.float32),
                       np.array([[0, 1, 2], [0, 2, 3]], np.uint32),
                       np.full(2, labels.ROAD, np.uint8))
    mesh = join_meshes(ground, placed_cones_mesh(cones, lying))
    camera = {**CAMERA, 'mount': [0.0, 0.0, 0.3, 0.0, 0.15, 0.0], 'width': 480, 'height': 360}
    images = render(TrackRequest('cones', mesh.vertices, mesh.triangles, mesh.labels),
                    (0.0, 0.0, 0.0, 0.0, 0.0, 0.0), camera=camera)
    rgb, semantic = images['rgb'].astype(float), images['semantic']
    for label in (*kinds, labels.CONE_ORANGE):
        pixels = rgb[semantic == label]
        assert len(pixels) > 100, label
        white = (pixels.min(axis=1) > 100) & (np.ptp(pixels, axis=1) < 45)
        black = pixels.max(axis=1) < 40
        stripe = black if label == labels.CONE_YELLOW else white
        assert 0.08 < stripe.mean() < 0.5, (label, stripe.mean())  # a band, not the cone
    blue = rgb[semantic == labels.CONE_BLUE]
    assert np.median(blue[:, 2]) > np.median(blue[:, 0]) + 50  # and the rest its colour


def test_kerbs_are_red_and_white_blocks(renderer, shared_tracks: Path) -> None:
    track = load_track(str(shared_tracks / 'tum_racetrack_database' / 'Spielberg.csv'))
    world = TrackWorld.from_track(track, SceneSettings('none'))
    corner = int(np.argmax(np.abs(track.curvature)))
    side = 1.0 if track.curvature[corner] > 0 else -1.0  # the inside of the corner
    x, y = track.left_boundary[corner] if side > 0 else track.right_boundary[corner]
    camera = {**CAMERA, 'mount': [0.0, 0.0, 0.0, 0.0, 1.45, 0.0], 'fov': 0.8}
    images = render(world.track_request(), (x, y, 4.0, 0.0, 0.0, track.heading[corner]),
                    camera=camera)
    kerb = images['semantic'] == labels.KERB
    assert kerb.mean() > 0.1
    pixels = images['rgb'][kerb].astype(float)
    red = pixels[:, 0] > pixels[:, 1] + 60
    white = (pixels.min(axis=1) > 150) & (np.ptp(pixels, axis=1) < 45)
    assert 0.2 < red.mean() < 0.8 and 0.2 < white.mean() < 0.8, (red.mean(), white.mean())


def test_far_road_never_shows_the_ground_beneath_it(shared_tracks: Path, monkeypatch) -> None:
    """Road 1 mm above the ground, 300 m of view from a near plane of 5 cm: the raster pushes
    the lower layer back in its depth buffer, so it labels the far road as the exact ray
    caster does rather than letting the ground show through in patches."""
    track = load_track(str(shared_tracks / 'tum_racetrack_database' / 'Spielberg.csv'))
    world = TrackWorld.from_track(track, SceneSettings('none'))
    i = (int(np.argmax(np.abs(track.curvature))) - 25) % len(track.s)  # 125 m before a hairpin
    x, y = track.centerline[i]
    camera = {**CAMERA, 'mount': [0.0, 0.0, 1.2, 0.0, 0.05, 0.0], 'near': 0.05, 'far': 300.0}
    pose = (x, y, 0.0, 0.0, 0.0, track.heading[i])
    semantic = {}
    for renderer in RENDERERS:
        monkeypatch.setenv('ARSIM_CAMERA_RENDERER', renderer)
        semantic[renderer] = render(world.track_request(), pose, camera=camera)['semantic']
    road = semantic['rays'] == labels.ROAD
    assert road.sum() > 5000
    # without the push back, about 260 of these pixels showed the ground
    assert np.count_nonzero(semantic['opengl'][road] == labels.GROUND) < 20


F1TENTH_WHEELS = Wheels(-0.17145, 0.15875, 0.05, 0.035)  # as arsim_description draws them


@pytest.mark.parametrize('footprint', [
    None, Footprint(0.58, 0.31, 0.2), Footprint(0.58, 0.31, 0.2, F1TENTH_WHEELS),
    Footprint(4.5, 1.8, 1.4, Wheels(-1.42, 1.16, 0.344, 0.24)),
    Footprint(1.0, 0.5, 0.2, Wheels(-0.5, 0.5, 0.3, 0.4))],  # wheels too big for the box
    ids=['generic', 'no wheels', 'f1tenth', 'full scale', 'oversized'])
def test_the_car_model_stays_inside_its_footprint(footprint: Footprint | None) -> None:
    vertices, triangles, materials = car_mesh(footprint)
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    assert np.all(low >= [-1.0, -1.0, 0.0]) and np.all(high <= [1.0, 1.0, 1.0])
    assert np.allclose([low[0], low[2], high[0]], [-1.0, 0.0, 1.0])  # bumper to bumper
    assert triangles.max() < len(vertices) and len(materials) == len(triangles)


def test_the_wheels_stand_where_the_description_puts_them() -> None:
    footprint = Footprint(0.58, 0.31, 0.2, F1TENTH_WHEELS)
    vertices, triangles, materials = car_mesh(footprint)
    tyres = vertices[triangles[materials == TYRE]].reshape(-1, 3)
    scale = np.array([footprint.length / 2, footprint.width / 2, footprint.height])
    tyres = tyres * scale  # metres in base_link
    for axle in (F1TENTH_WHEELS.rear_x, F1TENTH_WHEELS.front_x):
        wheel = tyres[np.abs(tyres[:, 0] - axle) <= F1TENTH_WHEELS.radius + 1e-9]
        assert wheel[:, 0].min() == pytest.approx(axle - F1TENTH_WHEELS.radius)
        assert wheel[:, 2].max() == pytest.approx(2 * F1TENTH_WHEELS.radius)
        assert np.abs(wheel[:, 1]).min() == pytest.approx(footprint.width / 2
                                                         - F1TENTH_WHEELS.width)


def test_other_cars_are_car_shaped_and_labelled_car(hall) -> None:
    world, pose = hall
    settings = InitialSettings(track=world.track_request(), frame_period_ns=PERIOD,
                               cars=(CarSettings('ego', None, (CAMERA,)),
                                     CarSettings('rival', Footprint(0.58, 0.31, 0.2))))
    backend = EmbeddedBackend()
    backend.apply(InitialSettings.from_wire(in_process(settings)))
    x, y, _, _, _, yaw = pose
    ahead = (x + 1.2 * np.cos(yaw), y + 1.2 * np.sin(yaw), 0.0, 0.0, 0.0, yaw + 0.5)
    frames = backend.render_frames(PERIOD, {'ego': pose, 'rival': ahead}, [('ego', 'cam')])
    semantic, rgb = frames['ego/cam/semantic'], frames['ego/cam/rgb']
    car = semantic == labels.CAR
    assert car.sum() > 500
    colors = rgb[car].astype(float)
    assert np.median(colors[:, 0]) > np.median(colors[:, 1]) + 40  # red paint
    assert (colors.max(axis=1) < 40).mean() > 0.05  # dark tyres and wing


# --- (c) the scenario's appearance section -------------------------------------------------------
def scenario(repo_root: Path, appearance: dict):
    return load_scenario(repo_root / 'config' / 'sim.yaml', repo_root,
                         {'appearance': appearance})


def test_values_and_ranges_are_read_and_drawn_once_per_run(repo_root: Path) -> None:
    assert scenario(repo_root, {}).appearance.draw(0) == DEFAULT  # the file's are the defaults
    ranges = scenario(repo_root, {'sun_elevation_rad': [0.2, 0.6], 'exposure': 1.5,
                                  'texture_seed': [10, 20], 'seed': 3}).appearance
    first = ranges.draw(0)
    assert first == ranges.draw(0)  # the same run seed, the same appearance
    assert 0.2 <= first.sun_elevation_rad <= 0.6 and first.exposure == 1.5
    assert 10 <= first.texture_seed <= 20 and isinstance(first.texture_seed, int)
    draws = {ranges.draw(run).sun_elevation_rad for run in range(10)}
    assert len(draws) == 10  # each run its own
    assert {ranges.draw(run).exposure for run in range(10)} == {1.5}
    reseeded = AppearanceRanges(ranges.ranges, seed=4)
    assert reseeded.draw(0).sun_elevation_rad != first.sun_elevation_rad


def test_the_engine_sends_the_drawn_appearance(repo_root: Path, ring: TrackWorld) -> None:
    loaded = scenario(repo_root, {'sun_azimuth_rad': [-3.0, 3.0], 'color_jitter': 0.3})
    settings = initial_settings(loaded, ring, seed=5)
    assert settings.appearance == loaded.appearance.draw(5)
    assert settings.appearance.color_jitter == 0.3


def test_the_engine_sends_each_cars_wheels_from_its_description(repo_root: Path,
                                                                 ring: TrackWorld) -> None:
    loaded = load_scenario(repo_root / 'config' / 'sim.yaml', repo_root,
                           {'cars': [{'name': 'ego', 'profile': 'f1tenth'},
                                     {'name': 'big', 'profile': 'full_scale'}]})
    cars = initial_settings(loaded, ring).cars
    for car, spec in zip(cars, loaded.cars, strict=True):
        assert car.footprint == replace(spec.profile.footprint, wheels=wheels(spec))
    assert cars[0].footprint.wheels == F1TENTH_WHEELS


@pytest.mark.parametrize(('appearance', 'message'), [
    ({'exposure': 0}, r'appearance\.exposure: expected a number in \(0, 10\]'),
    ({'sun_elevation_rad': 2.0}, r'appearance\.sun_elevation_rad: expected a number in \[0, '),
    ({'color_jitter': [0.5, 0.1]}, r'appearance\.color_jitter: .*\(low <= high\)'),
    ({'texture_seed': 1.5}, r'appearance\.texture_seed: expected an integer in'),
    ({'sky_intensity': [0, 1, 2]}, r'appearance\.sky_intensity: expected'),
    ({'sun_intensity': 'bright'}, r'appearance\.sun_intensity: expected'),
    ({'fog': 1.0}, r'appearance\.fog: unknown key, expected one of: color_jitter'),
    ({'seed': -1}, r'appearance\.seed: expected an integer >= 0'),
])
def test_bad_appearance_names_file_and_key(repo_root: Path, appearance: dict,
                                           message: str) -> None:
    with pytest.raises(ConfigError, match=f'sim.yaml:[0-9]+: {message}'):
        scenario(repo_root, appearance)


# --- (d) the protocol ---------------------------------------------------------------------------
def settings_message(header_change: dict) -> framing.Message:
    track = TrackRequest('box', np.zeros((3, 3), np.float32), np.array([[0, 1, 2]], np.uint32))
    header, arrays, meta = InitialSettings(track=track).to_wire()
    header = {**header, **header_change}
    header = {key: value for key, value in header.items() if value is not None}
    return framing.message(framing.INITIAL_SETTINGS, 0, 0, header, arrays, meta)


def test_appearance_survives_the_wire_and_defaults_when_absent() -> None:
    track = TrackRequest('box', np.zeros((3, 3), np.float32), np.array([[0, 1, 2]], np.uint32))
    sent = InitialSettings(track=track, appearance=Appearance(
        sun_azimuth_rad=-1.0, sun_elevation_rad=0.2, sun_intensity=3.0, sky_intensity=0.0,
        exposure=0.5, texture_seed=123, texture_contrast=2.0, color_jitter=1.0))
    frames = [bytes(frame) for frame in framing.encode(
        sent.TOPIC, 0, 0, *sent.to_wire())]
    message = framing.decode(frames)
    assert InitialSettings.from_wire(message) == sent
    assert message.header['appearance'] == {  # the keys docs/protocol.md lists
        'sun_azimuth_rad': -1.0, 'sun_elevation_rad': 0.2, 'sun_intensity': 3.0,
        'sky_intensity': 0.0, 'exposure': 0.5, 'texture_seed': 123, 'texture_contrast': 2.0,
        'color_jitter': 1.0}
    assert InitialSettings.from_wire(settings_message({'appearance': None})).appearance == DEFAULT
    partial = InitialSettings.from_wire(settings_message({'appearance': {'exposure': 2,
                                                                         'haze': 0.3}}))
    assert partial.appearance == Appearance(exposure=2.0)  # others default, unknown ignored


def test_wheels_survive_the_wire_and_are_none_when_absent() -> None:
    track = TrackRequest('box', np.zeros((3, 3), np.float32), np.array([[0, 1, 2]], np.uint32))
    sent = InitialSettings(track=track, cars=(
        CarSettings('ego', Footprint(0.58, 0.31, 0.2, F1TENTH_WHEELS)),
        CarSettings('rival', Footprint(0.58, 0.31, 0.2))))
    message = framing.decode([bytes(f) for f in framing.encode(sent.TOPIC, 0, 0,
                                                                 *sent.to_wire())])
    assert message.header['cars'][0]['wheels'] == [-0.17145, 0.15875, 0.05, 0.035]
    assert 'wheels' not in message.header['cars'][1]
    back = InitialSettings.from_wire(message)
    assert [car.footprint for car in back.cars] == [car.footprint for car in sent.cars]


@pytest.mark.parametrize(('appearance', 'key'), [
    ('bright', "'appearance'"), ([1.0], "'appearance'"),
    ({'exposure': 'high'}, "'exposure'"), ({'exposure': 0.0}, "'exposure'"),
    ({'sun_elevation_rad': 3.0}, "'sun_elevation_rad'"), ({'texture_seed': 1.5}, "'texture_seed'"),
    ({'texture_seed': -1}, "'texture_seed'"), ({'color_jitter': True}, "'color_jitter'"),
    ({'sky_intensity': None}, "'sky_intensity'"),
])
def test_bad_appearance_on_the_wire_is_refused_naming_the_key(appearance: object,
                                                              key: str) -> None:
    with pytest.raises(ProtocolError, match=key):
        InitialSettings.from_wire(settings_message({'appearance': appearance}))
