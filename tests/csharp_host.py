"""The C# console host (unity/host) for tests: built once per test run from the sources (a
failed build fails the test with the compiler's output) and started with mono on a loopback
port, always stopped afterwards."""

from __future__ import annotations

import functools
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from simharness import LoggedProcess, die_with_parent, free_port

ROOT = Path(__file__).resolve().parents[1]
HOST = ROOT / 'unity' / 'host' / 'bin' / 'arsim-unity-host.exe'
START_TIMEOUT_S = 20.0


@functools.cache
def built_host() -> Path:
    """The host's assembly, rebuilt by ``unity/build.sh`` when its sources changed."""
    build = subprocess.run(['bash', str(ROOT / 'unity' / 'build.sh'), 'host'],
                           capture_output=True, text=True, check=False)
    if build.returncode != 0:
        msg = f'building the C# console host failed:\n{build.stdout}{build.stderr}'
        raise RuntimeError(msg)
    return HOST


@contextmanager
def running_host(workdir: Path, port: int | None = None) -> Iterator[tuple[str, LoggedProcess]]:
    """``mono arsim-unity-host.exe --address tcp://127.0.0.1:<port>``, serving once this
    yields its address; stopped with SIGTERM when the block ends."""
    port = port or free_port()
    address = f'tcp://127.0.0.1:{port}'
    workdir.mkdir(parents=True, exist_ok=True)
    host = LoggedProcess(['mono', str(built_host()), '--address', address], dict(os.environ),
                         workdir / 'host.log', preexec_fn=die_with_parent)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _accepts(port):
            if host.process.poll() is not None or time.monotonic() > deadline:
                msg = f'the C# host did not start serving at {address}:\n{host.log}'
                raise RuntimeError(msg)
            time.sleep(0.05)
        yield address, host
    finally:
        host.stop(signal.SIGTERM, 10.0)


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(('127.0.0.1', port), timeout=0.5):
            return True
    except OSError:
        return False
