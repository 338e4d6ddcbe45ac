"""Who hears of each answered message (the metrics and the status page) and of each
connection attempt (the metrics). A listener must be quick and must not raise (a failing
one is logged and the ack still goes out).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import socketio
from aiohttp import web

log = logging.getLogger("initiative_sidecar.server")


@dataclass(frozen=True)
class Answered:
    """One message and its ack, as the listeners see it."""

    world: str | None
    event: str  # "hook", "intent", or "other" for any other event
    payload: Any
    ack: dict[str, Any]
    seconds: float


Listener = Callable[[Answered], None]
#: told "accepted", or the code a connection was refused with
ConnectListener = Callable[[str], None]
Handler = Callable[..., Awaitable[dict[str, Any]]]
Connect = Callable[[str, dict[str, Any], Any], Awaitable[None]]


class Observers:
    def __init__(self) -> None:
        self.listeners: list[Listener] = []
        self.connect_listeners: list[ConnectListener] = []

    def tell(self, answered: Answered) -> None:
        for listener in self.listeners:
            try:
                listener(answered)
            except Exception:  # a display or a counter must never cost an ack
                log.exception("a listener failed on a %s ack", answered.event)

    def wrap_connect(self, connect: Connect) -> Connect:
        """The connect handler, told whether each attempt was accepted or its refusal code."""

        async def observed(sid: str, environ: dict[str, Any], auth: Any) -> None:
            try:
                await connect(sid, environ, auth)
            except socketio.exceptions.ConnectionRefusedError as refused:
                data = refused.error_args.get("data") if isinstance(refused.error_args, dict) else None
                self._connected(str(data.get("code", "refused")) if isinstance(data, dict) else "refused")
                raise
            self._connected("accepted")

        return observed

    def _connected(self, result: str) -> None:
        for listener in self.connect_listeners:
            try:
                listener(result)
            except Exception:
                log.exception("a listener failed on a connect")

    def wrap(self, connections: Mapping[str, Any], event: str, handle: Handler) -> Handler:
        """``handle(sid, *args)``, timed and told (``connections``: the sidecar's, by sid)."""

        async def observed(sid: str, *args: Any) -> dict[str, Any]:
            started = time.perf_counter()
            ack = await handle(sid, *args)
            self._told(connections, sid, event, args, ack, started)
            return ack

        return observed

    def wrap_any(self, connections: Mapping[str, Any], handle: Handler) -> Handler:
        """The catch-all ``handle(event, sid, *args)``, timed and told as event ``other``."""

        async def observed(event: str, sid: str, *args: Any) -> dict[str, Any]:
            started = time.perf_counter()
            ack = await handle(event, sid, *args)
            self._told(connections, sid, "other", args, ack, started)
            return ack

        return observed

    def _told(self, connections: Mapping[str, Any], sid: str, event: str, args: tuple[Any, ...],
              ack: dict[str, Any], started: float) -> None:
        conn = connections.get(sid)
        world = getattr(conn, "world", None)
        self.tell(Answered(world, event, args[0] if len(args) == 1 else None, ack, time.perf_counter() - started))


OBSERVERS_KEY = web.AppKey("observers", Observers)
