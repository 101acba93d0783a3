"""Local ENU coordinates to WGS84 latitude/longitude/altitude, for the GNSS sensor.

The world frame's x points east and y north (REP-103 for world frames), its origin at the
configured geodetic origin. The conversion goes through ECEF exactly (no flat-earth
approximation), so positions kilometres from the origin are still right to the millimetre.
"""

from __future__ import annotations

import math

A = 6378137.0  # WGS84 semi-major axis [m]
F = 1.0 / 298.257223563
E2 = F * (2.0 - F)
B = A * (1.0 - F)
EP2 = (A * A - B * B) / (B * B)


def geodetic_to_ecef(lat_deg: float, lon_deg: float, alt: float) -> tuple[float, float, float]:
    lat, lon = math.radians(lat_deg), math.radians(lon_deg)
    n = A / math.sqrt(1.0 - E2 * math.sin(lat) ** 2)
    return ((n + alt) * math.cos(lat) * math.cos(lon), (n + alt) * math.cos(lat) * math.sin(lon),
            (n * (1.0 - E2) + alt) * math.sin(lat))


def ecef_to_geodetic(x: float, y: float, z: float) -> tuple[float, float, float]:
    """Bowring's method with two refinements: well below a millimetre on the Earth's surface."""
    lon = math.atan2(y, x)
    p = math.hypot(x, y)
    lat = math.atan2(z, p * (1.0 - E2))
    for _ in range(3):
        n = A / math.sqrt(1.0 - E2 * math.sin(lat) ** 2)
        alt = p / math.cos(lat) - n
        lat = math.atan2(z, p * (1.0 - E2 * n / (n + alt)))
    n = A / math.sqrt(1.0 - E2 * math.sin(lat) ** 2)
    alt = p / math.cos(lat) - n
    return math.degrees(lat), math.degrees(lon), alt


def enu_to_geodetic(east: float, north: float, up: float,
                    origin: tuple[float, float, float]) -> tuple[float, float, float]:
    """(latitude [deg], longitude [deg], altitude [m]) of a point given in the ENU frame
    whose origin is ``origin`` (latitude, longitude, altitude)."""
    lat0, lon0, _ = origin
    x0, y0, z0 = geodetic_to_ecef(*origin)
    sl, cl = math.sin(math.radians(lat0)), math.cos(math.radians(lat0))
    so, co = math.sin(math.radians(lon0)), math.cos(math.radians(lon0))
    x = x0 - so * east - sl * co * north + cl * co * up
    y = y0 + co * east - sl * so * north + cl * so * up
    z = z0 + cl * north + sl * up
    return ecef_to_geodetic(x, y, z)
