"""A fault-injecting websocket proxy on loopback, between a socket.io client and the sidecar.

It forwards every websocket frame both ways and, seeded, breaks the wire where it matters:
client event packets (``42<id>[...]``: hooks and intents with an ack id) are dropped,
duplicated or swapped with the next one; acks (``43<id>[...]``) are dropped or duplicated.
:meth:`FaultProxy.cut` closes every connection at once (a laptop going to sleep). Engine.io
pings, the connect and the ``welcome`` are never touched.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from dataclasses import dataclass, field

import aiohttp
from aiohttp import web

Socket = aiohttp.ClientWebSocketResponse | web.WebSocketResponse


@dataclass
class Faults:
    drop: float = 0.0
    duplicate: float = 0.0
    swap: float = 0.0
    drop_ack: float = 0.0
    duplicate_ack: float = 0.0


@dataclass
class FaultProxy:
    upstream: str  # http://127.0.0.1:port
    faults: Faults
    seed: int
    port: int = 0  # 0: the port the system gives at start (read back from the socket)
    stats: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.sockets: set[web.WebSocketResponse] = set()
        self.runner: web.AppRunner | None = None
        self.on = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/socket.io/", self.handle)
        self.runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", self.port).start()
        self.port = self.runner.addresses[0][1]

    async def stop(self) -> None:
        await self.cut()
        if self.runner is not None:
            await self.runner.cleanup()

    async def cut(self) -> None:
        self.stats["cuts"] += 1
        for ws in list(self.sockets):
            await ws.close()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        client = web.WebSocketResponse(max_msg_size=4 * 1024 * 1024)
        await client.prepare(request)
        self.sockets.add(client)
        target = self.upstream.replace("http://", "ws://") + request.path_qs
        try:
            async with aiohttp.ClientSession() as session, session.ws_connect(
                target, max_msg_size=4 * 1024 * 1024
            ) as server:
                up = asyncio.ensure_future(self.pipe(client, server, upstream=True))
                down = asyncio.ensure_future(self.pipe(server, client, upstream=False))
                await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
                for task in (up, down):
                    task.cancel()
                await asyncio.gather(up, down, return_exceptions=True)
                await server.close()
        finally:
            self.sockets.discard(client)
            await client.close()
        return client

    async def pipe(self, source: Socket, sink: Socket, *, upstream: bool) -> None:
        held: dict[str, str] = {}  # a swapped packet, waiting for the next one

        def flush(text: str) -> None:  # nothing came after it within 50 ms: it is only late
            if held.get("packet") is text and not sink.closed:
                del held["packet"]
                asyncio.ensure_future(sink.send_str(text))

        async for frame in source:
            if frame.type != aiohttp.WSMsgType.TEXT:
                break
            text = str(frame.data)
            if upstream and text.startswith("42") and text[2:3].isdigit():
                if "packet" in held:
                    await sink.send_str(text)
                    await sink.send_str(held.pop("packet"))
                    continue
                roll = self.rng.random()
                f = self.faults
                if roll < f.drop:
                    self.stats["dropped"] += 1
                    continue
                if roll < f.drop + f.duplicate:
                    self.stats["duplicated"] += 1
                    await sink.send_str(text)
                elif roll < f.drop + f.duplicate + f.swap:
                    self.stats["swapped"] += 1
                    held["packet"] = text
                    asyncio.get_running_loop().call_later(0.05, flush, text)
                    continue
            elif not upstream and text.startswith("43"):
                roll = self.rng.random()
                if roll < self.faults.drop_ack:
                    self.stats["acks_dropped"] += 1
                    continue
                if roll < self.faults.drop_ack + self.faults.duplicate_ack:
                    self.stats["acks_duplicated"] += 1
                    await sink.send_str(text)
            await sink.send_str(text)
