"""Start a node list as child processes without ros2 launch, and stop them all together.

Used where the launch packages are not installed (the ROS 2 runtime from PyPI has none). Each
child dies with the runner (PR_SET_PDEATHSIG), so no orphan is left even if the runner is killed.

SIGINT (Ctrl-C) or SIGTERM to the runner stops every child with SIGINT, then SIGTERM, then
SIGKILL, ``STOP_GRACE_S`` apart. The runner's exit code is then 0 if every child exited with 0
on the first signal, else 1, and each one that did not is named.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from arsim_launch.nodes import NodeSpec

PR_SET_PDEATHSIG = 1
STOP_GRACE_S = 5.0


def command(spec: NodeSpec, params_dir: Path) -> list[str]:
    """The command line of one process, ROS arguments included."""
    from ament_index_python.packages import get_package_prefix

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


def _child_setup() -> None:
    """Own process group, so a terminal's Ctrl-C reaches only the runner, which then stops the
    children once and in order; and death with the runner, so nothing is orphaned."""
    os.setpgid(0, 0)
    # A runner started in the background (`&` in a script) ignores SIGINT, and ignored signals
    # survive exec: the children must still stop on the SIGINT the runner sends them.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        libc = ctypes.CDLL('libc.so.6', use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass  # not Linux: the runner's own signal handling still stops the children


class ProcessGroup:
    """The running children; ``wait`` returns the exit code the whole simulation should have."""

    def __init__(self, specs: list[NodeSpec]) -> None:
        self.specs = specs
        self._tmp = tempfile.TemporaryDirectory(prefix='arsim-')
        self.children: list[tuple[NodeSpec, subprocess.Popen]] = []

    def start(self) -> None:
        for spec in self.specs:
            process = subprocess.Popen(command(spec, Path(self._tmp.name)),
                                       preexec_fn=_child_setup)
            self.children.append((spec, process))

    def wait(self, grace_s: float) -> int:
        """Block until a process ends; a non-required one ending gives the required ones
        ``grace_s`` to notice and report before everything is stopped."""
        deadline = None
        while True:
            for spec, process in self.children:
                code = process.poll()
                if code is None:
                    continue
                if spec.required and spec.ros:
                    return code
                if deadline is None:
                    print(f'[arsim] {spec.name} exited with code {code}', file=sys.stderr)
                    deadline = time.monotonic() + grace_s
            if deadline is not None and time.monotonic() > deadline:
                return 1
            time.sleep(0.05)

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
            deadline = time.monotonic() + STOP_GRACE_S
            while time.monotonic() < deadline and any(p.poll() is None for p in alive):
                time.sleep(0.05)
        for spec, process in running:
            if process.poll() not in (0, None):
                clean = False
                print(f'[arsim] {spec.name} exited with code {process.returncode} while '
                      f'stopping', file=sys.stderr)
        self._tmp.cleanup()
        return clean


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def stop_on_signals() -> None:
    """SIGTERM stops the runner as Ctrl-C does (a KeyboardInterrupt), also during start-up."""
    signal.signal(signal.SIGTERM, _interrupt)


def run(specs: list[NodeSpec], grace_s: float) -> int:
    """Start ``specs``, wait until one that matters ends or a signal comes, stop them all."""
    group = ProcessGroup(specs)
    stop_on_signals()
    code = 0
    try:
        group.start()
        code = group.wait(grace_s)
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
