"""Car profile loader: the dynamics part of a car YAML -> validated :class:`VehicleConfig`.

Layout (every key documented with units in docs/dynamics.md)::

    model: st                # ks | st | std | path/to/model.py:ClassName (relative to the file)
    integrator: rk4          # euler | rk4
    physics_rate_hz: 200.0   # sub-steps per simulated second
    CarParameters:
      body:         {mass, yaw_inertia, cog_to_front_axle, cog_to_rear_axle, cog_height}
      tyre:         {friction, cornering_stiffness_front, cornering_stiffness_rear,
                     kinematic_speed, wheel_radius, wheel_inertia,
                     pacejka: {optional, p_cx1 ... r_vy6}}
      steering:     {min_angle, max_angle, min_rate, max_rate}
      longitudinal: {max_acceleration, switching_speed, min_speed, max_speed}
      drivetrain:   {drive_torque_split_front, brake_torque_split_front,
                     throttle_acceleration, brake_deceleration, coast_deceleration}
    Controller:
      speed:    {kp_accelerate_forward, kp_brake_forward, kp_brake_reverse,
                 kp_accelerate_reverse}
      steering: {kp}

The top-level keys in :data:`FOREIGN_KEYS` belong to other modules and are ignored; any other
unknown key, missing key, wrong type or non-physical value raises one ConfigError of the form
``<file>: <key.path>: expected <what>, got <value>``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Final

import yaml

from ..errors import ConfigError
from .base import VehicleModel
from .controllers import ControllerGains, SpeedGains, SteeringGains
from .integrators import INTEGRATORS
from .params import (
    BodyParameters,
    CarParameters,
    DrivetrainParameters,
    LongitudinalParameters,
    PacejkaParameters,
    SteeringParameters,
    TyreParameters,
)
from .registry import resolve_model

#: Top-level keys owned by other modules (sensors, spawn pose, footprint, free text).
FOREIGN_KEYS: Final = frozenset({'Sensors', 'InitialPose', 'Footprint', 'description'})
#: Top-level keys this loader reads.
OWN_KEYS: Final = ('model', 'integrator', 'physics_rate_hz', 'CarParameters', 'Controller')



@dataclass(frozen=True)
class VehicleConfig:
    """Validated dynamics configuration of one car."""

    model: type[VehicleModel]  #: model class
    model_name: str  #: ``model:`` as written in the profile
    integrator: str  #: key of INTEGRATORS
    physics_rate_hz: float  #: integration sub-steps per second [Hz]
    params: CarParameters
    controller: ControllerGains
    source: str = '<memory>'  #: profile path, for messages


# --- value checks -------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Number:
    """A finite real number with optional bounds; ``what`` is the human description."""

    what: str
    test: Callable[[float], bool]

    def __call__(self, value: Any, where: str) -> float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or not self.test(float(value)):
            raise ConfigError(f'{where}: expected {self.what}, got {value!r}')
        return float(value)


POSITIVE = _Number('a number > 0', lambda v: v > 0)
NON_NEGATIVE = _Number('a number >= 0', lambda v: v >= 0)
NEGATIVE = _Number('a number < 0', lambda v: v < 0)
NON_POSITIVE = _Number('a number <= 0', lambda v: v <= 0)
FRACTION = _Number('a number in [0, 1]', lambda v: 0 <= v <= 1)
FINITE = _Number('a finite number', lambda v: True)
NON_ZERO = _Number('a finite number != 0', lambda v: v != 0)

_BODY: Final = {
    'mass': POSITIVE, 'yaw_inertia': POSITIVE, 'cog_to_front_axle': POSITIVE,
    'cog_to_rear_axle': POSITIVE, 'cog_height': NON_NEGATIVE,
}
_TYRE: Final = {
    'friction': POSITIVE, 'cornering_stiffness_front': POSITIVE,
    'cornering_stiffness_rear': POSITIVE, 'kinematic_speed': NON_NEGATIVE,
    'wheel_radius': POSITIVE, 'wheel_inertia': POSITIVE,
}
_PACEJKA_DIVISORS: Final = frozenset({'p_cx1', 'p_dx1', 'p_kx1', 'p_cy1', 'p_dy1', 'p_ky1'})
_PACEJKA: Final = {f.name: NON_ZERO if f.name in _PACEJKA_DIVISORS else FINITE
                   for f in fields(PacejkaParameters)}
_STEERING: Final = {
    'min_angle': NEGATIVE, 'max_angle': POSITIVE, 'min_rate': NEGATIVE, 'max_rate': POSITIVE,
}
_LONGITUDINAL: Final = {
    'max_acceleration': POSITIVE, 'switching_speed': POSITIVE, 'min_speed': NON_POSITIVE,
    'max_speed': POSITIVE,
}
_DRIVETRAIN: Final = {
    'drive_torque_split_front': FRACTION, 'brake_torque_split_front': FRACTION,
    'throttle_acceleration': NON_NEGATIVE, 'brake_deceleration': NON_NEGATIVE,
    'coast_deceleration': NON_NEGATIVE,
}
_SPEED_GAINS: Final = {f.name: NON_NEGATIVE for f in fields(SpeedGains)}


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f'{where}: expected a mapping, got {value!r}')
    return value


def _check_keys(data: Mapping[str, Any], allowed: Any, where: str) -> None:
    for key in data:
        if key not in allowed:
            raise ConfigError(f'{where}.{key}: unknown key, expected one of: '
                              f'{", ".join(sorted(allowed))}')


def _group(data: Mapping[str, Any], key: str, checks: Mapping[str, _Number], where: str,
           optional: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Validate ``data[key]`` against ``checks``; returns the checked values by key."""
    path = f'{where}.{key}'
    if key not in data:
        raise ConfigError(f'{path}: missing, expected a mapping with keys '
                          f'{", ".join(checks)}')
    group = _mapping(data[key], path)
    _check_keys(group, set(checks) | optional, path)
    out: dict[str, Any] = {}
    for name, check in checks.items():
        if name not in group:
            raise ConfigError(f'{path}.{name}: missing, expected {check.what}')
        out[name] = check(group[name], f'{path}.{name}')
    return out


