"""The weather a backend renders: cloud cover, fog, rain and the cars' headlights.

A scenario's ``conditions`` (``config.conditions``) resolve into two records: the sun and sky
numbers of ``Appearance`` and this one, which travels beside it in InitialSettings under
``weather``. A backend lists the parts it renders in Ready's ``capabilities`` (``conditions``:
``NAMES``); the bridge refuses a scenario whose weather needs one its backend does not list,
since images without the fog look right and are not.

Fog is given as meteorological visibility V, the distance at which a black object's contrast
against the horizon falls to 2 %: by Koschmieder's law the extinction coefficient is
``sigma = -ln(0.02) / V = 3.912 / V`` (WMO Guide to Instruments and Methods of Observation,
No. 8, part I, chapter 9).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from arsim_core.errors import ProtocolError
from arsim_core.protocol import wire

KOSCHMIEDER = -math.log(0.02)  # 3.912: sigma * V at 2 % contrast
MIN_VISIBILITY_M = 5.0  # denser fog than this is not weather a car drives in
MAX_VISIBILITY_M = 100_000.0  # clearer than this is clear air
MAX_RAIN_MM_H = 150.0  # cloudbursts; the heaviest hourly rain measured is about 300 mm/h
MAX_HEADLIGHTS = 10.0

#: (lowest, highest) of each key, for YAML and the wire; fog_visibility_m is also 0 (no fog).
LIMITS: Mapping[str, tuple[float, float]] = {
    'cloud_cover': (0.0, 1.0),
    'fog_visibility_m': (MIN_VISIBILITY_M, MAX_VISIBILITY_M),
    'rain_rate_mm_h': (0.0, MAX_RAIN_MM_H),
    'headlights': (0.0, MAX_HEADLIGHTS),
}
#: The capability each part needs in a backend's Ready (``capabilities.conditions``).
NAMES = ('overcast', 'fog', 'rain', 'headlights')


@dataclass(frozen=True)
class Weather:
    """``cloud_cover`` 0 (clear) to 1 (overcast); ``fog_visibility_m`` 0 for no fog, else the
    visibility [m]; ``rain_rate_mm_h`` 0 for a dry day; ``headlights`` 0 (off) or the lamps'
    strength, 1 a car's dipped beam."""

    cloud_cover: float = 0.0
    fog_visibility_m: float = 0.0
    rain_rate_mm_h: float = 0.0
    headlights: float = 0.0

    @property
    def clear(self) -> bool:
        """Nothing to render: the sensors' weather hooks return at once."""
        return not (self.cloud_cover or self.fog_visibility_m or self.rain_rate_mm_h
                    or self.headlights)

    @property
    def fog_extinction_per_m(self) -> float:
        """Koschmieder's extinction coefficient sigma [1/m] (0 without fog)."""
        return KOSCHMIEDER / self.fog_visibility_m if self.fog_visibility_m > 0.0 else 0.0

    def needs(self) -> tuple[str, ...]:
        """The capabilities (``NAMES``) a backend needs to render this weather."""
        present = (self.cloud_cover > 0.0, self.fog_visibility_m > 0.0,
                   self.rain_rate_mm_h > 0.0, self.headlights > 0.0)
        return tuple(name for name, on in zip(NAMES, present, strict=True) if on)

    def to_wire(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_wire(cls, header: Mapping[str, Any]) -> Weather:
        """The optional ``weather`` object of InitialSettings' header: absent (an older peer)
        is clear; absent keys are their defaults; keys it does not know are left for newer
        peers."""
        given = header.get('weather', {})
        if not isinstance(given, dict):
            msg = f"header: key 'weather' must be an object of numbers, got {wire.show(given)}"
            raise ProtocolError(msg)
        values: dict[str, float] = {}
        for key, (low, high) in LIMITS.items():
            if key == 'fog_visibility_m' and given.get(key, 0) == 0:
                values[key] = 0.0
                continue
            values[key] = wire.number(given, key, 'weather', low, high, 0.0)
        return cls(**values)


CLEAR = Weather()
