"""Issue 15, item 10: SIGTERM with clients connected stops the sidecar and loses nothing acked.

A real ``python -m adapter serve`` with 300 light clients (raw websockets, one world each),
every one sending hooks one after another while the signal comes (the signal is sent once
every client has had an ack, however long a loaded machine takes to get there). The sidecar
stops accepting, finishes the messages in hand, closes the sockets and snapshots, and exits 0
by itself. The time it takes (the promise: 5 s) is a figure ("reliability figures" in the
terminal summary), never asserted (issue 24: a loaded machine is not a failing sidecar); 30 s
without an exit is a hang and fails. Then a restart shows every acked seq stored.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable
from typing import Any

from tests.reliability import fuzzcount
from tests.reliability.harness import Serve
from tests.server.rawclient import Closed, RawClient
from tests.support.sidecar import GM, auth, until

CLIENTS = 300


def hook(seq: int) -> dict[str, Any]:
    return {"seq": seq, "user": GM, "world_time": 0, "hook": "updateCombat",
            "combat": {"_id": "combatShutdown01", "round": 0, "combatants": []},
            "current": {"round": 0, "combatantId": None}}


async def keep_sending(raw: RawClient, acked: list[int], index: int) -> None:
    seq = 1
    try:
        while True:
            ack = await raw.call("hook", hook(seq), timeout=10)
            assert ack["ok"] is True and ack["seq"] == seq, ack
            acked[index] = seq
            seq += 1
            await asyncio.sleep(0.02)
    except (Closed, ConnectionError, OSError, TimeoutError):
        return


async def test_sigterm_with_300_clients_exits_by_itself_and_loses_nothing_acked(
    serve_factory: Callable[..., Serve],
) -> None:
    serve = serve_factory("shutdown")
    await serve.start()
    clients: list[RawClient] = []
    for first in range(0, CLIENTS, 25):  # in batches: below the cap on sockets not yet accepted
        batch = await asyncio.gather(*(RawClient.open(serve.url) for _ in range(first, first + 25)))
        replies = await asyncio.gather(*(raw.connect(auth(world=f"worldTerm{first + i:04d}"))
                                         for i, raw in enumerate(batch)))
        assert all("sid" in r for r in replies), replies
        clients.extend(batch)
    acked = [0] * CLIENTS
    senders = [asyncio.ensure_future(keep_sending(raw, acked, i)) for i, raw in enumerate(clients)]
    try:
        assert await until(lambda: all(acked), timeout=60), "not every client was being answered"
        assert serve.proc is not None
        began = time.monotonic()
        serve.proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(serve.proc.wait(), 30)
        took = time.monotonic() - began
        await asyncio.wait_for(asyncio.gather(*senders), 10)
    finally:
        for task in senders:
            task.cancel()
        await asyncio.gather(*(raw.close() for raw in clients), return_exceptions=True)
    fuzzcount.FIGURES["SIGTERM to exit with 300 clients sending (s)"] = round(took, 2)
    fuzzcount.FIGURES["acks before the SIGTERM, all found stored after it"] = sum(acked)
    assert code == 0, serve.logs()[-2000:]
    assert "stopped in" in serve.logs()

    await serve.start()  # every acked seq is stored: welcome.last_seq is at least it
    for first in range(0, CLIENTS, 25):
        batch = await asyncio.gather(*(RawClient.open(serve.url) for _ in range(first, first + 25)))
        try:
            for i, raw in enumerate(batch):
                reply = await raw.connect(auth(world=f"worldTerm{first + i:04d}"))
                assert "sid" in reply
            welcomes = []
            for raw in batch:
                while not raw.events:
                    await raw._read(5)
                welcomes.append(raw.events[0][1])
            for i, welcome in enumerate(welcomes):
                assert welcome["last_seq"] >= acked[first + i], (first + i, welcome, acked[first + i])
        finally:
            await asyncio.gather(*(raw.close() for raw in batch), return_exceptions=True)
    await serve.stop()
