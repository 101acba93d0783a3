"""Weather in LiDAR returns, on the embedded backend's real ray casting and range model: in fog
the share of returns falls with range as the documented model predicts, fog echoes and spray
come back near the sensor, rain drops returns as its rate says, and clear air changes
nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arsim_core import labels
from arsim_core.backend import lidar_effects, lidar_weather
from arsim_core.backend.server import EmbeddedBackend
from arsim_core.protocol.messages import CarSettings, InitialSettings, TrackRequest
from arsim_core.protocol.weather import CLEAR, Weather

PERIOD = 50_000_000
HEIGHT = 2.0  # the sensor above the ground [m]
DETECTION_RANGE = 100.0  # a 10 % target at normal incidence is seen to here
CHANNELS, COLUMNS = 128, 512
# Down-looking channels: the ground from 2.3 m to 115 m away.
ELEVATIONS = [-math.radians(a) for a in np.geomspace(1.0, 60.0, CHANNELS)]
LIDAR = {'name': 'os', 'type': 'lidar3d', 'rate_hz': 20.0, 'mount': [0.0, 0.0, HEIGHT, 0, 0, 0],
         'channels': CHANNELS, 'columns': COLUMNS, 'azimuth_start': math.pi,
         'azimuth_increment': -2 * math.pi / COLUMNS, 'elevations': ELEVATIONS,
         'range_min': 0.3, 'range_max': 200.0, 'noise_std': 0.0, 'dropout': 0.0,
         'detection_range': DETECTION_RANGE, 'labels': True}


def ground() -> TrackRequest:
    """A flat field of grass, 600 m a side, around the origin."""
    g = 300.0
    vertices = np.array([(-g, -g, 0), (g, -g, 0), (g, g, 0), (-g, g, 0)], np.float32)
    return TrackRequest('field', vertices, np.array([(0, 1, 2), (0, 2, 3)], np.uint32),
                        np.full(2, labels.GROUND, np.uint8))


def scan(weather: Weather, seed: int = 3) -> dict[str, np.ndarray]:
    backend = EmbeddedBackend()
    backend.apply(InitialSettings(track=ground(), seed=seed, weather=weather,
                                  cars=(CarSettings('ego', None, (LIDAR,)),)))
    rendered = backend.render(PERIOD, {'ego': [0.0] * 6}, [('ego', 'os')])
    return {o.suffix: o.array for o in rendered[0][1].outputs}


def ground_ranges() -> np.ndarray:
    """Each beam's distance to the ground (channels, columns)."""
    per_channel = HEIGHT / np.sin(-np.asarray(ELEVATIONS))
    return np.repeat(per_channel[:, None], COLUMNS, axis=1)


def detected(distance: np.ndarray, sigma: float) -> np.ndarray:
    """The documented threshold: signal ``SCALE rho cos / r^2 exp(-2 sigma r)`` against a
    10 % target's at normal incidence at the detection range (``lidar_effects``)."""
    rho = labels.REFLECTIVITY[labels.GROUND]
    cosine = HEIGHT / distance
    signal = lidar_effects.SCALE * rho * cosine / distance ** 2 * np.exp(-2 * sigma * distance)
    return signal >= lidar_effects.detection_signal(DETECTION_RANGE)


def echo_before(distance: np.ndarray) -> np.ndarray:
    """P(a fog echo at range_min + Gamma(2, scale) lands before ``distance``)."""
    x = np.maximum(distance - LIDAR['range_min'], 0.0) / lidar_weather.FOG_ECHO_SCALE_M
    with np.errstate(invalid='ignore'):
        return np.where(np.isinf(x), 1.0, 1.0 - np.exp(-x) * (1.0 + x))


