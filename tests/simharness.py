"""Run real simulations from tests and benchmarks: the runner as a child process, a private DDS
domain and private ports, and a probe node living in this process."""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from arsim_core.protocol.client import BackendClient
from arsim_launch.domains import take_domain

_DOMAIN_LOCKS: list[int] = []  # open lock files: each holds one DDS domain for this process
_DRIVERS: list[subprocess.Popen] = []  # started by driver_process, not stopped yet
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl  # looked up once: a child only calls it
_PR_SET_PDEATHSIG = 1


def allocate_domain() -> int:
    """A ROS_DOMAIN_ID no other process on this machine is using through this harness or a
    league (``arsim_launch.domains``), held until this process exits."""
    domain, fd = take_domain()
    _DOMAIN_LOCKS.append(fd)
    return domain


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@contextmanager
def taken_port() -> Iterator[int]:
    """A loopback port another program is listening on, for as long as the block runs."""
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        yield taken.getsockname()[1]


def installed_resources() -> Path:
    from ament_index_python.packages import get_package_share_directory

    return Path(get_package_share_directory('arsim_launch'))


def ros_env(domain_id: int) -> dict[str, str]:
    """Environment of a child on its own DDS domain, discovering only this machine."""
    env = dict(os.environ)
    env.update(ROS_DOMAIN_ID=str(domain_id), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
               PYTHONUNBUFFERED='1')
    return env


class LoggedProcess:
    """A child process whose output goes to a log file that tests read while it runs."""

    def __init__(self, args: list[str], env: dict[str, str], log_path: Path,
                 **popen: Any) -> None:
        self.log_path = log_path
        self._log = log_path.open('wb')
        self.process = subprocess.Popen(args, env=env, stdout=self._log,
                                        stderr=subprocess.STDOUT, **popen)

    @property
    def log(self) -> str:
        return self.log_path.read_text(errors='replace')

    def wait_for_log(self, text: str, timeout_s: float) -> bool:
        """Whether ``text`` appears in the log before the timeout or the process's end."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if text in self.log:
                return True
            if self.process.poll() is not None:
                return text in self.log
            time.sleep(0.1)
        return False

    def stop(self, sig: int = signal.SIGINT, timeout_s: float = 10.0,
             kill: Callable[[], None] | None = None) -> int:
        """Stop as ``stop_process`` does, then close the log."""
        code = stop_process(self.process, sig, timeout_s, kill)
        self._log.close()
        return code


#: The real_time_factor of a test's simulation unless the test sets one: unpaced, a simulation
#: takes whole cores while a test waits for processes, pages or DDS discovery, cores the
#: other tests of a parallel suite need.
TEST_PACE = 2.0
#: The real_time_factor of a test that needs many sim seconds (a lap, a race), and sim.yaml's:
#: as fast as possible.
UNPACED = 0.0


class Simulation:
    """``python3 -m arsim_launch`` with a settings file derived from the default one."""

    def __init__(self, workdir: Path, settings: dict[str, Any] | None = None,
                 arguments: tuple[str, ...] = (), pace: float | None = TEST_PACE) -> None:
        """``pace``: the real_time_factor unless ``settings`` set one (None: sim.yaml's, as a
        benchmark measures it)."""
        workdir.mkdir(parents=True, exist_ok=True)
        self.workdir = workdir
        self.domain_id = allocate_domain()
        resources = installed_resources()
        data = yaml.safe_load((resources / 'config' / 'sim.yaml').read_text())
        # Tests watch the simulation run without a driver unless they hold it for one.
        data['simulation']['start_on_first_command'] = False
        if pace is not None:
            data['simulation']['real_time_factor'] = pace
        for key, value in (settings or {}).items():
            if isinstance(value, dict) and isinstance(data.get(key), dict):
                data[key].update(value)
            else:
                data[key] = value
        for car in data['cars']:
            profile = car['profile']
            if not profile.endswith('.yaml') and '/' not in profile:
                car['profile'] = str(resources / 'config' / 'cars' / f'{profile}.yaml')
        self.settings_file = workdir / 'sim.yaml'
        self.settings_file.write_text(yaml.safe_dump(data))
        self.arguments = arguments
        self.env = ros_env(self.domain_id)
        self.log_path = workdir / 'sim.log'
        self.launch: LoggedProcess | None = None

    def start(self) -> None:
        self.launch = LoggedProcess(
            [sys.executable, '-m', 'arsim_launch', f'config:={self.settings_file}',
             *self.arguments], self.env, self.log_path, start_new_session=True)

    @property
    def process(self) -> subprocess.Popen:
        return self.launch.process

    @property
    def log(self) -> str:
        return self.launch.log

    def wait_for_log(self, text: str, timeout_s: float) -> bool:
        return self.launch.wait_for_log(text, timeout_s)

    def session_processes(self) -> list[int]:
        """PIDs still alive in the simulation's session (the runner and all it started)."""
        sid = self.process.pid
        pids = []
        for entry in Path('/proc').iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / 'stat').read_text().rsplit(')', 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] != 'Z':
                pids.append(int(entry.name))
        return pids

    def dds_segments(self) -> list[Path]:
        """The Fast DDS shared-memory segments the simulation's processes own now."""
        return dds_segments_of(self.session_processes())

    def stop(self, timeout_s: float = 40.0) -> int:
        """Ctrl-C to the runner; the whole session is killed if it does not end in time."""
        if self.launch is None:
            return 0
        return self.launch.stop(signal.SIGINT, timeout_s,
                                kill=lambda: os.killpg(self.process.pid, signal.SIGKILL))


