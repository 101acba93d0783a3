"""Sensor declarations of a car profile (the ``Sensors`` section)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from arsim_core.config.fields import Section


@dataclass(frozen=True)
class Mount:
    """Sensor pose on the car, relative to base_link: position [m] and roll/pitch/yaw [rad]."""

    x: float
    y: float
    z: float
    roll: float
    pitch: float
    yaw: float


@dataclass(frozen=True)
class Lidar2DSpec:
    """A planar scanning range finder, published as sensor_msgs/LaserScan."""

    name: str
    mount: Mount
    rate_hz: float
    beams: int
    fov_rad: float
    range_min: float
    range_max: float
    noise_std: float = 0.0

    kind = 'lidar2d'

    @property
    def angle_min(self) -> float:
        return -self.fov_rad / 2.0

    @property
    def angle_increment(self) -> float:
        return self.fov_rad / (self.beams - 1) if self.beams > 1 else 0.0

    def to_wire(self) -> dict[str, object]:
        """The description sent to the backend in InitialSettings."""
        m = self.mount
        return {'name': self.name, 'type': self.kind, 'rate_hz': self.rate_hz,
                'mount': [m.x, m.y, m.z, m.roll, m.pitch, m.yaw], 'beams': self.beams,
                'angle_min': self.angle_min, 'angle_increment': self.angle_increment,
                'range_min': self.range_min, 'range_max': self.range_max,
                'noise_std': self.noise_std}


SensorSpec = Lidar2DSpec


def _mount(section: Section) -> Mount:
    x, y, z = section.vector('position', 3)
    roll, pitch, yaw = section.vector('rotation', 3, [0.0, 0.0, 0.0])
    return Mount(x, y, z, roll, pitch, yaw)


def _lidar2d(name: str, section: Section) -> Lidar2DSpec:
    section.reject_unknown({'type', 'position', 'rotation', 'rate_hz', 'beams', 'fov_rad',
                            'range_min', 'range_max', 'noise_std'})
    range_min = section.number('range_min', 0.0, minimum=0.0)
    range_max = section.number('range_max', minimum=0.0, exclusive_minimum=True)
    if range_max <= range_min:
        section.fail(f'expected range_max > range_min ({range_min}), got {range_max}',
                     'range_max')
    return Lidar2DSpec(
        name=name, mount=_mount(section),
        rate_hz=section.number('rate_hz', minimum=0.0, exclusive_minimum=True),
        beams=section.integer('beams', minimum=1),
        fov_rad=section.number('fov_rad', minimum=0.0, maximum=2 * math.pi,
                               exclusive_minimum=True),
        range_min=range_min, range_max=range_max,
        noise_std=section.number('noise_std', 0.0, minimum=0.0))


SENSOR_TYPES: Mapping[str, Callable[[str, Section], SensorSpec]] = {
    'lidar2d': _lidar2d,
}


def load_sensors(section: Section) -> tuple[SensorSpec, ...]:
    """Parse every sensor of a profile; the ``type`` key picks the parser."""
    sensors = []
    for name, entry in section.items():
        kind = entry.string('type', choices=SENSOR_TYPES.keys())
        sensors.append(SENSOR_TYPES[kind](name, entry))
    return tuple(sensors)
