"""Which requests the web view answers: those that name the server in ``Host`` and, for the
WebSocket, come from the page's own origin.

Any page a browser has open may ask for ``http://127.0.0.1:8080/...`` or open a WebSocket to
it. A page of another site sends its own ``Origin`` with the WebSocket, which is refused here. A
page of another site whose name the attacker points at 127.0.0.1 (DNS rebinding) is same-origin
to the browser, but its requests carry the attacker's name in ``Host``: refused too. What is
accepted (docs/view.md):

- ``Host``: the server's port and, as the name, the address the connection arrived at (an IP
  literal is never a rebinding vector), the address the server bound, and on a loopback
  connection ``localhost``, ``127.0.0.1`` and ``[::1]``; a server bound beyond loopback also
  answers to the machine's own host name (``socket.gethostname`` and its fully qualified form);
- ``Origin`` (WebSocket only): ``http://`` and a host that passes the same check, or no Origin
  at all: browsers always send one, so a request without it is a script (curl, ``websockets``),
  which could send any Origin it liked anyway.
"""

from __future__ import annotations

import ipaddress
import re
import socket

LOOPBACK_NAMES = frozenset({'localhost', '127.0.0.1', '::1'})
_HOST = re.compile(r'\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9._-]+)')
_PORT = re.compile(r'[0-9]{1,5}')
HTTP_PORT = 80  # of a Host or Origin that names none


class Access:
    """The names a server bound to ``bound`` (an address, ``localhost``, ``0.0.0.0`` or ``::``)
    on ``port`` answers to."""

    def __init__(self, bound: str, port: int) -> None:
        self.port = port
        self.bound = _normal(bound)
        self.loopback_only = self.bound in LOOPBACK_NAMES or _is_loopback(self.bound)
        self.machine: frozenset[str] = frozenset()
        if not self.loopback_only:  # a name lookup, once
            self.machine = frozenset(name.lower() for name in
                                     (socket.gethostname(), socket.getfqdn()) if name)

    def host_problem(self, host: str | None, local: str) -> str | None:
        """Why a request with ``Host: host`` that arrived at address ``local`` is refused, or
        None."""
        if not host:
            return 'a request without a Host header'
        name, port = _split(host)
        if name is None or port != self.port or name not in self.names(local):
            return f'a request for host {host[:100]!r}, not this server ({self._example(local)})'
        return None

    def origin_problem(self, origin: str | None, local: str) -> str | None:
        """Why a WebSocket from a page of ``origin`` is refused, or None (also for no Origin:
        a browser always sends one)."""
        if origin is None:
            return None
        if not origin.startswith('http://') or self.host_problem(origin[7:], local):
            return (f'a WebSocket from a page of {origin[:100]!r}, not of this server '
                    f'(http://{self._example(local)})')
        return None

    def names(self, local: str) -> set[str]:
        """The host names a request that arrived at address ``local`` may give."""
        local = _normal(local)
        names = {self.bound, local} | set(self.machine)
        if _is_loopback(local):
            names |= LOOPBACK_NAMES
        return names

    def _example(self, local: str) -> str:
        local = _normal(local)
        return f'{f"[{local}]" if ":" in local else local}:{self.port}'


def _split(host: str) -> tuple[str | None, int | None]:
    """``host`` (``name[:port]``, ``[v6][:port]``) as a normal name and a port; (None, None)
    when it is neither."""
    found = _HOST.match(host)
    if found is None:
        return None, None
    rest = host[found.end():]
    if rest and not (rest[0] == ':' and _PORT.fullmatch(rest[1:])):
        return None, None
    port = int(rest[1:]) if rest else HTTP_PORT
    return _normal(found['v6'] or found['name']), port


def _normal(name: str) -> str:
    """An IP address in its one written form (``::ffff:127.0.0.1`` is ``127.0.0.1``), a name
    in lower case."""
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return name.lower()
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return str(address)


def _is_loopback(name: str) -> bool:
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return name == 'localhost'
