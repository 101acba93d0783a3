"""Batches of independent jobs (dataset runs, league events), each in a process of its own on
this machine or as a one-CPU Ray task on a cluster, their outcomes yielded as they finish.

A job's failure is its own: it comes out as an error string beside the job, and the batch goes
on. Setting ``stop`` ends the batch early; what is still running is killed (the pool) or
cancelled (the cluster), so nothing keeps running after the caller has moved on.
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from arsim_core.errors import ArsimError

POLL_S = 0.1
Job = TypeVar('Job')


def in_processes(jobs: Sequence[Job], workers: int, call: Callable[..., Any],
                 arguments: Callable[[Job], tuple[Any, ...]], stop: threading.Event | None = None
                 ) -> Iterator[tuple[Job, Any, str | None]]:
    """``call(*arguments(job))`` for each job in a process of a pool of ``workers`` (spawned:
    nothing inherited), as they finish."""
    pool = multiprocessing.get_context('spawn').Pool(workers)
    try:
        pending = {k: (job, pool.apply_async(call, arguments(job))) for k, job in enumerate(jobs)}
        while pending and not (stop is not None and stop.is_set()):
            finished = [k for k, (_, result) in pending.items() if result.ready()]
            if not finished:
                time.sleep(POLL_S)
            for k in finished:
                job, result = pending.pop(k)
                try:
                    yield job, result.get(), None
                except Exception as exc:  # a job's failure is its own, not the batch's
                    yield job, None, describe(exc)
        pool.close()
        pool.join()
    finally:
        pool.terminate()


def on_ray(jobs: Sequence[Job], address: str, call: Callable[..., Any],
           arguments: Callable[[Job], tuple[Any, ...]], stop: threading.Event | None = None
           ) -> Iterator[tuple[Job, Any, str | None]]:
    """``call(*arguments(job))`` for each job as a Ray task of one CPU on the cluster at
    ``address`` (``auto``: the one this machine belongs to), as they finish; the files the
    jobs name must be at the same paths on every node."""
    try:
        import ray
    except ImportError as exc:
        msg = "--ray needs Ray on this machine and the cluster: pip install 'ray>=2.9'"
        raise ArsimError(msg) from exc
    ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    pending: dict[Any, Job] = {}
    try:
        task = ray.remote(num_cpus=1, max_retries=0)(call)
        pending = {task.remote(*arguments(job)): job for job in jobs}
        while pending and not (stop is not None and stop.is_set()):
            finished, _ = ray.wait(list(pending), num_returns=1, timeout=POLL_S)
            for ref in finished:
                job = pending.pop(ref)
                try:
                    yield job, ray.get(ref), None
                except Exception as exc:  # a task's failure is its job's, not the batch's
                    yield job, None, describe(getattr(exc, 'cause', None) or exc)
    finally:
        for ref in pending:  # a batch stopped early leaves no task running on the cluster
            ray.cancel(ref, force=True)
        ray.shutdown()


def describe(error: BaseException) -> str:
    """A job's failure in one line: an ArsimError's own message, else its type and text."""
    return str(error) if isinstance(error, ArsimError) else f'{type(error).__name__}: {error}'
