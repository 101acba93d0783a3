"""A league event on the ROS graph, for a league with ROS stacks among its entries
(docs/race-control.md, "Leagues").

The event's race is a simulation as ``python3 -m arsim_launch`` starts it, with the base
scenario and the event's overrides (its track, the entries' cars in the event's grid order, the
race of ``league.race.race_session_keys``, the classification and clips written into the
event's folder), in a ROS domain of its own (``domains``). Cars of the zoo are driven from
the simulation (``drivers.pilots``, the autopilot node); each ROS stack is its ``launch``
command, started beside the simulation in its domain, with ``{car}`` and its car's topics
filled in.

A stack that ends mid-race is not a failure of the event: its car, no longer driven, is
retired by the event when it makes no progress, and the race goes on. The event ends when
the classification is written; if it is not within ``wall_limit_s`` the simulation is
stopped, and the results as they stand when it stops are the event's.
"""

from __future__ import annotations

import os
import shlex
import signal
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arsim_core.config.scenario import CarSpec, Scenario, load_scenario
from arsim_core.config.sensors import Lidar2DSpec
from arsim_core.errors import ArsimError
from arsim_core.league.race import (
    CLASSIFICATION_FILE,
    CLIPS_FOLDER,
    ClipsFactory,
    RaceResult,
    race_session_keys,
    slowest_lap_s,
)
from arsim_core.league.run import EventJob, event_result
from arsim_core.track import load_track
from arsim_launch.domains import reserved_domain
from arsim_launch.node_spec import NodeSpec
from arsim_launch.nodes import generate_nodes, validate
from arsim_launch.process_environment import process_environment
from arsim_launch.runner import run
from arsim_launch.sockets import load_run

START_WALL_S = 120.0  # wall time a simulation and its stacks may take to start
WALL_PER_SIM_S = 4.0  # wall seconds allowed per second of the race's sim time budget
POLL_S = 0.2


def stack_command(command: str, car: CarSpec) -> tuple[str, ...]:
    """A stack's ``launch`` command for ``car``: its fields filled in, split as a shell would
    (``league.spec.LAUNCH_FIELDS``)."""
    names = car.names
    scan = next((names.sensor_topics[s.name] for s in car.profile.sensors
                 if isinstance(s, Lidar2DSpec)), '')
    fields = {'car': car.name, 'drive_topic': names.drive_topic, 'scan_topic': scan,
              'odom_topic': names.odom_topic}
    return tuple(shlex.split(command.format_map(fields)))


def event_overrides(spec: EventJob, out: Path, lap_s: float) -> dict[str, Any]:
    """The keys the event's simulation replaces in the base scenario (``lap_s``: the
    slowest lap, the cool-down after the flag)."""
    event = {**race_session_keys(spec.laps, lap_s),
             'classification_file': str(out / CLASSIFICATION_FILE)}
    return {**spec.overrides, 'simulation': {'seed': spec.seed},
            'race': {'event': event, 'clips': {'directory': str(out / CLIPS_FOLDER)}}}


def run_ros_event(job: Mapping[str, Any], clips: ClipsFactory | None = None
                  ) -> dict[str, Any]:
    """Race one event (``league.run.EventJob``) on the ROS graph; its results as plain
    values, as ``league.run.run_event`` gives them. ``clips`` is not used: the simulation
    writes its own."""
    del clips
    spec = EventJob(**job)
    if spec.out is None:
        msg = f'event {spec.index}: a league event on the ROS graph needs a folder to write to'
        raise ArsimError(msg)
    out = Path(spec.out)
    out.mkdir(parents=True, exist_ok=True)
    resources = Path(spec.resources)
    lap_s = slowest_lap_s(load_scenario(spec.scenario, resources, spec.overrides),
                          load_track(spec.track, resources / 'maps'))
    scenario, overrides = load_run(spec.scenario, resources, event_overrides(spec, out, lap_s))
    validate(scenario)
    processes = generate_nodes(scenario, Path(spec.scenario), overrides)
    for name, command in spec.stacks:
        processes.append(NodeSpec('', name, f'stack_{name}', ros=False,
                                  command=stack_command(command, scenario.car(name))))
    budget_s = spec.max_time_s or 60.0 + (spec.laps + 1) * lap_s
    classification = out / CLASSIFICATION_FILE
    classification.unlink(missing_ok=True)  # an earlier run's: the event would end at once
    started = time.monotonic()
    with reserved_domain() as domain:
        env, _ = process_environment(scenario, os.environ)
        env = {**env, 'ROS_DOMAIN_ID': str(domain)}
        ended = _race(processes, env, scenario, classification,
                      START_WALL_S + WALL_PER_SIM_S * budget_s)
    if not classification.is_file():
        msg = f'event {spec.index}: the simulation ended ({ended}) without a classification'
        raise ArsimError(msg)
    drivers = {car.name: car.driver or f'ROS stack ({car.name})' for car in scenario.cars}
    result = RaceResult.from_classification(classification, scenario.track.name, drivers)
    result.laps = spec.laps
    result.wall_s = time.monotonic() - started
    result.clips = sorted((out / CLIPS_FOLDER).glob('*.mcap'))
    return event_result(spec, result)


def _race(processes: list[NodeSpec], env: Mapping[str, str], scenario: Scenario,
          classification: Path, wall_limit_s: float) -> str:
    """Run the simulation and the stacks until the classification is written (the event
    is over), the simulation ends or ``wall_limit_s`` passes; how it ended. The runner needs
    the main thread (it handles signals), so a thread of its own watches for the end."""
    stop = threading.Event()
    how = [f'stopped after {wall_limit_s:.0f} s']

    def watch() -> None:
        deadline = time.monotonic() + wall_limit_s
        while not stop.is_set() and time.monotonic() < deadline:
            if classification.is_file():
                how[0] = 'the event finished'
                break
            time.sleep(POLL_S)
        stop.set()

    watcher = threading.Thread(target=watch, daemon=True)
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    watcher.start()
    try:
        code = run(processes, stop, scenario.heartbeat_timeout_s, env)
    finally:
        stop.set()
        watcher.join()
        for sig, handler in handlers.items():
            if handler is not None:  # None: a handler not set from Python, left as it is
                signal.signal(sig, handler)
    return how[0] if code == 0 else f'{how[0]}; exit code {code}'
