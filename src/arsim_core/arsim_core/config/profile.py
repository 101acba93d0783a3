"""Car profiles: one YAML file per kind of car (dynamics, footprint, sensors).

The dynamics sections (``model``, ``integrator``, ``CarParameters``, ...) are parsed by
``arsim_core.dynamics``; this module owns the keys that describe the car's body and sensors.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arsim_core.config.fields import Section, load_yaml
from arsim_core.config.sensors import SensorSpec, load_sensors
from arsim_core.geometry import Footprint

PROFILE_KEYS = frozenset({'description', 'Sensors', 'Footprint', 'InitialPose'})


@dataclass(frozen=True)
class CarProfile:
    name: str
    source: str
    raw: dict[str, Any]
    footprint: Footprint
    sensors: tuple[SensorSpec, ...]

    def sensor(self, name: str) -> SensorSpec:
        return next(s for s in self.sensors if s.name == name)


def load_profile(path: Path) -> CarProfile:
    """Read and check a profile; the dynamics part is checked by ``check_dynamics``."""
    data = load_yaml(path)
    root = Section(data, path)
    footprint = root.section('Footprint')
    footprint.reject_unknown({'length', 'width', 'height'})
    profile = CarProfile(
        name=path.stem, source=str(path), raw=dict(root.data),
        footprint=Footprint(
            length=footprint.number('length', minimum=0.0, exclusive_minimum=True),
            width=footprint.number('width', minimum=0.0, exclusive_minimum=True),
            height=footprint.number('height', 0.25, minimum=0.0, exclusive_minimum=True)),
        sensors=load_sensors(root.section('Sensors', {})))
    check_dynamics(profile)
    return profile


def check_dynamics(profile: CarProfile) -> None:
    """Validate the dynamics sections at start-up, so a bad profile never reaches a node."""
    from arsim_core.dynamics import load_vehicle_config

    load_vehicle_config(profile.raw, profile.source)
