"""The limits of what a message may ask for (docs/protocol.md, "Limits") and the typed reads
that enforce them.

``framing.decode`` hands over a JSON object and arrays of exactly their declared size; the
typed bodies' ``from_wire`` (``messages``) read every value through these checks, so it has
the type and range the sensors, the ray caster and the camera renderer assume. Without them a
negative triangle index in an int32 frame or a vertex at infinity would reach Embree's
buffers, ``float('inf')`` would reach ``int()``, and a beam count of 10^12 would exhaust memory.
Every failure is a ProtocolError naming the key, which the backend answers with ``Error``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Integral, Real
from typing import Any

from arsim_core.errors import ProtocolError
from arsim_core.lens import MAX_COEFFICIENT, MAX_OVERSAMPLE, MODELS, OVERSAMPLE, WIRE_MODELS
from arsim_core.protocol import camera_effects

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
# The sensor types a backend renders; the others (an IMU, a GNSS, ...) a car's republisher
# computes, and a backend lists, renders and asks for none of them.
RENDERED_KINDS = frozenset({'camera', 'lidar2d', 'lidar3d'})


def sensor(spec: dict[str, Any], car: str) -> int:
    """Check one sensor description; the rays or pixels it casts per render (0 for the ones
    the car's republisher computes)."""
    name = text(spec, 'name', car)
    where = f'{car}, sensor {show(name)}'
    kind = text(spec, 'type', where)
    if kind not in RENDERED_KINDS:
        return 0  # computed, or a type the backend names unsupported when it makes the sensors
    number(spec, 'rate_hz', where, *RATE_HZ)
    numbers(spec, 'mount', 6, where, -MAX_COORDINATE, MAX_COORDINATE)
    if kind == 'camera':
        return _camera(spec, where)
    number(spec, 'range_min', where, 0.0, MAX_COORDINATE)
    number(spec, 'range_max', where, 0.0, MAX_COORDINATE, open_low=True)
    number(spec, 'noise_std', where, 0.0, MAX_COORDINATE, default=0.0)
    number(spec, 'dropout', where, 0.0, 1.0, default=0.0)
    number(spec, 'noise_per_m', where, 0.0, 1.0, default=0.0)  # the LiDAR effects: 0 is off
    number(spec, 'detection_range', where, 0.0, MAX_COORDINATE, default=0.0)
    number(spec, 'beam_divergence', where, 0.0, 1.0, default=0.0)
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
    if spec.get('lens') is not None:
        _lens(spec['lens'], width, height, where)
    _effects(spec, where)
    outputs = spec.get('outputs', ['rgb'])
    if not isinstance(outputs, list) or not outputs or not all(
            isinstance(o, str) and o in CAMERA_OUTPUTS for o in outputs):
        msg = f'{where}: outputs must be a non-empty list of {sorted(CAMERA_OUTPUTS)}'
        raise ProtocolError(msg)
    return _samples(width * height, where)


def _lens(lens: Any, width: int, height: int, where: str) -> None:
    """A camera's optional ``lens``: a model of ``WIRE_MODELS``, its intrinsics and as many
    coefficients as the model has (whether the lens folds, the backend checks)."""
    if not isinstance(lens, dict):
        msg = f'{where}: key \'lens\' must be an object, got {show(lens)}'
        raise ProtocolError(msg)
    where = f'{where}, lens'
    model = text(lens, 'model', where)
    if model not in WIRE_MODELS:
        msg = f'{where}: key \'model\' must be one of {list(WIRE_MODELS)}, got {show(model)}'
        raise ProtocolError(msg)
    for key in ('fx', 'fy'):
        number(lens, key, where, 0.0, MAX_COORDINATE, open_low=True)
    number(lens, 'cx', where, -0.5, width - 0.5)
    number(lens, 'cy', where, -0.5, height - 0.5)
    count = len(MODELS.get(model, ()))
    distortion = lens.get('distortion', [])
    if not isinstance(distortion, list) or len(distortion) != count:
        msg = (f'{where}: key \'distortion\' must be {count} numbers for {model}, got '
               f'{show(distortion)}')
        raise ProtocolError(msg)
    if count:
        numbers(lens, 'distortion', count, where, -MAX_COEFFICIENT, MAX_COEFFICIENT)
    number(lens, 'oversample', where, 1.0, MAX_OVERSAMPLE, default=OVERSAMPLE)


def _effects(spec: dict[str, Any], where: str) -> None:
    """A camera's optional effects (``camera_effects``): each an object of numbers within
    their limits and names among their choices; absent fields take their defaults."""
    for name, record in camera_effects.EFFECTS.items():
        given = spec.get(name)
        if given is None:
            continue
        inside = f'{where}, {name}'
        if not isinstance(given, dict):
            msg = f'{where}: key {name!r} must be an object, got {show(given)}'
            raise ProtocolError(msg)
        default = record()
        for key, choices in camera_effects.CHOICES.get(name, {}).items():
            if text(given, key, inside, getattr(default, key)) not in choices:
                msg = (f'{inside}: key {key!r} must be one of {list(choices)}, got '
                       f'{show(given[key])}')
                raise ProtocolError(msg)
        for key, limit in camera_effects.LIMITS[name].items():
            if key in camera_effects.INTEGERS:
                integer(given, key, inside, int(limit.low), int(limit.high),
                        getattr(default, key))
            else:
                number(given, key, inside, limit.low, limit.high, getattr(default, key),
                       open_low=limit.open_low)
        effect = getattr(camera_effects.CameraEffects.from_wire({name: given}), name)
        fault = camera_effects.problem(name, effect)
        if fault is not None:
            msg = f'{inside}: key {fault[0]!r} {fault[1]}'
            raise ProtocolError(msg)


def _samples(count: int, where: str) -> int:
    if count > MAX_SAMPLES:
        msg = f'{where}: casts {count} rays or pixels per render, at most {MAX_SAMPLES}'
        raise ProtocolError(msg)
    return count


# --- typed reads -------------------------------------------------------------------------------
def objects(mapping: Mapping[str, Any], key: str, where: str, most: int) -> list[dict[str, Any]]:
    value = mapping.get(key, [])
    if not isinstance(value, list) or len(value) > most or not all(
            isinstance(v, dict) for v in value):
        msg = f'{where}: key {key!r} must be a list of at most {most} objects'
        raise ProtocolError(msg)
    return value


def text(mapping: Mapping[str, Any], key: str, where: str, default: str | None = None) -> str:
    value = mapping.get(key, default)
    if not isinstance(value, str):
        msg = f'{where}: key {key!r} must be a string, got {show(value)}'
        raise ProtocolError(msg)
    return value


def flag(mapping: Mapping[str, Any], key: str, where: str, default: bool) -> bool:
    value = mapping.get(key, default)
    if not isinstance(value, bool):
        msg = f'{where}: key {key!r} must be true or false, got {show(value)}'
        raise ProtocolError(msg)
    return value


def integer(mapping: Mapping[str, Any], key: str, where: str, low: int, high: int,
            default: int | None = None) -> int:
    value = mapping.get(key, default)
    # int first: checks against the numbers ABCs are slow, and some of these run every frame
    if type(value) is not int and (isinstance(value, bool) or not isinstance(value, Integral)) \
            or not low <= int(value) <= high:
        msg = f'{where}: key {key!r} must be an integer in [{low}, {high}], got {show(value)}'
        raise ProtocolError(msg)
    return int(value)


def number(mapping: Mapping[str, Any], key: str, where: str, low: float, high: float,
           default: float | None = None, *, open_low: bool = False,
           open_high: bool = False) -> float:
    value = mapping.get(key, default)
    real = _real(value)
    if real is None or not _within(real, low, high, open_low, open_high):
        msg = (f'{where}: key {key!r} must be a number in {"(" if open_low else "["}{low:g}, '
               f'{high:g}{")" if open_high else "]"}, got {show(value)}')
        raise ProtocolError(msg)
    return real


def numbers(mapping: Mapping[str, Any], key: str, length: int, where: str, low: float,
            high: float, *, open_low: bool = False) -> list[float]:
    value = mapping.get(key)
    if type(value) is list and len(value) == length and not open_low:
        for v in value:  # the usual case first, quickly: floats in range (NaN is in none)
            if type(v) is not float or not low <= v <= high:
                break
        else:
            return list(value)
    reals = [_real(v) for v in value] if isinstance(value, (list, tuple)) else []
    if len(reals) != length or not all(
            v is not None and _within(v, low, high, open_low, False) for v in reals):
        msg = (f'{where}: key {key!r} must be {length} numbers in '
               f'{"(" if open_low else "["}{low:g}, {high:g}], got {show(value)}')
        raise ProtocolError(msg)
    return [v for v in reals if v is not None]  # all of them, checked above


def _real(value: Any) -> float | None:
    """``value`` as a finite float, or None: not a number, a bool, NaN, an infinity, or an
    integer too large for a float (JSON integers have any number of digits)."""
    if type(value) is float:  # the usual case, without the slower checks against the ABC
        return value if math.isfinite(value) else None
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


def show(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut short: a peer's values may be megabytes long."""
    if isinstance(value, (dict, list)) and len(value) > 8:
        return f'<{type(value).__name__} of {len(value)}>'
    shown = repr(value)
    return shown if len(shown) <= limit else f'{shown[:limit]}...'
