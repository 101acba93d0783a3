"""Full-pipeline simulation rates with AR-Sim's sensor configurations.

Each configuration is one F1TENTH car whose profile carries the listed sensors, every sensor
due at every frame (frame rate = sensor rate = 20 Hz), synchronous and as fast as the machine
allows, no driver waited for. The figure is frames per wall second as seen by a subscriber in
another process: the messages it received on the slowest of the car's sensor topics (every
image with its CameraInfo) divided by the wall time, in the default scenario's scene (the hall
around arsim_ring); ``--scene none`` measures the bare track instead, the baseline the scenery
is compared with. AR-Sim reported, on an i7 with a GTX 1050,
140, 93, 58, 33, 84, 63, 28 and 33 Hz for these rows.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent / 'tests'))

from benchkit import Row, main, simulation_pace, sized, take_smoke_flag  # noqa: E402
from simharness import Simulation, installed_resources, ros_env  # noqa: E402

RATE_HZ = 20.0
MEASURE_S = 15.0
WARMUP_S = 3.0
SUBSCRIBER = BENCH_DIR / 'sensor_counter.py'
# The LiDAR effects (docs/sensors.md, "LiDAR effects") are on by default; ``--lidar-effects
# off`` measures the same rows without them, for their cost.
LIDAR_EFFECTS_OFF = {'noise_per_m': 0.0, 'detection_range': 0.0, 'beam_divergence': 0.0}
AR_SIM_HZ = {'hokuyo_1080x1': 140, 'os1_512x32': 93, 'os1_1024x32': 58, 'os1_1024x64': 33,
             'cam2x256x512_hokuyo': 84, 'cam1024x760_hokuyo': 63,
             'cam1024x760_os1_1024x32': 28, 'cam256x512_os1_1024x32': 33}


def hokuyo() -> dict:
    return {'type': 'lidar2d', 'position': [0.27, 0.0, 0.11], 'rate_hz': RATE_HZ,
            'beams': 1080, 'fov_rad': 4.7, 'range_max': 30.0}


def os1(columns: int, channels: int) -> dict:
    return {'type': 'lidar3d', 'position': [0.0, 0.0, 0.3], 'rate_hz': RATE_HZ,
            'channels': channels, 'columns': columns, 'vertical_fov_rad': math.radians(33.2),
            'range_min': 0.3, 'range_max': 120.0}


def camera(width: int, height: int, y: float = 0.0) -> dict:
    return {'type': 'camera', 'position': [0.2, y, 0.2], 'rate_hz': RATE_HZ, 'width': width,
            'height': height, 'fov_rad': 1.5, 'outputs': ['rgb']}


CONFIGS: dict[str, dict[str, dict]] = {
    'hokuyo_1080x1': {'scan': hokuyo()},
    'os1_512x32': {'lidar': os1(512, 32)},
    'os1_1024x32': {'lidar': os1(1024, 32)},
    'os1_1024x64': {'lidar': os1(1024, 64)},
    'cam2x256x512_hokuyo': {'cam_left': camera(256, 512, 0.1),
                            'cam_right': camera(256, 512, -0.1), 'scan': hokuyo()},
    'cam1024x760_hokuyo': {'cam': camera(1024, 760), 'scan': hokuyo()},
    'cam1024x760_os1_1024x32': {'cam': camera(1024, 760), 'lidar': os1(1024, 32)},
    'cam256x512_os1_1024x32': {'cam': camera(256, 512), 'lidar': os1(1024, 32)},
}
ROWS = (Row('embree_packet_width', 'rays'),
        *(Row(f'arsim_rate_{name}', 'Hz') for name in CONFIGS))


def topics(sensors: dict[str, dict]) -> list[str]:
    """TOPIC:TYPE of every message a configuration publishes (f1tenth_gym names)."""
    out = []
    for name, spec in sensors.items():
        if spec['type'] == 'lidar2d':
            out.append(f'/{name}:sensor_msgs/msg/LaserScan')
        elif spec['type'] == 'lidar3d':
            out.append(f'/{name}:sensor_msgs/msg/PointCloud2')
        else:
            out += [f'/{name}/image_raw:sensor_msgs/msg/Image',
                    f'/{name}/camera_info:sensor_msgs/msg/CameraInfo']
    return out


def measure(name: str, sensors: dict[str, dict], measure_s: float | None = None,
            backend: dict | None = None, scene: str | None = None) -> dict:
    """Run one configuration (on the scenario's ``backend`` settings, default the embedded
    backend) for ``measure_s`` (default ``MEASURE_S``, a second in a smoke run); the
    subscriber's JSON result."""
    measure_s = measure_s if measure_s is not None else sized(MEASURE_S, 1.0)
    with tempfile.TemporaryDirectory(prefix='arsim-bench-sensors-') as tmp:
        profile = yaml.safe_load((installed_resources() / 'config' / 'cars' / 'f1tenth.yaml')
                                 .read_text())
        profile['Sensors'] = sensors
        path = Path(tmp) / f'{name}.yaml'
        path.write_text(yaml.safe_dump(profile, sort_keys=False))
        sim = Simulation(Path(tmp) / 'sim', {
            'simulation': {'frame_rate_hz': RATE_HZ, 'wait_for_drivers': False},
            'cars': [{'name': 'ego', 'profile': str(path)}],
            **({'backend': backend} if backend else {}),
            **({'track': {'scene': scene}} if scene else {})}, pace=simulation_pace())
        sim.start()
        try:
            counter = subprocess.run(
                [sys.executable, str(SUBSCRIBER), '--seconds', str(measure_s),
                 '--warmup', str(sized(WARMUP_S, 0.2)),
                 '--period-ns', str(round(1e9 / RATE_HZ)), *topics(sensors)],
                env=ros_env(sim.domain_id), capture_output=True, text=True,
                timeout=measure_s + 180)
            if counter.returncode != 0:
                msg = f'{name}: subscriber failed: {counter.stdout}{counter.stderr}\n{sim.log}'
                raise RuntimeError(msg)
            return json.loads(counter.stdout.strip().splitlines()[-1])
        finally:
            sim.stop()