def _pacejka(tyre: Mapping[str, Any], where: str) -> PacejkaParameters:
    """Pacejka block: optional, each coefficient defaults to CommonRoad's value."""
    if 'pacejka' not in tyre:
        return PacejkaParameters()
    path = f'{where}.pacejka'
    block = _mapping(tyre['pacejka'], path)
    _check_keys(block, _PACEJKA, path)
    return PacejkaParameters(**{k: _PACEJKA[k](v, f'{path}.{k}') for k, v in block.items()})


def _car_parameters(data: Mapping[str, Any], where: str) -> CarParameters:
    groups = ('body', 'tyre', 'steering', 'longitudinal', 'drivetrain')
    _check_keys(data, groups, where)
    tyre_raw = _mapping(data.get('tyre', {}), f'{where}.tyre')
    return CarParameters(
        body=BodyParameters(**_group(data, 'body', _BODY, where)),
        tyre=TyreParameters(**_group(data, 'tyre', _TYRE, where, frozenset({'pacejka'})),
                            pacejka=_pacejka(tyre_raw, f'{where}.tyre')),
        steering=SteeringParameters(**_group(data, 'steering', _STEERING, where)),
        longitudinal=LongitudinalParameters(**_group(data, 'longitudinal', _LONGITUDINAL, where)),
        drivetrain=DrivetrainParameters(**_group(data, 'drivetrain', _DRIVETRAIN, where)),
    )


def _controller(data: Mapping[str, Any], where: str, rate_hz: float) -> ControllerGains:
    _check_keys(data, ('speed', 'steering'), where)
    # A P-gain above the sub-step rate overshoots every step; beyond 2x it diverges.
    stable = _Number(f'a number in [0, physics_rate_hz = {rate_hz:g}]',
                     lambda v: 0 <= v <= rate_hz)
    speed = _group(data, 'speed', {k: stable for k in _SPEED_GAINS}, where)
    steering_kp = _Number(f'a number in (0, physics_rate_hz = {rate_hz:g}]',
                          lambda v: 0 < v <= rate_hz)
    steering = _group(data, 'steering', {'kp': steering_kp}, where)
    return ControllerGains(speed=SpeedGains(**speed), steering=SteeringGains(**steering))


def _require(data: Mapping[str, Any], key: str, source: str, what: str) -> Any:
    if key not in data:
        raise ConfigError(f'{source}: {key}: missing, expected {what}')
    return data[key]


def load_vehicle_config(mapping: Mapping[str, Any], source: str) -> VehicleConfig:
    """Validate the dynamics keys of a parsed car profile.

    ``mapping`` is the whole profile (other modules' keys are ignored), ``source`` the file
    path used in messages and as the base for a relative model file path.
    """
    data = _mapping(mapping, source or '<profile>')
    allowed = set(OWN_KEYS) | FOREIGN_KEYS
    for key in data:
        if key not in allowed:
            raise ConfigError(f'{source}: {key}: unknown key, expected one of: '
                              f'{", ".join(sorted(allowed))}')

    spec = _require(data, 'model', source, 'a model name')
    if not isinstance(spec, str) or not spec:
        raise ConfigError(f'{source}: model: expected a model name, got {spec!r}')
    model = resolve_model(spec, source)

    integrator = _require(data, 'integrator', source, f'one of {", ".join(INTEGRATORS)}')
    if not isinstance(integrator, str) or integrator not in INTEGRATORS:
        raise ConfigError(f'{source}: integrator: expected one of {", ".join(INTEGRATORS)}, '
                          f'got {integrator!r}')

    rate = _require(data, 'physics_rate_hz', source, 'a number > 0')
    rate = _Number('a number in (0, 1e6]', lambda v: 0 < v <= 1e6)(
        rate, f'{source}: physics_rate_hz')

    params = _car_parameters(
        _mapping(_require(data, 'CarParameters', source, 'a mapping'), f'{source}: CarParameters'),
        f'{source}: CarParameters')
    controller = _controller(
        _mapping(_require(data, 'Controller', source, 'a mapping'), f'{source}: Controller'),
        f'{source}: Controller', rate)
    return VehicleConfig(model=model, model_name=spec, integrator=integrator,
                         physics_rate_hz=rate, params=params, controller=controller,
                         source=source)


def load_vehicle_config_file(path: str | Path) -> VehicleConfig:
    """Read a car profile YAML file and validate its dynamics part."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding='utf-8')
    except OSError as exc:
        raise ConfigError(f'{source}: cannot read: {exc.strerror or exc}') from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f'{source}: invalid YAML: {exc}') from exc
    return load_vehicle_config(data if data is not None else {}, source)
