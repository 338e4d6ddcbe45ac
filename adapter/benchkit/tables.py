"""A raw-wire load process for ``bench --hosted --tables``: many tables, each its own websocket
speaking Engine.IO 4 / Socket.IO 5 by hand (a table costs a socket and a few objects).

The job comes as one JSON line on standard input. Each table connects (``?world=``, so nginx
routes it), sends its CONNECT and waits for its ``welcome``; the process prints ``{"ready":
...}`` and waits for ``go``. Then each table sends a ``hook`` every ``1/rate`` seconds from a
random phase, not waiting for acks, for ``seconds``; an ack later than ``timeout`` counts as
unanswered. It prints ``{"result": ...}``: every ack latency, and per world the acks ok.
"""

from __future__ import annotations

import asyncio
import json
import random
import resource
import sys
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import aiohttp

from .payloads import auth, hooks

CONNECT_BATCH = 100


@dataclass
class Table:
    world: str
    ws: aiohttp.ClientWebSocketResponse | None = None
    welcomed: asyncio.Event = field(default_factory=asyncio.Event)
    sent: dict[int, float] = field(default_factory=dict)  # ack id -> send time
    acked_ok: int = 0
    refused: int = 0


class Load:
    def __init__(self, job: dict[str, Any]) -> None:
        self.job = job
        self.latencies: list[float] = []
        self.unanswered = 0
        self.session: aiohttp.ClientSession | None = None
        count = max(1, int(job["seconds"] * job["rate"]) + 2)
        self.frames = [json.dumps(["hook", p], separators=(",", ":")) for p in hooks(count, job.get("combatants", 8))]

    async def open(self, table: Table) -> None:
        assert self.session is not None
        query = urlencode({"world": table.world, "EIO": "4", "transport": "websocket"})
        ws = await self.session.ws_connect(f"{self.job['url']}/socket.io/?{query}", max_msg_size=0,
                                           autoping=False, timeout=aiohttp.ClientWSTimeout(ws_close=5))
        table.ws = ws
        first = await asyncio.wait_for(ws.receive(), 30)
        if not (isinstance(first.data, str) and first.data.startswith("0")):
            raise RuntimeError(f"{table.world}: no Engine.IO open packet: {first.data!r:.200}")
        await ws.send_str("40" + json.dumps(auth(table.world, self.job["token"])))
        asyncio.get_running_loop().create_task(self.read(table))
        await asyncio.wait_for(table.welcomed.wait(), 60)

    async def read(self, table: Table) -> None:
        ws = table.ws
        assert ws is not None
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
        ws = table.ws
        assert ws is not None
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
            await ws.send_str(f"42{ack_id}{frame}")
            next_at += period
        end = loop.time() + timeout
        while table.sent and loop.time() < end:
            await asyncio.sleep(0.05)
        self.unanswered += len(table.sent)  # no ack within the timeout (or never)
        table.sent.clear()


async def main() -> None:
    job = json.loads(sys.stdin.readline())
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    reader = asyncio.StreamReader()
    loop = asyncio.get_running_loop()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    load = Load(job)
    tables = [Table(w) for w in job["worlds"]]
    connector = aiohttp.TCPConnector(limit=0, force_close=True)
    async with aiohttp.ClientSession(connector=connector) as session:
        load.session = session
        began = time.monotonic()
        for i in range(0, len(tables), CONNECT_BATCH):
            await asyncio.gather(*(load.open(t) for t in tables[i:i + CONNECT_BATCH]))
        print(json.dumps({"ready": len(tables), "connect_s": round(time.monotonic() - began, 2)}), flush=True)
        await reader.readline()  # go
        until = loop.time() + job["seconds"]
        await asyncio.gather(*(load.play(t, until) for t in tables))
        print(json.dumps({"result": {
            "latencies": load.latencies, "unanswered": load.unanswered,
            "refused": sum(t.refused for t in tables),
            "acked": {t.world: t.acked_ok for t in tables},
        }}), flush=True)
        await reader.readline()  # stop
        for i in range(0, len(tables), CONNECT_BATCH):
            await asyncio.gather(*(t.ws.close() for t in tables[i:i + CONNECT_BATCH] if t.ws is not None))


if __name__ == "__main__":
    asyncio.run(main())
