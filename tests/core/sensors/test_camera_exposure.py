"""A camera's image sensor (backend.exposure): auto exposure reaching its target with its time
constant, photon noise whose variance follows the shot and read noise model, vignetting that
darkens the corners by the configured share, reruns that repeat bit for bit; the profile keys
and the wire refusing bad values, and a backend that cannot render the effects refused."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from simharness import backend_process

from arsim_core.backend import exposure
from arsim_core.backend.camera import Camera
from arsim_core.backend.exposure import LINEAR, ImageSensor, decode
from arsim_core.backend.server import EmbeddedBackend
from arsim_core.config.profile import load_profile
from arsim_core.config.scenario import SceneSettings
from arsim_core.config.sensors import CameraSpec
from arsim_core.engine import TrackWorld
from arsim_core.engine.render import ProtocolRenderer
from arsim_core.errors import ConfigError, ProtocolError
from arsim_core.pinhole import Intrinsics
from arsim_core.protocol import wire
from arsim_core.protocol.appearance import encode
from arsim_core.protocol.camera_effects import (
    CameraEffects,
    Exposure,
    PhotonNoise,
    Vignetting,
)
from arsim_core.protocol.messages import (
    CarSettings,
    InitialSettings,
    Ready,
    TrackRequest,
    in_process,
)
from arsim_core.track import load_track

PERIOD = 50_000_000
K = Intrinsics.from_fov(160, 120, 1.4)
CAMERA = {'name': 'cam', 'type': 'camera', 'rate_hz': 20.0,
          'mount': [0.0, 0.0, 0.25, 0.0, 0.1, 0.0], 'width': 160, 'height': 120, 'fov': 1.4,
          'near': 0.05, 'far': 60.0, 'outputs': ['rgb']}
AUTO = {'mode': 'auto', 'gain': 1.0, 'target': 0.3, 'time_constant': 0.5, 'gain_min': 0.05,
        'gain_max': 20.0}


def flat(level: int, shape: tuple[int, int] = (120, 160)) -> np.ndarray:
    return np.full((*shape, 3), level, np.uint8)


def test_decode_inverts_the_renderers_encoding() -> None:
    light = np.linspace(0.0, 3.0, 200)
    np.testing.assert_allclose(decode(encode(light)), light, rtol=1e-9, atol=1e-12)


# --- exposure --------------------------------------------------------------------------------
def test_auto_exposure_follows_its_target_with_its_time_constant() -> None:
    sensor = ImageSensor(CameraEffects(exposure=Exposure(**AUTO)), K)
    image = flat(60)
    wanted = sensor.metered_gain(image)
    # the metered gain brings the mean display brightness to the target
    assert float(encode(wanted * LINEAR[60])) == pytest.approx(0.3, abs=1e-4)
    gains = []
    for frame in range(41):  # 2 s of 20 Hz frames
        sensor.apply(image, frame * PERIOD, frame)
        gains.append(sensor.gain)
    assert gains[0] == 1.0  # it starts at its initial gain
    error = np.log(np.array(gains) / wanted)
    # first order in log gain: after one time constant (10 frames), e^-1 of the error is left
    assert error[10] / error[0] == pytest.approx(math.exp(-1.0), rel=1e-6)
    assert error[20] / error[0] == pytest.approx(math.exp(-2.0), rel=1e-6)
    out = sensor.apply(image, 41 * PERIOD, 41)
    assert abs(float(out.mean()) - 0.3 * 255) < 1.5  # converged: the target brightness
    sensor.reset()
    assert sensor.gain == 1.0


def test_auto_exposure_with_no_lag_jumps_and_respects_its_limits() -> None:
    sensor = ImageSensor(CameraEffects(exposure=Exposure(**{**AUTO, 'time_constant': 0.0,
                                                           'gain_max': 2.0})), K)
    out = sensor.apply(flat(20), 0, 0)  # dark: would need far more than a gain of 2
    assert sensor.gain == 2.0
    assert int(out[0, 0, 0]) == round(255 * float(encode(2.0 * LINEAR[20])))


def test_a_fixed_exposure_scales_linear_light() -> None:
    sensor = ImageSensor(CameraEffects(exposure=Exposure('fixed', 0.5)), K)
    out = sensor.apply(flat(150), 0, 0)
    assert LINEAR[out[0, 0, 0]] == pytest.approx(0.5 * LINEAR[150], rel=0.02)


# --- photon noise ----------------------------------------------------------------------------
@pytest.mark.parametrize('gain', [1.0, 3.0])
def test_noise_variance_follows_the_photon_model(gain: float) -> None:
    full_well, read = 2000.0, 10.0
    sensor = ImageSensor(CameraEffects(exposure=Exposure('fixed', gain),
                                       photon_noise=PhotonNoise(full_well, read)), K)
    measured, expected = [], []
    for level in (25, 50, 80, 110):
        light = LINEAR[level]
        out = sensor.apply(flat(level, (400, 400)), level * PERIOD, level)
        decoded = LINEAR[out]
        # the mean light is the gain's; its variance g^2 (n + r^2) / full_well^2, n = L full_well
        assert float(decoded.mean()) == pytest.approx(gain * light, rel=0.02)
        measured.append(float(decoded.var()))
        expected.append(gain**2 * (light * full_well + read**2) / full_well**2)
    np.testing.assert_allclose(measured, expected, rtol=0.1)
    assert measured == sorted(measured)  # shot noise: brighter pixels vary more


def test_noise_repeats_for_a_seed_and_differs_between_seeds() -> None:
    sensor = ImageSensor(CameraEffects(photon_noise=PhotonNoise()), K)
    image = flat(100)
    first = sensor.apply(image, PERIOD, 7).copy()
    assert np.array_equal(sensor.apply(image, PERIOD, 7), first)
    assert not np.array_equal(sensor.apply(image, PERIOD, 8), first)
    assert np.array_equal(image, flat(100))  # the renderer's image is left as it was


def _draw_of_each_value(noisy, values: int, seed: int) -> np.ndarray:
    """The draw (0 .. 2^DRAW_BITS - 1) ``noisy`` takes for each of ``values`` values: its
    table is each draw itself."""
    draws = 1 << exposure.DRAW_BITS
    table = np.tile(np.arange(draws, dtype=np.uint8), 256)
    out = np.empty(values, np.uint8)
    noisy(np.zeros(values, np.uint8), table, np.uint64(seed), np.empty((values + 7) // 8,
                                                                      np.uint64), out)
    return out


def test_noise_draws_are_fair_and_independent() -> None:
    draws = _draw_of_each_value(exposure.noisy, 1 << 20, 99)
    bins = 1 << exposure.DRAW_BITS
    counts = np.bincount(draws, minlength=bins)
    assert counts.size == bins
    chi_square = float(((counts - draws.size / bins) ** 2).sum() / (draws.size / bins))
    assert chi_square < 104  # 63 degrees of freedom: above 103.4 one time in a thousand
    # neighbouring values (a pixel's channels, and the next pixel) draw independently
    centred = draws.astype(np.float64) - 0.5 * (bins - 1)
    for lag in (1, 3, 8):
        assert abs(float(np.corrcoef(centred[:-lag], centred[lag:])[0, 1])) < 0.005


@pytest.mark.skipif(not exposure.NUMBA_ENABLED, reason='needs numba')
def test_noise_draws_are_the_same_with_numba_and_without() -> None:
    for values in (1, 13, 160 * 120 * 3):
        assert np.array_equal(_draw_of_each_value(exposure._noisy, values, 5),
                              _draw_of_each_value(exposure._noisy_numpy, values, 5))


# --- vignetting ------------------------------------------------------------------------------
def test_radial_vignetting_darkens_the_corners_by_the_configured_share() -> None:
    sensor = ImageSensor(CameraEffects(vignetting=Vignetting('radial', 0.4)), K)
    out = sensor.apply(flat(150), 0, 0)
    ratio = LINEAR[out] / LINEAR[150]
    assert ratio[60, 80, 0] == pytest.approx(1.0, abs=0.01)  # the centre keeps its light
    for corner in ((0, 0), (0, -1), (-1, 0), (-1, -1)):
        assert ratio[corner][0] == pytest.approx(0.6, abs=0.02)
    assert ratio[0, 80, 0] > ratio[0, 0, 0]  # falling off towards the corners


def test_cos4_vignetting_follows_each_rays_angle() -> None:
    sensor = ImageSensor(CameraEffects(vignetting=Vignetting('cos4', 1.0)), K)
    out = sensor.apply(flat(150), 0, 0)
    x, y = (0 - K.cx) / K.fx, (0 - K.cy) / K.fy
    cos4 = 1.0 / (1.0 + x * x + y * y) ** 2
    assert LINEAR[out[0, 0, 0]] / LINEAR[150] == pytest.approx(cos4, abs=0.02)


# --- through the backend ---------------------------------------------------------------------
@pytest.fixture(scope='module')
def hall(repo_root: Path) -> tuple[TrackWorld, tuple[float, ...]]:
    track = load_track('arsim_ring', repo_root / 'maps')
    x, y, yaw = track.start_pose
    return TrackWorld.from_track(track, SceneSettings('hall')), (x, y, 0.0, 0.0, 0.0, yaw + 0.3)


def frames(hall, camera: dict, count: int, seed: int = 0) -> list[np.ndarray]:
    world, pose = hall
    settings = InitialSettings(track=world.track_request(), frame_period_ns=PERIOD, seed=seed,
                               cars=(CarSettings('ego', None, (camera,)),))
    backend = EmbeddedBackend()
    backend.apply(InitialSettings.from_wire(in_process(settings)))
    return [np.array(backend.render_frames((k + 1) * PERIOD, {'ego': pose},
                                           [('ego', 'cam')])['ego/cam/rgb'])
            for k in range(count)]


def test_the_backend_renders_auto_exposure_noise_and_vignetting_reproducibly(hall) -> None:
    camera = {**CAMERA, 'exposure': {**AUTO, 'target': 0.6, 'time_constant': 0.2},
              'photon_noise': {'full_well': 5000.0, 'read_noise': 5.0},
              'vignetting': {'model': 'radial', 'falloff': 0.3}}
    plain = frames(hall, CAMERA, 1)[0]
    shot = frames(hall, camera, 20)
    brightness = [float(f.mean()) for f in shot]
    assert brightness[0] < plain.mean()  # vignetting, before the exposure has moved
    assert abs(brightness[-1] - 0.6 * 255) < 4  # the exposure reached its target
    assert brightness[-1] > brightness[5] > brightness[0]  # on its way there
    again = frames(hall, camera, 20)
    assert all(np.array_equal(a, b) for a, b in zip(shot, again, strict=True))
    other = frames(hall, camera, 2, seed=1)
    assert not np.array_equal(other[1], shot[1])


# --- bad input -------------------------------------------------------------------------------
def profile_camera(write_profile, **keys) -> CameraSpec:
    sensors = {'cam': {'type': 'camera', 'position': [0.2, 0.0, 0.2], 'rate_hz': 20.0,
                       'width': 160, 'height': 120, 'fov_rad': 1.4, **keys}}
    spec = load_profile(write_profile(sensors)).sensor('cam')
    assert isinstance(spec, CameraSpec)
    return spec


def test_the_profile_keys_reach_the_wire(write_profile) -> None:
    spec = profile_camera(write_profile, exposure='auto', auto_exposure_target=0.5,
                          auto_exposure_time_constant=0.1, auto_exposure_limits=[0.5, 4.0],
                          full_well_electrons=8000, read_noise_electrons=3,
                          vignetting='cos4', exposure_time=0.005, motion_blur_samples=4,
                          rolling_shutter=0.03)
    wired = spec.to_wire()
    assert wired['exposure'] == {'mode': 'auto', 'gain': 1.0, 'target': 0.5,
                                 'time_constant': 0.1, 'gain_min': 0.5, 'gain_max': 4.0}
    assert wired['photon_noise'] == {'full_well': 8000.0, 'read_noise': 3.0}
    assert wired['vignetting'] == {'model': 'cos4', 'falloff': 1.0}
    assert wired['motion_blur'] == {'exposure_time': 0.005, 'samples': 4}
    assert wired['rolling_shutter'] == {'readout_time': 0.03}
    wire.sensor(wired, 'car ego')
    camera = Camera.from_wire('ego', wired, 0)
    assert camera.sensor is not None and camera.motion is not None
    plain = profile_camera(write_profile).to_wire()
    assert not set(plain) & {'exposure', 'photon_noise', 'vignetting', 'motion_blur',
                             'rolling_shutter'}  # off by default: images as they were
    assert Camera.from_wire('ego', plain, 0).sensor is None


@pytest.mark.parametrize(('keys', 'key', 'expected'), [
    ({'exposure': 'bright'}, 'exposure', "expected a gain in (0, 1000] or 'auto'"),
    ({'exposure': 0.0}, 'exposure', 'expected a number in (0, 1000]'),
    ({'auto_exposure_target': 0.5}, 'auto_exposure_target', 'needs exposure: auto'),
    ({'exposure': 'auto', 'auto_exposure_target': 1.5}, 'auto_exposure_target',
     'expected a number in (0, 1]'),
    ({'exposure': 'auto', 'auto_exposure_limits': [4.0, 0.5]}, 'auto_exposure_limits',
     'the lowest gain first'),
    ({'exposure': 'auto', 'auto_exposure_time_constant': -1}, 'auto_exposure_time_constant',
     'expected a number in [0, 60]'),
    ({'read_noise_electrons': 3}, 'read_noise_electrons', 'needs full_well_electrons'),
    ({'full_well_electrons': 0.5}, 'full_well_electrons', 'expected a number in [1, 1e7]'),
    ({'full_well_electrons': 5000, 'noise_std': 3.0}, 'noise_std', 'not both'),
    ({'vignetting': 1.5}, 'vignetting', 'expected a number in [0, 1]'),
    ({'vignetting': 'cos3'}, 'vignetting', "or 'cos4'"),
    ({'exposure_time': 2.0}, 'exposure_time', 'expected a number in [0, 1]'),
    ({'exposure_time': 0.01, 'motion_blur_samples': 6}, 'motion_blur_samples',
     'a power of two'),
    ({'motion_blur_samples': 4}, 'motion_blur_samples', 'needs exposure_time'),
    ({'rolling_shutter': -0.01}, 'rolling_shutter', 'expected a number in [0, 1]'),
    ({'lens_oversample': 2.0}, 'lens_oversample', 'needs a distortion_model'),
])
def test_bad_values_stop_the_start_naming_file_line_and_key(write_profile, keys: dict,
                                                            key: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        profile_camera(write_profile, **keys)
    message = str(caught.value)
    assert re.search(rf'car\.yaml:\d+: Sensors\.cam\.{key}: ', message), message
    assert expected in message


@pytest.mark.parametrize(('effects', 'expected'), [
    ({'exposure': {'mode': 'sometimes'}}, "exposure: key 'mode' must be one of"),
    ({'exposure': {'mode': 'auto', 'gain_min': 5.0, 'gain_max': 1.0}},
     "key 'gain_max' must be at least gain_min"),
    ({'photon_noise': {'full_well': -3.0}}, "photon_noise: key 'full_well' must be a number"),
    ({'vignetting': 0.3}, "key 'vignetting' must be an object"),
    ({'motion_blur': {'exposure_time': 0.01, 'samples': 3}}, "key 'samples' must be a power"),
    ({'motion_blur': {'exposure_time': 0.0}}, "key 'exposure_time' must be a number in (0"),
    ({'rolling_shutter': {'readout_time': 5.0}}, "key 'readout_time' must be a number"),
])
def test_the_wire_refuses_bad_effects_naming_the_key(effects: dict, expected: str) -> None:
    with pytest.raises(ProtocolError, match=re.escape(expected)):
        wire.sensor({**CAMERA, **effects}, 'car ego')


def test_ready_refuses_a_backend_without_the_effects_a_camera_needs() -> None:
    camera = {**CAMERA, 'exposure': AUTO, 'motion_blur': {'exposure_time': 0.01, 'samples': 4}}
    settings = InitialSettings(
        track=TrackRequest('t', np.zeros((3, 3), np.float32), np.array([[0, 1, 2]], np.uint32)),
        cars=(CarSettings('ego', None, (camera, CAMERA | {'name': 'plain'})),))
    assert settings.camera_effects() == {('ego', 'cam'): ('exposure', 'motion_blur')}
    assert Ready('b', 't', camera_effects=('exposure', 'motion_blur')).unrenderable(
        settings) == []
    assert Ready('old', 't').unrenderable(settings) == [
        "car 'ego' camera 'cam' has exposure, motion_blur",
        "backend 'old' renders camera effects []"]


@pytest.mark.csharp_host
def test_the_csharp_host_is_refused_for_a_camera_with_effects(tmp_path: Path, hall) -> None:
    from csharp_host import running_host

    world, _ = hall
    settings = InitialSettings(track=world.track_request(), frame_period_ns=PERIOD,
                               cars=(CarSettings('ego', None, ({**CAMERA, 'exposure': AUTO},)),))
    with running_host(tmp_path) as (address, _host):
        renderer = ProtocolRenderer(address, 20.0)
        try:
            with pytest.raises(ProtocolError, match=re.escape(
                    "car 'ego' camera 'cam' has exposure")):
                renderer.start(settings, 20.0)
        finally:
            renderer.close()


def test_the_embedded_backend_process_lists_every_effect(hall) -> None:
    world, _ = hall
    camera = {**CAMERA, 'exposure': AUTO, 'photon_noise': {'full_well': 5000.0},
              'vignetting': {'model': 'cos4'}, 'motion_blur': {'exposure_time': 0.01},
              'rolling_shutter': {'readout_time': 0.02}}
    settings = InitialSettings(track=world.track_request(), frame_period_ns=PERIOD,
                               cars=(CarSettings('ego', None, (camera,)),))
    with backend_process() as client:
        renderer = ProtocolRenderer(client.address, 20.0)
        try:
            assert renderer.start(settings, 20.0)['backend'] == 'arsim-embedded'
        finally:
            renderer.close()
