"""A client process of the load, given its job as one JSON line on standard input. It connects
every client (one world each), prints ``{"ready": ...}``, waits for ``go``, runs the load and
prints ``{"result": ...}``; then it waits for ``stop`` (always for tables, with ``"hold": true``
for clients) and disconnects. Two kinds of load:

- clients (:func:`run_clients`): socket.io clients, one writer per world, each sending its
  messages one after the other, the next when the previous ack arrived;
- tables (:func:`run_tables`, a job with a ``rate``, for ``bench --hosted --tables``): each
  table its own websocket speaking Engine.IO 4 / Socket.IO 5 by hand (a table costs a socket
  and a few objects). Each connects (``?world=``, so nginx routes it), sends its CONNECT and
  waits for its ``welcome``; then it sends a ``hook`` every ``1/rate`` seconds from a random
  phase, not waiting for acks, for ``seconds``; an ack later than ``timeout`` counts as
  unanswered. The result holds every ack latency, and per world the acks ok.
"""

from __future__ import annotations

import asyncio
import json
import random
import resource
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlencode

import aiohttp
import socketio

from ..protocol import wirejson
from .payloads import auth, hooks

T = TypeVar("T")
R = TypeVar("R")
#: socket.io clients connected (and disconnected) at once
CLIENT_BATCH = 50
#: raw tables connected (and closed) at once
TABLE_BATCH = 100


async def batched(items: Sequence[T], each: Callable[[T], Awaitable[R]], size: int) -> list[R]:
    """``each`` of ``items``, ``size`` at a time (so many connects do not all start at once)."""
    done: list[R] = []
    for i in range(0, len(items), size):
        done += await asyncio.gather(*(each(x) for x in items[i:i + size]))
    return done


async def connect(url: str, world: str, token: str, deflate: bool) -> socketio.AsyncClient:
    options: dict[str, Any] = {"compress": 15} if deflate else {}
    sio = socketio.AsyncClient(reconnection=False, json=wirejson, websocket_extra_options=options)
    # the world in the query string too, as the module sends it (nginx routes by it)
    await sio.connect(f"{url}/?{urlencode({'world': world})}", auth=auth(world, token), transports=["websocket"],
                      wait_timeout=30)
    return sio


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


async def run_clients(job: dict[str, Any], reader: asyncio.StreamReader) -> None:
    payloads = hooks(job["messages"], job.get("combatants", 8), job.get("rolls", True))
    clients = await batched(job["worlds"], lambda w: connect(job["url"], w, job["token"], job["deflate"]),
                            CLIENT_BATCH)
    ws = getattr(clients[0].eio, "ws", None)  # the permessage-deflate window bits agreed (0: none)
    deflate = int(getattr(ws, "compress", 0) or 0)
    print(json.dumps({"ready": len(clients), "deflate": deflate}), flush=True)
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
    await batched(clients, lambda c: c.disconnect(), CLIENT_BATCH)


@dataclass
class Table:
    world: str
    ws: aiohttp.ClientWebSocketResponse
    welcomed: asyncio.Event = field(default_factory=asyncio.Event)
    sent: dict[int, float] = field(default_factory=dict)  # ack id -> send time
    acked_ok: int = 0
    refused: int = 0


class Load:
    def __init__(self, job: dict[str, Any], session: aiohttp.ClientSession) -> None:
        self.job = job
        self.session = session
        self.latencies: list[float] = []
        self.unanswered = 0
        count = max(1, int(job["seconds"] * job["rate"]) + 2)
        self.frames = [json.dumps(["hook", p], separators=(",", ":")) for p in hooks(count, job.get("combatants", 8))]

    async def open(self, world: str) -> Table:
        query = urlencode({"world": world, "EIO": "4", "transport": "websocket"})
        ws = await self.session.ws_connect(f"{self.job['url']}/socket.io/?{query}", max_msg_size=0,
                                           autoping=False, timeout=aiohttp.ClientWSTimeout(ws_close=5))
        table = Table(world, ws)
        first = await asyncio.wait_for(ws.receive(), 30)
        if not (isinstance(first.data, str) and first.data.startswith("0")):
            raise RuntimeError(f"{world}: no Engine.IO open packet: {first.data!r:.200}")
        await ws.send_str("40" + json.dumps(auth(world, self.job["token"])))
        asyncio.get_running_loop().create_task(self.read(table))
        await asyncio.wait_for(table.welcomed.wait(), 60)
        return table

    async def read(self, table: Table) -> None:
        ws = table.ws
        clock = time.perf_counter
        async for msg in ws:
            text = msg.data
            if not isinstance(text, str):
                continue
            if text == "2":
                await ws.send_str("3")
            elif text.startswith("43"):  # an ack: 43<id>[{...}]
                bracket = text.index("[")
                began = table.sent.pop(int(text[2:bracket]), None)
                if began is not None:
                    self.latencies.append(clock() - began)
                    if '"ok":true' in text[bracket:bracket + 12]:
                        table.acked_ok += 1
                    else:
                        table.refused += 1
            elif text.startswith('42["welcome"'):
                table.welcomed.set()
            elif text.startswith("44"):
                raise RuntimeError(f"{table.world}: connection refused: {text[:300]}")

    async def play(self, table: Table, until: float) -> None:
        period = 1.0 / self.job["rate"]
        timeout = self.job.get("timeout", 10.0)
        loop = asyncio.get_running_loop()
        clock = time.perf_counter
        next_at = loop.time() + random.uniform(0, period)
        for ack_id, frame in enumerate(self.frames, start=1):
            await asyncio.sleep(max(0.0, next_at - loop.time()))
            if loop.time() >= until:
                break
            table.sent[ack_id] = clock()
            await table.ws.send_str(f"42{ack_id}{frame}")
            next_at += period
        end = loop.time() + timeout
        while table.sent and loop.time() < end:
            await asyncio.sleep(0.05)
        self.unanswered += len(table.sent)  # no ack within the timeout (or never)
        table.sent.clear()


async def run_tables(job: dict[str, Any], reader: asyncio.StreamReader) -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    connector = aiohttp.TCPConnector(limit=0, force_close=True)
    async with aiohttp.ClientSession(connector=connector) as session:
        load = Load(job, session)
        began = time.monotonic()
        tables = await batched(job["worlds"], load.open, TABLE_BATCH)
        print(json.dumps({"ready": len(tables), "connect_s": round(time.monotonic() - began, 2)}), flush=True)
        await reader.readline()  # go
        until = asyncio.get_running_loop().time() + job["seconds"]
        await asyncio.gather(*(load.play(t, until) for t in tables))
        print(json.dumps({"result": {
            "latencies": load.latencies, "unanswered": load.unanswered,
            "refused": sum(t.refused for t in tables),
            "acked": {t.world: t.acked_ok for t in tables},
        }}), flush=True)
        await reader.readline()  # stop
        await batched(tables, lambda t: t.ws.close(), TABLE_BATCH)


async def main() -> None:
    job = json.loads(sys.stdin.readline())
    reader = asyncio.StreamReader()
    loop = asyncio.get_running_loop()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    await (run_tables(job, reader) if "rate" in job else run_clients(job, reader))


if __name__ == "__main__":
    asyncio.run(main())
