"""The Foxglove view's public address: a WebSocket relay in front of the Foxglove SDK's server.

The SDK's server accepts only the subprotocol ``foxglove.sdk.v1``; Lichtblick and older Foxglove
Studio offer only ``foxglove.websocket.v1``, the name of the same protocol in its published
spec. So the SDK serves on an ephemeral loopback port, and this relay (aiohttp, in a daemon
thread like the web view) takes the view's own address, accepts either name, and for each client
opens one WebSocket to the SDK and passes every frame both ways as it is. It speaks no Foxglove
itself.

Clients are outside input: each request must name this server in ``Host``
(:class:`~arsim_core.view.access.Access`), at most MAX_CLIENTS are relayed at once, and a client
message is at most MAX_CLIENT_MESSAGE_BYTES. The relay holds no queue of its own: it awaits each
send, so a client that reads slowly stops the relay reading from the SDK, whose per-client
backlog then drops the oldest messages, as it did for the client directly.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable
from concurrent.futures import Future

from aiohttp import ClientSession, ClientWebSocketResponse, WSCloseCode, WSMsgType, hdrs, web
from aiohttp.typedefs import Handler

from arsim_core.errors import ArsimError
from arsim_core.log_limit import LogLimit
from arsim_core.view.access import Access

# The subprotocol names a client may offer, the one the SDK speaks first: it is chosen when a
# client offers both.
SDK_SUBPROTOCOL = 'foxglove.sdk.v1'
SUBPROTOCOLS = (SDK_SUBPROTOCOL, 'foxglove.websocket.v1')
MAX_CLIENTS = 16  # relayed at once; one more is answered 503
# A client sends small JSON requests (subscribe, unsubscribe); a bigger message closes it.
MAX_CLIENT_MESSAGE_BYTES = 64 * 1024
HEARTBEAT_S = 10.0  # a client that answers no ping in half of it is let go
# Stopping waits at most CLOSE_S for clients to answer the close (all at once), SHUTDOWN_S for
# the server and as long again for the thread: well within the launcher's grace (5 s).
CLOSE_S = 0.5
SHUTDOWN_S = 1.0
# A close code that may be passed on: the codes for "none given", "dropped" and "TLS failed"
# (1005, 1006, 1015) are never sent in a close frame.
_SENDABLE = frozenset(range(1000, 1012)) - {1004, 1005, 1006} | frozenset(range(3000, 5000))

Log = Callable[[str, str], None]  # (level: info | warn | error, text)
Socket = web.WebSocketResponse | ClientWebSocketResponse[bool]


class FoxgloveRelay:
    """Serves ``host``:``port`` for the SDK's server on loopback ``upstream_port`` until
    :meth:`stop`."""

    def __init__(self, host: str, port: int, upstream_port: int, log: Log) -> None:
        self.host, self.port, self.log = host, port, log
        self._upstream = f'ws://127.0.0.1:{upstream_port}/'
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name='foxglove_relay',
                                        daemon=True)
        self._runner: web.AppRunner | None = None
        self._session: ClientSession | None = None
        self._access: Access | None = None
        self._clients: set[web.WebSocketResponse] = set()
        self._relaying = 0  # clients being connected or connected
        self._log_limit = LogLimit()

    @property
    def url(self) -> str:
        host = f'[{self.host}]' if ':' in self.host else self.host  # an IPv6 address
        return f'ws://{host}:{self.port}'

    def start(self) -> str:
        """Bind and serve; returns the URL to connect to. A port in use raises ArsimError."""
        listener = socket.socket(socket.AF_INET6 if ':' in self.host else socket.AF_INET)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind((self.host, self.port))
            listener.listen(16)
        except OSError as exc:
            listener.close()
            msg = f'view: cannot serve Foxglove on {self.host}:{self.port} ({exc})'
            raise ArsimError(msg) from exc
        self.port = listener.getsockname()[1]  # the one bound, when asked for any (0)
        self._access = Access(self.host, self.port)
        self._thread.start()
        future: Future[None] = asyncio.run_coroutine_threadsafe(self._serve(listener),
                                                                self._loop)
        future.result(timeout=10.0)
        return self.url

    def stop(self) -> None:
        """Tell the clients the simulation has gone, and stop serving."""
        if self._runner is not None and self._loop.is_running():
            try:
                asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(
                    CLOSE_S + SHUTDOWN_S + 0.5)
            except Exception as exc:  # noqa: BLE001 - stopping goes on whatever clients do
                self.log('warn', f'view: stopped without closing every client ({exc!r})')
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=SHUTDOWN_S)

    async def _close(self) -> None:
        await asyncio.gather(*(client.close(code=WSCloseCode.GOING_AWAY,
                                            message=b'simulation stopped')
                               for client in list(self._clients)), return_exceptions=True)
        assert self._runner is not None and self._session is not None
        await self._runner.cleanup()
        await self._session.close()

    async def _serve(self, listener: socket.socket) -> None:
        self._session = ClientSession()
        app = web.Application(middlewares=[self._checked_host])
        app.add_routes([web.get('/{path:.*}', self._answer)])
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False,
                                     shutdown_timeout=SHUTDOWN_S)
        await self._runner.setup()
        await web.SockSite(self._runner, listener).start()

    @web.middleware
    async def _checked_host(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Every request must name this server in ``Host``; any ``Origin`` is let in, since
        Foxglove's and Lichtblick's web apps connect from pages of their own (docs/security.md)."""
        assert self._access is not None
        problem = self._access.host_problem(request.headers.get('Host'), _local(request))
        if problem is not None:
            raise self._refused(web.HTTPForbidden, problem)
        return await handler(request)

    def _refused(self, kind: type[web.HTTPException], problem: str) -> web.HTTPException:
        """The answer to a request refused for ``problem``, which is logged (within limits)."""
        line = self._log_limit.admit(f'view: refused {problem}')
        if line is not None:
            self.log('warn', line)
        return kind(text=f'{problem}; see docs/view.md\n')

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get(hdrs.UPGRADE, '').lower() != 'websocket':
            return web.Response(text=f'arsim Foxglove view: open {self.url} in Foxglove or '
                                     f'Lichtblick as a Foxglove WebSocket connection; '
                                     f'see docs/view.md\n')
        offered = {name.strip() for name in
                   request.headers.get(hdrs.SEC_WEBSOCKET_PROTOCOL, '').split(',')}
        subprotocol = next((name for name in SUBPROTOCOLS if name in offered), None)
        if subprotocol is None:
            raise self._refused(web.HTTPBadRequest,
                                f'a WebSocket offering none of the subprotocols '
                                f'{", ".join(SUBPROTOCOLS)}')
        if self._relaying >= MAX_CLIENTS:
            raise self._refused(web.HTTPServiceUnavailable,
                                f'a client: {MAX_CLIENTS} are connected already, the most the '
                                f'view serves at once; close one')
        self._relaying += 1
        try:
            return await self._relay(request, subprotocol)
        finally:
            self._relaying -= 1

    async def _relay(self, request: web.Request, subprotocol: str) -> web.StreamResponse:
        """One client, and one connection to the SDK for it, until either closes."""
        assert self._session is not None
        try:
            # Messages from the SDK are the simulation's own, as big as a map or an image.
            upstream = await self._session.ws_connect(self._upstream, protocols=[SDK_SUBPROTOCOL],
                                                      max_msg_size=0)
        except Exception as exc:  # noqa: BLE001 - the client gets the reason, the node goes on
            self.log('error', f'view: cannot reach the Foxglove server ({exc!r})')
            raise web.HTTPBadGateway(text='the Foxglove server is not answering\n') from exc
        # compress=False: the SDK sends no compressed frames, and deflating every camera image
        # here would cost more than the relay itself.
        client = web.WebSocketResponse(protocols=[subprotocol], compress=False,
                                       max_msg_size=MAX_CLIENT_MESSAGE_BYTES,
                                       heartbeat=HEARTBEAT_S, timeout=CLOSE_S)
        try:
            await client.prepare(request)
            self._clients.add(client)
            pumps = [asyncio.create_task(_pump(upstream, client)),
                     asyncio.create_task(_pump(client, upstream))]
            done, pending = await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            ended = upstream if pumps[0] in done else client
            code = ended.close_code if ended.close_code in _SENDABLE else WSCloseCode.GOING_AWAY
            await asyncio.gather(upstream.close(code=code), client.close(code=code),
                                 return_exceptions=True)
        finally:
            self._clients.discard(client)
            await upstream.close()
        return client


async def _pump(source: Socket, sink: Socket) -> None:
    """Every data frame of ``source`` to ``sink`` as it is, each send awaited (so a slow sink
    stops the reading), until ``source`` closes or either fails."""
    try:
        async for message in source:
            if message.type == WSMsgType.TEXT:
                await sink.send_str(message.data)
            elif message.type == WSMsgType.BINARY:
                await sink.send_bytes(message.data)
            elif message.type == WSMsgType.ERROR:  # too big, or not WebSocket
                return
    except (ConnectionError, RuntimeError):
        pass  # the other side went away while a frame was on its way


def _local(request: web.Request) -> str:
    """The address the request arrived at."""
    transport = request.transport
    where = transport.get_extra_info('sockname') if transport is not None else None
    return str(where[0]) if where else ''
