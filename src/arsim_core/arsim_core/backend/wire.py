"""The embedded backend's checks of what a request asks for (docs/protocol.md, "Limits").

``protocol.decode`` hands over a JSON object and arrays of exactly their declared size; these
checks make sure every value the backend goes on to use has the type and range the sensors, the
ray caster and the camera renderer assume. Without them a negative triangle index in an int32
frame or a vertex at infinity would reach Embree's buffers, ``float('inf')`` would reach
``int()``, and a beam count of 10^12 would exhaust memory. Every failure is a ProtocolError
naming the key, which the backend answers with ``Error``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

from arsim_core.config.sensors import COMPUTED_KINDS
from arsim_core.errors import ProtocolError

MAX_COORDINATE = 1e6  # |value| of a vertex, pose or mount coordinate [m or rad]
MAX_CARS = 256
MAX_SENSORS_PER_CAR = 64
MAX_BEAMS = 65_536  # of a 2D LiDAR
MAX_CAMERA_SIDE = 8192  # pixels
MAX_SAMPLES = 1 << 24  # rays or pixels of one sensor (a 4096 x 4096 camera)
MAX_TOTAL_SAMPLES = 1 << 25  # rays and pixels of all sensors together
RATE_HZ = (1e-3, 1e6)
MAX_FRAME_PERIOD_NS = 3_600_000_000_000  # an hour
MAX_SEED = (1 << 64) - 1
CAMERA_OUTPUTS = frozenset({'rgb', 'depth', 'semantic'})


@dataclass(frozen=True)
class Settings:
    """What InitialSettings configures, checked."""

    cars: list[dict[str, Any]]
    frame_period_ns: int
    seed: int
    cars_visible: bool
    track_name: str


@dataclass(frozen=True)
class Mesh:
    """A track mesh, checked, in the dtypes the scene takes."""

    vertices: np.ndarray  # float32 (V, 3), finite
    triangles: np.ndarray  # int64 (T, 3), each in [0, V)
    labels: np.ndarray | None  # uint8 (T,)


def settings(header: Mapping[str, Any]) -> Settings:
    """The InitialSettings header's cars (with their sensors), timing, seed and track name."""
    cars = objects(header, 'cars', 'header', MAX_CARS)
    samples = 0
    for car in cars:
        where = f'car {_show(car.get("id"))}'
        text(car, 'id', where)
        if car.get('footprint') is not None:
            numbers(car, 'footprint', 3, where, low=0.0, high=1e3, open_low=True)
        for spec in objects(car, 'sensors', where, MAX_SENSORS_PER_CAR):
            samples += sensor(spec, where)
    if samples > MAX_TOTAL_SAMPLES:
        msg = f'the sensors cast {samples} rays and pixels in all, at most {MAX_TOTAL_SAMPLES}'
        raise ProtocolError(msg)
    return Settings(
        cars=cars,
        frame_period_ns=integer(header, 'frame_period_ns', 'header', 0, MAX_FRAME_PERIOD_NS, 0),
        seed=integer(header, 'seed', 'header', 0, MAX_SEED, 0),
        cars_visible=flag(header, 'cars_visible', 'header', True),
        track_name=track_name(header))


def track_name(header: Mapping[str, Any]) -> str:
    track = header.get('track', {})
    if not isinstance(track, dict) or not isinstance(track.get('name', ''), str):
        msg = 'header key "track" must be an object {"name": string}'
        raise ProtocolError(msg)
    return track.get('name', '')


