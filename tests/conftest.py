"""Fixtures shared by the whole suite: paths, free ports, a backend and running simulations."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))

from simharness import (  # noqa: E402
    Simulation,
    backend_process,
    free_port,
    installed_resources,
    stop_drivers,
)

from arsim_core.protocol.client import BackendClient  # noqa: E402

REPO = TESTS.parent
os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
SHARED_TRACKS = REPO.parent / 'shared' / 'tracks'


#: Folders whose tests take seconds to tens of seconds each (simulations, benchmarks): run first.
LONG_FIRST = ('bench', 'e2e')


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long tests first, the many short ones after them: pytest-xdist gives each worker a
    block of the list and idle workers take pending tests from the end of a busy one's block,
    so short tests at the end fill the cores to the last second, where a long test collected
    late (the eight-car race, say) kept one worker busy for tens of seconds alone."""
    items.sort(key=lambda item: item.path.relative_to(TESTS).parts[0] not in LONG_FIRST)


@pytest.fixture(scope='session')
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope='session')
def shared_tracks() -> Path:
    if not SHARED_TRACKS.is_dir():
        pytest.skip(f'real track data not found at {SHARED_TRACKS}')
    return SHARED_TRACKS


@pytest.fixture
def backend() -> Iterator[BackendClient]:
    """A backend process of the test's own (for tests that stop it or leave it mid-request)."""
    with backend_process() as client:
        yield client


@pytest.fixture(scope='module')
def module_backend() -> Iterator[BackendClient]:
    """One backend process for a module's tests, each beginning its own session with its
    InitialSettings, as a bridge does on a restart: a process start costs seconds, a session
    nothing, and a session must not depend on what came before it."""
    with backend_process() as client:
        yield client


@pytest.fixture(autouse=True)
def no_stray_drivers() -> Iterator[None]:
    """Every driver a test started is stopped when it ends, passed or failed."""
    yield
    stop_drivers()


@pytest.fixture
def simulation(tmp_path: Path):
    """A factory of simulations, each on its own ports and DDS domain, stopped after the test."""
    started: list[Simulation] = []

    def start(**kwargs) -> Simulation:
        sim = Simulation(tmp_path / f'sim{len(started)}', **kwargs)
        started.append(sim)
        sim.start()
        return sim

    yield start
    for sim in started:
        sim.stop()


@pytest.fixture(scope='module')
def module_simulation(tmp_path_factory: pytest.TempPathFactory
                      ) -> Iterator[Callable[..., Simulation]]:
    """One simulation per set of arguments for a module's tests, started by the first test
    that asks for it and stopped after the module: for tests that only observe it (or put back
    what they change), since each start costs seconds of the suite."""
    folder = tmp_path_factory.mktemp('shared-simulations')
    started: dict[str, Simulation] = {}

    def get(**kwargs) -> Simulation:
        key = json.dumps(kwargs, sort_keys=True, default=str)
        if key not in started:
            started[key] = Simulation(folder / f'sim{len(started)}', **kwargs)
            started[key].start()
        return started[key]

    yield get
    for sim in started.values():
        sim.stop()


__all__ = ['free_port', 'installed_resources']