def dds_segments_of(pids: list[int]) -> list[Path]:
    """The Fast DDS shared-memory segments in /dev/shm that these processes own: a
    participant holds an flock on its segment's ``_el`` file for as long as it lives (Fast DDS's
    own ``fastdds shm clean`` tells a live segment from a dead one by the same lock). The
    ports (``fastdds_port<N>``) are shared by number and stay by design."""
    wanted = {str(pid) for pid in pids}
    locked: set[int] = set()
    for line in Path('/proc/locks').read_text().splitlines():
        fields = line.split()
        if '->' in fields or len(fields) < 6:  # '->': a process waiting for the lock
            continue
        if fields[4] in wanted:
            locked.add(int(fields[5].rsplit(':', 1)[1]))
    segments = []
    for lock in Path('/dev/shm').glob('fastdds_*_el'):
        if lock.name.startswith('fastdds_port'):
            continue
        try:
            if lock.stat().st_ino in locked:
                segments.append(lock.with_name(lock.name[:-len('_el')]))
        except OSError:
            continue
    return segments


def remove_dds_segments(segments: list[Path]) -> None:
    """Remove the segments of killed participants (32 MB each for arsim's sensor profile),
    as ``fastdds shm clean`` would: a suite of kills would otherwise fill /dev/shm."""
    for segment in segments:
        segment.unlink(missing_ok=True)
        segment.with_name(segment.name + '_el').unlink(missing_ok=True)


class Probe:
    """An rclpy node in this process, on the simulation's DDS domain."""

    def __init__(self, domain_id: int, name: str = 'probe') -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.node import Node

        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = Node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def spin_until(self, done: Callable[[], bool], timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while not done():
            if time.monotonic() > deadline:
                return False
            self.executor.spin_once(timeout_sec=0.05)
        return True

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()


def driver_process(script: Path, domain_id: int, *args: str) -> subprocess.Popen:
    """A driver on ``domain_id``, stopped after its test (``stop_drivers``) and with this
    process, however either ends: a driver left running would steer the next simulation that
    is given its domain, in a later test run."""
    process = subprocess.Popen([sys.executable, str(script), *args], env=ros_env(domain_id),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               preexec_fn=die_with_parent)
    _DRIVERS.append(process)
    return process


def stop_drivers() -> None:
    """Stop every driver ``driver_process`` started that still runs."""
    while _DRIVERS:
        stop_process(_DRIVERS.pop())


def die_with_parent() -> None:
    """In a child before it runs: have the kernel send it SIGTERM when this process ends."""
    _PRCTL(_PR_SET_PDEATHSIG, signal.SIGTERM)


def stop_process(process: subprocess.Popen, sig: int = signal.SIGTERM, timeout_s: float = 10.0,
                 kill: Callable[[], None] | None = None) -> int:
    """``sig``, then ``kill`` (SIGKILL by default) if the process outlives ``timeout_s``."""
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            (kill or process.kill)()
            process.wait()
    return process.returncode


@contextmanager
def backend_process(**env: str) -> Iterator[BackendClient]:
    """The embedded backend as its own process (``env`` added to its environment), on a real
    socket; it must exit cleanly when terminated at the end."""
    address = f'tcp://127.0.0.1:{free_port()}'
    process = subprocess.Popen([sys.executable, '-m', 'arsim_core.backend.server',
                                '--address', address], env={**os.environ, **env})
    client = BackendClient(address, timeout_s=30.0)
    try:
        yield client
    finally:
        client.close()
        process.terminate()
    assert process.wait(10) == 0
