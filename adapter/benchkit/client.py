"""A client process of the load: many socket.io clients, one world each, one writer per world.

The job comes as one JSON line on standard input; it connects every client, prints
``{"ready": ...}``, waits for ``go``, then each client sends its messages one after the other
and it prints ``{"result": ...}``. With ``"hold": true`` it keeps the connections open until
``stop``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any
from urllib.parse import urlencode

import socketio

from ..protocol import wirejson
from .payloads import auth, hooks

CONNECT_BATCH = 50


async def connect(url: str, world: str, token: str, deflate: bool) -> socketio.AsyncClient:
    options: dict[str, Any] = {"compress": 15} if deflate else {}
    sio = socketio.AsyncClient(reconnection=False, json=wirejson, websocket_extra_options=options)
    # the world in the query string too, as the module sends it (nginx routes by it)
    await sio.connect(f"{url}/?{urlencode({'world': world})}", auth=auth(world, token), transports=["websocket"],
                      wait_timeout=30)
    return sio


def negotiated(sio: socketio.AsyncClient) -> int:
    """The permessage-deflate window bits agreed with the server (0: not negotiated)."""
    ws = getattr(sio.eio, "ws", None)
    return int(getattr(ws, "compress", 0) or 0)


async def drive(sio: socketio.AsyncClient, payloads: list[dict[str, Any]], latencies: list[float],
                timeout: float) -> int:
    errors = 0
    clock = time.perf_counter
    for payload in payloads:
        began = clock()
        ack = await sio.call("hook", payload, timeout=timeout)
        latencies.append(clock() - began)
        if not isinstance(ack, dict) or ack.get("ok") is False:
            errors += 1
    return errors


async def main() -> None:
    job = json.loads(sys.stdin.readline())
    reader = asyncio.StreamReader()
    loop = asyncio.get_running_loop()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    payloads = hooks(job["messages"], job.get("combatants", 8), job.get("rolls", True))
    clients: list[socketio.AsyncClient] = []
    worlds = job["worlds"]
    for i in range(0, len(worlds), CONNECT_BATCH):
        batch = worlds[i:i + CONNECT_BATCH]
        clients += await asyncio.gather(
            *(connect(job["url"], w, job["token"], job["deflate"]) for w in batch)
        )
    print(json.dumps({"ready": len(clients), "deflate": negotiated(clients[0])}), flush=True)
    await reader.readline()  # go
    latencies: list[list[float]] = [[] for _ in clients]
    began = time.monotonic()
    errors = await asyncio.gather(
        *(drive(c, payloads, lat, job.get("timeout", 60)) for c, lat in zip(clients, latencies))
    )
    ended = time.monotonic()
    flat = [x for lat in latencies for x in lat]
    print(json.dumps({"result": {"start": began, "end": ended, "latencies": flat,
                                 "errors": sum(errors)}}), flush=True)
    if job.get("hold"):
        await reader.readline()  # stop
    for i in range(0, len(clients), CONNECT_BATCH):
        await asyncio.gather(*(c.disconnect() for c in clients[i:i + CONNECT_BATCH]))


if __name__ == "__main__":
    asyncio.run(main())
