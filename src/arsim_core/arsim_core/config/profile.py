"""Car profiles: one YAML file per kind of car (dynamics, footprint, sensors), read once.

This module owns the keys that describe the car's body and sensors; the dynamics sections
(``model``, ``integrator``, ``CarParameters``, ...) are checked by ``arsim_core.dynamics`` from
the same parse, and every consumer (dynamics node, engine, description, sensor node) takes the
resulting ``CarProfile.vehicle`` instead of reading the file again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from arsim_core.config.sensors import SensorSpec, load_sensors
from arsim_core.geometry import Footprint
from arsim_core.yaml_fields import load_section

if TYPE_CHECKING:
    from arsim_core.dynamics import VehicleConfig


@dataclass(frozen=True)
class CarProfile:
    name: str
    source: str
    footprint: Footprint
    sensors: tuple[SensorSpec, ...]
    vehicle: VehicleConfig  #: the dynamics part, validated

    def sensor(self, name: str) -> SensorSpec:
        return next(s for s in self.sensors if s.name == name)


def load_profile(path: Path) -> CarProfile:
    """Read and check a whole profile, so a bad one never reaches a node."""
    from arsim_core.dynamics import load_vehicle_config

    root = load_section(path)
    vehicle = load_vehicle_config(root)  # also refuses top-level keys that nobody reads
    footprint = root.section('Footprint')
    footprint.reject_unknown({'length', 'width', 'height'})
    return CarProfile(
        name=path.stem, source=str(path),
        footprint=Footprint(
            length=footprint.number('length', minimum=0.0, exclusive_minimum=True),
            width=footprint.number('width', minimum=0.0, exclusive_minimum=True),
            height=footprint.number('height', minimum=0.0, exclusive_minimum=True)),
        sensors=load_sensors(root.section('Sensors', {})),
        vehicle=vehicle)
