"""Stopping: SIGINT or SIGTERM ends every process of a simulation quickly and quietly, and a
node whose worker thread dies ends with it instead of living on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from simharness import allocate_domain, ros_env

# 'still running': the runner escalated to SIGTERM, which a clean stop never needs, however
# loaded the machine (the runner's STOP_GRACE_S is the bound, not a wall time measured here).
NOISE = ('Traceback', 'Exception in', 'context is invalid', 'exited with code',
         'still running')


@pytest.mark.parametrize(('sig', 'one_process'), [
    (signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGINT, True)],
    ids=['SIGINT', 'SIGTERM', 'SIGINT-one-process'])
def test_a_signal_stops_every_process_quickly_without_a_traceback(simulation, sig,
                                                                  one_process: bool) -> None:
    # Two cars: in a process per node, the per-car nodes run in container processes too.
    sim = simulation(settings={'cars': [{'name': 'ego', 'profile': 'f1tenth'},
                                        {'name': 'opp_racecar', 'profile': 'f1tenth'}],
                               'simulation': {'one_process': one_process}})
    assert sim.wait_for_log('ready; stepping', 90.0), sim.log
    time.sleep(2.0)  # stepping at full speed, every node publishing
    processes = sim.session_processes()
    # the runner and the simulation; or the runner, backend, bridge, track and 3 containers
    assert len(processes) == 2 if one_process else len(processes) >= 7, sim.log
    segments = sim.dds_segments()  # the participants' shared memory, 32 MB for the sensors'
    assert segments, 'no Fast DDS shared-memory segment found for the running simulation'

    start = time.monotonic()
    os.kill(sim.process.pid, sig)
    code = sim.process.wait(60)
    while sim.session_processes() and time.monotonic() - start < 60:
        time.sleep(0.05)

    assert sim.session_processes() == []
    assert code == 0, sim.log
    assert [s.name for s in segments if s.exists()] == [], 'left in /dev/shm after the run'
    log = sim.log
    assert not [word for word in NOISE if word in log], log
    assert 'results:' in log
    assert one_process or 'arsim-embedded stopped' in log, log


@pytest.mark.parametrize('delay_s', [0.3, 1.0, 2.0, 3.5])
def test_a_signal_during_start_up_stops_everything_quietly(simulation, delay_s: float) -> None:
    """Ctrl-C while the runner and its children are still importing or setting up: no
    traceback, a clean exit and no process left, whenever it comes."""
    sim = simulation()
    time.sleep(delay_s)
    start = time.monotonic()
    os.kill(sim.process.pid, signal.SIGINT)
    code = sim.process.wait(30)
    while sim.session_processes() and time.monotonic() - start < 30:
        time.sleep(0.05)
    assert sim.session_processes() == []
    log = sim.log
    # A signal before the runner's interpreter has set its handlers ends it the default way,
    # having printed nothing; from then on every stop is clean.
    assert code == 0 or (code == -signal.SIGINT and not log.strip()), (code, log)
    assert not [word for word in NOISE if word in log], log


def test_a_dying_worker_thread_stops_its_process_with_one_line(tmp_path: Path) -> None:
    script = Path(__file__).with_name('dying_thread_node.py')
    result = subprocess.run([sys.executable, str(script)], env=ros_env(78), timeout=60,
                            capture_output=True, text=True)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    lines = [line for line in output.splitlines() if 'chatter thread failed' in line]
    assert len(lines) == 1, output
    assert 'RuntimeError: the socket went away' in lines[0]
    assert 'Traceback' not in output


def test_a_sensor_node_stopped_half_way_through_its_start_tears_down_cleanly() -> None:
    # A stop request (or a bad scenario) during construction leaves a node that rclpy still
    # destroys when the context shuts down: that must not fail on what was never built.
    import rclpy

    from arsim_bridge.sensor_node import SensorNode
    from arsim_core.errors import ArsimError

    context = rclpy.Context()
    rclpy.init(context=context, domain_id=allocate_domain())
    try:
        with pytest.raises(ArsimError, match='settings_file and resources_dir are required') \
                as failed:
            SensorNode(context=context)
        # The error's traceback keeps the half-built node alive, as it does in run_nodes.
        assert failed.value.__traceback__ is not None
    finally:
        context.try_shutdown()  # destroys every node of the context, the half-built one too
