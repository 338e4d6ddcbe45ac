"""Cross-process rooms (hosted mode, ``--redis redis://...``): python-socketio's own
``AsyncRedisManager``, listening only.

What this process emits is never published: a world's connections are all in the process
holding its lease, so nobody elsewhere listens (docs/hosting.md, "Rooms"). Redis brings in
only what others publish (an admin tool's ``write_only`` emitter), so an ack never waits on
Redis, refused or stuck. Listener failures are logged once, then as a count a minute.
"""

from __future__ import annotations

import logging
from typing import Any

import socketio
from socketio.async_manager import AsyncManager

from .pacing import Quiet

log = logging.getLogger("initiative_sidecar.rooms")


class OnceThenCount(logging.LoggerAdapter[logging.Logger]):
    """The logger python-socketio's manager writes to: debug and info as they are (the
    adapter's), a failure the first time, then at most once a minute with how many came
    meanwhile."""

    def __init__(self, logger: logging.Logger = log, every: float = 60.0) -> None:
        super().__init__(logger)
        self.quiet = Quiet(logger, every=every)

    def failure(self, msg: object, *args: Any, **kwargs: Any) -> None:
        text = str(msg) % args if args else str(msg)
        extra = kwargs.get("extra") or {}
        why = next((str(v) for k, v in extra.items() if k.endswith("_exception")), "")
        key = text.split("...", 1)[0]  # "Cannot receive from redis": one count, whatever the delay
        self.quiet.log(logging.WARNING, key, "Redis: %s%s (cross-process room messages wait; acks do not)",
                       text, f" ({why})" if why else "")

    warning = error = exception = failure


class ListeningRooms(socketio.AsyncRedisManager):  # type: ignore[misc]
    """``AsyncRedisManager`` that publishes nothing: every operation of this process is
    local (see the module's text); emits published by others still arrive. An emit goes
    straight to the local rooms, not packed for a publish first; the other operations are
    the base class's, which act locally for a local sid and publish (nothing, here) otherwise."""

    async def emit(self, event: str, data: Any, namespace: str | None = None, room: str | None = None,
                   skip_sid: Any = None, callback: Any = None, to: str | None = None, **kwargs: Any) -> Any:
        return await AsyncManager.emit(self, event, data, namespace or "/", room=to or room,
                                       skip_sid=skip_sid, callback=callback)

    async def _publish(self, data: Any) -> None:
        """Nothing this process does is listened to elsewhere: never published."""
        return None


def room_manager(url: str) -> socketio.AsyncRedisManager:
    return ListeningRooms(url, logger=OnceThenCount(), redis_options={"socket_connect_timeout": 1.0})


def room_of(world_id: str) -> str:
    """The socket.io room of a world, ``world:<id>``: a world id equal to another connection's
    sid must not name that connection's own room."""
    return "world:" + world_id
