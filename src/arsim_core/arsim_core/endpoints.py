"""ZeroMQ endpoints named in settings and on command lines: their syntax, and loopback only.

The backend's request socket and the bridge's sensor fan-out speak an unauthenticated protocol,
so whatever arsim binds stays on this machine (a loopback TCP address or an ``ipc://`` socket)
unless the settings say ``backend.allow_remote: true``. Endpoints are checked when the settings
are read, so a typo stops start-up with a message naming the key, instead of a ZMQError from
deep inside a node (or, worse, a silent success: ZeroMQ binds ``tcp://127.0.0.1:99999`` to a
random port).
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path

import zmq

from arsim_core.errors import ArsimError

LOOPBACK_NAMES = frozenset({'localhost'})
_HOST_NAME = re.compile(r'[A-Za-z0-9_][A-Za-z0-9_.-]*')
_IPC_PATH_MAX = 107  # bytes of a Unix socket path (sun_path less its terminating NUL)
EXPECTED = 'tcp://<host>:<port 1-65535> or ipc://<path>'
EXPECTED_LOOPBACK = 'tcp://127.0.0.1:<port 1-65535> (any 127.x.y.z, or localhost) or ipc://<path>'


def problem(address: object, *, binds: bool, allow_remote: bool) -> str | None:
    """What is wrong with ``address`` as an endpoint arsim binds (``binds``) or connects to,
    as the rest of a sentence ('expected ..., got ...'); None if it is fine.

    An endpoint arsim binds must be on loopback unless ``allow_remote``; one it connects to
    may name any host, since connecting exposes nothing of this machine.
    """
    if not isinstance(address, str):
        return f'expected a string such as tcp://127.0.0.1:5555, got {address!r}'
    transport, sep, rest = address.partition('://')
    if not sep or transport not in ('tcp', 'ipc'):
        return f'expected {EXPECTED}, got {address!r}'
    if transport == 'ipc':
        return _ipc_problem(address, rest, binds)
    host, colon, port = rest.rpartition(':')
    if not colon or not host:
        return f'expected {EXPECTED}, got {address!r} (no port)'
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        return f'expected a port between 1 and 65535 in {address!r}, got {port!r}'
    if host.startswith('['):
        return f'IPv6 endpoints are not supported; expected {EXPECTED_LOOPBACK}, got {address!r}'
    if host != '*' and not _HOST_NAME.fullmatch(host):
        return f'expected {EXPECTED}, got {address!r} (host {host!r})'
    if binds and not allow_remote and not is_loopback(host):
        return (f'expected {EXPECTED_LOOPBACK}, got {address!r}: arsim binds only loopback '
                f'addresses unless remote access is allowed (backend.allow_remote: true in '
                f'the settings; --allow-remote for a backend started by hand)')
    return None


def is_loopback(host: str) -> bool:
    """Whether a TCP host of an endpoint is this machine's loopback interface."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.IPv4Address(host).is_loopback
    except ValueError:
        return False


def _ipc_problem(address: str, path: str, binds: bool) -> str | None:
    if not path:
        return f'expected {EXPECTED}, got {address!r} (no path)'
    if len(path.encode()) > _IPC_PATH_MAX:
        return f'an ipc:// path has at most {_IPC_PATH_MAX} bytes, got {address!r}'
    if binds and not path.startswith('@'):  # '@': Linux's abstract namespace, no file
        folder = Path(path).parent
        if not folder.is_dir():
            return f'the folder {str(folder)!r} of {address!r} does not exist'
    return None


def bind(socket: zmq.Socket[bytes], address: str, what: str, *, allow_remote: bool = False) -> None:
    """Bind ``socket`` to ``address`` after checking it; any failure is an ArsimError that
    names ``what`` the address is (a settings key or an option), never a bare ZMQError."""
    trouble = problem(address, binds=True, allow_remote=allow_remote)
    if trouble is not None:
        msg = f'{what}: {trouble}'
        raise ArsimError(msg)
    try:
        socket.bind(address)
    except zmq.ZMQError as exc:
        hint = ' (is another simulation running?)' if exc.errno == zmq.EADDRINUSE else ''
        msg = f'{what}: cannot bind {address}: {exc.strerror}{hint}'
        raise ArsimError(msg) from exc
