"""One failure policy: a required process that dies stops the whole simulation within a bound,
with one message naming it, a non-zero exit code, no process left behind and no temporary
directory left over."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

import pytest
from simharness import Simulation, dds_segments_of, remove_dds_segments, taken_port

FAILURE_BOUND_S = 12.0  # kill -> every process gone; a clean stop takes a few seconds
TWO_CARS = {'cars': [{'name': 'ego', 'profile': 'f1tenth'},
                     {'name': 'opp_racecar', 'profile': 'f1tenth'}]}
SPLIT = {'one_process': False}  # these tests kill or stop one process of several


def _pid_of(sim: Simulation, marker: bytes) -> int:
    for pid in sim.session_processes():
        try:
            cmdline = Path(f'/proc/{pid}/cmdline').read_bytes()
        except OSError:
            continue
        if marker in cmdline:
            return pid
    msg = f'no process with {marker!r} in the simulation'
    raise AssertionError(msg)


@pytest.fixture
def private_tmp():
    """A TMPDIR of the simulation's own, to see that it leaves nothing behind (short: it holds
    the ipc socket paths)."""
    folder = Path(tempfile.mkdtemp(prefix='arsim-t-', dir='/tmp'))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _run_and_kill(tmp_path: Path, tmpdir: Path, marker: bytes, settings: dict | None = None,
                  sig: int = signal.SIGKILL) -> tuple[Simulation, int, float]:
    """Run with ``settings`` in a process per node (unless they say one_process) and send
    ``sig`` to the process whose command line holds ``marker``."""
    settings = settings or {}
    settings = {**settings, 'simulation': {**SPLIT, **settings.get('simulation', {})}}
    sim = Simulation(tmp_path / 'sim', settings)
    sim.env['TMPDIR'] = str(tmpdir)
    sim.start()
    orphaned: list[Path] = []
    try:
        assert sim.wait_for_log('ready; stepping', 90.0), sim.log
        assert list(tmpdir.iterdir()), 'the run made no temporary directory'
        time.sleep(1.0)
        start = time.monotonic()
        pid = _pid_of(sim, marker)
        orphaned = dds_segments_of([pid])  # a killed participant cannot remove its own
        os.kill(pid, sig)
        code = sim.process.wait(60)
        while sim.session_processes() and time.monotonic() - start < 60:
            time.sleep(0.05)
        return sim, code, time.monotonic() - start
    finally:
        sim.stop()
        remove_dds_segments(orphaned)


# One process of each kind: the backend (no ROS), a node, a container of several cars' nodes
# and the one-process simulation. Which processes are required is checked on the generated
# list (tests/launch/test_nodes.py), the runner's watch is the same for all.
@pytest.mark.parametrize(('name', 'marker', 'settings'), [
    ('backend', b'arsim_core/backend', None),
    ('ego_sensors', b'__node:=ego_sensors', None),
    ('cars_dynamics', b'__node:=cars_dynamics', TWO_CARS),
    ('simulation', b'arsim_bridge/container', {'simulation': {'one_process': True}}),
], ids=lambda v: v if isinstance(v, str) else '')
def test_a_killed_required_process_stops_the_run(tmp_path, private_tmp, name, marker,
                                                 settings) -> None:
    sim, code, took = _run_and_kill(tmp_path, private_tmp, marker, settings)
    log = sim.log
    assert code == 1, log
    assert sim.session_processes() == [], log
    assert took < FAILURE_BOUND_S, f'stopping took {took:.1f} s\n{log}'
    print(f'{name}: stopped {took:.1f} s after the kill')
    messages = [line for line in log.splitlines() if '[arsim] required process' in line]
    assert len(messages) == 1, log
    assert messages[0].startswith(f'[arsim] required process {name} ')
    assert 'was killed by SIGKILL; stopping the simulation' in messages[0], log
    assert _left_over(private_tmp) == [], 'temporary directories left behind'


def _left_over(tmpdir: Path) -> list[Path]:
    """What a run left in its TMPDIR, but for the Fast DDS profile every node shares and
    keeps on purpose (arsim_bridge.dds)."""
    return [p for p in tmpdir.iterdir() if not p.name.startswith('arsim-fastdds-')]


@pytest.mark.parametrize(('stopped', 'marker', 'says'), [
    ('ego_dynamics', b'__node:=ego_dynamics',
     "no state from the dynamics of car(s) ['ego'] (node ego_dynamics publishing"),
    ('backend', b'arsim_core/backend', 'did not answer'),
], ids=['dynamics', 'backend'])
def test_a_process_that_stops_answering_stops_the_run_through_the_bridge(
        tmp_path, private_tmp, stopped, marker, says) -> None:
    # SIGSTOP: alive, but silent. The bridge's patience (simulation.dynamics_timeout_s,
    # backend.timeout_s) runs out, and it ends with the reason; the runner names it.
    patience = {'simulation': {'dynamics_timeout_s': 2.0}, 'backend': {'timeout_s': 2.0}}
    sim, code, took = _run_and_kill(tmp_path, private_tmp, marker, patience, signal.SIGSTOP)
    log = sim.log
    assert code == 1, log
    assert sim.session_processes() == [], log
    assert took < 2.0 + FAILURE_BOUND_S, f'stopping took {took:.1f} s\n{log}'
    print(f'{stopped} stopped answering: run stopped {took:.1f} s later')
    message = log[log.index('[arsim] required process'):]
    assert message.startswith('[arsim] required process arsim_bridge exited with code 1'), log
    assert says in message, log
    assert _left_over(private_tmp) == []


@pytest.mark.parametrize(('stopped', 'marker'), [
    ('arsim_bridge', b'__node:=arsim_bridge'),
    ('ego_sensors', b'__node:=ego_sensors'),
], ids=['bridge', 'sensors'])
def test_a_process_without_a_sign_of_life_stops_the_run(tmp_path, private_tmp, stopped,
                                                        marker) -> None:
    # SIGSTOP: alive, but its loops no longer beat (arsim_core.process.heartbeat); nobody else waits
    # on it, so only the launcher's watch can tell.
    timeout_s = 6.0
    sim, code, took = _run_and_kill(tmp_path, private_tmp, marker,
                                    {'simulation': {'heartbeat_timeout_s': timeout_s}},
                                    signal.SIGSTOP)
    log = sim.log
    assert code == 1, log
    assert sim.session_processes() == [], log
    assert timeout_s < took < timeout_s + FAILURE_BOUND_S, f'stopping took {took:.1f} s\n{log}'
    print(f'{stopped} stopped: run stopped {took:.1f} s later')
    messages = [line for line in log.splitlines() if '[arsim] required process' in line]
    assert len(messages) == 1, log
    assert messages[0].startswith(f'[arsim] required process {stopped} stopped answering '
                                  f'(no sign of life for '), log
    assert _left_over(private_tmp) == []


def test_a_backend_that_cannot_bind_its_address_stops_the_run_naming_it(
        tmp_path: Path) -> None:
    with taken_port() as port:
        sim = Simulation(tmp_path / 'sim', {'simulation': SPLIT,
                                            'backend': {'address': f'tcp://127.0.0.1:{port}'}})
        sim.start()
        try:
            code = sim.process.wait(60)
        finally:
            sim.stop()
    assert code == 1, sim.log
    assert f'tcp://127.0.0.1:{port}' in sim.log and 'in use' in sim.log, sim.log
    assert 'required process' in sim.log and 'Traceback' not in sim.log, sim.log
