"""The aiohttp app and socket.io server: one composition root, :func:`create_app`, which
chooses the rulesets served (:data:`adapter.rulesets.RULESETS`) and hands them once to the
store's codec and to :class:`adapter.service.Worlds`.

The connections and their messages are :class:`.sidecar.Sidecar`'s; here, the app around it:
the middlewares, the routes beside the socket (the module, the status page, health and
metrics) and the store opened and closed with the app.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from aiohttp import web

from .. import protocol
from ..config import Config
from ..protocol import wirejson
from ..rulesets import RULESETS
from ..service import Worlds
from ..store import open_store
from ..store.snapshots import Codec
from ..version import __version__
from .guard import GuardedServer
from .metrics import Metrics, add_metrics_routes
from .module_files import add_module_routes
from .observe import Observers
from .origins import request_guard
from .packet import Packet
from .rooms import room_manager
from .sidecar import Sidecar
from .status import StatusBoard, add_status_routes

log = logging.getLogger("initiative_sidecar.server")
STATUS_KEY = web.AppKey("status", StatusBoard)


SIDECAR_KEY = web.AppKey("sidecar", Sidecar)


async def keep_leases(heartbeat: Callable[[], None], every: float = 0.5) -> None:
    """Call the store's heartbeat from the event loop: a loop that stops turning stops it too,
    and PostgreSQL frees the leases (:mod:`adapter.store.postgres`)."""
    while True:
        await asyncio.sleep(every)
        heartbeat()


@web.middleware
async def no_ws_compression(request: web.Request, handler: Any) -> web.StreamResponse:
    """Decline permessage-deflate (~150 KB of zlib state a connection, and CPU, for nothing on
    the GM's machine): the offer is removed from the upgrade request (``--ws-compression`` keeps it)."""
    if "Sec-WebSocket-Extensions" in request.headers:
        headers = request.headers.copy()
        del headers["Sec-WebSocket-Extensions"]
        request = request.clone(headers=headers)
    response: web.StreamResponse = await handler(request)
    return response


def create_app(config: Config) -> web.Application:
    """The aiohttp app with the socket.io server and the store, opened and closed with it."""
    sio = GuardedServer(
        limits=config,  # --rate, --burst, --connect-timeout, --pending-per-address, --max-outgoing-bytes
        async_mode="aiohttp",
        cors_allowed_origins=[],  # no check at the handshake: --origins is checked at CONNECT (.origins)
        max_http_buffer_size=config.buffer_bytes,
        transports=["websocket"],
        async_handlers=False,  # one message in hand per connection (docs/reliability.md, "Memory")
        json=wirejson.FRAMES,  # wirejson, reading a frame as the guard's frame_reader says
        serializer=Packet,
        logger=False,
        engineio_logger=False,
        **({"client_manager": room_manager(config.redis)} if config.redis else {}),
    )
    guards: list[Any] = [request_guard(config)]
    if not config.ws_compression:
        guards.append(no_ws_compression)
    app = web.Application(middlewares=guards)
    sio.attach(app)
    # besides the socket: the module to install, the status page, health and metrics
    metrics = Metrics()
    board = StatusBoard(config)
    observers = Observers([metrics.observe, board.observe], [metrics.connect])  # of every ack and connect
    app[STATUS_KEY] = board
    stopping = asyncio.Event()  # set once the app's cleanup begins: the store is closing

    async def lifespan(app: web.Application) -> AsyncIterator[None]:
        store = open_store(config.store, config.db, Codec(RULESETS.values()))
        worlds = Worlds(
            store,
            rulesets=RULESETS,  # the one place the server's rulesets are chosen
            max_bytes=config.max_bytes,
            snapshot_every=config.snapshot_every,
            check_outbound=config.check_outbound,
        )
        if not store.shared:  # a shared store's worlds are loaded as their writers connect
            worlds.load()
        sidecar = Sidecar(config, worlds, sio, observers)
        app[SIDECAR_KEY] = sidecar
        sio.frame_reader = sidecar.frame_reader
        board.throttle = sidecar.throttle  # one count of guesses: sockets and the status page
        board.writers, board.states = sidecar.writers, worlds.states
        metrics.attach(sidecar.writers, worlds.states, store)
        sio.on("connect", sidecar.connect)
        sio.on("disconnect", sidecar.disconnect)
        sio.on("hook", sidecar.handler("hook"))
        sio.on("intent", sidecar.handler("intent"))
        sio.on("export", sidecar.export)  # the GM's download
        sio.on("*", sidecar.unknown_event)
        heartbeat = getattr(store, "heartbeat", None)
        if heartbeat is not None:  # hosted: the leases last while this event loop turns
            sidecar.spawn(keep_leases(heartbeat))
        yield
        stopping.set()
        for task in list(sidecar.tasks):
            task.cancel()
        began = time.monotonic()
        worlds.checkpoint()
        log.info("snapshots of %d worlds written in %.2f s", len(worlds.states), time.monotonic() - began)
        store.close()

    app.cleanup_ctx.append(lifespan)

    async def health(_: web.Request) -> web.Response:
        return web.json_response({"ok": True, "protocol": protocol.PROTOCOL_VERSION})

    def healthz() -> tuple[bool, dict[str, Any]]:
        if stopping.is_set():
            return False, {"ok": False, "problem": "the sidecar is stopping"}
        if SIDECAR_KEY not in app:
            return False, {"ok": False, "problem": "the worlds are not loaded yet"}
        sidecar = app[SIDECAR_KEY]
        problem = sidecar.worlds.store.problem()
        body = {
            "ok": problem is None,
            "store": problem or "writable",
            "worlds_loaded": len(sidecar.worlds.states),
            "worlds_connected": len(sidecar.writers),
            "version": __version__,
            "protocol": protocol.PROTOCOL_VERSION,
        }
        return problem is None, body

    app.router.add_get("/health", health)
    add_module_routes(app, config)
    add_metrics_routes(app, config, metrics, healthz)
    add_status_routes(app, board)
    return mounted(app, config.base_path)


MOUNTED_KEY = web.AppKey("mounted", web.Application)


def mounted(app: web.Application, base_path: str) -> web.Application:
    """``app`` itself, or (``--base-path``) an app serving it under ``base_path``, with
    ``base_path`` alone redirected to ``base_path/`` (the status page)."""
    if not base_path:
        return app
    outer = web.Application()

    async def to_page(request: web.Request) -> web.StreamResponse:
        raise web.HTTPPermanentRedirect(base_path + "/")

    outer.router.add_get(base_path, to_page)  # before the sub-app, which would match it first
    outer.add_subapp(base_path, app)
    outer[MOUNTED_KEY] = app
    return outer


def sidecar_of(app: web.Application) -> Sidecar:
    """The running sidecar of an app :func:`create_app` made (mounted under a path or not)."""
    return app.get(MOUNTED_KEY, app)[SIDECAR_KEY]
