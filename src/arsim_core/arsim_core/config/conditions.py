"""Light and weather of a run: the scenario's ``conditions`` section (docs/scenes.md).

One block says when and where the run happens and what the air is like::

    conditions:
      time: 2026-06-21T18:30        # local date and time at the track (or a range of two)
      timezone: Europe/Berlin       # an IANA name or an offset (+02:00); default: the local
                                    # mean solar time of the longitude
      latitude_deg: 48.26           # where the track lies; default: the origin of a car's
      longitude_deg: 11.67          #   GNSS sensor, which places the world frame already
      cloud_cover: 0.4              # 0 clear .. 1 overcast
      fog: {visibility_m: 150}      # meteorological visibility [m]
      rain: {rate_mm_h: 4}          # rain rate [mm/h]
      headlights: auto              # on, off, auto (on while the sun is below the horizon),
                                    # or a strength (1: a full-size car's dipped beams)
      seed: 0                       # with the run's seed, draws the ranges

Every number may be a range ``[low, high]`` drawn once per run, as ``appearance`` keys are.
Conditions resolve into the numbers of ``Appearance`` (where the sun stands and how strong sun
and sky are) and a ``Weather`` record (clouds, fog, rain, headlights) that the backends render.
Where ``time`` is given it places the sun and sets the light, and wins: the scenario may then
not set ``appearance``'s sun and sky keys too (a start-up error says so). Without ``time`` the
appearance's sun stays, and clouds scale its light.

The sun's position comes from ``astral`` (NOAA's solar equations, with refraction). The world
frame's x points east and y north, as for GNSS (``sensors.geodesy``). Light levels:

- direct sun, clear sky: Meinel and Meinel's ``I = 0.7 ** (AM ** 0.678)`` with the air mass
  AM of Kasten and Young (1989), relative to its value at the default appearance's elevation
  (0.9 rad), so a clear midday matches the default look;
- sky light: ``0.25 + 0.75 * sqrt(sin h / sin 0.9)`` above the horizon; below it, twilight
  falls a decade per 3 degrees of solar depression (about 400 lx at sunset to 3 lx at the end
  of civil twilight, -6 degrees), down to a night floor;
- clouds: Kasten and Czeplak (1980), global light ``1 - 0.75 N ** 3.4`` of the clear sky's,
  of which the share ``0.3 + 0.7 N ** 2`` is diffuse (0.3 under a clear sky).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np

from arsim_core.config.sensors import GnssSpec
from arsim_core.protocol.appearance import LIMITS as APPEARANCE_LIMITS
from arsim_core.protocol.appearance import Appearance, AppearanceRanges
from arsim_core.protocol.weather import CLEAR, LIMITS, Weather
from arsim_core.yaml_fields import Section, describe_number

KEYS = ('time', 'timezone', 'latitude_deg', 'longitude_deg', 'cloud_cover', 'fog', 'rain',
        'headlights', 'seed')
HEADLIGHTS = ('auto', 'on', 'off')
# The appearance keys that ``time`` sets: giving both is a conflict.
SUN_KEYS = ('sun_azimuth_rad', 'sun_elevation_rad', 'sun_intensity', 'sky_intensity')
# The numbers drawn per run, in the order of their random streams.
DRAWN = ('time', 'latitude_deg', 'longitude_deg', 'cloud_cover', 'fog_visibility_m',
         'rain_rate_mm_h')
NUMBER_LIMITS: Mapping[str, tuple[float, float]] = {
    'latitude_deg': (-90.0, 90.0), 'longitude_deg': (-180.0, 180.0),
    'cloud_cover': LIMITS['cloud_cover'], 'fog_visibility_m': LIMITS['fog_visibility_m'],
    'rain_rate_mm_h': LIMITS['rain_rate_mm_h']}
EARLIEST, LATEST = datetime(1900, 1, 1), datetime(2200, 1, 1)  # astral's useful span

REFERENCE_ELEVATION = 0.9  # [rad] the default appearance's sun, whose light is 1
SKY_AT_HORIZON = 0.25  # sky light with the sun on the horizon, of the reference's
TWILIGHT_DECADE_DEG = 3.0  # twilight light falls tenfold per this much solar depression
NIGHT_SKY = 0.002  # the floor: a moonless sky's glow, of the reference's sky light


def air_mass(elevation: float) -> float:
    """Relative optical air mass at solar ``elevation`` [rad] (Kasten and Young 1989)."""
    degrees = math.degrees(elevation)
    return 1.0 / (math.sin(elevation) + 0.50572 * (degrees + 6.07995) ** -1.6364)


def _meinel(elevation: float) -> float:
    return 0.7 ** (air_mass(elevation) ** 0.678)


def direct_light(elevation: float) -> float:
    """The clear sky's direct sun at ``elevation`` [rad], 1 at the reference elevation and 0
    once the sun has set."""
    return _meinel(elevation) / _meinel(REFERENCE_ELEVATION) if elevation > 0.0 else 0.0


def sky_light(elevation: float) -> float:
    """The clear sky's diffuse light at solar ``elevation`` [rad], 1 at the reference
    elevation; twilight and night below the horizon."""
    if elevation >= 0.0:
        return SKY_AT_HORIZON + (1.0 - SKY_AT_HORIZON) * math.sqrt(
            math.sin(elevation) / math.sin(REFERENCE_ELEVATION))
    return max(SKY_AT_HORIZON * 10.0 ** (math.degrees(elevation) / TWILIGHT_DECADE_DEG),
               NIGHT_SKY)


def cloud_factors(cover: float) -> tuple[float, float]:
    """How cloud ``cover`` (0..1) scales the direct sun and the diffuse sky (Kasten and
    Czeplak 1980): 1 and 1 under a clear sky, 0 and 0.83 under an overcast one."""
    total = 1.0 - 0.75 * cover ** 3.4
    diffuse_share = 0.3 + 0.7 * cover ** 2
    return total * (1.0 - diffuse_share) / 0.7, total * diffuse_share / 0.3


def sun_position(when: datetime, latitude_deg: float, longitude_deg: float
                 ) -> tuple[float, float]:
    """The sun's azimuth (counter-clockwise from east, the world's +x) and elevation (with
    refraction, negative below the horizon), both in radians, at an aware ``when``."""
    from astral import Observer
    from astral.sun import azimuth, elevation

    observer = Observer(latitude_deg, longitude_deg)
    compass = azimuth(observer, when)  # degrees clockwise from north
    east_ccw = math.remainder(math.radians(90.0 - compass), 2.0 * math.pi)
    return east_ccw, math.radians(elevation(observer, when))


@dataclass(frozen=True)
class Conditions:
    """One run's drawn conditions; ``time`` None keeps the appearance's sun."""

    time: datetime | None = None
    latitude_deg: float = 0.0
    longitude_deg: float = 0.0
    cloud_cover: float = 0.0
    fog_visibility_m: float = 0.0  # 0: no fog
    rain_rate_mm_h: float = 0.0
    headlights: str | float = 'auto'  # HEADLIGHTS, or a strength

    def resolve(self, base: Appearance) -> tuple[Appearance, Weather]:
        """``base`` with the sun and sky these conditions make, and the weather."""
        azimuth, elevation = base.sun_azimuth_rad, base.sun_elevation_rad
        sun, sky = base.sun_intensity, base.sky_intensity
        dark = False
        if self.time is not None:
            azimuth, elevation = sun_position(self.time, self.latitude_deg, self.longitude_deg)
            sun, sky = direct_light(elevation), sky_light(elevation)
            dark = elevation < 0.0
        direct, diffuse = cloud_factors(self.cloud_cover)
        sun_high = APPEARANCE_LIMITS['sun_intensity'][1]
        sky_high = APPEARANCE_LIMITS['sky_intensity'][1]
        appearance = replace(base, sun_azimuth_rad=azimuth,
                             sun_elevation_rad=min(max(elevation, 0.0), 0.5 * math.pi),
                             sun_intensity=min(sun * direct, sun_high),
                             sky_intensity=min(sky * diffuse, sky_high))
        lamps = self.headlights if isinstance(self.headlights, float) else float(
            self.headlights == 'on' or self.headlights == 'auto' and dark)
        return appearance, Weather(self.cloud_cover, self.fog_visibility_m,
                                   self.rain_rate_mm_h, lamps)


@dataclass(frozen=True)
class ConditionsRanges:
    """The conditions a scenario declares: per number a range (equal ends for a fixed value;
    ``time`` in POSIX seconds), drawn once per run from ``seed`` and the run's seed."""

    ranges: Mapping[str, tuple[float, float]]
    zone: tzinfo = timezone.utc
    headlights: str | float = 'auto'
    seed: int = 0

    def draw(self, run_seed: int = 0) -> Conditions:
        """One run's conditions; each number from its own stream, so making one a range
        leaves the others' draws as they were."""
        values: dict[str, float] = {}
        for index, key in enumerate(DRAWN):
            if key not in self.ranges:
                continue
            low, high = self.ranges[key]
            values[key] = low if low == high else float(
                np.random.default_rng([self.seed, run_seed, index]).uniform(low, high))
        stamp = values.pop('time', None)
        when = None if stamp is None else datetime.fromtimestamp(stamp, self.zone)
        return Conditions(time=when, headlights=self.headlights, **values)


