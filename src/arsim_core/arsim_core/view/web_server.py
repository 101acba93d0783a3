"""The built-in web view (``view: web``; docs/view.md): a page and a WebSocket served from the
simulator's own process.

The server runs an asyncio loop (aiohttp) in a daemon thread. Each page gets the track once
(``hello``), the pacing whenever it changes, and the newest snapshot of the :class:`ViewFeed`
whenever there is one it has not seen, at most every ``PERIOD_S``; a page that falls behind
skips snapshots. Where there is race control, each page gets the newest ``race`` message (the
event, the timing tower, the incidents) the same way, a few times a second at most. The page's
buttons come back as small JSON commands that set the loop's :class:`Pacing`; anything else is
answered with an error message and otherwise ignored. Camera images are JPEG files a page asks
for one after the other, so each page gets them as fast as it takes them and no faster.

Everything a request brings is hostile until checked: its ``Host`` and the WebSocket's
``Origin`` (:mod:`arsim_core.view.access`), how many pages are open (MAX_PAGES), and each
command's size, nesting and rate (:mod:`arsim_core.view.commands`). What the refusals log goes
through one :class:`LogLimit`, so a page that sends garbage cannot flood /rosout or a bag.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Collection
from importlib import resources
from typing import Any

import cv2
import numpy as np
from aiohttp import WSMsgType, web

from arsim_core.engine.pacing import MAX_STEPS, PacingStatus
from arsim_core.engine.world import TrackWorld
from arsim_core.log_limit import clip
from arsim_core.view import commands
from arsim_core.view.commands import MAX_COMMAND_BYTES, CommandRate
from arsim_core.view.feed import PERIOD_S, RaceSnapshot, Snapshot, ViewFeed
from arsim_core.view.served import CLOSE_S, Log, ServedApp, local_address
from arsim_core.view.track_image import TrackImage, track_image

STATIC = resources.files('arsim_core.view') / 'static'
JPEG_QUALITY = 80
MAX_PAGES = 16  # WebSockets open at once; one more is answered 503
MAX_REPLY_CHARS = 300  # of an error message sent back to a page
CENTERLINE_POINTS = 2000  # of the centerline sent to a page, at most


class WebView(ServedApp):
    """Serves the page for ``feed`` on ``host``:``port`` until :meth:`stop`."""

    what = 'the web page'

    def __init__(self, feed: ViewFeed, host: str, port: int, log: Log) -> None:
        super().__init__(host, port, log, 'web_view')
        self.feed = feed
        self._track: tuple[TrackWorld, TrackImage] | None = None
        self._track_lock = threading.Lock()
        self._frame_json: tuple[int, str] = (0, '')
        self._race_json: tuple[int, str] = (0, '')
        self._jpeg: tuple[int, bytes] | None = None

    def routes(self) -> Collection[web.RouteDef]:
        return [web.get('/', self._page), web.get('/ws', self._socket),
                web.get('/track.png', self._track_png), web.get('/camera.jpg', self._camera),
                web.get('/static/{name}', self._static)]

    # --- files ------------------------------------------------------------------------------
    async def _page(self, _request: web.Request) -> web.Response:
        return web.Response(text=(STATIC / 'index.html').read_text(), content_type='text/html')

    async def _static(self, request: web.Request) -> web.Response:
        name = request.match_info['name']
        kinds = {'.js': 'text/javascript', '.css': 'text/css'}
        kind = next((k for suffix, k in kinds.items() if name.endswith(suffix)), None)
        file = STATIC / name
        if kind is None or '/' in name or not file.is_file():
            raise web.HTTPNotFound()
        return web.Response(text=file.read_text(), content_type=kind)

    async def _track_png(self, _request: web.Request) -> web.Response:
        track = await self._current_track()
        if track is None:
            raise web.HTTPNotFound(text='no track yet')
        return web.Response(body=track[1].png, content_type='image/png',
                            headers={'Cache-Control': 'no-cache'})

    async def _camera(self, request: web.Request) -> web.Response:
        key = request.query.get('key', '')
        if key not in self.feed.cameras:
            raise web.HTTPNotFound(text=f'no camera {key!r}; the cameras are '
                                        f'{sorted(self.feed.cameras)}')
        jpeg = await asyncio.to_thread(self._jpeg_of, key)
        if jpeg is None:
            raise web.HTTPNotFound(text=f'no image from {key} yet')
        return web.Response(body=jpeg, content_type='image/jpeg',
                            headers={'Cache-Control': 'no-store'})

    def _jpeg_of(self, key: str) -> bytes | None:
        image = self.feed.image(key)
        if image is None:
            return None
        cached = self._jpeg
        if cached is not None and cached[0] == id(image):
            return cached[1]
        ok, jpeg = cv2.imencode('.jpg', cv2.cvtColor(np.asarray(image), cv2.COLOR_RGB2BGR),
                                [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
        data = jpeg.tobytes() if ok else None
        if data is not None:
            self._jpeg = (id(image), data)
        return data

    async def _current_track(self) -> tuple[TrackWorld, TrackImage] | None:
        """The track the engine holds and its picture, drawn once per track (aside, so the
        server answers meanwhile)."""
        world, track = self.feed.world(), self._track
        if world is None:
            return None
        if track is not None and track[0] is world:
            return track
        return await asyncio.to_thread(self._draw_track, world)

    def _draw_track(self, world: TrackWorld) -> tuple[TrackWorld, TrackImage]:
        with self._track_lock:  # pages asking at once wait for one drawing
            if self._track is None or self._track[0] is not world:
                self._track = (world, track_image(world))
            return self._track

    # --- the page's socket -------------------------------------------------------------------
    async def _socket(self, request: web.Request) -> web.StreamResponse:
        assert self._access is not None
        problem = self._access.origin_problem(request.headers.get('Origin'),
                                              local_address(request))
        if problem is not None:
            raise self._refused(web.HTTPForbidden, problem)
        return await self._one_of(MAX_PAGES, 'a page', lambda: self._serve_page(request))

    async def _serve_page(self, request: web.Request) -> web.StreamResponse:
        page = web.WebSocketResponse(max_msg_size=MAX_COMMAND_BYTES, heartbeat=10.0,
                                     timeout=CLOSE_S)
        try:
            await page.prepare(request)
        except ConnectionError:  # gone while let in: nothing to serve, nothing to report
            return web.Response()  # whose sending finds the page gone, quietly
        self.sockets.add(page)
        sender = asyncio.create_task(self._send_frames(page))
        rate = CommandRate()
        try:
            async for message in page:
                admitted, dropping = rate.admit()
                if dropping:
                    reply: str | None = (f'more than {rate.per_s:g} commands a second; '
                                         f'dropping them until the page sends fewer')
                elif not admitted:
                    continue
                elif message.type == WSMsgType.TEXT:
                    reply = self._command(message.data)
                else:
                    reply = f'expected a JSON command as text, got a {message.type.name} message'
                if reply is not None:
                    self._warn(f'view: {reply}')
                    await page.send_json({'type': 'error',
                                          'message': clip(reply, MAX_REPLY_CHARS)})
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            sender.cancel()
            self.sockets.discard(page)
        return page

    async def _send_frames(self, page: web.WebSocketResponse) -> None:
        sent_track: TrackWorld | None = None
        sent_version = sent_race = 0
        sent_pacing: PacingStatus | None = None
        try:
            while not page.closed:
                pacing = self.feed.pacing.status()
                if pacing != sent_pacing:  # also while paused, when no frame comes
                    await page.send_json({'type': 'pacing', 'paused': pacing.paused,
                                          'real_time_factor': pacing.real_time_factor})
                    sent_pacing = pacing
                track = await self._current_track()
                if track is not None and track[0] is not sent_track:
                    await page.send_str(json.dumps(self._hello(*track)))
                    sent_track = track[0]
                snapshot = self.feed.latest()
                if sent_track is not None and snapshot is not None \
                        and snapshot.version > sent_version:
                    await page.send_str(await asyncio.to_thread(self._frame_text, snapshot))
                    sent_version = snapshot.version
                race = self.feed.race()  # the event, its timing tower and incidents
                if sent_track is not None and race is not None and race.version > sent_race:
                    await page.send_str(await asyncio.to_thread(self._race_text, race))
                    sent_race = race.version
                await asyncio.sleep(PERIOD_S)
        except (ConnectionError, RuntimeError):
            pass  # the page went away while a frame was on its way

    def _frame_text(self, snapshot: Snapshot) -> str:
        """A snapshot as JSON, made once for every page."""
        version, text = self._frame_json
        if version != snapshot.version:
            text = json.dumps(snapshot.to_json(), separators=(',', ':'))
            self._frame_json = (snapshot.version, text)
        return text

    def _race_text(self, race: RaceSnapshot) -> str:
        """A race message as JSON, made once for every page."""
        version, text = self._race_json
        if version != race.version:
            text = json.dumps(race.data, separators=(',', ':'))
            self._race_json = (race.version, text)
        return text

    def _hello(self, world: TrackWorld, image: TrackImage) -> dict[str, Any]:
        centerline: list[list[float]] = []
        if world.centerline is not None:
            points = np.asarray(world.centerline, np.float64)[:, :2]
            every = max(1, -(-len(points) // CENTERLINE_POINTS))
            centerline = np.round(points[::every], 2).tolist()
        scenario = self.feed.scenario
        return {'type': 'hello', 'track': {'name': world.name, 'image': image.placement(),
                                           'centerline': centerline},
                'cars': [{'name': car.name, 'length': car.profile.footprint.length,
                          'width': car.profile.footprint.width} for car in scenario.cars],
                'cameras': sorted(self.feed.cameras), 'frame_rate_hz': scenario.frame_rate_hz}

    def _command(self, text: str) -> str | None:
        """Carry out one command of the page; the trouble with it, or None."""
        try:
            command = commands.parse(text)
        except ValueError as exc:
            return str(exc)
        op, pacing = command.get('op'), self.feed.pacing
        try:
            if op == 'play':
                pacing.play()
            elif op == 'pause':
                pacing.pause()
            elif op == 'step':
                frames = command.get('frames', 1)
                if not isinstance(frames, int) or isinstance(frames, bool):
                    return f'expected "frames" from 1 to {MAX_STEPS}, got {clip(repr(frames), 80)}'
                pacing.step(frames)
            elif op == 'set_real_time_factor':
                pacing.set_real_time_factor(command.get('value'))  # type: ignore[arg-type]
            else:
                return (f'unknown command {clip(repr(op), 80)}; expected play, pause, step or '
                        f'set_real_time_factor')
        except ValueError as exc:
            return f'{op}: {exc}'
        return None

