"""The scenario's ``conditions``: the sun placed from date, time and place, light levels,
weather numbers, ranges drawn per run, and bad values refused at start with file:line:key."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml

from arsim_core.config import conditions as cond
from arsim_core.config.scenario import load_scenario
from arsim_core.engine.render import initial_settings
from arsim_core.engine.world import TrackWorld
from arsim_core.errors import ConfigError
from arsim_core.protocol.appearance import DEFAULT
from arsim_core.protocol.messages import InitialSettings, in_process
from arsim_core.protocol.weather import CLEAR, Weather
from arsim_core.track import load_track

ROOT = Path(__file__).resolve().parents[3]
MUNICH = {'latitude_deg': 48.14, 'longitude_deg': 11.58}


def scenario(tmp_path: Path, conditions: Any, **extra: Any) -> Path:
    path = tmp_path / 'scenario.yaml'
    text = yaml.safe_dump({'simulation': {}, 'track': {'name': 'arsim_ring'},
                           'cars': [{'name': 'ego', 'profile': 'f1tenth'}],
                           'conditions': conditions, **extra}, sort_keys=False)
    path.write_text(text.replace("'2026", '2026').replace(":00'", ':00'))
    return path


def test_the_sun_follows_date_time_and_place() -> None:
    summer = timezone(timedelta(hours=2))
    noon_az, noon_el = cond.sun_position(datetime(2026, 6, 21, 13, 20, tzinfo=summer),
                                         **MUNICH)
    # Solar noon at 48 N at the June solstice: due south, 90 - 48.1 + 23.4 degrees up.
    assert math.degrees(noon_el) == pytest.approx(65.3, abs=0.3)
    assert noon_az == pytest.approx(-math.pi / 2, abs=math.radians(3))  # south is -y
    evening_az, evening_el = cond.sun_position(datetime(2026, 6, 21, 20, 0, tzinfo=summer),
                                               **MUNICH)
    assert 0 < math.degrees(evening_el) < 15
    assert abs(evening_az) > math.radians(150)  # in the west (north-west), the world's -x
    _, night_el = cond.sun_position(datetime(2026, 6, 21, 23, 59, tzinfo=summer), **MUNICH)
    assert night_el < 0


def test_light_levels_fall_with_the_sun_and_under_clouds() -> None:
    assert cond.direct_light(cond.REFERENCE_ELEVATION) == pytest.approx(1.0)
    assert cond.sky_light(cond.REFERENCE_ELEVATION) == pytest.approx(1.0)
    elevations = [math.radians(d) for d in (80, 40, 10, 2)]
    direct = [cond.direct_light(e) for e in elevations]
    assert direct == sorted(direct, reverse=True) and direct[-1] > 0
    assert cond.direct_light(-0.01) == 0.0
    twilight = [cond.sky_light(math.radians(d)) for d in (0, -3, -6, -12, -30)]
    assert twilight[0] == pytest.approx(cond.SKY_AT_HORIZON)
    assert twilight[1] == pytest.approx(0.1 * twilight[0])  # a decade per 3 degrees
    assert twilight[-1] == cond.NIGHT_SKY
    assert cond.cloud_factors(0.0) == pytest.approx((1.0, 1.0))
    sun, sky = cond.cloud_factors(1.0)
    assert sun == pytest.approx(0.0) and sky == pytest.approx(0.25 / 0.3)


def test_night_is_dark_with_headlights_on(tmp_path: Path) -> None:
    loaded = load_scenario(scenario(tmp_path, {'time': '2026-06-21T23:30:00',
                                               'timezone': 'Europe/Berlin', **MUNICH}), ROOT)
    appearance, weather = cond.light_and_weather(loaded.appearance, loaded.conditions)
    assert appearance.sun_intensity == 0.0 and appearance.sun_elevation_rad == 0.0
    assert appearance.sky_intensity < 0.01
    assert weather == Weather(headlights=1.0)
    day = cond.Conditions(datetime(2026, 6, 21, 12, tzinfo=timezone.utc), **MUNICH)
    assert day.resolve(DEFAULT)[1] == CLEAR
    assert cond.Conditions(headlights=0.3).resolve(DEFAULT)[1].headlights == 0.3


def test_conditions_reach_initial_settings_and_the_wire(tmp_path: Path) -> None:
    loaded = load_scenario(scenario(tmp_path, {
        'time': '2026-03-20T12:00:00', 'timezone': '+01:00', **MUNICH, 'cloud_cover': 0.5,
        'fog': {'visibility_m': 200}, 'rain': {'rate_mm_h': 2.5}, 'headlights': 'on'}), ROOT)
    world = TrackWorld.from_track(load_track('arsim_ring', ROOT / 'maps'))
    settings = initial_settings(loaded, world, seed=4)
    assert settings.weather == Weather(0.5, 200.0, 2.5, 1.0)
    assert settings.weather.fog_extinction_per_m == pytest.approx(-math.log(0.02) / 200)
    assert settings.weather.needs() == ('overcast', 'fog', 'rain', 'headlights')
    direct, diffuse = cond.cloud_factors(0.5)
    _, elevation = cond.sun_position(datetime(2026, 3, 20, 12, tzinfo=timezone(
        timedelta(hours=1))), **MUNICH)
    assert settings.appearance.sun_elevation_rad == pytest.approx(elevation)
    assert settings.appearance.sun_intensity == pytest.approx(
        cond.direct_light(elevation) * direct)
    assert settings.appearance.sky_intensity == pytest.approx(cond.sky_light(elevation) * diffuse)
    again = InitialSettings.from_wire(in_process(settings))
    assert again.weather == settings.weather and again.appearance == settings.appearance


def test_without_a_time_clouds_scale_the_appearances_sun(tmp_path: Path) -> None:
    loaded = load_scenario(scenario(tmp_path, {'cloud_cover': 1.0},
                                    appearance={'sun_intensity': 2.0}), ROOT)
    appearance, weather = cond.light_and_weather(loaded.appearance, loaded.conditions)
    assert appearance.sun_intensity == pytest.approx(0.0)
    assert appearance.sky_intensity == pytest.approx(0.25 / 0.3)
    assert appearance.sun_elevation_rad == DEFAULT.sun_elevation_rad
    assert weather.cloud_cover == 1.0


def test_ranges_are_drawn_per_run_within_them(tmp_path: Path) -> None:
    loaded = load_scenario(scenario(tmp_path, {
        'time': ['2026-06-21T06:00:00', '2026-06-21T21:00:00'], **MUNICH,
        'cloud_cover': [0.0, 1.0], 'fog': {'visibility_m': [50, 500]},
        'rain': {'rate_mm_h': [0, 10]}, 'seed': 2}), ROOT)
    ranges = loaded.conditions
    assert ranges is not None
    draws = [ranges.draw(seed) for seed in range(30)]
    assert draws[3] == ranges.draw(3)
    for d in draws:
        assert d.time is not None and 6 <= d.time.hour <= 21
        assert 0.0 <= d.cloud_cover <= 1.0 and 50 <= d.fog_visibility_m <= 500
        assert 0.0 <= d.rain_rate_mm_h <= 10
    assert len({d.cloud_cover for d in draws}) == 30
    assert len({d.time for d in draws}) == 30


def test_the_place_comes_from_a_gnss_origin(tmp_path: Path, repo_root: Path) -> None:
    profile = yaml.safe_load((repo_root / 'config' / 'cars' / 'f1tenth.yaml').read_text())
    profile['Sensors'] = {'gnss': {'type': 'gnss', 'rate_hz': 10.0, 'position': [0, 0, 0.3],
                                   'origin': [-33.87, 151.21, 10.0]}}
    (tmp_path / 'gnss_car.yaml').write_text(yaml.safe_dump(profile))
    path = scenario(tmp_path, {'time': '2026-06-21T12:00:00'})
    data = yaml.safe_load(path.read_text())
    data['cars'][0]['profile'] = str(tmp_path / 'gnss_car.yaml')
    path.write_text(yaml.safe_dump(data))
    loaded = load_scenario(path, ROOT)
    assert loaded.conditions is not None
    drawn = loaded.conditions.draw()
    assert (drawn.latitude_deg, drawn.longitude_deg) == (-33.87, 151.21)
    assert drawn.time is not None and drawn.time.utcoffset() == timedelta(hours=10.08)


@pytest.mark.parametrize(('conditions', 'extra', 'where', 'message'), [
    ({'fog': {'visibility_m': 2}}, {}, 'conditions.fog.visibility_m',
     r'expected a number in \[5, 100000\]'),
    ({'rain': {'rate_mm_h': 400}}, {}, 'conditions.rain.rate_mm_h',
     r'expected a number in \[0, 150\]'),
    ({'cloud_cover': 1.5}, {}, 'conditions.cloud_cover', r'expected a number in \[0, 1\]'),
    ({'cloud_cover': [0.8, 0.2]}, {}, 'conditions.cloud_cover', r'low <= high'),
    ({'fog': {'density': 3}}, {}, 'conditions.fog.density', 'unknown key'),
    ({'snow': 1}, {}, 'conditions.snow', 'unknown key'),
    ({'time': 'teatime', **MUNICH}, {}, 'conditions.time', 'expected a local date and time'),
    ({'time': '2026-06-21T12:00:00'}, {}, 'conditions.time', 'needs the track\'s place'),
    ({'time': '2026-06-21T12:00:00', **MUNICH, 'timezone': 'Mars/Olympus'}, {},
     'conditions.timezone', 'IANA time zone'),
    ({'timezone': 'UTC'}, {}, 'conditions.timezone', 'a timezone needs a time'),
    ({'latitude_deg': 95.0}, {}, 'conditions.latitude_deg', r'\[-90, 90\]'),
    ({'headlights': 'bright'}, {}, 'conditions.headlights', 'expected one of'),
    ({'time': '2026-06-21T12:00:00', **MUNICH}, {'appearance': {'sun_elevation_rad': 0.3}},
     'appearance.sun_elevation_rad', 'conditions.time places the sun .* and wins'),
])
def test_bad_conditions_fail_at_start_with_file_line_and_key(
        tmp_path: Path, conditions: dict[str, Any], extra: dict[str, Any], where: str,
        message: str) -> None:
    path = scenario(tmp_path, conditions, **extra)
    with pytest.raises(ConfigError, match=rf'scenario\.yaml:\d+: {where}: .*{message}'):
        load_scenario(path, ROOT)
