"""Start a node list as child processes without ros2 launch, and stop them all together.

Used where the launch packages are not installed (the ROS 2 runtime from PyPI has none). Each
child dies with the runner (PR_SET_PDEATHSIG), so no orphan is left even if the runner is killed.

SIGINT (Ctrl-C) or SIGTERM to the runner stops every child with SIGINT, then SIGTERM, then
SIGKILL, ``STOP_GRACE_S`` apart. The runner's exit code is then 0 if every child exited with 0
on the first signal, else 1, and each one that did not is named.

A required child that ends by itself stops all the others the same way, with one message that
names it and repeats its last lines (``arsim_launch.failures``); the exit code is then 1. The
children's output passes through the runner for that (``arsim_launch.output``).
"""

from __future__ import annotations

import ctypes
import functools
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import yaml

from arsim_core.process import heartbeat
from arsim_core.process.entrypoints import STOP_SIGNALS
from arsim_launch.failures import describe, failure_message, how_it_ended, silence_message
from arsim_launch.node_spec import NodeSpec
from arsim_launch.output import OutputPump

PR_SET_PDEATHSIG = 1
STOP_GRACE_S = 10.0  # a clean stop takes a second or two, more on a loaded machine
OWN_PACKAGES = ('arsim_core', 'arsim_bridge')  # console scripts of arsim_core.process.entrypoints


def command(spec: NodeSpec, params_dir: Path) -> list[str]:
    """The command line of one process, ROS arguments included."""
    from ament_index_python.packages import get_package_prefix

    if spec.command:
        return list(spec.command)
    executable = Path(get_package_prefix(spec.package), 'lib', spec.package, spec.executable)
    args = [str(executable), *spec.arguments]
    if not spec.ros:
        return args
    params_file = params_dir / f'{spec.name}.yaml'
    fq_name = f'/{spec.namespace}/{spec.name}' if spec.namespace else f'/{spec.name}'
    params_file.write_text(yaml.safe_dump({fq_name: {'ros__parameters': spec.parameters}}))
    args += ['--ros-args', '-r', f'__node:={spec.name}', '--params-file', str(params_file)]
    if spec.namespace:
        args += ['-r', f'__ns:=/{spec.namespace}']
    for source, target in spec.remappings:
        args += ['-r', f'{source}:={target}']
    return args