def sensor(spec: dict[str, Any], car: str) -> int:
    """Check one sensor description; the rays or pixels it casts per render (0 for the ones
    the car's republisher computes)."""
    name = text(spec, 'name', car)
    where = f'{car}, sensor {_show(name)}'
    kind = text(spec, 'type', where)
    if kind in COMPUTED_KINDS:
        return 0
    number(spec, 'rate_hz', where, *RATE_HZ)
    numbers(spec, 'mount', 6, where, -MAX_COORDINATE, MAX_COORDINATE)
    if kind == 'camera':
        return _camera(spec, where)
    if kind not in ('lidar2d', 'lidar3d'):
        return 0  # the backend names the types it renders when it makes the sensors
    number(spec, 'range_min', where, 0.0, MAX_COORDINATE)
    number(spec, 'range_max', where, 0.0, MAX_COORDINATE, open_low=True)
    number(spec, 'noise_std', where, 0.0, MAX_COORDINATE, default=0.0)
    number(spec, 'dropout', where, 0.0, 1.0, default=0.0)
    if kind == 'lidar2d':
        number(spec, 'angle_min', where, -MAX_COORDINATE, MAX_COORDINATE)
        number(spec, 'angle_increment', where, -MAX_COORDINATE, MAX_COORDINATE)
        return integer(spec, 'beams', where, 1, MAX_BEAMS)
    channels = integer(spec, 'channels', where, 1, MAX_SAMPLES)
    samples = _samples(channels * integer(spec, 'columns', where, 1, MAX_SAMPLES), where)
    number(spec, 'azimuth_start', where, -MAX_COORDINATE, MAX_COORDINATE)
    number(spec, 'azimuth_increment', where, -MAX_COORDINATE, MAX_COORDINATE)
    numbers(spec, 'elevations', channels, where, -math.pi, math.pi)
    return samples


def _camera(spec: dict[str, Any], where: str) -> int:
    width = integer(spec, 'width', where, 1, MAX_CAMERA_SIDE)
    height = integer(spec, 'height', where, 1, MAX_CAMERA_SIDE)
    number(spec, 'fov', where, 0.0, math.pi, open_low=True, open_high=True)
    near = number(spec, 'near', where, 0.0, MAX_COORDINATE, open_low=True)
    number(spec, 'far', where, near, MAX_COORDINATE, open_low=True)
    number(spec, 'noise_std', where, 0.0, 255.0, default=0.0)
    number(spec, 'depth_noise_std', where, 0.0, MAX_COORDINATE, default=0.0)
    outputs = spec.get('outputs', ['rgb'])
    if not isinstance(outputs, list) or not outputs or not all(
            isinstance(o, str) and o in CAMERA_OUTPUTS for o in outputs):
        msg = f'{where}: outputs must be a non-empty list of {sorted(CAMERA_OUTPUTS)}'
        raise ProtocolError(msg)
    return _samples(width * height, where)


def _samples(count: int, where: str) -> int:
    if count > MAX_SAMPLES:
        msg = f'{where}: casts {count} rays or pixels per render, at most {MAX_SAMPLES}'
        raise ProtocolError(msg)
    return count


def mesh(arrays: Mapping[str, np.ndarray], topic: str) -> Mesh:
    """The track frames of InitialSettings or Track: finite vertices within MAX_COORDINATE,
    integer triangles that all index existing vertices (min and max: a signed dtype can carry
    negative indices), integer labels 0..255."""
    vertices = arrays.get('track_vertices')
    triangles = arrays.get('track_triangles')
    labels = arrays.get('track_labels')
    if vertices is None or triangles is None:
        msg = f'{topic} needs the frames track_vertices and track_triangles'
        raise ProtocolError(msg)
    if vertices.ndim != 2 or vertices.shape[1] != 3 or triangles.ndim != 2 \
            or triangles.shape[1] != 3:
        msg = 'track_vertices and track_triangles must both have shape (n, 3)'
        raise ProtocolError(msg)
    if vertices.dtype.kind != 'f' or triangles.dtype.kind not in 'iu':
        msg = (f'track_vertices must be float32 or float64 and track_triangles an integer '
               f'dtype, got {vertices.dtype} and {triangles.dtype}')
        raise ProtocolError(msg)
    points = vertices.astype(np.float32)
    if not np.isfinite(points).all() or (points.size and np.abs(points).max() > MAX_COORDINATE):
        msg = f'track_vertices must be finite numbers within +-{MAX_COORDINATE:g} m'
        raise ProtocolError(msg)
    if triangles.size and (int(triangles.min()) < 0 or int(triangles.max()) >= len(vertices)):
        msg = (f'track_triangles index a vertex that does not exist (indices must be in '
               f'[0, {len(vertices)}))')
        raise ProtocolError(msg)
    if labels is not None:
        if labels.shape != (len(triangles),) or labels.dtype.kind not in 'iu' or (
                labels.size and (int(labels.min()) < 0 or int(labels.max()) > 255)):
            msg = (f'track_labels must be one integer label 0..255 per triangle '
                   f'({len(triangles)})')
            raise ProtocolError(msg)
        labels = labels.astype(np.uint8)
    return Mesh(points, triangles.astype(np.int64), labels)


