"""What every live view's server shares: an aiohttp application on one listening socket, served
from an event loop in a daemon thread, that answers only requests naming it in ``Host``.

The web view (:mod:`arsim_core.view.web_server`) and the Foxglove view's relay
(``arsim_bridge.foxglove_relay``) both run beside a simulation they must never hold up: binding
fails at once with a clear error, stopping closes the clients within the launcher's grace, and
every refusal is logged through one :class:`LogLimit`, since anyone who can reach the port can
cause them.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Awaitable, Callable, Collection
from concurrent.futures import Future

from aiohttp import WSCloseCode, web
from aiohttp.typedefs import Handler

from arsim_core.errors import ArsimError
from arsim_core.log_limit import LogLimit
from arsim_core.view.access import Access

Log = Callable[[str, str], None]  # (level: info | warn | error, text)
# Stopping waits at most CLOSE_S for the clients to answer the close (all at once: one whose
# network went away never does), SHUTDOWN_S for requests in progress, and as long again for the
# thread: well within the grace the launcher gives a node to stop (STOP_GRACE_S, 10 s).
CLOSE_S = 0.5
SHUTDOWN_S = 1.0


class ServedApp:
    """Serves :meth:`routes` on ``host``:``port`` from :meth:`start` until :meth:`stop`.

    ``what`` names the server in errors ('the web page'), ``scheme`` is its URL's; subclasses
    add their routes and may close what they hold in :meth:`_closing`. :attr:`sockets` are the
    WebSockets open now, told that the simulation has gone when it stops."""

    what = 'a view'
    scheme = 'http'

    def __init__(self, host: str, port: int, log: Log, thread_name: str) -> None:
        self.host, self.port, self.log = host, port, log
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=thread_name,
                                        daemon=True)
        self._runner: web.AppRunner | None = None
        self._access: Access | None = None
        self._log_limit = LogLimit()
        self.sockets: set[web.WebSocketResponse] = set()
        self._admitted = 0  # WebSockets being opened or open

    @property
    def url(self) -> str:
        host = f'[{self.host}]' if ':' in self.host else self.host  # an IPv6 address
        return f'{self.scheme}://{host}:{self.port}/'

    def start(self) -> str:
        """Bind and serve; returns the URL. A port in use raises ArsimError."""
        listener = socket.socket(socket.AF_INET6 if ':' in self.host else socket.AF_INET)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind((self.host, self.port))
            listener.listen(16)
        except OSError as exc:
            listener.close()
            msg = f'view: cannot serve {self.what} on {self.host}:{self.port} ({exc})'
            raise ArsimError(msg) from exc
        self.port = listener.getsockname()[1]  # the one bound, when asked for any (0)
        self._access = Access(self.host, self.port)
        self._thread.start()
        future: Future[None] = asyncio.run_coroutine_threadsafe(self._serve(listener),
                                                                self._loop)
        future.result(timeout=10.0)
        return self.url

    def stop(self) -> None:
        """Tell the open sockets the simulation has gone, and stop serving. A stopped server
        holds nothing of its clients, though it may be kept: a simulation that starts and stops
        views would otherwise keep every client any of them had."""
        if self._loop.is_closed():
            return
        if self._runner is not None and self._loop.is_running():
            try:
                asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(
                    CLOSE_S + SHUTDOWN_S + 0.5)
            except Exception as exc:  # noqa: BLE001 - stopping goes on whatever clients do
                self.log('warn', f'view: stopped without closing every client ({exc!r})')
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=SHUTDOWN_S)
        if not self._thread.is_alive():
            self._end_leftovers()

    def _end_leftovers(self) -> None:
        """Cancel what the stopped loop still had to do (a client's handler whose cancelling
        came after the loop's stop, a heartbeat due) and close the loop, which lets go of it."""
        leftovers = asyncio.all_tasks(self._loop)
        for task in leftovers:
            task.cancel()
        if leftovers:
            self._loop.run_until_complete(asyncio.wait(leftovers, timeout=SHUTDOWN_S))
        self._loop.run_until_complete(self._loop.shutdown_asyncgens())
        self._loop.close()

    def routes(self) -> Collection[web.RouteDef]:
        """What the server answers."""
        raise NotImplementedError

    async def _opening(self) -> None:
        """Called in the loop before the server answers its first request."""

    async def _closing(self) -> None:
        """Called in the loop after the server stopped answering."""

    async def _close(self) -> None:
        await asyncio.gather(*(client.close(code=WSCloseCode.GOING_AWAY,
                                            message=b'simulation stopped')
                               for client in list(self.sockets)), return_exceptions=True)
        assert self._runner is not None
        await self._runner.cleanup()
        await self._closing()

    async def _serve(self, listener: socket.socket) -> None:
        await self._opening()
        app = web.Application(middlewares=[self._checked_host])
        app.add_routes(self.routes())
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False,
                                     shutdown_timeout=SHUTDOWN_S)
        await self._runner.setup()
        await web.SockSite(self._runner, listener).start()

    @web.middleware
    async def _checked_host(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Every request must name this server in ``Host`` (:class:`Access`)."""
        assert self._access is not None
        problem = self._access.host_problem(request.headers.get('Host'), local_address(request))
        if problem is not None:
            raise self._refused(web.HTTPForbidden, problem)
        return await handler(request)

    async def _one_of(self, most: int, who: str,
                      serve: Callable[[], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        """``serve()`` one more WebSocket client (``who``: 'a page') while fewer than ``most``
        are being served, else 503."""
        if self._admitted >= most:
            raise self._refused(web.HTTPServiceUnavailable,
                                f'{who}: {most} are connected already, the most the view '
                                f'serves at once; close one')
        self._admitted += 1
        try:
            return await serve()
        finally:
            self._admitted -= 1

    def _refused(self, kind: type[web.HTTPException], problem: str) -> web.HTTPException:
        """The answer to a request refused for ``problem``, which is logged (within limits)."""
        self._warn(f'view: refused {problem}')
        return kind(text=f'{problem}; see docs/view.md\n')

    def _warn(self, text: str) -> None:
        line = self._log_limit.admit(text)
        if line is not None:
            self.log('warn', line)


def local_address(request: web.Request) -> str:
    """The address the request arrived at."""
    transport = request.transport
    where = transport.get_extra_info('sockname') if transport is not None else None
    return str(where[0]) if where else ''
