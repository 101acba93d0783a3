"""``arsim-dataset generate SPEC OUT``: many simulated runs, each into its own bag, side by side.

A spec (YAML, docs/datasets.md) names the base scenario, the number of runs, their length, the
driver, launch arguments (track, cars, profile, topic map), the domain randomisation drawn for
each run (``arsim_core.engine.randomization``: tracks or random tracks by seed, number of
cars, car parameters, sensor noise, start poses) and the recording section. Run ``k`` draws
with seed ``seed + k``, so a spec always gives the same dataset.

Each run is one process simulating in process (``dataset_run``): no DDS, no sockets, nothing
shared with the other runs. They run on a local process pool, or as tasks on a Ray cluster
(``--ray auto|ADDRESS``). ``OUT/manifest.json`` lists every run with its state and results and
is rewritten after each one, so a batch stopped half-way (Ctrl-C, a crash, a lost machine)
resumes with the same command: finished runs are kept, the others run again from scratch.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arsim_core.config.scenario import load_scenario
from arsim_core.engine.randomization import Randomization
from arsim_core.errors import ArsimError
from arsim_core.process.batches import in_processes, on_ray
from arsim_core.recording.bag import METADATA
from arsim_core.yaml_fields import load_section
from arsim_launch.arguments import launch_overrides
from arsim_launch.dataset_run import DRIVERS, RunJob
from arsim_launch.resources import default_settings, resources_dir

MANIFEST = 'manifest.json'
ARGUMENTS = ('track', 'cars', 'profile', 'topic_map')
KEYS = ('scenario', 'runs', 'duration_s', 'seed', 'driver', 'randomization', 'recording',
        *ARGUMENTS)
DONE, FAILED, PENDING = 'done', 'failed', 'pending'


@dataclass(frozen=True)
class Spec:
    source: Path
    jobs: tuple[RunJob, ...]
    digest: str  # of what decides the runs: a manifest made from another spec is refused


def load_spec(path: Path, out: Path) -> Spec:
    """The runs ``path`` asks for, bags under ``out``; every mistake is one ConfigError naming
    the file, line and key."""
    root = load_section(path)
    root.reject_unknown(KEYS)
    resources = resources_dir()
    scenario = Path(root.string('scenario')) if root.has('scenario') \
        else default_settings(resources)
    if not scenario.is_absolute():
        scenario = (path.parent / scenario).resolve()
    if not scenario.is_file():
        root.fail(f'no scenario file at {scenario}', 'scenario')
    runs = root.integer('runs', minimum=1)
    duration = root.number('duration_s', minimum=0.0, exclusive_minimum=True)
    seed = root.integer('seed', 0, minimum=0)
    driver = root.string('driver', DRIVERS[0], choices=DRIVERS)
    arguments = {}
    for key in ARGUMENTS:
        if root.has(key):
            value = root.raw(key)
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                root.fail(f'expected a launch argument value (a string or number), got '
                          f'{value!r}', key)
            beside = path.parent / str(value)  # a path relative to the spec, not to a worker
            arguments[key] = str(beside.resolve()) if key != 'cars' and beside.exists() \
                else str(value)
    recording = root.section('recording', {})
    recording.reject_unknown({'topics', 'topic_regex', 'storage', 'compression',
                              'bag_version', 'max_bag_size_mib', 'max_bag_duration_s'})
    try:  # the scenario as the runs will load it (bar the drawn track and cars)
        overrides = launch_overrides(dict(arguments), scenario, resources)
        load_scenario(scenario, resources, {**overrides, 'recording': dict(recording.data)})
    except ArsimError as exc:
        root.fail(str(exc))
    randomization = root.raw('randomization', None)
    if isinstance(randomization, str):
        randomization = str((path.parent / randomization).resolve())
    Randomization.load(root.section('randomization') if isinstance(randomization, Mapping)
                       else randomization)
    jobs = tuple(RunJob(index=k, seed=seed + k, bag=str(out / 'runs' / f'run_{k:04d}'),
                        scenario=str(scenario), arguments=arguments,
                        randomization=randomization, recording=dict(recording.data),
                        duration_s=duration, driver=driver) for k in range(runs))
    decisive = [{**job.to_json(), 'bag': Path(job.bag).name} for job in jobs]
    digest = hashlib.sha256(json.dumps([decisive, scenario.read_text()],
                                       sort_keys=True).encode()).hexdigest()[:16]
    return Spec(path, jobs, digest)


class Manifest:
    """``OUT/manifest.json``: every run's state (pending, done, failed) with its result or
    error, replaced whole after each change so a reader never sees half of it."""

    def __init__(self, out: Path, spec: Spec) -> None:
        self.path = out / MANIFEST
        self.spec = spec
        self.runs: dict[int, dict[str, Any]] = {
            job.index: {'index': job.index, 'seed': job.seed, 'bag': job.bag,
                        'state': PENDING} for job in spec.jobs}
        if self.path.exists():
            self._resume()

    def _resume(self) -> None:
        try:
            kept = json.loads(self.path.read_text())
            digest, runs = kept['spec_digest'], kept['runs']
        except (OSError, ValueError, KeyError, TypeError) as exc:
            msg = f'{self.path}: not a manifest of arsim-dataset generate ({exc})'
            raise ArsimError(msg) from exc
        if digest != self.spec.digest:
            msg = (f'{self.path.parent} holds runs of another spec (or of a changed scenario '
                   f'file); give a new folder to generate {self.spec.source} into')
            raise ArsimError(msg)
        for run in runs:
            if run.get('state') == DONE and (Path(run['bag']) / METADATA).is_file():
                self.runs[run['index']] = run

    def todo(self) -> list[RunJob]:
        return [job for job in self.spec.jobs if self.runs[job.index]['state'] != DONE]

    def record(self, job: RunJob, result: dict[str, Any] | None, error: str | None) -> None:
        entry: dict[str, Any] = {'index': job.index, 'seed': job.seed, 'bag': job.bag,
                                 'state': DONE if error is None else FAILED}
        if result is not None:
            entry['result'] = result
        if error is not None:
            entry['error'] = error
        self.runs[job.index] = entry
        self.save()

    def save(self) -> None:
        document = {'spec': str(self.spec.source), 'spec_digest': self.spec.digest,
                    'runs': [self.runs[k] for k in sorted(self.runs)]}
        staged = self.path.with_suffix('.json.tmp')
        staged.write_text(json.dumps(document, indent=1))
        staged.replace(self.path)


def generate(spec_path: Path, out: Path, workers: int | None = None,
             ray_address: str | None = None, stop: threading.Event | None = None,
             report: Callable[[str], None] = print) -> Manifest:
    """Run every job of the spec not done yet in ``out``; the manifest at the end. Setting
    ``stop`` ends the batch early (KeyboardInterrupt), the runs still going abandoned."""
    stop = stop or threading.Event()
    out = out.resolve()
    spec = load_spec(spec_path.resolve(), out)
    out.mkdir(parents=True, exist_ok=True)
    manifest = Manifest(out, spec)
    todo = manifest.todo()
    for job in todo:  # a run that did not finish starts again from nothing
        shutil.rmtree(job.bag, ignore_errors=True)
    manifest.save()
    kept = len(spec.jobs) - len(todo)
    if kept:
        report(f'{kept} of {len(spec.jobs)} runs already done in {out}; running the rest')
    if not todo:
        return manifest
    workers = workers or min(len(todo), os.cpu_count() or 1)
    from arsim_launch.dataset_run import run

    def arguments(job: RunJob) -> tuple[Any, ...]:
        return (job.to_json(),)

    # a batch stopped early kills the runs still going with the pool (their bags are
    # incomplete, and the next command starts them again) or cancels them on the cluster
    outcomes = on_ray(todo, ray_address, run, arguments, stop) if ray_address \
        else in_processes(todo, workers, run, arguments, stop)
    started = time.monotonic()
    frames = 0
    with _progress(len(spec.jobs), kept) as bar:
        for job, result, error in outcomes:
            manifest.record(job, result, error)
            bar.update(1)
            if result is None:
                if not bar.disable:  # at once on a terminal; the summary names it anyway
                    bar.write(f'run {job.index} failed: {error}')
                continue
            frames += result['frames']
            bar.set_postfix_str(f'{frames / (time.monotonic() - started):.0f} frames/s')
    if stop.is_set():
        raise KeyboardInterrupt
    return manifest


def _progress(total: int, done: int) -> Any:
    from tqdm import tqdm  # type: ignore[import-untyped]

    return tqdm(total=total, initial=done, unit='run', file=sys.stderr,
                disable=not sys.stderr.isatty(), dynamic_ncols=True)


def summary(manifest: Manifest) -> tuple[str, bool]:
    """The batch in one paragraph, and whether every run is done."""
    runs = list(manifest.runs.values())
    done = [r for r in runs if r['state'] == DONE]
    failed = [r for r in runs if r['state'] == FAILED]
    frames = sum(r['result']['frames'] for r in done)
    size = sum(r['result']['bag_bytes'] for r in done)
    lines = [f'{len(done)} of {len(runs)} runs done in {manifest.path.parent}: {frames} frames, '
             f'{size / 2**20:.1f} MiB of bags; manifest {manifest.path}']
    lines += [f'run {r["index"]} failed: {r["error"]}' for r in failed]
    if failed:
        lines.append('run the same command again to retry the failed runs')
    return '\n'.join(lines), len(done) == len(runs)