@pytest.mark.parametrize('visibility', [60.0, 150.0])
def test_fog_returns_fall_with_range_as_the_model_predicts(visibility: float) -> None:
    weather = Weather(fog_visibility_m=visibility)
    sigma = weather.fog_extinction_per_m
    out = scan(weather)
    distance = ground_ranges()
    from_ground = out['/labels'] == labels.GROUND
    p_echo = lidar_weather.fog_echo_probability(weather)
    expected = detected(distance, sigma) * (1.0 - p_echo * echo_before(distance))
    # Per range bin: the measured share of beams returning from the ground against the
    # model's, within four binomial standard deviations (and 1 % for rounding at the cut).
    edges = np.geomspace(distance.min(), distance.max() * 1.0001, 16)
    bins = np.digitize(distance, edges)
    shares = []
    for b in np.unique(bins):
        chosen = bins == b
        n = chosen.sum()
        p = expected[chosen].mean()
        measured = from_ground[chosen].mean()
        tolerance = 4.0 * math.sqrt(max(p * (1 - p), 1e-4) / n) + 0.01
        assert measured == pytest.approx(p, abs=tolerance), (distance[chosen].mean(), n)
        shares.append(measured)
    assert shares[0] > 0.5 and shares[-1] == 0.0  # near returns, none far
    assert np.all(np.diff(shares) <= 0.02)  # falls with range
    # The fog's own echoes: near the sensor, labelled none, about as many as the model says.
    echoes = (out['/labels'] == labels.NONE) & np.isfinite(out[''])
    predicted = (p_echo * echo_before(np.where(detected(distance, sigma), distance,
                                               np.inf))).sum()
    assert echoes.sum() == pytest.approx(predicted, rel=0.1)
    assert np.all(out[''][echoes] < 8.0)
    # The cut moved in: clear air sees the ground much farther.
    clear = scan(CLEAR)
    assert np.isfinite(clear['']).sum() > np.isfinite(out['']).sum()
    assert distance[np.isfinite(clear[''])].max() > 1.5 * distance[from_ground].max()


def test_clear_air_changes_nothing_and_costs_no_draws() -> None:
    backend = EmbeddedBackend()
    backend.apply(InitialSettings(track=ground(), cars=(CarSettings('ego', None, (LIDAR,)),)))
    sensor = backend.sensors[('ego', 'os')]
    assert sensor.model.extinction_per_m == 0.0
    distance = ground_ranges()
    out = scan(CLEAR)
    np.testing.assert_allclose(out[''][detected(distance, 0.0)],
                               distance[detected(distance, 0.0)], rtol=1e-4)
    assert np.all(np.isposinf(out[''][~detected(distance, 0.0)]))


def test_rain_drops_returns_with_its_rate_and_adds_spray_near_the_car() -> None:
    rate = 40.0
    weather = Weather(rain_rate_mm_h=rate)
    out = scan(weather)
    distance = ground_ranges()
    sigma = lidar_weather.rain_extinction_per_m(rate)
    assert sigma == pytest.approx(1.076 * rate ** 0.67 * math.log(10) / 10 / 1000)
    seen = detected(distance, sigma)
    lost = np.isnan(out[''])
    dropout = lidar_weather.rain_dropout(weather)
    assert dropout == pytest.approx(0.16)
    spray_share = lidar_weather.spray_probability(weather)
    # a lost return is NaN unless spray came back on that beam instead
    assert lost[seen].mean() == pytest.approx(dropout * (1 - spray_share), abs=0.01)
    spray = (out['/labels'] == labels.NONE) & np.isfinite(out[''])
    assert np.all(out[''][spray] <= lidar_weather.SPRAY_REACH_M)
    assert spray.mean() > 0.3 * spray_share
    # Heavier rain, more lost returns: the rate is what drives it.
    lighter = scan(Weather(rain_rate_mm_h=5.0))
    assert np.isnan(lighter['']).mean() < 0.5 * lost.mean()


def test_the_same_seed_gives_the_same_weather() -> None:
    weather = Weather(fog_visibility_m=80.0, rain_rate_mm_h=10.0)
    first, again = scan(weather, seed=5), scan(weather, seed=5)
    np.testing.assert_array_equal(first[''], again[''])
    assert not np.array_equal(first[''], scan(weather, seed=6)[''], equal_nan=True)
