"""A camera's sensor keys in a car profile: exposure, photon noise, vignetting, motion blur and
rolling shutter (``protocol.camera_effects``; docs/sensors.md, "Exposure and motion").

Every effect is off unless its key is given, so a profile written before them renders the
images it always did. Values outside ``camera_effects.LIMITS``, a key that needs another one
(``read_noise_electrons`` without ``full_well_electrons``, ``auto_exposure_target`` without
``exposure: auto``), and colour noise given both ways stop the start naming file, line and key.
"""

from __future__ import annotations

from arsim_core.protocol.camera_effects import (
    LIMITS,
    CameraEffects,
    Exposure,
    Limit,
    MotionBlur,
    PhotonNoise,
    RollingShutter,
    Vignetting,
    problem,
)
from arsim_core.yaml_fields import Section

AUTO_KEYS = ('auto_exposure_target', 'auto_exposure_time_constant', 'auto_exposure_limits')
KEYS = frozenset({'exposure', *AUTO_KEYS, 'full_well_electrons', 'read_noise_electrons',
                  'vignetting', 'exposure_time', 'motion_blur_samples', 'rolling_shutter'})


def _number(section: Section, key: str, limit: Limit, *default: float) -> float:
    """``key`` within ``limit``; required unless a default is given."""
    return section.number(key, *default, minimum=limit.low, maximum=limit.high,
                          exclusive_minimum=limit.open_low)


def camera_effects(section: Section) -> CameraEffects:
    """The effects a camera's section turns on."""
    return CameraEffects(exposure=_exposure(section), photon_noise=_photon_noise(section),
                         vignetting=_vignetting(section), motion_blur=_motion_blur(section),
                         rolling_shutter=_rolling_shutter(section))


def _exposure(section: Section) -> Exposure | None:
    """``exposure``: a fixed gain on linear light (default 1: the scene's own exposure), or
    ``auto`` with its target, time constant and limits."""
    value = section.raw('exposure', 1.0)
    limits = LIMITS['exposure']
    if value != 'auto':
        for key in AUTO_KEYS:
            if section.has(key):
                section.fail(f'needs exposure: auto, got exposure: {value!r}', key)
        if isinstance(value, str):
            section.fail(f"expected a gain in (0, {limits['gain'].high:g}] or 'auto', got "
                         f'{value!r}', 'exposure')
        gain = _number(section, 'exposure', limits['gain'], 1.0)
        return None if gain == 1.0 else Exposure('fixed', gain)
    default = Exposure('auto')
    low, high = section.vector('auto_exposure_limits', 2, [default.gain_min, default.gain_max])
    for bound in (low, high):
        if not limits['gain_min'].low < bound <= limits['gain_min'].high:
            section.fail(f"expected two gains [lowest, highest] in (0, "
                         f"{limits['gain_min'].high:g}], got {[low, high]}",
                         'auto_exposure_limits')
    effect = Exposure('auto', min(max(1.0, low), high),
                      _number(section, 'auto_exposure_target', limits['target'], default.target),
                      _number(section, 'auto_exposure_time_constant', limits['time_constant'],
                              default.time_constant), low, high)
    if problem('exposure', effect) is not None:
        section.fail(f'expected the lowest gain first, got {[low, high]}', 'auto_exposure_limits')
    return effect


def _photon_noise(section: Section) -> PhotonNoise | None:
    """``full_well_electrons`` turns shot and read noise on; ``read_noise_electrons`` needs
    it."""
    limits = LIMITS['photon_noise']
    if not section.has('full_well_electrons'):
        if section.has('read_noise_electrons'):
            section.fail('needs full_well_electrons (the photon noise model)',
                         'read_noise_electrons')
        return None
    if section.number('noise_std', 0.0) > 0.0:
        section.fail('give the flat colour noise noise_std or the photon noise model '
                     '(full_well_electrons, read_noise_electrons), not both', 'noise_std')
    return PhotonNoise(_number(section, 'full_well_electrons', limits['full_well']),
                       _number(section, 'read_noise_electrons', limits['read_noise'], 0.0))


def _vignetting(section: Section) -> Vignetting | None:
    """``vignetting``: the share of light lost at the furthest corner (radial), or ``cos4``."""
    value = section.raw('vignetting', 0.0)
    if value == 'cos4':
        return Vignetting('cos4', 1.0)
    if isinstance(value, str):
        section.fail(f"expected a falloff in [0, 1] or 'cos4', got {value!r}", 'vignetting')
    falloff = _number(section, 'vignetting', LIMITS['vignetting']['falloff'], 0.0)
    return Vignetting('radial', falloff) if falloff > 0.0 else None


def _motion_blur(section: Section) -> MotionBlur | None:
    """``exposure_time`` [s] turns motion blur on; ``motion_blur_samples`` needs it."""
    limits = LIMITS['motion_blur']
    time = section.number('exposure_time', 0.0, minimum=0.0, maximum=limits['exposure_time'].high)
    if time == 0.0:
        if section.has('motion_blur_samples'):
            section.fail('needs exposure_time (the motion blur)', 'motion_blur_samples')
        return None
    samples = section.integer('motion_blur_samples', MotionBlur().samples,
                              minimum=int(limits['samples'].low))
    effect = MotionBlur(time, samples)
    if samples > limits['samples'].high or problem('motion_blur', effect) is not None:
        section.fail(f"expected a power of two from {int(limits['samples'].low)} to "
                     f"{int(limits['samples'].high)}, got {samples}", 'motion_blur_samples')
    return effect


def _rolling_shutter(section: Section) -> RollingShutter | None:
    """``rolling_shutter``: the readout time [s] from the top row to the bottom (0: a global
    shutter)."""
    limit = LIMITS['rolling_shutter']['readout_time']
    time = section.number('rolling_shutter', 0.0, minimum=0.0, maximum=limit.high)
    return RollingShutter(time) if time > 0.0 else None
