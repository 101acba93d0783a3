"""What a camera's sensor does to its image beyond the ideal render: exposure, photon noise,
vignetting, motion blur and a rolling shutter (docs/sensors.md, "Exposure and motion").

Each effect travels in a camera's description in InitialSettings as an object of its own,
present only when the effect is on, so a peer that knows none of them sees the cameras it
always saw; the effects' names are what a backend lists in Ready's ``camera_effects``
capability, and the engine refuses a backend that does not list an effect a camera needs.
The limits here are the ones the profile (``config.sensors``) and the wire (``wire``) enforce.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

EXPOSURE_MODES = ('fixed', 'auto')
VIGNETTING_MODELS = ('radial', 'cos4')


class Limit(NamedTuple):
    """The range of a number on the wire and in the profile (``open_low``: low excluded)."""

    low: float
    high: float
    open_low: bool = False


@dataclass(frozen=True)
class Exposure:
    """A gain on linear light: fixed, or ``auto``: each frame the gain that brings the mean
    display brightness of the image to ``target`` (0..1), clamped to [``gain_min``,
    ``gain_max``], approached with a first-order lag of ``time_constant`` seconds of sim
    time; an auto exposure starts at ``gain``."""

    mode: str = 'fixed'
    gain: float = 1.0
    target: float = 0.45
    time_constant: float = 0.25
    gain_min: float = 0.05
    gain_max: float = 20.0


@dataclass(frozen=True)
class PhotonNoise:
    """Shot noise of the electrons a pixel collects (``full_well`` of them for linear light 1
    at gain 1) plus ``read_noise`` electrons (rms), both amplified by the gain."""

    full_well: float = 10_000.0
    read_noise: float = 5.0


@dataclass(frozen=True)
class Vignetting:
    """Light lost towards the corners: ``radial``, ``1 - falloff (r / r_corner)^2`` of the
    distance r from the principal point; ``cos4``, ``1 - falloff (1 - cos^4 theta)`` of each
    pixel's ray angle theta (the natural falloff of a lens at falloff 1)."""

    model: str = 'radial'
    falloff: float = 0.3


@dataclass(frozen=True)
class MotionBlur:
    """The image integrates the scene over ``exposure_time`` seconds ending at the frame time,
    as ``samples`` views (a power of two) along the camera's motion."""

    exposure_time: float = 0.01
    samples: int = 8


@dataclass(frozen=True)
class RollingShutter:
    """Rows are read out one after the other, the top row ``readout_time`` seconds before the
    bottom row, which ends at the frame time."""

    readout_time: float = 0.02


#: Each effect's wire key (and capability name) and its record.
EFFECTS: Mapping[str, type] = {'exposure': Exposure, 'photon_noise': PhotonNoise,
                               'vignetting': Vignetting, 'motion_blur': MotionBlur,
                               'rolling_shutter': RollingShutter}
NAMES = tuple(EFFECTS)
#: The numbers of each effect and their limits; ``samples`` is an integer, a power of two.
LIMITS: Mapping[str, Mapping[str, Limit]] = {
    'exposure': {'gain': Limit(0.0, 1e3, True), 'target': Limit(0.0, 1.0, True),
                 'time_constant': Limit(0.0, 60.0), 'gain_min': Limit(0.0, 1e3, True),
                 'gain_max': Limit(0.0, 1e3, True)},
    'photon_noise': {'full_well': Limit(1.0, 1e7), 'read_noise': Limit(0.0, 1e4)},
    'vignetting': {'falloff': Limit(0.0, 1.0)},
    'motion_blur': {'exposure_time': Limit(0.0, 1.0, True), 'samples': Limit(2, 64)},
    'rolling_shutter': {'readout_time': Limit(0.0, 1.0, True)},
}
#: The names each effect picks from.
CHOICES: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    'exposure': {'mode': EXPOSURE_MODES}, 'vignetting': {'model': VIGNETTING_MODELS}}
INTEGERS = frozenset({'samples'})


@dataclass(frozen=True)
class CameraEffects:
    """The effects of one camera; None: that effect is off."""

    exposure: Exposure | None = None
    photon_noise: PhotonNoise | None = None
    vignetting: Vignetting | None = None
    motion_blur: MotionBlur | None = None
    rolling_shutter: RollingShutter | None = None

    def names(self) -> tuple[str, ...]:
        """The effects that are on (what a backend must list in Ready)."""
        return tuple(name for name in NAMES if getattr(self, name) is not None)

    def to_wire(self) -> dict[str, dict[str, Any]]:
        """The objects a camera's description carries: one per effect that is on."""
        return {name: {f.name: getattr(effect, f.name) for f in fields(effect)}
                for name in self.names() for effect in (getattr(self, name),)}

    @classmethod
    def from_wire(cls, spec: Mapping[str, Any]) -> CameraEffects:
        """The effects of a camera description that ``wire.sensor`` has checked (keys an
        effect does not know are left for newer peers)."""
        values: dict[str, Any] = {}
        for name, record in EFFECTS.items():
            given = spec.get(name)
            if isinstance(given, dict):
                known = {f.name for f in fields(record)}
                values[name] = record(**{k: v for k, v in given.items() if k in known})
        return cls(**values)


def problem(name: str, effect: Any) -> tuple[str, str] | None:
    """What is wrong with an effect beyond each number's range: (field, message), or None.
    The profile and the wire both ask."""
    if name == 'exposure' and effect.gain_min > effect.gain_max:
        return 'gain_max', f'must be at least gain_min ({effect.gain_min:g})'
    if name == 'motion_blur' and effect.samples & (effect.samples - 1):
        return 'samples', f'must be a power of two (2, 4, 8, ...), got {effect.samples}'
    return None
