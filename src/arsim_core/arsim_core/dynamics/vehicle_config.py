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
    Actuators:               # optional, every key defaults to 0 (an ideal actuator)
      steering: {dead_time, lag, noise_std}   # [s], [s], [rad]
      drive:    {dead_time, lag, noise_std}   # [s], [s], the command's unit
    Powertrain:              # optional: a combustion engine and gearbox (.powertrain)
      {type: combustion, torque_curve: [[rpm, N m], ...], gear_ratios, final_drive,
       efficiency, idle_rpm, upshift_rpm, downshift_rpm, shift_time, layout}
    Vesc:                    # optional: the VESC motor controller and servo (.vesc)
      {speed_to_erpm_gain, speed_to_erpm_offset, steering_angle_to_servo_gain,
       steering_angle_to_servo_offset, servo_min, servo_max, speed_min, speed_max, brake_max,
       current_max, motor_kv, motor_pole_pairs, battery_voltage, reported_speed_sign}

The top-level keys in :data:`FOREIGN_KEYS` belong to other modules and are left to them; any
other unknown key, missing key, wrong type or non-physical value raises one ConfigError of the
form ``<file>:<line>: <key.path>: expected <what>, got <value>`` (``yaml_fields.Section``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Final

from ..yaml_fields import Section, load_section
from .actuators import MAX_ACTUATOR_TIME_S, MAX_COMMAND_NOISE, ActuatorParameters
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
from .powertrain import LAYOUTS, CombustionParameters
from .registry import resolve_model
from .vesc import VescParameters

#: Top-level keys owned by other modules (sensors, spawn pose, footprint, free text).
FOREIGN_KEYS: Final = frozenset({'Sensors', 'InitialPose', 'Footprint', 'description'})
#: Top-level keys this loader reads.
OWN_KEYS: Final = ('model', 'integrator', 'physics_rate_hz', 'CarParameters', 'Controller',
                   'Actuators', 'Powertrain', 'Vesc')


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
    actuators: ActuatorParameters = ActuatorParameters()  #: dead times and lags (none)
    vesc: VescParameters | None = None  #: the VESC and servo, for the VESC topics (none)
    powertrain: CombustionParameters | None = None  #: engine and gearbox (none)


# --- value checks -------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Bounds:
    """The bounds of one parameter, as ``Section.number`` takes them."""

    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    nonzero: bool = False
    maximum_name: str | None = None

    def read(self, section: Section, key: str) -> float:
        return section.number(key, minimum=self.minimum, maximum=self.maximum,
                              exclusive_minimum=self.exclusive_minimum,
                              exclusive_maximum=self.exclusive_maximum, nonzero=self.nonzero,
                              maximum_name=self.maximum_name)


POSITIVE = _Bounds(0.0, exclusive_minimum=True)
NON_NEGATIVE = _Bounds(0.0)
NEGATIVE = _Bounds(maximum=0.0, exclusive_maximum=True)
NON_POSITIVE = _Bounds(maximum=0.0)
FRACTION = _Bounds(0.0, 1.0)
FINITE = _Bounds()
NON_ZERO = _Bounds(nonzero=True)

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
_PHYSICS_RATE: Final = _Bounds(0.0, 1e6, exclusive_minimum=True)


def _group(parent: Section, key: str, checks: Mapping[str, _Bounds],
           optional: frozenset[str] = frozenset()) -> dict[str, float]:
    """The values of ``parent[key]``, each checked against its bounds; no other keys."""
    group = parent.section(key)
    group.reject_unknown(set(checks) | optional)
    return {name: bounds.read(group, name) for name, bounds in checks.items()}


def _pacejka(tyre: Section) -> PacejkaParameters:
    """Pacejka block: optional, each coefficient defaults to CommonRoad's value."""
    if not tyre.has('pacejka'):
        return PacejkaParameters()
    block = tyre.section('pacejka')
    block.reject_unknown(_PACEJKA)
    return PacejkaParameters(**{k: _PACEJKA[k].read(block, k) for k in block.data})


def _car_parameters(data: Section) -> CarParameters:
    data.reject_unknown(('body', 'tyre', 'steering', 'longitudinal', 'drivetrain'))
    return CarParameters(
        body=BodyParameters(**_group(data, 'body', _BODY)),
        tyre=TyreParameters(**_group(data, 'tyre', _TYRE, frozenset({'pacejka'})),
                            pacejka=_pacejka(data.section('tyre'))),
        steering=SteeringParameters(**_group(data, 'steering', _STEERING)),
        longitudinal=LongitudinalParameters(**_group(data, 'longitudinal', _LONGITUDINAL)),
        drivetrain=DrivetrainParameters(**_group(data, 'drivetrain', _DRIVETRAIN)),
    )


def _controller(data: Section, rate_hz: float) -> ControllerGains:
    data.reject_unknown(('speed', 'steering'))
    # A P-gain above the sub-step rate overshoots every step; beyond 2x it diverges.
    stable = _Bounds(0.0, rate_hz, maximum_name='physics_rate_hz')
    speed = _group(data, 'speed', {f.name: stable for f in fields(SpeedGains)})
    steering_kp = _Bounds(0.0, rate_hz, exclusive_minimum=True, maximum_name='physics_rate_hz')
    steering = _group(data, 'steering', {'kp': steering_kp})
    return ControllerGains(speed=SpeedGains(**speed), steering=SteeringGains(**steering))


_ACTUATOR_TIME: Final = _Bounds(0.0, MAX_ACTUATOR_TIME_S)
_COMMAND_NOISE: Final = _Bounds(0.0, MAX_COMMAND_NOISE)


def _actuators(root: Section) -> ActuatorParameters:
    """The optional ``Actuators`` section; what it leaves out is ideal (zero)."""
    if not root.has('Actuators'):
        return ActuatorParameters()
    data = root.section('Actuators')
    data.reject_unknown(('steering', 'drive'))
    values: dict[str, float] = {}
    for channel in ('steering', 'drive'):
        if data.has(channel):
            group = data.section(channel)
            group.reject_unknown(('dead_time', 'lag', 'noise_std'))
            for key, bounds in (('dead_time', _ACTUATOR_TIME), ('lag', _ACTUATOR_TIME),
                                ('noise_std', _COMMAND_NOISE)):
                if group.has(key):
                    values[f'{channel}_{key}'] = bounds.read(group, key)
    return ActuatorParameters(**values)


_VESC_LIMIT: Final = 1e7  # beyond any motor: larger values are typos, and could overflow
_VESC: Final = {
    'speed_to_erpm_gain': _Bounds(-_VESC_LIMIT, _VESC_LIMIT, nonzero=True),
    'speed_to_erpm_offset': _Bounds(-_VESC_LIMIT, _VESC_LIMIT),
    'steering_angle_to_servo_gain': _Bounds(-_VESC_LIMIT, _VESC_LIMIT, nonzero=True),
    'steering_angle_to_servo_offset': FRACTION,
    'servo_min': FRACTION, 'servo_max': FRACTION,
    'speed_min': _Bounds(-_VESC_LIMIT, 0.0), 'speed_max': _Bounds(0.0, _VESC_LIMIT,
                                                                  exclusive_minimum=True),
    'brake_max': _Bounds(0.0, _VESC_LIMIT, exclusive_minimum=True),
    'current_max': _Bounds(0.0, _VESC_LIMIT, exclusive_minimum=True),
    'motor_kv': _Bounds(0.0, _VESC_LIMIT, exclusive_minimum=True),
    'battery_voltage': _Bounds(0.0, _VESC_LIMIT, exclusive_minimum=True),
}


def _vesc(root: Section) -> VescParameters | None:
    """The optional ``Vesc`` section: the three gains are required; limits and motor default
    to ``VescParameters``' values."""
    if not root.has('Vesc'):
        return None
    data = root.section('Vesc')
    data.reject_unknown(set(_VESC) | {'motor_pole_pairs', 'reported_speed_sign'})
    required = ('speed_to_erpm_gain', 'steering_angle_to_servo_gain',
                'steering_angle_to_servo_offset')
    values: dict[str, Any] = {key: bounds.read(data, key) for key, bounds in _VESC.items()
                              if key in required or data.has(key)}
    if data.has('motor_pole_pairs'):
        values['motor_pole_pairs'] = data.integer('motor_pole_pairs', minimum=1)
    if data.has('reported_speed_sign'):
        sign = data.raw('reported_speed_sign')
        if sign not in (-1, 1) or isinstance(sign, bool):
            data.fail(f'expected 1 or -1, got {sign!r}', 'reported_speed_sign')
        values['reported_speed_sign'] = float(sign)
    vesc = VescParameters(**values)
    if vesc.servo_min >= vesc.servo_max:
        data.fail(f'expected servo_min < servo_max, got {vesc.servo_min} and {vesc.servo_max}',
                  'servo_min')
    return vesc


_RPM: Final = _Bounds(0.0, 1e5, exclusive_minimum=True)
_MAX_RATIO: Final = 1e3
_RATIO: Final = _Bounds(0.0, _MAX_RATIO, exclusive_minimum=True)


def _ratios(section: Section, key: str) -> list[float]:
    """A non-empty list of gear ratios, each > 0 and at most 1000."""
    raw = section.raw(key, what='a list of gear ratios')
    if not isinstance(raw, list) or not raw:
        section.fail(f'expected a non-empty list of gear ratios, got {raw!r}', key)
    values = list(section.vector(key, len(raw)))
    if not all(0.0 < v <= _MAX_RATIO for v in values):
        section.fail(f'expected gear ratios > 0 and at most {_MAX_RATIO:g}, got {raw!r}', key)
    return values


def _powertrain(root: Section, params: CarParameters) -> CombustionParameters | None:
    """The optional ``Powertrain`` section (a combustion engine and its gearbox)."""
    if not root.has('Powertrain'):
        return None
    data = root.section('Powertrain')
    data.reject_unknown(('type', 'torque_curve', 'gear_ratios', 'final_drive', 'efficiency',
                         'idle_rpm', 'upshift_rpm', 'downshift_rpm', 'shift_time', 'layout'))
    data.string('type', choices=('combustion',))
    raw_curve = data.raw('torque_curve', what='a list of [rpm, N m] points')
    if not isinstance(raw_curve, list) or len(raw_curve) < 2:
        data.fail(f'expected at least two [rpm, N m] points, got {raw_curve!r}', 'torque_curve')
    rpm = _curve_column(data, raw_curve, 0, _RPM)
    torque = _curve_column(data, raw_curve, 1, _Bounds(-1e5, 1e5))
    if any(b <= a for a, b in itertools.pairwise(rpm)):
        data.fail(f'expected increasing engine speeds, got {rpm}', 'torque_curve')
    gears = _ratios(data, 'gear_ratios')
    if any(b >= a for a, b in itertools.pairwise(gears)):
        data.fail(f'expected decreasing ratios, first gear first, got {gears}', 'gear_ratios')
    layout = data.string('layout', 'rwd', choices=tuple(LAYOUTS))
    split, own = LAYOUTS[layout], params.drivetrain.drive_torque_split_front
    if (own != split) if split is not None else not 0.0 < own < 1.0:
        data.fail(f'layout {layout} does not agree with CarParameters.drivetrain.'
                  f'drive_torque_split_front {own} (fwd: 1, rwd: 0, awd: between)', 'layout')
    values = CombustionParameters(
        torque_rpm=tuple(rpm), torque_nm=tuple(torque), gear_ratios=tuple(gears),
        final_drive=_RATIO.read(data, 'final_drive'),
        efficiency=data.number('efficiency', 0.9, minimum=0.0, maximum=1.0,
                               exclusive_minimum=True),
        idle_rpm=data.number('idle_rpm', 800.0, minimum=0.0, maximum=1e5,
                             exclusive_minimum=True),
        upshift_rpm=data.number('upshift_rpm', rpm[-1], minimum=0.0, maximum=1e5,
                                exclusive_minimum=True),
        downshift_rpm=data.number('downshift_rpm', 0.4 * rpm[-1], minimum=0.0, maximum=1e5),
        shift_time=data.number('shift_time', 0.3, minimum=0.0, maximum=10.0),
        layout=layout)
    if not values.downshift_rpm < values.upshift_rpm <= values.redline_rpm:
        data.fail(f'expected downshift_rpm < upshift_rpm <= the torque curve\'s last rpm '
                  f'({values.redline_rpm}), got {values.downshift_rpm} and '
                  f'{values.upshift_rpm}', 'upshift_rpm')
    return values


def _curve_column(data: Section, raw: list[Any], column: int, bounds: _Bounds) -> list[float]:
    """Column ``column`` of the torque curve's [rpm, N m] points, each checked."""
    values = []
    for i, point in enumerate(raw):
        ok = isinstance(point, list) and len(point) == 2 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            for v in point)
        value = float(point[column]) if ok else math.nan
        if not ok or (bounds.minimum is not None and not value > bounds.minimum) or (
                bounds.maximum is not None and value > bounds.maximum):
            data.fail(f'expected [rpm > 0, N m] points, got {point!r} at [{i}]',
                      'torque_curve')
        values.append(value)
    return values