def packet_width() -> float:
    """The Embree packet width the ray casters chose on this CPU (16 with AVX-512, 8 with
    AVX2, 4 with SSE), so that figures from different machines can be told apart; 0 where
    Embree packets are unavailable."""
    from arsim_core.backend.embree import EmbreeUnavailableError, runtime

    try:
        return float(runtime().width)
    except EmbreeUnavailableError:
        return 0.0


def without_lidar_effects(sensors: dict[str, dict]) -> dict[str, dict]:
    return {name: {**spec, **LIDAR_EFFECTS_OFF} if spec['type'] in ('lidar2d', 'lidar3d')
            else spec for name, spec in sensors.items()}


def run(names: list[str] | None = None, scene: str | None = None, lidar_effects: bool = True
        ) -> list[tuple[str, float, str]]:
    figures = [('embree_packet_width', packet_width(), 'rays')]
    for name in names or list(CONFIGS):
        sensors = CONFIGS[name] if lidar_effects else without_lidar_effects(CONFIGS[name])
        result = measure(name, sensors, scene=scene)
        hz = min(t['hz'] for t in result['topics'].values())
        print(f'[bench] arsim_rate_{name}: {hz:.1f} Hz (AR-Sim {AR_SIM_HZ[name]} Hz, '
              f'x{hz / AR_SIM_HZ[name]:.1f}); {result}', file=sys.stderr, flush=True)
        figures.append((f'arsim_rate_{name}', hz, 'Hz'))
    return figures


if __name__ == '__main__':
    argv = take_smoke_flag()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('rows', nargs='*', help=f'some of {", ".join(CONFIGS)} (default: all)')
    parser.add_argument('--scene', help='the track\'s scene (hall, circuit, none, auto)')
    parser.add_argument('--smoke', action='store_true', help='a second per row (benchkit)')
    parser.add_argument('--lidar-effects', choices=('on', 'off'), default='on',
                        help='the LiDAR effects (default on, as profiles have them)')
    args = parser.parse_args(argv)
    unknown = sorted(set(args.rows) - set(CONFIGS))
    if unknown:
        parser.error(f'unknown rows: {", ".join(unknown)}')
    chosen = {f'arsim_rate_{name}' for name in args.rows or CONFIGS} | {'embree_packet_width'}
    sys.exit(main(lambda: run(args.rows or None, args.scene, args.lidar_effects == 'on'),
                  [row for row in ROWS if row.name in chosen]))
