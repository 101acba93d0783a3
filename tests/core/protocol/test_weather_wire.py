"""The weather on the wire: InitialSettings' ``weather`` round-trips, absent is clear, and
values out of their limits are refused naming the key."""

from __future__ import annotations

import math

import pytest

from arsim_core.errors import ProtocolError
from arsim_core.protocol.weather import CLEAR, KOSCHMIEDER, Weather


def test_weather_round_trips_and_absent_is_clear() -> None:
    weather = Weather(cloud_cover=0.3, fog_visibility_m=250.0, rain_rate_mm_h=12.0,
                      headlights=1.0)
    assert Weather.from_wire({'weather': weather.to_wire()}) == weather
    assert Weather.from_wire({}) == CLEAR and CLEAR.clear and not weather.clear
    assert Weather.from_wire({'weather': {'fog_visibility_m': 0}}) == CLEAR
    assert Weather.from_wire({'weather': {'snow': 1}}) == CLEAR  # a newer peer's key
    assert weather.fog_extinction_per_m == pytest.approx(KOSCHMIEDER / 250.0)
    assert KOSCHMIEDER == pytest.approx(3.912, abs=1e-3)
    assert math.exp(-weather.fog_extinction_per_m * 250.0) == pytest.approx(0.02)


@pytest.mark.parametrize(('given', 'message'), [
    ({'cloud_cover': 2}, r"weather: key 'cloud_cover' must be a number in \[0, 1\]"),
    ({'fog_visibility_m': 1.0}, r"key 'fog_visibility_m' must be a number in \[5, 100000\]"),
    ({'rain_rate_mm_h': float('nan')}, r"key 'rain_rate_mm_h' must be a number"),
    ({'headlights': 'yes'}, r"key 'headlights' must be a number"),
])
def test_weather_out_of_its_limits_is_refused(given: dict, message: str) -> None:
    with pytest.raises(ProtocolError, match=message):
        Weather.from_wire({'weather': given})
    with pytest.raises(ProtocolError, match="key 'weather' must be an object"):
        Weather.from_wire({'weather': [1]})