def poses(header: Mapping[str, Any]) -> dict[str, list[float]]:
    """The Update's car poses by car id."""
    result = {}
    for car in objects(header, 'cars', 'header', MAX_CARS):
        car_id = text(car, 'id', 'car')
        result[car_id] = numbers(car, 'pose', 6, f'car {_show(car_id)}', -MAX_COORDINATE,
                                 MAX_COORDINATE)
    return result


def requests(header: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The Update's render requests as (car, sensor), each once, in order."""
    entries = objects(header, 'render', 'header', MAX_CARS * MAX_SENSORS_PER_CAR)
    keys = ((text(r, 'car', 'render request'), text(r, 'sensor', 'render request'))
             for r in entries)
    return list(dict.fromkeys(keys))


# --- typed reads -------------------------------------------------------------------------------
def objects(mapping: Mapping[str, Any], key: str, where: str, most: int) -> list[dict[str, Any]]:
    value = mapping.get(key, [])
    if not isinstance(value, list) or len(value) > most or not all(
            isinstance(v, dict) for v in value):
        msg = f'{where}: key {key!r} must be a list of at most {most} objects'
        raise ProtocolError(msg)
    return value


def text(mapping: Mapping[str, Any], key: str, where: str) -> str:
    value = mapping.get(key)
    if not isinstance(value, str):
        msg = f'{where}: key {key!r} must be a string, got {_show(value)}'
        raise ProtocolError(msg)
    return value


def flag(mapping: Mapping[str, Any], key: str, where: str, default: bool) -> bool:
    value = mapping.get(key, default)
    if not isinstance(value, bool):
        msg = f'{where}: key {key!r} must be true or false, got {_show(value)}'
        raise ProtocolError(msg)
    return value


def integer(mapping: Mapping[str, Any], key: str, where: str, low: int, high: int,
            default: int | None = None) -> int:
    value = mapping.get(key, default)
    if isinstance(value, bool) or not isinstance(value, Integral) \
            or not low <= int(value) <= high:
        msg = f'{where}: key {key!r} must be an integer in [{low}, {high}], got {_show(value)}'
        raise ProtocolError(msg)
    return int(value)


def number(mapping: Mapping[str, Any], key: str, where: str, low: float, high: float,
           default: float | None = None, *, open_low: bool = False,
           open_high: bool = False) -> float:
    value = mapping.get(key, default)
    real = _real(value)
    if real is None or not _within(real, low, high, open_low, open_high):
        msg = (f'{where}: key {key!r} must be a number in {"(" if open_low else "["}{low:g}, '
               f'{high:g}{")" if open_high else "]"}, got {_show(value)}')
        raise ProtocolError(msg)
    return real


def numbers(mapping: Mapping[str, Any], key: str, length: int, where: str, low: float,
            high: float, *, open_low: bool = False) -> list[float]:
    value = mapping.get(key)
    reals = [_real(v) for v in value] if isinstance(value, (list, tuple)) else []
    if len(reals) != length or not all(
            v is not None and _within(v, low, high, open_low, False) for v in reals):
        msg = (f'{where}: key {key!r} must be {length} numbers in '
               f'{"(" if open_low else "["}{low:g}, {high:g}], got {_show(value)}')
        raise ProtocolError(msg)
    return [v for v in reals if v is not None]  # all of them, checked above


def _real(value: Any) -> float | None:
    """``value`` as a finite float, or None: not a number, a bool, NaN, an infinity, or an
    integer too large for a float (JSON integers have any number of digits)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        return None
    try:
        real = float(value)
    except OverflowError:
        return None
    return real if math.isfinite(real) else None


def _within(value: float, low: float, high: float, open_low: bool, open_high: bool) -> bool:
    return (value > low if open_low else value >= low) and (
        value < high if open_high else value <= high)


def _show(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut short: a peer's values may be megabytes long."""
    if isinstance(value, (dict, list)) and len(value) > 8:
        return f'<{type(value).__name__} of {len(value)}>'
    shown = repr(value)
    return shown if len(shown) <= limit else f'{shown[:limit]}...'
