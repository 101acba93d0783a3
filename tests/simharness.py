"""Run real simulations from tests and benchmarks: the runner as a child process, a private DDS
domain and private ports, and a probe node living in this process."""

from __future__ import annotations

import fcntl
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

_DOMAIN_LOCKS: list[int] = []  # open lock files: each holds one DDS domain for this process


def allocate_domain() -> int:
    """A ROS_DOMAIN_ID no other process on this machine is using through this harness.

    Simulations that shared a domain would hear each other's commands; a lock file per domain,
    held until this process exits, keeps concurrent test runs apart.
    """
    folder = Path(tempfile.gettempdir()) / 'arsim-domains'
    folder.mkdir(exist_ok=True)
    candidates = list(range(1, 200))
    random.Random(os.getpid() ^ time.monotonic_ns()).shuffle(candidates)
    for domain in candidates:
        fd = os.open(folder / f'{domain}.lock', os.O_CREAT | os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        _DOMAIN_LOCKS.append(fd)
        return domain
    msg = 'no free ROS domain id between 1 and 199'
    raise RuntimeError(msg)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def installed_resources() -> Path:
    from ament_index_python.packages import get_package_share_directory

    return Path(get_package_share_directory('arsim_launch'))


def ros_env(domain_id: int) -> dict[str, str]:
    """Environment of a child on its own DDS domain, discovering only this machine."""
    env = dict(os.environ)
    env.update(ROS_DOMAIN_ID=str(domain_id), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
               PYTHONUNBUFFERED='1')
    return env


class Simulation:
    """``python3 -m arsim_launch.sim`` with a settings file derived from the default one."""

    def __init__(self, workdir: Path, settings: dict[str, Any] | None = None,
                 arguments: tuple[str, ...] = ()) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.workdir = workdir
        self.domain_id = allocate_domain()
        resources = installed_resources()
        data = yaml.safe_load((resources / 'config' / 'sim.yaml').read_text())
        data['backend'].update(address=f'tcp://127.0.0.1:{free_port()}',
                               frames_address=f'tcp://127.0.0.1:{free_port()}')
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
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self._log = self.log_path.open('wb')
        self.process = subprocess.Popen(
            [sys.executable, '-m', 'arsim_launch.sim', f'config:={self.settings_file}',
             *self.arguments], env=self.env, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True)

    @property
    def log(self) -> str:
        return self.log_path.read_text(errors='replace')

    def wait_for_log(self, text: str, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if text in self.log:
                return True
            if self.process.poll() is not None:
                return text in self.log
            time.sleep(0.1)
        return False

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

    def stop(self, timeout_s: float = 20.0) -> int:
        if self.process is None:
            return 0
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self._log.close()
        return self.process.returncode


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
    return subprocess.Popen([sys.executable, str(script), *args], env=ros_env(domain_id),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def stop_process(process: subprocess.Popen, timeout_s: float = 10.0) -> None:
    """SIGTERM, then SIGKILL if the process has not ended within ``timeout_s``."""
    process.terminate()
    try:
        process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
