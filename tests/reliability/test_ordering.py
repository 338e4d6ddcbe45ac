"""Reconnects and ordering: a broken wire never applies a message twice or out of order.

Through :class:`tests.reliability.proxy.FaultProxy` the wire drops, duplicates and swaps
hooks and intents, drops and duplicates acks, and is cut now and then. The client behaves
as the module's outbox: it keeps every message until acked, resends from the lowest unacked
one after an ``out_of_order`` or a silence, and after a reconnect starts from
``welcome.last_seq``. The sidecar must ack a duplicate without applying it again, refuse a
gap with ``out_of_order`` (not using its seq up), and end with the plans of a clean run.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
import time
from collections import Counter
from typing import Any

import pytest

from tests.reliability.harness import Disconnected, Link, auth_for, open_link
from tests.reliability.proxy import FaultProxy, Faults
from tests.reliability.table import Reference, build, combats_of, read_state, state_of
from tests.support.sidecar import Running


@pytest.fixture(scope="module")
def fight_night() -> Reference:
    return build("world-faults", "balanced-d20", 5, fights=3, rounds=3)


class ResendingOutbox:
    """The module's outbox over a faulty wire (see the module docstring)."""

    def __init__(self, ref: Reference, url: str, window: int = 6, silence: float = 0.4) -> None:
        self.ref = ref
        self.url = url
        self.window = window
        self.silence = silence
        self.acked: set[int] = set()
        self.seen: Counter[str] = Counter()
        self.welcomes: list[int] = []

    @property
    def lowest(self) -> int:
        seq = 1
        while seq in self.acked:
            seq += 1
        return seq

    async def run(self, budget: float, cut: Any = None) -> None:
        deadline = time.monotonic() + budget
        failures = 0
        while self.lowest <= len(self.ref.messages):
            assert time.monotonic() < deadline, f"stuck at seq {self.lowest} ({self.seen})"
            try:
                link = await open_link(self.url, auth_for(self.ref.world, self.ref.ruleset))
                failures = 0
            except Exception:  # noqa: BLE001 - the proxy is between cuts
                failures += 1
                assert failures < 40, "cannot reconnect"
                await asyncio.sleep(0.05)
                continue
            try:
                await self.session(link, deadline, cut)
            except Disconnected:
                self.seen["disconnects"] += 1
            finally:
                await link.close()

    async def session(self, link: Link, deadline: float, cut: Any) -> None:
        welcome = await asyncio.wait_for(link.welcome, 10)
        last = int(welcome["last_seq"])
        assert all(s <= last for s in self.acked if s < self.lowest)
        assert last >= self.lowest - 1, "an acked message was not stored"
        assert welcome["combats"] == combats_of(self.ref.worlds[last])
        self.welcomes.append(last)
        self.acked.update(range(1, last + 1))
        while self.lowest <= len(self.ref.messages):
            assert time.monotonic() < deadline
            if cut is not None:
                await cut(self.lowest)
            first = self.lowest
            batch = [s for s in range(first, len(self.ref.messages) + 1) if s not in self.acked][: self.window]
            flight = {}
            for seq in batch:
                event, data = self.ref.messages[seq - 1]
                flight[seq] = await link.emit(event, data)
            await asyncio.wait(flight.values(), timeout=self.silence)
            for seq, future in flight.items():
                if not future.done():
                    self.seen["silent"] += 1
                    future.cancel()
                    continue
                ack = future.result()  # raises Disconnected
                self.check(seq, ack)

    def check(self, seq: int, ack: dict[str, Any]) -> None:
        if ack.get("duplicate"):
            self.seen["duplicate"] += 1
            assert ack["ok"] is True and ack["seq"] == seq
            self.acked.add(seq)
        elif not ack["ok"] and ack["error"]["code"] == "out_of_order":
            self.seen["out_of_order"] += 1
            assert ack["error"]["path"] == "/seq" and ack["seq"] == seq
            said = re.match(r"expected seq (\d+), got", ack["error"]["message"])
            assert said is not None, ack["error"]["message"]
            expected = int(said.group(1))
            assert seq > expected
        else:
            self.seen["applied"] += 1
            assert ack == self.ref.acks[seq - 1], f"seq {seq}: applied differently"
            self.acked.add(seq)


def stored_seqs(db: Any, world: str) -> list[tuple[int, str | None]]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute("SELECT seq, error FROM messages WHERE world = ? ORDER BY seq", (world,)).fetchall()
    finally:
        con.close()


