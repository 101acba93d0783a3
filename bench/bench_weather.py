"""What weather costs the embedded backend's sensors, in this process: milliseconds to render
one frame of a 1024 x 760 colour camera and one revolution of a 1024 x 32 spinning LiDAR on
the full-scale ring in its circuit scenery, in clear air, fog (visibility 80 m), rain (8 mm/h
under an overcast sky) and at night with headlights; the median of repeated renders. Clear
weather runs no weather code at all."""

from __future__ import annotations

import math
import statistics
import sys
import time
from pathlib import Path

from benchkit import Row, main, sized, take_smoke_flag

from arsim_core.backend.server import EmbeddedBackend
from arsim_core.config.scenario import SceneSettings
from arsim_core.engine.world import TrackWorld
from arsim_core.protocol.appearance import DEFAULT, Appearance
from arsim_core.protocol.messages import CarSettings, InitialSettings
from arsim_core.protocol.weather import CLEAR, Weather
from arsim_core.track import load_track

ROOT = Path(__file__).resolve().parents[1]
REPEATS = 30
PERIOD = 50_000_000
CAMERA = {'name': 'cam', 'type': 'camera', 'rate_hz': 20.0, 'mount': [1.0, 0.0, 1.2, 0, 0, 0],
          'width': 1024, 'height': 760, 'fov': 1.6, 'near': 0.1, 'far': 400.0,
          'outputs': ['rgb']}
LIDAR = {'name': 'os', 'type': 'lidar3d', 'rate_hz': 20.0, 'mount': [0.0, 0.0, 1.8, 0, 0, 0],
         'channels': 32, 'columns': 1024, 'azimuth_start': math.pi,
         'azimuth_increment': -2 * math.pi / 1024,
         'elevations': [math.radians(16.6 - i * 33.2 / 31) for i in range(32)],
         'range_min': 0.5, 'range_max': 120.0, 'noise_std': 0.01, 'dropout': 0.0}
NIGHT = Appearance(sun_intensity=0.0, sky_intensity=0.005)
CASES = {'clear': (DEFAULT, CLEAR), 'fog': (DEFAULT, Weather(fog_visibility_m=80.0)),
         'rain': (DEFAULT, Weather(cloud_cover=1.0, rain_rate_mm_h=8.0)),
         'night': (NIGHT, Weather(headlights=1.0))}
ROWS = tuple(Row(f'weather_{sensor}_{case}_ms', 'ms_per_frame')
             for sensor in ('cam1024x760', 'os1_1024x32') for case in CASES
             if sensor == 'cam1024x760' or case != 'night')


def median_ms(backend: EmbeddedBackend, pose: list[float], sensor: str) -> float:
    times = []
    backend.render(PERIOD, {'ego': pose}, [('ego', sensor)])  # caches, compiled kernels
    for frame in range(sized(REPEATS, 2)):
        start = time.perf_counter()
        backend.render((frame + 2) * PERIOD, {'ego': pose}, [('ego', sensor)])
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def run() -> list[tuple[str, float, str]]:
    world = TrackWorld.from_track(load_track('arsim_ring_full_scale', ROOT / 'maps'),
                                  SceneSettings(kind='circuit'))
    backend = EmbeddedBackend()
    backend.apply(InitialSettings(track=world.track_request(),
                                  cars=(CarSettings('ego', None, (CAMERA, LIDAR)),)))
    x, y, yaw = world.start_pose
    pose = [x, y, 0.0, 0.0, 0.0, yaw]
    figures = []
    for row in ROWS:
        sensor, case = ('cam', row.name.split('_')[2]) if 'cam' in row.name \
            else ('os', row.name.split('_')[3])
        backend.set_conditions(*CASES[case])
        figures.append((row.name, median_ms(backend, pose, sensor), 'ms_per_frame'))
    return figures


if __name__ == '__main__':
    take_smoke_flag()
    sys.exit(main(run, ROWS))
