"""Track loading speed: the time from a track file to the ``/map`` occupancy grid.

- ``track_load_tum_spa``: the full-scale Spa centerline from the TUM racetrack database
  (about 7 km), loaded and rasterised at 0.2 m per cell. Goal: under 2 s.
- ``track_load_f1tenth_map_2000px``: a 2000 x 2000 pixel F1TENTH map loaded as a plain ROS map
  (yaml + png, no centerline beside it, so the centerline is extracted from the image too),
  then rasterised back at the map's resolution. Goal: under 3 s. A shared map of another size
  is resampled to 2000 px first.

Each figure is the median of several runs in this process, after one warm-up run that pays
for the first imports. The real track data is read from ``../shared/tracks``.

- ``scene_build_s_tum_spa``, ``scene_build_s_f1tenth_map_2000px``: building the default
  scenery around those two tracks (a circuit, a hall; docs/scenes.md).

Beside each, ``<name>_to_map_msg``: what a user waits for, from starting the ``track_loader``
node's process (Python start-up and imports included) to the ``/map`` grid received by a
subscriber in another process (this one), median of ``PROCESS_RUNS``.
"""

from __future__ import annotations

import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import yaml
from benchkit import SHARED_TRACKS as SHARED
from benchkit import Row, main, sized, skip_reason, take_smoke_flag
from nav_msgs.msg import OccupancyGrid

REPO = Path(__file__).resolve().parents[1]
RUNS = 5
PROCESS_RUNS = 3
MAP_PX = 2000
ROWS = tuple(Row(name, 's', ('tracks',)) for name in (
    'track_load_tum_spa', 'track_load_tum_spa_to_map_msg', 'track_load_f1tenth_map_2000px',
    'scene_build_s_tum_spa', 'track_load_f1tenth_map_2000px_to_map_msg',
    'scene_build_s_f1tenth_map_2000px'))


def _track_api() -> tuple[Callable, Callable]:
    """``load_track`` and ``rasterize`` from the source tree (an installed copy also works)."""
    src = str(REPO / 'src' / 'arsim_core')
    if src not in sys.path:
        sys.path.insert(0, src)
    from arsim_core.track import load_track, rasterize

    return load_track, rasterize


def _median_time(func: Callable[[], object], runs: int = RUNS) -> float:
    """Median wall time of ``runs`` calls (one in a smoke run) after one warm-up call."""
    func()
    times = []
    for _ in range(sized(runs, 1)):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_tum_spa() -> float:
    """Seconds to load Spa (TUM, full scale) and rasterise it at 0.2 m."""
    load_track, rasterize = _track_api()
    path = SHARED / 'tum_racetrack_database' / 'Spa.csv'

    def once() -> None:
        grid = rasterize(load_track(path), resolution=0.2)
        assert grid.data.size > 0

    return _median_time(once)


def _map_2000px(folder: Path) -> Path:
    """A 2000 x 2000 px map yaml in ``folder``, from the shared Monza map."""
    src_yaml = SHARED / 'f1tenth_racetracks' / 'Monza' / 'Monza_map.yaml'
    meta = yaml.safe_load(src_yaml.read_text())
    img = cv2.imread(str(src_yaml.parent / meta['image']), cv2.IMREAD_GRAYSCALE)
    if img.shape != (MAP_PX, MAP_PX):
        factor = img.shape[1] / MAP_PX
        img = cv2.resize(img, (MAP_PX, MAP_PX), interpolation=cv2.INTER_AREA)
        meta['resolution'] = float(meta['resolution']) * factor
    meta['image'] = 'map.png'
    cv2.imwrite(str(folder / 'map.png'), img)
    out = folder / 'map.yaml'
    out.write_text(yaml.safe_dump(meta))
    return out


def bench_f1tenth_map() -> float:
    """Seconds to load a 2000 px map (walls + extracted centerline) and rasterise it."""
    load_track, rasterize = _track_api()
    with tempfile.TemporaryDirectory(prefix='arsim-bench-') as tmp:
        path = _map_2000px(Path(tmp))

        def once() -> None:
            track = load_track(path)
            grid = rasterize(track, resolution=track.occupancy.resolution)
            assert grid.data.size > 0

        return _median_time(once)


def bench_scene(track_path: Path) -> float:
    """Seconds to build the default (``auto``) scene around the track at ``track_path``."""
    load_track, _ = _track_api()
    from arsim_core.track.scene import build_scene

    track = load_track(track_path)
    return _median_time(lambda: build_scene(track))


def process_to_map_s(track: Path, resolution: float, runs: int = PROCESS_RUNS) -> float:
    """Median seconds from starting a track_loader process on ``track`` to its /map received
    here (one run in a smoke run)."""
    runs = sized(runs, 1)
    sys.path.insert(0, str(REPO / 'tests'))
    from simharness import Simulation, installed_resources

    from arsim_core.config.scenario import load_scenario
    from arsim_launch.nodes import flatten, generate_nodes
    from arsim_launch.runner import command

    times = []
    with tempfile.TemporaryDirectory(prefix='arsim-bench-map-') as tmp:
        sim = Simulation(Path(tmp) / 'sim', {'track': {'name': str(track),
                                                       'map_resolution': resolution}})
        scenario = load_scenario(sim.settings_file, installed_resources())
        spec = next(n for n in flatten(generate_nodes(scenario, sim.settings_file))
                    if n.executable == 'track_loader')
        args = command(spec, Path(tmp))
        for _ in range(runs):
            times.append(_one_process_to_map(args, sim.domain_id, scenario.topic_map.map_topic))
    return statistics.median(times)


def _one_process_to_map(args: list[str], domain_id: int, topic: str) -> float:
    """Seconds from starting ``args`` (a track loader) to its first grid on ``topic``."""
    from simharness import Probe, ros_env, stop_process

    from arsim_bridge import qos

    probe = Probe(domain_id, 'map_timer')
    got: list[float] = []
    probe.node.create_subscription(OccupancyGrid, topic,
                                   lambda _raw: got.append(time.perf_counter()), qos.LATCHED,
                                   raw=True)
    start = time.perf_counter()
    process = subprocess.Popen(args, env=ros_env(domain_id), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        if not probe.spin_until(lambda: bool(got), 120.0):
            msg = f'no {topic} from {args[0]}'
            raise RuntimeError(msg)
        return got[0] - start
    finally:
        stop_process(process, signal.SIGINT)
        probe.close()


def run() -> list[tuple[str, float, str]]:
    """Figures as ``(name, value, unit)``, the interface ``run_all.py`` expects."""
    if skip_reason('bench_tracks', 'tracks'):
        return []
    spa = SHARED / 'tum_racetrack_database' / 'Spa.csv'
    figures = [('track_load_tum_spa', bench_tum_spa(), 's'),
               ('track_load_tum_spa_to_map_msg', process_to_map_s(spa, 0.2), 's'),
               ('track_load_f1tenth_map_2000px', bench_f1tenth_map(), 's')]
    figures.append(('scene_build_s_tum_spa', bench_scene(spa), 's'))
    with tempfile.TemporaryDirectory(prefix='arsim-bench-') as tmp:
        path = _map_2000px(Path(tmp))
        resolution = float(yaml.safe_load(path.read_text())['resolution'])
        figures.append(('track_load_f1tenth_map_2000px_to_map_msg',
                        process_to_map_s(path, resolution), 's'))
        figures.append(('scene_build_s_f1tenth_map_2000px', bench_scene(path), 's'))
    return figures


if __name__ == '__main__':
    take_smoke_flag()
    sys.exit(main(run, ROWS))