def light_and_weather(appearance: AppearanceRanges, conditions: ConditionsRanges | None,
                      run_seed: int = 0) -> tuple[Appearance, Weather]:
    """A run's appearance and weather: the appearance drawn, then the conditions drawn and
    applied to it (no conditions: clear weather)."""
    drawn = appearance.draw(run_seed)
    if conditions is None:
        return drawn, CLEAR
    return conditions.draw(run_seed).resolve(drawn)


def load_conditions(section: Section, appearance: Section,
                    sensors: Sequence[Any] = ()) -> ConditionsRanges:
    """The ``conditions`` section; ``appearance`` is the scenario's (for conflicts) and
    ``sensors`` every car's sensor specs (a GNSS origin places the track)."""
    section.reject_unknown(KEYS)
    ranges: dict[str, tuple[float, float]] = {}
    for key in ('cloud_cover', 'latitude_deg', 'longitude_deg'):
        if section.has(key):
            ranges[key] = _number_range(section, key, NUMBER_LIMITS[key])
    for outer, inner, key in (('fog', 'visibility_m', 'fog_visibility_m'),
                              ('rain', 'rate_mm_h', 'rain_rate_mm_h')):
        if section.has(outer):
            part = section.section(outer)
            part.reject_unknown({inner})
            ranges[key] = _number_range(part, inner, NUMBER_LIMITS[key])
    zone: tzinfo = timezone.utc
    if section.has('time'):
        place = _place(section, ranges, sensors)
        zone = _zone(section, place[1])
        ranges['time'] = _time_range(section, zone)
        for key in SUN_KEYS:
            if appearance.has(key):
                appearance.fail(f'conditions.time places the sun and sets the light of sun and '
                                f'sky, and wins over appearance: give {key} or conditions.time, '
                                f'not both', key)
    elif section.has('timezone'):
        section.fail('a timezone needs a time', 'timezone')
    return ConditionsRanges(ranges, zone, _headlights(section),
                            section.integer('seed', 0, minimum=0))


