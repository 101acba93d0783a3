"""The profile values a drive can identify: how each is read from and set on a
``VehicleConfig`` (what the replay steps), where it is written in the profile file, its
domain-randomisation key and what manoeuvre shows it (the report's "why not")."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from arsim_core.dynamics import VehicleConfig

Getter = Callable[[VehicleConfig], float]
Setter = Callable[[VehicleConfig, float], VehicleConfig]

STEERING_CHANNEL: Final = 'steering'
DRIVE_CHANNEL: Final = 'drive'


@dataclass(frozen=True)
class Parameter:
    """One fitted value. ``paths`` are its keys in the profile (one value at each; a negative
    ``sign`` writes minus the value, as the rate's lower limit). ``channel`` is what it moves:
    the drive (speed only) or the steering (yaw rate and lateral acceleration). ``scale`` is a
    typical size, for the optimiser's steps and for judging small values; ``resolution`` the
    absolute uncertainty below which it counts as identified whatever its size."""

    name: str
    label: str
    unit: str
    paths: tuple[tuple[tuple[str, ...], float], ...]
    get: Getter
    put: Setter
    lower: float
    upper: float
    channel: str
    needs: str  # the manoeuvre that shows it
    scale: float = 1.0
    resolution: float = 0.0
    discrete: bool = False  # a dead time: the rule releases commands at steps
    randomization: str | None = None  # its key in the randomisation file

    def value(self, config: VehicleConfig) -> float:
        return float(self.get(config))

    def with_value(self, config: VehicleConfig, value: float) -> VehicleConfig:
        return self.put(config, min(max(value, self.lower), self.upper))


def _actuator(key: str) -> tuple[Getter, Setter]:
    def get(c: VehicleConfig) -> float:
        return float(getattr(c.actuators, key))

    def put(c: VehicleConfig, v: float) -> VehicleConfig:
        return dataclasses.replace(c, actuators=dataclasses.replace(c.actuators, **{key: v}))

    return get, put


def _group(group: str, key: str) -> tuple[Getter, Setter]:
    def get(c: VehicleConfig) -> float:
        return float(getattr(getattr(c.params, group), key))

    def put(c: VehicleConfig, v: float) -> VehicleConfig:
        part = dataclasses.replace(getattr(c.params, group), **{key: v})
        return dataclasses.replace(c, params=dataclasses.replace(c.params, **{group: part}))

    return get, put


def _steering_rate() -> tuple[Getter, Setter]:
    def get(c: VehicleConfig) -> float:
        return float(c.params.steering.max_rate)

    def put(c: VehicleConfig, v: float) -> VehicleConfig:
        part = dataclasses.replace(c.params.steering, min_rate=-v, max_rate=v)
        return dataclasses.replace(c, params=dataclasses.replace(c.params, steering=part))

    return get, put


def _speed_gain(key: str) -> tuple[Getter, Setter]:
    def get(c: VehicleConfig) -> float:
        return float(getattr(c.controller.speed, key))

    def put(c: VehicleConfig, v: float) -> VehicleConfig:
        speed = dataclasses.replace(c.controller.speed, **{key: v})
        return dataclasses.replace(c, controller=dataclasses.replace(c.controller, speed=speed))

    return get, put


def _vesc(key: str) -> tuple[Getter, Setter]:
    def get(c: VehicleConfig) -> float:
        assert c.vesc is not None
        return float(getattr(c.vesc, key))

    def put(c: VehicleConfig, v: float) -> VehicleConfig:
        assert c.vesc is not None
        changes: dict[str, Any] = {key: v}
        return dataclasses.replace(c, vesc=dataclasses.replace(c.vesc, **changes))

    return get, put


STEP_NEEDS: Final = 'steps in the {} commands'


def candidates(config: VehicleConfig, vesc: bool) -> list[Parameter]:
    """The parameters a drive with ``config``'s model can show; the VESC's gains when the
    VESC's commands are replayed."""
    rate = config.physics_rate_hz
    found = [
        Parameter('steering_dead_time', 'steering dead time', 's',
                  ((('Actuators', 'steering', 'dead_time'), 1.0),), *_actuator(
                      'steering_dead_time'), 0.0, 0.5, STEERING_CHANNEL,
                  'steps in the steering commands', 0.05, discrete=True,
                  randomization='steering_dead_time'),
        Parameter('drive_dead_time', 'drive dead time', 's',
                  ((('Actuators', 'drive', 'dead_time'), 1.0),), *_actuator('drive_dead_time'),
                  0.0, 0.5, DRIVE_CHANNEL, 'steps in the speed commands', 0.05, discrete=True,
                  randomization='drive_dead_time'),
        Parameter('steering_lag', 'steering lag', 's',
                  ((('Actuators', 'steering', 'lag'), 1.0),), *_actuator('steering_lag'),
                  0.0, 1.0, STEERING_CHANNEL, 'steps in the steering commands', 0.05,
                  resolution=0.004, randomization='steering_lag'),
        Parameter('drive_lag', 'drive lag', 's', ((('Actuators', 'drive', 'lag'), 1.0),),
                  *_actuator('drive_lag'), 0.0, 2.0, DRIVE_CHANNEL,
                  'steps in the speed commands', 0.05, resolution=0.004,
                  randomization='drive_lag'),
        Parameter('max_steering_rate', 'steering rate limit', 'rad/s',
                  ((('CarParameters', 'steering', 'max_rate'), 1.0),
                   (('CarParameters', 'steering', 'min_rate'), -1.0)), *_steering_rate(),
                  0.05, 100.0, STEERING_CHANNEL,
                  'large, fast steering steps that move the wheels at their rate limit',
                  config.params.steering.max_rate, randomization='max_steering_rate'),
        Parameter('max_acceleration', 'acceleration limit', 'm/s^2',
                  ((('CarParameters', 'longitudinal', 'max_acceleration'), 1.0),),
                  *_group('longitudinal', 'max_acceleration'), 0.05, 200.0, DRIVE_CHANNEL,
                  'full accelerations and braking from standstill and to a stop',
                  config.params.longitudinal.max_acceleration,
                  randomization='max_acceleration'),
        Parameter('kp_accelerate_forward', 'speed gain, speeding up', '1/s',
                  ((('Controller', 'speed', 'kp_accelerate_forward'), 1.0),),
                  *_speed_gain('kp_accelerate_forward'), 0.01, rate, DRIVE_CHANNEL,
                  'small steps up in the speed command', 5.0),
        Parameter('kp_brake_forward', 'speed gain, slowing down', '1/s',
                  ((('Controller', 'speed', 'kp_brake_forward'), 1.0),),
                  *_speed_gain('kp_brake_forward'), 0.01, rate, DRIVE_CHANNEL,
                  'small steps down in the speed command', 5.0),
    ]
    if config.model_name in ('st', 'std'):
        tyre = config.params.tyre
        found += [
            Parameter('cornering_stiffness_front', 'cornering stiffness, front', '1/rad',
                      ((('CarParameters', 'tyre', 'cornering_stiffness_front'), 1.0),),
                      *_group('tyre', 'cornering_stiffness_front'), 0.05, 100.0,
                      STEERING_CHANNEL, 'circles and slaloms at several speeds, with lateral '
                      'accelerations of several m/s^2', tyre.cornering_stiffness_front),
            Parameter('cornering_stiffness_rear', 'cornering stiffness, rear', '1/rad',
                      ((('CarParameters', 'tyre', 'cornering_stiffness_rear'), 1.0),),
                      *_group('tyre', 'cornering_stiffness_rear'), 0.05, 100.0,
                      STEERING_CHANNEL, 'circles and slaloms at several speeds, with lateral '
                      'accelerations of several m/s^2', tyre.cornering_stiffness_rear),
            Parameter('friction', 'friction coefficient', '-',
                      ((('CarParameters', 'tyre', 'friction'), 1.0),), *_group('tyre', 'friction'),
                      0.05, 5.0, STEERING_CHANNEL, 'driving at the grip limit', tyre.friction,
                      randomization='friction'),
        ]
    if vesc and config.vesc is not None:
        v = config.vesc
        found += [
            Parameter('speed_to_erpm_gain', 'ERPM per m/s', 'ERPM s/m',
                      ((('Vesc', 'speed_to_erpm_gain'), 1.0),), *_vesc('speed_to_erpm_gain'),
                      -1e7, 1e7, STEERING_CHANNEL, 'turns at several speeds (the IMU sees the '
                      'speed the ERPM stand for)', abs(v.speed_to_erpm_gain)),
            Parameter('steering_angle_to_servo_gain', 'servo per rad', '1/rad',
                      ((('Vesc', 'steering_angle_to_servo_gain'), 1.0),),
                      *_vesc('steering_angle_to_servo_gain'), -1e7, 1e7, STEERING_CHANNEL,
                      'turns of several radii', abs(v.steering_angle_to_servo_gain)),
            Parameter('steering_angle_to_servo_offset', 'servo straight ahead', '-',
                      ((('Vesc', 'steering_angle_to_servo_offset'), 1.0),),
                      *_vesc('steering_angle_to_servo_offset'), 0.0, 1.0, STEERING_CHANNEL,
                      'straight driving with the servo centred', 0.5, resolution=0.002),
        ]
    return found