def load_vehicle_config(profile: Section | Mapping[str, Any], source: str = '') -> VehicleConfig:
    """Validate the dynamics keys of a car profile.

    ``profile`` is the whole profile, as read by ``config.profile.load_profile`` (a Section, so
    errors give lines) or as a plain mapping from ``source``; other modules' keys are left to
    them. The source path is also the base of a relative model file path.
    """
    root = profile if isinstance(profile, Section) else Section(profile, source or '<profile>')
    source = root.source
    root.reject_unknown(set(OWN_KEYS) | FOREIGN_KEYS)
    spec = root.raw('model', what='a model name')
    if not isinstance(spec, str) or not spec:
        root.fail(f'expected a model name, got {spec!r}', 'model')
    model = resolve_model(spec, source)
    integrator = root.string('integrator', choices=INTEGRATORS)
    rate = _PHYSICS_RATE.read(root, 'physics_rate_hz')
    params = _car_parameters(root.section('CarParameters'))
    return VehicleConfig(model=model, model_name=spec, integrator=integrator,
                         physics_rate_hz=rate, params=params,
                         controller=_controller(root.section('Controller'), rate),
                         source=source, actuators=_actuators(root), vesc=_vesc(root),
                         powertrain=_powertrain(root, params))


def load_vehicle_config_file(path: str | Path) -> VehicleConfig:
    """Read a car profile YAML file and validate its dynamics part."""
    return load_vehicle_config(load_section(path))