def child_setup(ours: bool) -> None:
    """Own process group, so a terminal's Ctrl-C reaches only the runner, which then stops the
    children once and in order; and death with the runner, so nothing is orphaned. ``ours``
    (arsim's console scripts) start with SIGINT and SIGTERM blocked: a stop that comes while
    the interpreter starts waits until ``arsim_core.process.entrypoints`` can end it quietly."""
    os.setpgid(0, 0)
    # A runner started in the background (`&` in a script) ignores SIGINT, and ignored signals
    # survive exec: the children must still stop on the SIGINT the runner sends them.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if ours:
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        libc = ctypes.CDLL('libc.so.6', use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass  # not Linux: the runner's own signal handling still stops the children


class ProcessGroup:
    """The running children; ``wait`` returns the exit code the whole simulation should have."""

    def __init__(self, specs: list[NodeSpec], heartbeat_timeout_s: float = math.inf,
                 env: Mapping[str, str] | None = None) -> None:
        """``env``: variables the children get on top of the runner's own."""
        self.specs = specs
        self.env = dict(env or {})
        self._tmp = tempfile.TemporaryDirectory(prefix='arsim-')
        self.children: list[tuple[NodeSpec, subprocess.Popen]] = []
        self.output = OutputPump(sys.stdout.fileno(), sys.stderr.fileno())
        self.heartbeat_timeout_s = heartbeat_timeout_s
        self._heartbeats = Path(self._tmp.name, 'heartbeats')
        self._heartbeats.mkdir()

    def start(self) -> None:
        env = child_environment(self.env)
        for spec in self.specs:
            own_env = {**env, heartbeat.ENV: str(self._heartbeats / spec.name)}
            process = subprocess.Popen(command(spec, Path(self._tmp.name)), env=own_env,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       preexec_fn=functools.partial(
                                           child_setup, spec.package in OWN_PACKAGES))
            self.children.append((spec, process))
            assert process.stdout is not None and process.stderr is not None  # both PIPE
            self.output.add(spec.name, process.stdout, process.stderr)
        self.output.start()  # only now: no other thread runs while children are forked

    def wait(self, stop: threading.Event) -> int:
        """Block until ``stop`` is set (return 0) or a required process ends or stops
        answering (say which and how, and return 1). One that is not required (a description
        publisher, RViz) is only reported."""
        reported: set[str] = set()
        next_check = 0.0
        while not stop.is_set():
            if time.monotonic() >= next_check:
                next_check = time.monotonic() + heartbeat.PERIOD_S
                silent = self._silent()
                if silent is not None:
                    spec, seconds = silent
                    print(silence_message(spec, seconds, self.output.lines(spec.name)),
                          file=sys.stderr, flush=True)
                    return 1
            for spec, process in self.children:
                code = process.poll()
                if code is None or spec.name in reported:
                    continue
                if spec.required:
                    print(failure_message(spec, code, self.output.lines(spec.name)),
                          file=sys.stderr, flush=True)
                    return 1
                reported.add(spec.name)
                print(f'[arsim] {describe(spec)} {how_it_ended(code)}; the simulation goes on '
                      f'without it', file=sys.stderr, flush=True)
            time.sleep(0.05)
        return 0

    def _silent(self) -> tuple[NodeSpec, float] | None:
        """A running required child whose heartbeat is older than the timeout, and its age."""
        return heartbeat.first_silent(
            ((spec, self._heartbeats / spec.name) for spec, process in self.children
             if spec.required and process.poll() is None), self.heartbeat_timeout_s)

    def stop(self) -> bool:
        """SIGINT, then SIGTERM, then SIGKILL, each after a grace period. True if every child
        that was still running exited with 0 on SIGINT; the others are named."""
        clean = True
        running = [(spec, p) for spec, p in self.children if p.poll() is None]
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
            alive = [p for _, p in running if p.poll() is None]
            if not alive:
                break
            if sig != signal.SIGINT:
                clean = False
                names = [spec.name for spec, p in running if p.poll() is None]
                print(f'[arsim] {names} still running after {STOP_GRACE_S} s: sending '
                      f'{sig.name}', file=sys.stderr)
            for process in alive:
                process.send_signal(sig)
                process.send_signal(signal.SIGCONT)  # a stopped child must act on it too
            deadline = time.monotonic() + STOP_GRACE_S
            while time.monotonic() < deadline and any(p.poll() is None for p in alive):
                time.sleep(0.05)
        for spec, process in running:
            if process.poll() not in (0, None):
                clean = False
                print(f'[arsim] {spec.name} exited with code {process.returncode} while '
                      f'stopping', file=sys.stderr)
        self.output.drain()
        self._tmp.cleanup()
        return clean


def child_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The runner's environment with ``extra``, the children's Python output unbuffered (it
    reaches the terminal through a pipe now) and ROS log colours kept when the runner writes to
    a terminal."""
    env = dict(os.environ, **(extra or {}), PYTHONUNBUFFERED='1')
    if sys.stderr.isatty():
        env.setdefault('RCUTILS_COLORIZED_OUTPUT', '1')
    return env


def run(specs: list[NodeSpec], stop: threading.Event,
        heartbeat_timeout_s: float = math.inf, env: Mapping[str, str] | None = None) -> int:
    """Start ``specs``, wait until one that matters ends or stops answering (no heartbeat for
    ``heartbeat_timeout_s``) or ``stop`` is set (``entrypoints.stop_on_signals``), stop them
    all."""
    group = ProcessGroup(specs, heartbeat_timeout_s, env)
    code = 0
    try:
        if not stop.is_set():  # its KeyboardInterrupt may have been lost (see stop_on_signals)
            group.start()
            code = group.wait(stop)
    except KeyboardInterrupt:
        code = 0
    finally:
        # Stopping already escalates on its own; a second Ctrl-C must not cut it short.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)
        if not group.stop():
            code = code or 1
    return code


if os.name != 'posix':  # pragma: no cover
    msg = 'the arsim process runner needs a POSIX system'
    raise ImportError(msg)
