"""What race control (rulings and incident clips) costs the default one-car run: config/sim.yaml's
F1TENTH car on arsim_ring with ``race.clips`` set, driven by the built-in follow-the-gap driver
on its scan, in this process, two ways:

- the engine loop: each frame fanned out as the faces do (``arsim_bridge.fanout.car_frame``,
  the frames the sensor republishers and the clips take) and nothing else: the least work a
  frame can take, so the largest share clips can have;
- the pip runner: each frame written into a bag as ``arsim-dataset generate`` writes it
  (``arsim_launch.dataset_run``, whose writer hands the clips their frames).

The machine this runs on is shared, and whole runs drift by tens of percent against each
other, so the set-ups take turns within one run, ``BLOCK`` frames at a time (off, rulings,
clips, off, ...), each block timed in CPU seconds of this process:

- off: no stewards (``engine.stewards`` taken away for the block), no clips;
- rulings: the stewards (the default), no clips;
- clips: the stewards, and every frame and event handed to the clip recorder (each frame's
  sensor arrays copied into its buffer; an incident, such as a track-limits ruling, written).

A run is ``SIM_S`` of sim time a set-up; ``RUNS`` runs of each loop after an untimed one, the
medians of their ratios: ``race_control_cost_1car_pct`` (engine loop, clips against off),
``clips_cost_1car_pct`` (engine loop, clips against rulings), ``clips_cost_pip_runner_1car_pct``
(pip runner, clips against rulings) and ``race_control_frames_per_s_1car`` (engine loop,
frames per CPU second with clips).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent / 'tests'))

from benchkit import Row, main, sized, take_smoke_flag  # noqa: E402

from arsim_bridge.clip_packer import clip_recorder  # noqa: E402
from arsim_bridge.fanout import car_frame  # noqa: E402
from arsim_core.config.scenario import load_scenario  # noqa: E402
from arsim_core.engine import Engine, TrackWorld  # noqa: E402
from arsim_core.policies import autopilot  # noqa: E402
from arsim_core.protocol.messages import FrameMeta, UpdateReply  # noqa: E402
from arsim_core.track import load_track  # noqa: E402
from arsim_launch.dataset_run import KeptReplyRenderer, _Writer  # noqa: E402

REPO = BENCH_DIR.parent
RUNS = 3
SIM_S = 100.0  # of sim time a set-up in a run, at 40 frames a second
BLOCK = 50  # frames a set-up runs before the next takes its turn
WARMUP_S = 5.0  # one untimed run first: compiled kernels, caches
SETUPS = ('off', 'rulings', 'clips')
ROWS = (Row('race_control_cost_1car_pct', 'percent'), Row('clips_cost_1car_pct', 'percent'),
        Row('clips_cost_pip_runner_1car_pct', 'percent'),
        Row('race_control_frames_per_s_1car', 'frames_per_s'))


def one_run(folder: Path, frames: int, bag: bool = False) -> tuple[dict[str, float], int]:
    """CPU seconds per set-up over ``frames`` frames of each, and the clips written; with
    ``bag``, through the pip runner's writer into a bag in ``folder``."""
    scenario = load_scenario(REPO / 'config' / 'sim.yaml', REPO,
                             {'race': {'clips': {'directory': str(folder / 'clips')}}})
    renderer = KeptReplyRenderer()  # the dataset runner's: it keeps each frame's description
    engine = Engine(scenario, renderer)
    recorder = clip_recorder(scenario)
    assert recorder is not None
    car = scenario.cars[0]
    scan, policy = autopilot(car)
    seconds = dict.fromkeys(SETUPS, 0.0)
    try:
        track = load_track('arsim_ring', REPO / 'maps')
        engine.load_track(TrackWorld.from_track(track, scenario.track.scene))
        stewards = engine.stewards
        writer = _Writer(scenario, engine, renderer, track, folder / 'bag') if bag else None
        if writer is not None:
            recorder = writer.clips
            assert recorder is not None
        frame = engine.reset()
        for block in range(3 * frames // BLOCK):
            setup = SETUPS[block % 3]
            engine.stewards = None if setup == 'off' else stewards
            if writer is not None:
                writer.clips = recorder if setup == 'clips' else None
            started = time.process_time()
            for _ in range(BLOCK):
                ranges = frame.sensors.get(f'{car.name}/{scan.name}')
                if ranges is not None:
                    steering, speed = policy.act(np.asarray(ranges, np.float32))
                    engine.drive(car.name, float(speed), float(steering))
                frame = engine.advance()
                if writer is not None:
                    writer.write(frame)
                    continue
                sensors = fanned_sensors(frame.sensors, frame.stamp_ns, renderer.meta)
                sent = {name: car_frame(name, state, sensors.get(name))
                        for name, state in frame.states.items()}
                if setup == 'clips':
                    recorder.observe(frame.step, frame.time_ns, sent)
                    recorder.events(frame.time_ns, frame.judgement.events)
            seconds[setup] += time.process_time() - started
        recorder.close()
        if writer is not None:
            writer.recording.bag.close()
        return seconds, len(recorder.written)
    finally:
        engine.close()


def fanned_sensors(arrays: Mapping[str, np.ndarray], stamp_ns: Callable[[str], int],
                   meta: Mapping[str, FrameMeta]) -> dict[str, UpdateReply]:
    """A frame's rendered sensors by car, described as the dataset runner fans them out."""
    described = {name: meta[name]._replace(stamp_ns=stamp_ns(name))
                 for name in arrays if name in meta}
    return UpdateReply({name: arrays[name] for name in described}, described).by_car() \
        if described else {}


def run() -> list[tuple[str, float, str]]:
    frames = max(BLOCK, round(sized(SIM_S, 2.5) * 40))
    runs: dict[bool, list[dict[str, float]]] = {False: [], True: []}
    clips = 0
    with tempfile.TemporaryDirectory() as folder:
        one_run(Path(folder) / 'warmup', max(BLOCK, round(sized(WARMUP_S, 1.25) * 40)))
        for k in range(sized(RUNS, 1)):
            for bag in (False, True):
                seconds, written = one_run(Path(folder) / f'{k}{bag}', frames, bag)
                runs[bag].append(seconds)
                clips += written
    print(f'[bench] CPU s per set-up, engine loop: {runs[False]}; pip runner: {runs[True]}; '
          f'clips written: {clips}', file=sys.stderr)

    def cost(bag: bool, over: str) -> float:
        return statistics.median(100.0 * (r['clips'] / r[over] - 1.0) for r in runs[bag])

    return [('race_control_cost_1car_pct', cost(False, 'off'), 'percent'),
            ('clips_cost_1car_pct', cost(False, 'rulings'), 'percent'),
            ('clips_cost_pip_runner_1car_pct', cost(True, 'rulings'), 'percent'),
            ('race_control_frames_per_s_1car',
             statistics.median(frames / r['clips'] for r in runs[False]), 'frames_per_s')]


if __name__ == '__main__':
    take_smoke_flag()
    sys.exit(main(run, ROWS))