def _headlights(section: Section) -> str | float:
    """``headlights``: one of HEADLIGHTS, or a strength within the weather's limits."""
    value = section.raw('headlights', 'auto')
    low, high = LIMITS['headlights']
    if isinstance(value, str) and value in HEADLIGHTS:
        return value
    if not isinstance(value, bool) and isinstance(value, (int, float)) and low <= value <= high:
        return float(value)
    section.fail(f'expected one of {list(HEADLIGHTS)} or a strength in [{low:g}, {high:g}] '
                 f'(1: a full-size car\'s dipped beams), got {value!r}', 'headlights')


def _number_range(section: Section, key: str, limits: tuple[float, float]
                  ) -> tuple[float, float]:
    """``key`` as (low, high) within ``limits``: a number gives equal ends."""
    low, high = limits
    value = section.raw(key)
    ends = value if isinstance(value, list) and len(value) == 2 else [value]
    if not all(not isinstance(v, bool) and isinstance(v, (int, float)) and low <= v <= high
               for v in ends) or ends[0] > ends[-1]:
        section.fail(f'expected {describe_number(low, high)}, or a range [low, high] of them '
                     f'(low <= high), got {value!r}', key)
    return float(ends[0]), float(ends[-1])


def _place(section: Section, ranges: dict[str, tuple[float, float]],
           sensors: Sequence[Any]) -> tuple[float, float]:
    """Latitude and longitude (the middle of their ranges, for the default time zone):
    given, or a GNSS sensor's origin, else an error."""
    if 'latitude_deg' in ranges and 'longitude_deg' in ranges:
        return sum(ranges['latitude_deg']) / 2.0, sum(ranges['longitude_deg']) / 2.0
    origin = next((spec.origin for spec in sensors if isinstance(spec, GnssSpec)), None)
    if origin is None or section.has('latitude_deg') or section.has('longitude_deg'):
        section.fail('a time needs the track\'s place: give latitude_deg and longitude_deg '
                     '(or a car with a GNSS sensor, whose origin places the track)', 'time')
    ranges['latitude_deg'] = (origin[0],) * 2
    ranges['longitude_deg'] = (origin[1],) * 2
    return origin[0], origin[1]


def _zone(section: Section, longitude_deg: float) -> tzinfo:
    """The time zone of local times: ``timezone`` (an IANA name or an offset like +02:00), or
    the local mean solar time of ``longitude_deg``."""
    if not section.has('timezone'):
        return timezone(timedelta(hours=round(longitude_deg / 15.0, 2)))
    name = section.string('timezone')
    try:
        offset = datetime.strptime(name, '%z').utcoffset() if name[:1] in '+-' else None
        return timezone(offset) if offset is not None else ZoneInfo(name)
    except (ValueError, ZoneInfoNotFoundError):
        section.fail(f'expected an IANA time zone name (Europe/Berlin) or an offset (+02:00), '
                     f'got {name!r}', 'timezone')


def _time_range(section: Section, zone: tzinfo) -> tuple[float, float]:
    """``time`` (one local date and time, or a range of two) as POSIX seconds."""
    value = section.raw('time')
    ends = value if isinstance(value, list) and len(value) == 2 else [value]
    stamps = []
    for end in ends:
        when = _datetime(end)
        if when is None or not EARLIEST <= when.replace(tzinfo=None) <= LATEST:
            section.fail(f'expected a local date and time from {EARLIEST:%Y} to {LATEST:%Y} '
                         f'such as 2026-06-21T18:30, or a range [earliest, latest] of them, '
                         f'got {value!r}', 'time')
        stamps.append((when if when.tzinfo else when.replace(tzinfo=zone)).timestamp())
    if stamps[0] > stamps[-1]:
        section.fail(f'expected a range [earliest, latest], got {value!r}', 'time')
    return stamps[0], stamps[-1]


def _datetime(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return None
    return None