async def final_state(url: str, ref: Reference) -> dict[str, Any]:
    link = await open_link(url, auth_for(ref.world, ref.ruleset))
    try:
        welcome = await asyncio.wait_for(link.welcome, 10)
        return await read_state(link.ask, welcome["last_seq"], [c["combat_id"] for c in welcome["combats"]])
    finally:
        await link.close()


async def test_dropped_duplicated_and_reordered_messages_are_applied_once_in_order(
    sidecar: Running, fight_night: Reference,
) -> None:
    faults = Faults(drop=0.04, duplicate=0.05, swap=0.05, drop_ack=0.03, duplicate_ack=0.03)
    proxy = FaultProxy(sidecar.url, faults, seed=99)
    await proxy.start()
    cuts = {len(fight_night.messages) // 3, 2 * len(fight_night.messages) // 3}

    async def cut(lowest: int) -> None:  # the laptop sleeps, twice
        for at in sorted(cuts):
            if lowest >= at:
                cuts.discard(at)
                await proxy.cut()

    try:
        box = ResendingOutbox(fight_night, proxy.url)
        await box.run(budget=90, cut=cut)
    finally:
        await proxy.stop()
    total = len(fight_night.messages)
    print(f"\n  faulty wire: {total} messages, proxy {dict(proxy.stats)}, client saw {dict(box.seen)}")
    for fault in ("dropped", "duplicated", "swapped", "acks_dropped", "acks_duplicated"):
        assert proxy.stats[fault] > 0, fault
    assert box.seen["duplicate"] > 0 and box.seen["out_of_order"] > 0 and box.seen["disconnects"] >= 2
    assert len(box.welcomes) >= 3 and box.welcomes[0] == 0 and box.welcomes[-1] > 0
    # each message stored (and so applied) once, with the same outcome as the clean run
    log = stored_seqs(sidecar.config.db, fight_night.world)
    assert [s for s, _ in log] == list(range(1, total + 1))
    assert [e is None for _, e in log] == [a["ok"] for a in fight_night.acks]
    assert await final_state(sidecar.url, fight_night) == fight_night.final


async def test_a_gap_is_refused_out_of_order_and_its_seq_is_not_used_up(sidecar: Running, fight_night: Reference) -> None:
    link = await open_link(sidecar.url, auth_for(fight_night.world, fight_night.ruleset))
    try:
        await link.welcome
        msgs = fight_night.messages
        assert (await (await link.emit(*msgs[0])))["ok"]
        gap = await (await link.emit(*msgs[2]))
        assert gap == {"ok": False, "seq": 3, "error": {
            "code": "out_of_order", "message": "expected seq 2, got 3: resend from there", "path": "/seq"}}
        assert await (await link.emit(*msgs[1])) == fight_night.acks[1]
        assert await (await link.emit(*msgs[2])) == fight_night.acks[2]
        dup = await (await link.emit(*msgs[1]))
        assert dup["duplicate"] is True and dup["seq"] == 2
        combats = list(fight_night.worlds[3].combats)
        assert state_of(fight_night.worlds[3]) == await read_state(link.ask, 2, combats)
    finally:
        await link.close()


async def test_a_burst_of_concurrent_emits_is_applied_one_at_a_time_in_arrival_order(
    sidecar: Running,
) -> None:
    """Every message of two worlds emitted at once, nothing awaited in between: if the sidecar
    applied any of them concurrently or out of arrival order, a seq would come back
    ``out_of_order`` or an ack would differ from the one-by-one run."""
    refs = [build("world-burst-a", "storyteller", 3, fights=4, rounds=3),
            build("world-burst-b", "dice-pool", 4, fights=4, rounds=3)]
    links = [await open_link(sidecar.url, auth_for(r.world, r.ruleset)) for r in refs]
    try:
        for link in links:
            await link.welcome
        futures: list[list[asyncio.Future[Any]]] = [[], []]
        longest = max(len(r.messages) for r in refs)
        for i in range(longest):
            for k, ref in enumerate(refs):
                if i < len(ref.messages):
                    futures[k].append(await links[k].emit(*ref.messages[i]))
        for k, ref in enumerate(refs):
            acks = await asyncio.wait_for(asyncio.gather(*futures[k]), 60)
            assert acks == ref.acks, f"{ref.world}: not applied in arrival order"
        print(f"\n  burst: {sum(len(r.messages) for r in refs)} emits in flight at once, all in order")
    finally:
        for link in links:
            await link.close()
