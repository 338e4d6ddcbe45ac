"""The ``export`` event: the GM's page asks for its world's recording (docs/protocol.md).

The answer carries the world's stored history as the JSON Lines ``initiative-sidecar
replay`` reads, what ``initiative-sidecar export`` writes. Only the world's writer asks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Protocol

from .. import protocol
from ..config import Config
from ..errors import InvalidMessage, RateLimited, SidecarError, StoreUnavailable, Superseded
from ..pipeline import refusal
from ..service import Worlds
from .guard import GuardedServer


class _Connection(Protocol):
    @property
    def world(self) -> str: ...


class Serving(Protocol):
    """What the handler reads of the running sidecar (:class:`adapter.server.Sidecar`, which
    imports this module, so it is named by what it has, not imported)."""

    @property
    def config(self) -> Config: ...
    @property
    def worlds(self) -> Worlds: ...
    @property
    def sio(self) -> GuardedServer: ...
    @property
    def connections(self) -> Mapping[str, _Connection]: ...
    @property
    def writers(self) -> Mapping[str, str]: ...
    def lock(self, world_id: str) -> asyncio.Lock: ...


async def export(sidecar: Serving, sid: str, *args: Any) -> dict[str, Any]:
    """Answer an ``export``: the recording of the world this connection writes (its stored
    sessions and messages, the lines ``replay`` reads), or a refusal."""
    from ..replay import dumps  # a GM's download, rare: serving does not load the replay tool

    conn = sidecar.connections.get(sid)
    try:
        if conn is None or sidecar.writers.get(conn.world) != sid:
            raise Superseded("another connection took over this world; ask from the page that holds it")
        if len(args) != 1:
            raise InvalidMessage(f"an export is one payload object, not {len(args)} arguments", path="")
        protocol.validate("export", args[0])
        if not sidecar.sio.take(sid):
            raise RateLimited(f"more than {sidecar.config.rate:g} messages per second; slow down and ask again")
        async with sidecar.lock(conn.world):
            try:
                history = sidecar.worlds.store.history(conn.world)
                lines = [dumps({"event": entry.kind, "data": entry.data}) + "\n" for entry in history]
            except SidecarError:
                raise
            except Exception as error:  # the store failed: answered, never left hanging
                raise StoreUnavailable(f"the recording could not be read ({type(error).__name__}); ask again later") from error
    except SidecarError as error:
        answer = refusal(None, error)
    else:
        answer = {"ok": True, "world": conn.world, "lines": len(lines), "recording": "".join(lines)}
    if sidecar.config.check_outbound:
        protocol.check_outbound("export-answer", answer)
    return answer
