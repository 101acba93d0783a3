"""What one 2D scan costs: the F1TENTH Hokuyo (1080 beams over 270 degrees, ideal ranges, no
other cars) rendered by ``Lidar2D.render`` in this process, on arsim_ring and on F1TENTH
Spielberg, each with the scenery a simulation puts around it, from random level poses along the
centerline turned by up to 0.6 rad. Figures, median microseconds per scan:

* ``scan_2d_us_<track>``: the scan rasterised into the world's slice at the scanner's height
  (``arsim_core.backend.plane_scan``), what every level 2D LiDAR takes;
* ``scan_2d_us_<track>_packets``: the same scans on Embree's packets (``Lidar2D.plane``
  False), what a tilted one takes, as wide as ``BENCH embree_packet_width`` says.

Each pose is scanned both ways in turn, ``REPEATS`` times, one thread.
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

try:
    import arsim_core.backend  # noqa: F401
except ImportError:  # running from a source checkout without the workspace sourced
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'src' / 'arsim_core'))

import numpy as np  # noqa: E402
from benchkit import SHARED_TRACKS, Row, main, sized, skip_reason, take_smoke_flag  # noqa: E402

from arsim_core.backend.embree import EmbreeUnavailableError, runtime  # noqa: E402
from arsim_core.backend.lidar import Lidar2D  # noqa: E402
from arsim_core.backend.outputs import Context  # noqa: E402
from arsim_core.backend.scene import World  # noqa: E402
from arsim_core.backend.timeline import Timeline  # noqa: E402
from arsim_core.config.scenario import SceneSettings  # noqa: E402
from arsim_core.engine.world import TrackWorld  # noqa: E402
from arsim_core.track import Track, load_track  # noqa: E402

HOKUYO = {'name': 'scan', 'type': 'lidar2d', 'rate_hz': 40.0,
          'mount': [0.27, 0.0, 0.11, 0.0, 0.0, 0.0], 'beams': 1080, 'angle_min': -2.35,
          'angle_increment': 4.7 / 1079, 'range_min': 0.0, 'range_max': 30.0,
          'noise_std': 0.0, 'dropout': 0.0}
POSES = 200
REPEATS = 20
MAPS = Path(__file__).resolve().parents[1] / 'maps'
TRACKS = {'arsim_ring': ('arsim_ring', MAPS, ()),
          'spielberg': ('Spielberg', SHARED_TRACKS / 'f1tenth_racetracks', ('tracks',))}
ROWS = tuple(Row(f'scan_2d_us_{name}{suffix}', 'us', needs)
             for name, (_, _, needs) in TRACKS.items() for suffix in ('', '_packets'))


def scan_times(track: Track) -> tuple[float, float]:
    """Median microseconds per scan, rasterised and on packets."""
    request = TrackWorld.from_track(track, SceneSettings()).track_request()
    world = World(request.vertices, request.triangles, request.labels)
    rng = np.random.default_rng(0)
    times: dict[bool, list[float]] = {True: [], False: []}
    lidars = {plane: Lidar2D.from_wire('ego', HOKUYO, 1) for plane in times}
    for plane, lidar in lidars.items():
        lidar.plane = plane
    clock = itertools.count(1)
    for i in rng.choice(len(track.centerline), sized(POSES, 3)):
        x, y = (float(v) for v in track.centerline[i])
        yaw = float(track.heading[i] + rng.uniform(-0.6, 0.6))
        timeline = Timeline()
        time_ns = next(clock)
        timeline.add(time_ns, {'ego': [x, y, 0.0, 0.0, 0.0, yaw]})
        context = Context(world, timeline, time_ns, lambda: None)
        for plane, lidar in lidars.items():
            lidar.render(context)  # first calls: the slice, compiling or loading kernels
            started = time.perf_counter()
            for _ in range(sized(REPEATS, 2)):
                lidar.render(context)
            times[plane].append((time.perf_counter() - started) / sized(REPEATS, 2))
    return (float(np.median(times[True])) * 1e6, float(np.median(times[False])) * 1e6)


def run() -> list[tuple[str, float, str]]:
    try:
        runtime()
    except EmbreeUnavailableError as why:
        print(f'[bench] bench_scan: no Embree packets here ({why}): nothing to compare',
              file=sys.stderr)
        return []
    figures = []
    for name, (track_name, folder, needs) in TRACKS.items():
        if needs and skip_reason('bench_scan', needs[0]):
            continue
        sliced, packets = scan_times(load_track(track_name, folder))
        print(f'[bench] {name}: {sliced:.1f} us rasterised, {packets:.1f} us on packets '
              f'({packets / sliced:.2f}x)', file=sys.stderr)
        figures += [(f'scan_2d_us_{name}', sliced, 'us'),
                    (f'scan_2d_us_{name}_packets', packets, 'us')]
    return figures


if __name__ == '__main__':
    take_smoke_flag()
    sys.exit(main(run, ROWS))
