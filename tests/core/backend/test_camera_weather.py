"""Weather in camera images, with the embedded backend's real camera renderer: rain darkens
the road, fog follows Koschmieder's law with depth, headlights light the road at night, and
depth and class ids never change."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from arsim_core import labels
from arsim_core.backend import camera_weather
from arsim_core.backend.server import EmbeddedBackend
from arsim_core.config.scenario import SceneSettings
from arsim_core.engine.world import TrackWorld
from arsim_core.protocol.appearance import DEFAULT, Appearance
from arsim_core.protocol.messages import CarSettings, InitialSettings
from arsim_core.protocol.weather import CLEAR, Weather
from arsim_core.track import load_track

ROOT = Path(__file__).resolve().parents[3]
CAMERA = {'name': 'cam', 'type': 'camera', 'rate_hz': 10.0, 'mount': [1.0, 0.0, 1.2, 0, 0.05, 0],
          'width': 160, 'height': 90, 'fov': 1.6, 'near': 0.1, 'far': 400.0,
          'outputs': ['rgb', 'depth', 'semantic']}
ONLY_RGB = {**CAMERA, 'name': 'rgb_only', 'outputs': ['rgb']}
OVERCAST = Weather(cloud_cover=1.0)


@pytest.fixture(scope='module')
def backend() -> EmbeddedBackend:
    world = TrackWorld.from_track(load_track('arsim_ring_full_scale', ROOT / 'maps'),
                                  SceneSettings(kind='none'))
    backend = EmbeddedBackend()
    backend.apply(InitialSettings(track=world.track_request(),
                                  cars=(CarSettings('ego', None, (CAMERA, ONLY_RGB)),)))
    x, y, yaw = world.start_pose
    backend.pose = [x, y, 0.0, 0.0, 0.0, yaw]  # type: ignore[attr-defined]
    return backend


def images(backend: EmbeddedBackend, weather: Weather, appearance: Appearance = DEFAULT,
           camera: str = 'cam') -> dict[str, np.ndarray]:
    backend.set_conditions(appearance, weather)
    rendered = backend.render(1, {'ego': backend.pose}, [('ego', camera)])  # type: ignore[attr-defined]
    return {o.suffix: o.array.copy() for o in rendered[0][1].outputs}


def linear(rgb: np.ndarray) -> np.ndarray:
    color = rgb.astype(np.float64) / 255.0
    return color * color


def test_rain_darkens_the_road_and_leaves_depth_and_labels(backend: EmbeddedBackend) -> None:
    dry = images(backend, OVERCAST)
    wet = images(backend, Weather(cloud_cover=1.0, rain_rate_mm_h=8.0))
    road = np.isin(dry['/semantic'], (labels.ROAD, labels.KERB))
    assert road.mean() > 0.2
    dry_road, wet_road = dry['/rgb'][road].mean(), wet['/rgb'][road].mean()
    assert wet_road < 0.85 * dry_road
    other = ~road & (dry['/semantic'] != labels.NONE)
    np.testing.assert_array_equal(wet['/rgb'][other], dry['/rgb'][other])
    np.testing.assert_array_equal(wet['/semantic'], dry['/semantic'])
    np.testing.assert_array_equal(wet['/depth'], dry['/depth'])
    # The wet film mirrors the sky more where the view grazes the road: far road pixels keep
    # more of their dry brightness than near ones.
    rows = np.nonzero(road.any(axis=1))[0]
    far, near = rows.min() + 2, rows.max()
    ratio = [wet['/rgb'][r][road[r]].mean() / dry['/rgb'][r][road[r]].mean() for r in (far, near)]
    assert ratio[0] > ratio[1]


def test_fog_follows_koschmieders_law_with_depth(backend: EmbeddedBackend) -> None:
    visibility = 80.0
    clear = images(backend, CLEAR)
    fog = images(backend, Weather(fog_visibility_m=visibility))
    depth = clear['/depth']
    intrinsics = backend.sensors[('ego', 'cam')].intrinsics  # type: ignore[union-attr]
    rays = intrinsics.pixel_directions()
    distance = depth / rays[..., 2]
    through = np.exp(-3.912 / visibility * distance)[..., None]
    horizon = np.square(DEFAULT.sky_gradient()[0])
    airlight = float(horizon @ camera_weather.LUMINANCE) * camera_weather.FOG_GREY
    expected = np.sqrt(linear(clear['/rgb']) * through + airlight * (1.0 - through)) * 255.0
    hit = np.isfinite(distance)
    assert np.abs(fog['/rgb'][hit] - expected[hit]).max() <= 1.0  # one step of rounding
    assert np.all(np.abs(fog['/rgb'][~hit] - np.sqrt(airlight) * 255.0) <= 1.0)  # sky: fog
    # Contrast between road and barriers falls with distance: at the visibility it is 2 %.
    assert np.abs(fog['/rgb'].astype(float) - np.sqrt(airlight) * 255.0)[hit].max() \
        < np.abs(clear['/rgb'].astype(float) - np.sqrt(airlight) * 255.0)[hit].max()
    np.testing.assert_array_equal(fog['/depth'], clear['/depth'])


def test_a_colour_camera_publishes_only_colour_in_fog(backend: EmbeddedBackend) -> None:
    foggy = images(backend, Weather(fog_visibility_m=50.0), camera='rgb_only')
    clear = images(backend, CLEAR, camera='rgb_only')
    assert set(foggy) == set(clear) == {'/rgb'}
    assert foggy['/rgb'].std() < clear['/rgb'].std()


def test_headlights_light_the_road_ahead_at_night(backend: EmbeddedBackend) -> None:
    night = Appearance(sun_intensity=0.0, sky_intensity=0.01)
    dark = images(backend, CLEAR, night)
    lit = images(backend, Weather(headlights=1.0), night)
    road = np.isin(dark['/semantic'], (labels.ROAD, labels.KERB))
    ahead = road & (dark['/depth'] > 10.0) & (dark['/depth'] < 40.0)  # where dipped beams aim
    assert ahead.sum() > 100 and dark['/rgb'][road].mean() < 20
    assert lit['/rgb'][ahead].mean() > dark['/rgb'][ahead].mean() + 20
    assert lit['/rgb'][road].mean() > dark['/rgb'][road].mean()
    sky = dark['/semantic'] == labels.NONE
    np.testing.assert_array_equal(lit['/rgb'][sky], dark['/rgb'][sky])


def test_overcast_greys_the_sky(backend: EmbeddedBackend) -> None:
    clear, grey = images(backend, CLEAR), images(backend, OVERCAST)
    sky = clear['/semantic'] == labels.NONE
    assert sky.any()
    blue = clear['/rgb'][sky].astype(float)
    overcast = grey['/rgb'][sky].astype(float)
    assert (overcast[:, 2] - overcast[:, 0]).mean() < 0.2 * (blue[:, 2] - blue[:, 0]).mean()


def test_clear_weather_renders_only_what_is_asked(backend: EmbeddedBackend) -> None:
    camera = backend.sensors[('ego', 'rgb_only')]
    view = camera.view(backend.pose, 0)  # type: ignore[union-attr, attr-defined]
    assert camera_weather.view_for(CLEAR, view) is view
    assert camera_weather.view_for(Weather(rain_rate_mm_h=1.0), view).outputs == (
        'rgb', 'depth', 'semantic')
