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
import logging
import multiprocessing
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arsim_core.config.scenario import load_scenario
from arsim_core.errors import ArsimError
from arsim_core.league.race import ClipsFactory, run_race
from arsim_core.league.ratings import Rating, rate
from arsim_core.league.report import write_results
from arsim_core.league.spec import LeagueSpec, event_overrides
from arsim_core.track import load_track

POLL_S = 0.1


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
                                 str(resources), folder))
    return jobs


def run_event(job: Mapping[str, Any], clips: ClipsFactory | None = None) -> dict[str, Any]:
    """Race one event (``EventJob.to_json``); its results as plain values."""
    spec = EventJob(**job)
    resources = Path(spec.resources)
    scenario = load_scenario(spec.scenario, resources,
                             {**spec.overrides, 'simulation': {'seed': spec.seed}})
    track = load_track(spec.track, resources / 'maps')
    result = run_race(scenario, track, spec.laps, seed=spec.seed, max_time_s=spec.max_time_s,
                      out=None if spec.out is None else Path(spec.out), clips=clips)
    return {'index': spec.index, 'event': spec.event, 'track_source': spec.track,
            'seed': spec.seed, **result.to_dict()}


Outcome = tuple[EventJob, dict[str, Any] | None, str | None]


def run_locally(jobs: list[EventJob], workers: int,
                clips: ClipsFactory | None = None) -> Iterator[Outcome]:
    """Each event in a process of a pool (spawned: nothing inherited), as they finish."""
    pool = multiprocessing.get_context('spawn').Pool(workers)
    try:
        pending = {job.index: (job, pool.apply_async(run_event, (job.to_json(), clips)))
                   for job in jobs}
        while pending:
            finished = [k for k, (_, result) in pending.items() if result.ready()]
            if not finished:
                time.sleep(POLL_S)
            for k in finished:
                job, result = pending.pop(k)
                try:
                    yield job, result.get(), None
                except Exception as exc:  # an event's failure is its own, not the league's
                    yield job, None, _describe(exc)
        pool.close()
        pool.join()
    finally:
        pool.terminate()


def run_on_ray(jobs: list[EventJob], address: str,
               clips: ClipsFactory | None = None) -> Iterator[Outcome]:
    """Each event as a Ray task of one CPU on the cluster at ``address`` (``auto``: the one
    this machine belongs to); the spec's files and tracks must be at the same paths there."""
    try:
        import ray
    except ImportError as exc:
        msg = "--ray needs Ray on this machine and the cluster: pip install 'ray>=2.9'"
        raise ArsimError(msg) from exc
    ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    pending: dict[Any, EventJob] = {}
    try:
        task = ray.remote(num_cpus=1, max_retries=0)(run_event)
        pending = {task.remote(job.to_json(), clips): job for job in jobs}
        while pending:
            finished, _ = ray.wait(list(pending), num_returns=1, timeout=POLL_S)
            for ref in finished:
                job = pending.pop(ref)
                try:
                    yield job, ray.get(ref), None
                except Exception as exc:  # a task's failure is its event's
                    yield job, None, _describe(getattr(exc, 'cause', None) or exc)
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
        ray.shutdown()


def _describe(error: BaseException) -> str:
    return str(error) if isinstance(error, ArsimError) else f'{type(error).__name__}: {error}'


def run_league(spec: LeagueSpec, out: Path, resources: Path, workers: int = 1,
               ray_address: str | None = None,
               report: Callable[[str], None] = print,
               clips: ClipsFactory | None = None) -> LeagueResult:
    """Run every event of ``spec``, rate the entries and write the results into ``out``
    (each event's classification and clips into its folder there)."""
    jobs = jobs_of(spec, resources, out)
    outcomes = run_on_ray(jobs, ray_address, clips) if ray_address else \
        run_locally(jobs, max(1, min(workers, len(jobs))), clips)
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
