"""The helper thread: a large image shared with it (a lens's resampling, a sensor's vignetting,
gain and noise) is the image one thread makes, pixel for pixel; its parts cover the job; an
error on either thread reaches the caller."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from arsim_core.backend import helper_thread
from arsim_core.backend.camera import FILL, _through_lens
from arsim_core.backend.exposure import ImageSensor
from arsim_core.lens import Lens, resampling
from arsim_core.pinhole import Intrinsics
from arsim_core.protocol.camera_effects import CameraEffects, Exposure, PhotonNoise, Vignetting

K = Intrinsics.from_fov(330, 250, 1.4)  # rows of 330 x 3 values: not a multiple of 8 values


def test_parts_cover_the_job_from_multiples_of_the_step() -> None:
    parts = helper_thread.parts(250, 8, 100)
    assert len(parts) == helper_thread.PARTS and parts[0].start == 0 and parts[-1].stop == 250
    assert all(a.stop == b.start and b.start % 8 == 0 for a, b in zip(parts, parts[1:],
                                                                       strict=False))
    assert helper_thread.parts(99, 8, 100) == [slice(0, 99)]
    assert len(helper_thread.image_rows(K.height, K.width)) > 1  # the images below are shared


def shared_and_alone(make, monkeypatch: pytest.MonkeyPatch) -> tuple[np.ndarray, np.ndarray]:
    shared = make().copy()
    monkeypatch.setattr(helper_thread, 'THREADS', 1)
    return shared, make()


@pytest.mark.parametrize('effects', [
    CameraEffects(photon_noise=PhotonNoise(), vignetting=Vignetting('cos4', 1.0),
                  exposure=Exposure(gain=1.7)),
    CameraEffects(vignetting=Vignetting('radial', 0.5), exposure=Exposure(gain=0.6)),
    CameraEffects(exposure=Exposure(mode='auto'), photon_noise=PhotonNoise()),
], ids=['noise_vignetting_gain', 'vignetting_gain', 'auto_noise'])
def test_a_shared_sensor_image_is_the_image_of_one_thread(
        effects: CameraEffects, monkeypatch: pytest.MonkeyPatch) -> None:
    rgb = np.random.default_rng(3).integers(0, 256, (K.height, K.width, 3), np.uint8)
    shared, alone = shared_and_alone(lambda: ImageSensor(effects, K).apply(rgb, 10**8, 42),
                                     monkeypatch)
    assert not np.array_equal(shared, rgb)
    np.testing.assert_array_equal(shared, alone)


@pytest.mark.parametrize('output', ['rgb', 'depth', 'semantic'])
def test_a_shared_lens_image_is_the_image_of_one_thread(output: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    lens = resampling(K, Lens('plumb_bob', (-0.25, 0.08, 0.0005, -0.0003, -0.01)))
    rng = np.random.default_rng(4)
    shape = (lens.ideal.height, lens.ideal.width)
    ideal = {'rgb': rng.integers(0, 256, (*shape, 3), np.uint8),
             'depth': rng.uniform(0.1, 50.0, shape).astype(np.float32),
             'semantic': rng.integers(0, 9, shape, np.uint8)}[output]
    shared, alone = shared_and_alone(lambda: _through_lens(lens, K, ideal, output), monkeypatch)
    assert shared.shape[:2] == (K.height, K.width)
    np.testing.assert_array_equal(shared, alone)
    np.testing.assert_array_equal(alone, lens.remap(ideal, output != 'rgb', FILL[output]))


def test_an_error_on_either_thread_reaches_the_caller() -> None:
    done: list[int] = []

    def fail_on(bad: int):
        def action(part: slice) -> None:
            if part.start == bad:
                raise ValueError(f'part {bad}')
            done.append(part.start)
        return action

    parts = helper_thread.parts(1000, 1, 0)
    for bad in (parts[0].start, parts[1].start):  # the caller's first part, the helper's
        with pytest.raises(ValueError, match=f'part {bad}'):
            helper_thread.share(fail_on(bad), parts)


def test_a_job_shared_from_the_helper_thread_runs_there() -> None:
    """A part that shares a job of its own must not wait for the helper it runs on."""
    done: list[int] = []
    parts = helper_thread.parts(1000, 1, 0)

    def outer(part: slice) -> None:
        helper_thread.share(lambda inner: done.append(inner.start), parts)
        done.append(-1)

    runner = threading.Thread(target=helper_thread.share, args=(outer, parts), daemon=True)
    runner.start()
    runner.join(30.0)
    assert not runner.is_alive(), 'the helper thread waits for itself'
    assert done.count(-1) == len(parts) and len(done) == len(parts) * (len(parts) + 1)


def test_a_bad_thread_count_is_named() -> None:
    run = subprocess.run([sys.executable, '-c', 'import arsim_core.backend.helper_thread'],
                         env={**os.environ, helper_thread.THREADS_ENV: 'two'},
                         capture_output=True, text=True, check=False)
    assert run.returncode != 0
    assert "ARSIM_BACKEND_THREADS='two': expected a whole number of threads" in run.stderr
