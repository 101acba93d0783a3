"""Real-time factor of a 20-car race at 1:10 scale in one process, without ROS.

``rtf_race_20cars``: the twenty F1TENTH cars of ``config/race/twenty_cars.yaml``, each with its
1080-beam 2D LiDAR at 40 Hz and a driver of the zoo (racing-line drivers of every skill and
follow-the-gap drivers), raced by ``arsim_core.league.race`` (what ``arsim-race run`` does:
the engine's race event, from a rolling start so every frame is raced) for ``RACE_S`` of sim
time on Spielberg from the shared F1TENTH maps (our ring where they are
missing, and in a smoke run). The figure is the sim time over the wall time of the race's
frames, after a first race that loads the track and the compiled kernels; the CPU time of the
process is printed beside it on stderr, as the machine may be shared.
"""

from __future__ import annotations

import sys
import time

from benchkit import REPO, SHARED_TRACKS, Row, main, sized, smoke, take_smoke_flag

RACE_S = 30.0
SCENARIO = REPO / 'config' / 'race' / 'twenty_cars.yaml'
SPIELBERG = SHARED_TRACKS / 'f1tenth_racetracks' / 'Spielberg'
ROWS = (Row('rtf_race_20cars', 'x_realtime'),)


def track() -> str:
    return str(SPIELBERG) if SPIELBERG.is_dir() and not smoke() else 'arsim_ring'


def run() -> list[tuple[str, float, str]]:
    sys.path.insert(0, str(REPO / 'src' / 'arsim_core'))
    from arsim_core.config.race_event import ROLLING
    from arsim_core.config.scenario import load_scenario
    from arsim_core.engine import Frame
    from arsim_core.engine.race_event import RUNNING
    from arsim_core.league.race import run_race
    from arsim_core.track import load_track

    name = track()
    scenario = load_scenario(SCENARIO, REPO, {'track': {'name': name}})
    loaded = load_track(name, REPO / 'maps')
    assert len(scenario.cars) == 20
    run_race(scenario, loaded, 100, start=ROLLING, max_time_s=0.5)  # compiles, warms up
    marks: list[float] = []

    def mark(frame: Frame) -> None:
        if frame.step == 1 or not marks:
            marks[:] = [time.perf_counter(), time.perf_counter()]
        marks[1] = time.perf_counter()

    cpu = time.process_time()
    result = run_race(scenario, loaded, 100, start=ROLLING, max_time_s=sized(RACE_S, 1.0),
                      on_frame=mark)
    cpu = time.process_time() - cpu
    wall = max(marks[1] - marks[0], 1e-9)
    raced = (result.frames - 1) * scenario.frame_period_ns * 1e-9
    retired = sum(car.status != RUNNING for car in result.cars)
    print(f'[bench] rtf_race_20cars: {raced:.1f} s of a 20-car race on {loaded.name} in '
          f'{wall:.1f} s ({result.sim_s / cpu:.2f}x real time per CPU second of the whole '
          f'run), {result.collisions} contacts, {retired} cars out', file=sys.stderr)
    return [('rtf_race_20cars', raced / wall, 'x_realtime')]


if __name__ == '__main__':
    take_smoke_flag()
    sys.exit(main(run, ROWS))
