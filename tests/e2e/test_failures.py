"""Bad input and failures: clear messages, no crash, no orphan processes."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
import zmq
from ackermann_msgs.msg import AckermannDriveStamped
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from simharness import Probe, installed_resources, ros_env


def run_sim(*arguments: str, timeout: float = 60.0) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, '-m', 'arsim_launch', *arguments],
                          env=ros_env(77), capture_output=True, text=True, timeout=timeout)


def test_missing_config_file_stops_start_up_with_one_message(tmp_path) -> None:
    result = run_sim(f'config:={tmp_path / "nope.yaml"}')
    assert result.returncode == 2
    assert f'{tmp_path / "nope.yaml"}: file not found' in result.stderr
    assert 'Traceback' not in result.stderr


@pytest.mark.parametrize(('text', 'expected'), [
    ('simulation: {frame_rate_hz: 40\n', 'sim.yaml:2:1: invalid YAML'),
    ('simulation: {frame_rate_hz: fast}\ntrack: {name: arsim_ring}\ncars: [{name: ego, '
     'profile: f1tenth}]\n',
     "sim.yaml:1: simulation.frame_rate_hz: expected a number in [1, 10000], got 'fast'"),
    ('simulation: {}\ntrack: {name: arsim_ring}\ncars: [{name: ego, profile: racecar}]\n',
     "cars[0].profile: unknown name 'racecar'"),
    ('simulation: {}\ntrack: {name: arsim_ring}\ncars: [{name: ego, profile: f1tenth}]\n'
     'backend: {kind: warp}\n', "backend.kind: expected one of ['embedded', 'external', "
                                "'unity'], got 'warp'"),
    ('simulation: {}\ncars: [{name: ego, profile: f1tenth}]\n',
     'sim.yaml: track: missing, expected a mapping'),
    ('simulation: {}\ntrack: {name: arsim_ring}\ncars: [{name: ego, profile: f1tenth}]\n'
     'backend: {frames_address: "tcp://0.0.0.0:5556"}\n',
     "backend.frames_address: expected tcp://127.0.0.1:<port 1-65535>"),
    ('simulation: {}\ntrack: {name: arsim_ring}\ncars: [{name: ego, profile: f1tenth}]\n'
     'backend: {address: "tcp://127.0.0.1:5555:"}\n',
     "backend.address: expected a port between 1 and 65535"),
])
def test_malformed_config_names_file_and_key(tmp_path, text: str, expected: str) -> None:
    path = tmp_path / 'sim.yaml'
    path.write_text(text)
    result = run_sim(f'config:={path}')
    assert result.returncode == 2
    assert str(path) in result.stderr and expected in result.stderr, result.stderr
    assert 'Traceback' not in result.stderr


def test_overlapping_start_poses_stop_start_up_naming_both_cars(tmp_path) -> None:
    resources = installed_resources()
    path = tmp_path / 'sim.yaml'
    path.write_text(yaml.safe_dump({
        'simulation': {}, 'track': {'name': 'arsim_ring'},
        'cars': [{'name': 'ego', 'profile': 'f1tenth', 'pose': [8.0, 0.0, 0.0]},
                 {'name': 'rival', 'profile': str(resources / 'config' / 'cars' / 'f1tenth.yaml'),
                  'pose': [8.3, 0.1, 0.5]}]}))
    result = run_sim(f'config:={path}')
    assert result.returncode == 2
    assert "cars[1]: car 'rival' starts at" in result.stderr
    assert "overlapping car 'ego'" in result.stderr and 'Traceback' not in result.stderr


def test_bad_drive_commands_are_ignored_and_the_sim_keeps_running(simulation) -> None:
    sim = simulation()
    probe = Probe(sim.domain_id)
    try:
        odoms: list[Odometry] = []
        clocks: list[Clock] = []
        probe.node.create_subscription(Odometry, '/ego_racecar/odom', odoms.append, 10)
        probe.node.create_subscription(Clock, '/clock', clocks.append, 10)
        drive = probe.node.create_publisher(AckermannDriveStamped, '/drive', 10)
        assert probe.spin_until(lambda: odoms, 60.0), sim.log
        bad = itertools.cycle(((float('nan'), 0.0), (1.0, float('inf')), (1.0, 3.0),
                               (500.0, 0.0)))

        def publish_bad() -> None:
            msg = AckermannDriveStamped()
            msg.drive.speed, msg.drive.steering_angle = next(bad)
            drive.publish(msg)
        probe.node.create_timer(0.02, publish_bad)
        assert probe.spin_until(lambda: 'ignoring drive command' in sim.log, 30.0), sim.log
        count = len(clocks)
        assert probe.spin_until(lambda: len(clocks) > count + 100, 30.0)
        speed = odoms[-1].twist.twist.linear.x
        assert abs(speed) < 1e-9, 'a bad command moved the car'
        assert sim.process.poll() is None
    finally:
        probe.close()


def unix_socket_paths(pids: list[int]) -> set[Path]:
    """The paths of the Unix sockets these processes hold open (``/proc/net/unix``)."""
    inodes = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in Path(f'/proc/{pid}/fd').iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    if target.startswith('socket:['):
                        inodes.add(target[len('socket:['):-1])
    paths = set()
    for line in Path('/proc/net/unix').read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) == 8 and fields[6] in inodes:
            paths.add(Path(fields[7]))
    return paths


def test_ctrl_c_stops_every_process_and_removes_the_run_s_sockets(simulation) -> None:
    sim = simulation()
    assert sim.wait_for_log('ready; stepping', 60.0), sim.log
    assert len(sim.session_processes()) >= 2  # the runner and what it started
    folders = {path.parent for path in unix_socket_paths(sim.session_processes())
               if path.parent.name.startswith('arsim-sockets-')}
    assert folders, 'the run holds no socket in a folder of its own'
    # The configuration was read by a planning process that has ended: the launcher that
    # supervises the run for its whole length never loaded NumPy.
    assert 'numpy' not in Path(f'/proc/{sim.process.pid}/maps').read_text()
    os.killpg(sim.process.pid, signal.SIGINT)
    assert sim.process.wait(30) == 0
    deadline = time.monotonic() + 10
    while sim.session_processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sim.session_processes() == []
    assert not any(folder.exists() for folder in folders)


def test_installed_resources_hold_config_and_maps() -> None:
    resources = installed_resources()
    assert (resources / 'config' / 'sim.yaml').is_file()
    assert any((resources / 'maps').iterdir())


def test_a_backend_of_another_protocol_version_stops_the_simulation_naming_both(
        simulation) -> None:
    """A server that answers in protocol version 2 (say, a Unity player of another release):
    the bridge stops the run at once with both versions named, rather than misreading it."""
    server = zmq.Context.instance().socket(zmq.REP)
    server.setsockopt(zmq.LINGER, 0)
    port = server.bind_to_random_port('tcp://127.0.0.1')
    stop = threading.Event()

    def answer() -> None:
        while not stop.is_set():
            if server.poll(100):
                header = json.loads(server.recv_multipart()[1])
                server.send_multipart([b'Ready', json.dumps({
                    'protocol': 2, 'step': header.get('step', 0),
                    'time_ns': header.get('time_ns', 0), 'frames': []}).encode()])

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        sim = simulation(arguments=(f'backend:=tcp://127.0.0.1:{port}',))
        assert sim.process.wait(60) == 1, sim.log
        assert 'peer speaks arsim protocol version 2, this side speaks version 1' in sim.log
    finally:
        stop.set()
        thread.join()
        server.close()
