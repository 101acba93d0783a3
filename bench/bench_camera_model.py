"""What a camera's sensor model costs: lens, auto exposure and photon noise against the same
camera without them, in one run; motion blur and rolling shutter on their own.

Two of bench_sensors' camera rows run twice, one after the other in the same run, with the
same simulation, subscriber and counting (``bench_sensors.measure``): as they are, and with
every camera's sensor model on (``SENSOR_MODEL``: a mild wide-angle plumb_bob lens, auto
exposure, shot and read noise, cos^4 vignetting). ``camera_model_cost_pct_*`` is the frame
time with the model over the frame time without, less one, in per cent (the issue's goal: at
most 25). ``--runs N`` alternates N pairs and reports the median of each side.

The ``camera_ms_*`` rows time one 1024 x 760 colour camera's frames in this process (the
embedded backend, no ROS), its car driving at 5 m/s and turning at 0.5 rad/s so that motion
shows, each model on its own: the median wall time per frame over ``CAMERA_FRAMES`` frames.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from bench_sensors import CONFIGS, RATE_HZ, measure  # noqa: E402
from benchkit import Row, main, sized, take_smoke_flag  # noqa: E402

# A camera as a perception stack calibrates it (docs/sensors.md, "Exposure and motion").
SENSOR_MODEL = {'distortion_model': 'plumb_bob', 'distortion': [-0.1, 0.02, 0.0, 0.0, 0.0],
                'exposure': 'auto', 'full_well_electrons': 10000, 'read_noise_electrons': 5,
                'vignetting': 'cos4'}
MOTION_BLUR = {'exposure_time': 0.01, 'motion_blur_samples': 8}
ROLLING_SHUTTER = {'rolling_shutter': 0.02}
PAIRS = ('cam1024x760_hokuyo', 'cam2x256x512_hokuyo')
IN_PROCESS = {'pinhole': {}, 'lens_ae_noise': SENSOR_MODEL, 'motion_blur': MOTION_BLUR,
              'rolling_shutter': ROLLING_SHUTTER}
CAMERA_FRAMES = 60
ROWS = (*(row for name in PAIRS for row in (
    Row(f'arsim_rate_{name}_plain', 'Hz'), Row(f'arsim_rate_{name}_lens_ae_noise', 'Hz'),
    Row(f'camera_model_cost_pct_{name}', '%'))),
    *(Row(f'camera_ms_1024x760_{name}', 'ms') for name in IN_PROCESS))


def with_model(sensors: dict[str, dict], keys: dict) -> dict[str, dict]:
    """``sensors`` with ``keys`` added to every camera."""
    return {name: {**spec, **keys} if spec['type'] == 'camera' else spec
            for name, spec in sensors.items()}


def rate(name: str, sensors: dict[str, dict]) -> float:
    result = measure(name, sensors)
    hz = min(t['hz'] for t in result['topics'].values())
    print(f'[bench] {name}: {hz:.1f} Hz; {result}', file=sys.stderr, flush=True)
    return hz


def pair(name: str, runs: int) -> list[tuple[str, float, str]]:
    """The row without and with the sensor model, alternating, ``runs`` times each."""
    plain, modelled = [], []
    for _ in range(runs):
        plain.append(rate(name, CONFIGS[name]))
        modelled.append(rate(f'{name}_lens_ae_noise', with_model(CONFIGS[name], SENSOR_MODEL)))
    off, on = statistics.median(plain), statistics.median(modelled)
    return [(f'arsim_rate_{name}_plain', off, 'Hz'), (f'arsim_rate_{name}_lens_ae_noise', on, 'Hz'),
            (f'camera_model_cost_pct_{name}', 100.0 * (off / on - 1.0), '%')]


def camera_frame_ms(keys: dict, frames: int) -> float:
    """Median wall time [ms] of a 1024 x 760 camera's frame (the profile's ``keys`` added)
    rendered by the embedded backend in this process, around arsim_ring's start in its
    default scenery."""
    from arsim_core.backend.server import EmbeddedBackend
    from arsim_core.config.profile import load_profile
    from arsim_core.config.scenario import SceneSettings
    from arsim_core.engine import TrackWorld
    from arsim_core.protocol.messages import CarSettings, InitialSettings, in_process
    from arsim_core.track import load_track

    root = BENCH_DIR.parent
    with tempfile.TemporaryDirectory(prefix='arsim-bench-camera-') as tmp:
        profile = yaml.safe_load((root / 'config' / 'cars' / 'f1tenth.yaml').read_text())
        profile['Sensors'] = {'cam': {'type': 'camera', 'position': [0.2, 0.0, 0.2],
                                      'rate_hz': RATE_HZ, 'width': 1024, 'height': 760,
                                      'fov_rad': 1.5, 'outputs': ['rgb'], **keys}}
        path = Path(tmp) / 'car.yaml'
        path.write_text(yaml.safe_dump(profile, sort_keys=False))
        spec = load_profile(path).sensor('cam')
    track = load_track('arsim_ring', root / 'maps')
    world = TrackWorld.from_track(track, SceneSettings('hall'))
    settings = InitialSettings(track=world.track_request(), frame_period_ns=50_000_000,
                               cars=(CarSettings('ego', None, (spec.to_wire(),)),))
    backend = EmbeddedBackend()
    backend.apply(InitialSettings.from_wire(in_process(settings)))
    x, y, yaw = track.start_pose
    times = []
    for frame in range(frames + 3):  # the first three warm up
        t = frame / RATE_HZ
        pose = (x + 5.0 * t * math.cos(yaw), y + 5.0 * t * math.sin(yaw), 0.0, 0.0, 0.0,
                yaw + 0.5 * t)
        start = time.perf_counter()
        backend.render_frames(round(1e9 * (t + 1.0 / RATE_HZ)), {'ego': pose}, [('ego', 'cam')])
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times[3:])


def run(runs: int = 1, pairs: tuple[str, ...] = PAIRS, in_process: bool = True
        ) -> list[tuple[str, float, str]]:
    figures = [figure for name in pairs for figure in pair(name, runs)]
    if in_process:
        for name, keys in IN_PROCESS.items():
            ms = camera_frame_ms(keys, sized(CAMERA_FRAMES, 3))
            print(f'[bench] camera_ms_1024x760_{name}: {ms:.2f} ms', file=sys.stderr, flush=True)
            figures.append((f'camera_ms_1024x760_{name}', ms, 'ms'))
    return figures


if __name__ == '__main__':
    argv = take_smoke_flag()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('pairs', nargs='*', help=f'some of {", ".join(PAIRS)} (default: all)')
    parser.add_argument('--runs', type=int, default=1, help='pairs of runs, median (default 1)')
    parser.add_argument('--no-in-process', action='store_true', help='skip camera_ms_* rows')
    parser.add_argument('--smoke', action='store_true', help='a second per row (benchkit)')
    args = parser.parse_args(argv)
    unknown = sorted(set(args.pairs) - set(PAIRS))
    if unknown or args.runs < 1:
        parser.error(f'unknown rows: {", ".join(unknown)}' if unknown else '--runs must be >= 1')
    chosen = tuple(args.pairs) or PAIRS
    rows = [row for row in ROWS if any(row.name.endswith(name) or f'_{name}_' in row.name
                                       for name in chosen)
            or (row.name.startswith('camera_ms_') and not args.no_in_process)]
    sys.exit(main(lambda: run(args.runs, chosen, not args.no_in_process), rows))
