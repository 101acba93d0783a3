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
from collections.abc import Collection

from aiohttp import ClientSession, ClientWebSocketResponse, WSCloseCode, WSMsgType, hdrs, web

from arsim_core.view.served import CLOSE_S, Log, ServedApp

# The subprotocol names a client may offer, the one the SDK speaks first: it is chosen when a
# client offers both.
SDK_SUBPROTOCOL = 'foxglove.sdk.v1'
SUBPROTOCOLS = (SDK_SUBPROTOCOL, 'foxglove.websocket.v1')
MAX_CLIENTS = 16  # relayed at once; one more is answered 503
# A client sends small JSON requests (subscribe, unsubscribe); a bigger message closes it.
MAX_CLIENT_MESSAGE_BYTES = 64 * 1024
HEARTBEAT_S = 10.0  # a client that answers no ping in half of it is let go
# A close code that may be passed on: the codes for "none given", "dropped" and "TLS failed"
# (1005, 1006, 1015) are never sent in a close frame.
_SENDABLE = frozenset(range(1000, 1012)) - {1004, 1005, 1006} | frozenset(range(3000, 5000))

Socket = web.WebSocketResponse | ClientWebSocketResponse[bool]


class FoxgloveRelay(ServedApp):
    """Serves ``host``:``port`` for the SDK's server on loopback ``upstream_port`` until
    :meth:`stop`."""

    what = 'Foxglove'
    scheme = 'ws'

    def __init__(self, host: str, port: int, upstream_port: int, log: Log) -> None:
        super().__init__(host, port, log, 'foxglove_relay')
        self._upstream = f'ws://127.0.0.1:{upstream_port}/'
        self._session: ClientSession | None = None

    def routes(self) -> Collection[web.RouteDef]:
        return [web.get('/{path:.*}', self._answer)]

    async def _opening(self) -> None:
        self._session = ClientSession()

    async def _closing(self) -> None:
        assert self._session is not None
        await self._session.close()

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
        return await self._one_of(MAX_CLIENTS, 'a client',
                                  lambda: self._relay(request, subprotocol))

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
            self.sockets.add(client)
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
            self.sockets.discard(client)
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

