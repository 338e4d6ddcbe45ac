"""What the sidecar shows besides the socket: the module to install, the status page,
health and metrics. ``create_app`` calls :func:`add_operations` once; its cleanup context
runs after the app's own, so the sidecar and the worlds exist when it attaches."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

from .. import protocol
from ..config import Config
from ..version import __version__
from .metrics import Metrics, add_metrics_routes
from .module_files import add_module_routes
from .observe import OBSERVERS_KEY, Observers
from .status import StatusBoard
from .status_http import add_status_routes

STATUS_KEY = web.AppKey("status", StatusBoard)


def add_operations(app: web.Application, config: Config, sidecar_key: web.AppKey[Any]) -> None:
    """The key is create_app's (passed in: this module does not import the package)."""
    observers = Observers()
    metrics = Metrics()
    board = StatusBoard(config)
    observers.listeners += [metrics.observe, board.observe]
    observers.connect_listeners.append(metrics.connect)
    app[OBSERVERS_KEY] = observers
    app[STATUS_KEY] = board
    stopping = asyncio.Event()  # set once the app's cleanup begins: the store is closing

    def health() -> tuple[bool, dict[str, Any]]:
        if stopping.is_set():
            return False, {"ok": False, "problem": "the sidecar is stopping"}
        if sidecar_key not in app:
            return False, {"ok": False, "problem": "the worlds are not loaded yet"}
        worlds = app[sidecar_key].worlds
        problem = worlds.store.problem()
        body = {
            "ok": problem is None,
            "store": problem or "writable",
            "worlds_loaded": len(worlds.states),
            "worlds_connected": len(app[sidecar_key].writers),
            "version": __version__,
            "protocol": protocol.PROTOCOL_VERSION,
        }
        return problem is None, body

    async def attach(app: web.Application) -> AsyncIterator[None]:
        sidecar = app[sidecar_key]  # the Sidecar, set by create_app's own context, which ran first
        worlds = sidecar.worlds
        metrics.attach(sidecar.writers, worlds.states, worlds.store)
        board.writers, board.states = sidecar.writers, worlds.states
        yield
        stopping.set()

    add_module_routes(app, config)
    add_metrics_routes(app, config, metrics, health)
    add_status_routes(app, board)
    app.cleanup_ctx.append(attach)
