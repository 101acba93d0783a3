"""A league run (``arsim-race league``): every event a race in a process of its own, side by
side on this machine or as tasks on a Ray cluster, then the ratings and the results written.

Event ``k`` (tracks in the spec's order, then events on each track) races every entry on its
track with seed ``seed + k``, the grid turned ``k`` places so each entry starts from each slot
in turn. An event that fails (a crash, a lost machine) is reported and left out of the ratings;
the others go on. Each event writes its classification and its incident clips (through the
``ClipsFactory`` the caller gives, a face that packs ROS messages) into a folder of its own,
``OUT/events/<index>_<track>``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arsim_core.config.scenario import load_scenario
from arsim_core.league.race import ClipsFactory, RaceResult, run_race
from arsim_core.league.ratings import Rating, rate
from arsim_core.league.report import write_results
from arsim_core.league.spec import LeagueSpec, event_overrides
from arsim_core.process.batches import in_processes, on_ray
from arsim_core.track import load_track


@dataclass(frozen=True)
class EventJob:
    """One event, as plain values (it crosses processes and machines)."""

    index: int
    track: str
    event: int  # on its track
    seed: int
    laps: int
    max_time_s: float | None
    scenario: str
    overrides: Mapping[str, Any]
    resources: str
    out: str | None = None  # the event's folder: its classification and clips
    stacks: tuple[tuple[str, str], ...] = ()  # each ROS stack's car and launch command

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class LeagueResult:
    spec: LeagueSpec
    events: list[dict[str, Any]]  # each event's race (``RaceResult.to_dict``), in order
    failed: list[dict[str, Any]]  # index, track, event and the error of each failed one
    ratings: list[Rating]
    files: list[Path]


def jobs_of(spec: LeagueSpec, resources: Path, out: Path | None = None) -> list[EventJob]:
    jobs = []
    for t, track in enumerate(spec.tracks):
        for e in range(spec.events_per_track):
            index = t * spec.events_per_track + e
            folder = None if out is None else str(out / 'events' / f'{index}_{Path(track).name}')
            jobs.append(EventJob(index, track, e, spec.seed + index, spec.laps, spec.max_time_s,
                                 str(spec.scenario), event_overrides(spec, track, index),
                                 str(resources), folder, spec.stacks))
    return jobs


#: Races one event (``EventJob.to_json``) and gives its results as plain values: ``run_event``
#: in process, or a face's runner on the ROS graph where the league has ROS stacks.
EventRunner = Callable[[Mapping[str, Any], ClipsFactory | None], dict[str, Any]]


def event_result(spec: EventJob, result: RaceResult) -> dict[str, Any]:
    """An event's results as plain values: which event it was and how its race went."""
    return {'index': spec.index, 'event': spec.event, 'track_source': spec.track,
            'seed': spec.seed, **result.to_dict()}


def run_event(job: Mapping[str, Any], clips: ClipsFactory | None = None) -> dict[str, Any]:
    """Race one event (``EventJob.to_json``) in process; its results as plain values."""
    spec = EventJob(**job)
    resources = Path(spec.resources)
    scenario = load_scenario(spec.scenario, resources,
                             {**spec.overrides, 'simulation': {'seed': spec.seed}})
    track = load_track(spec.track, resources / 'maps')
    result = run_race(scenario, track, spec.laps, seed=spec.seed, max_time_s=spec.max_time_s,
                      out=None if spec.out is None else Path(spec.out), clips=clips)
    return event_result(spec, result)


def run_league(spec: LeagueSpec, out: Path, resources: Path, workers: int = 1,
               ray_address: str | None = None,
               report: Callable[[str], None] = print,
               clips: ClipsFactory | None = None,
               runner: EventRunner = run_event) -> LeagueResult:
    """Run every event of ``spec`` through ``runner``, rate the entries and write the
    results into ``out`` (each event's classification and clips into its folder there)."""
    jobs = jobs_of(spec, resources, out)

    def arguments(job: EventJob) -> tuple[Any, ...]:
        return job.to_json(), clips

    outcomes = on_ray(jobs, ray_address, runner, arguments) if ray_address else \
        in_processes(jobs, max(1, min(workers, len(jobs))), runner, arguments)
    events, failed = [], []
    for job, result, error in outcomes:
        if result is None:
            failed.append({'index': job.index, 'track': job.track, 'event': job.event,
                           'error': error})
            report(f'event {job.index} on {job.track} failed: {error}')
            continue
        events.append(result)
        winner = result['classification'][0]['name']
        report(f'event {job.index} on {result["track"]}: {winner} won '
               f'({result["sim_s"]:.0f} s raced in {result["wall_s"]:.0f} s)')
    events.sort(key=lambda e: e['index'])
    ratings = rate([entry.name for entry in spec.entries],
                   [[car['name'] for car in event['classification']] for event in events],
                   spec.rating_model)
    files = write_results(out, spec, events, failed, ratings)
    return LeagueResult(spec, events, failed, ratings, files)
