"""How long a periodic snapshot of a large world stops the event loop: before and after.

    .venv/bin/python -m tests.reliability.snapshot_stall [--combats 200] [--combatants 500]

Builds a world like the one of the attack (issue 15: 200 combats of 500 combatants each,
balanced-d20 state on every combatant, a plan per combat), then, while a ticker on the event
loop wakes every millisecond and records how late it wakes:

- *before*: what the sidecar did until now, on the loop: ``pickle.dumps`` and the INSERT;
- *on the loop, new format*: the same with the data format (encode, compress, INSERT);
- *after*: what it does now: :meth:`Store.save_snapshot_soon` (encode and write in the
  snapshot thread), the loop awaiting the result: the first snapshot (every combat encoded)
  and the next one after a message changed one combat (the others' frames are reused).

It prints the longest stall of the loop and the time the snapshot took in each case. A figure,
not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import pickle
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from msgspec.structs import replace

from adapter.engine.model import Combat, Combatant, World
from adapter.engine.plan import plan_text
from adapter.rulesets.balanced_d20.state import Fighter, Reroll
from adapter.store import Store, snapshots
from adapter.store.contract import ENGINE_VERSION


def big_world(combats: int, per_combat: int) -> World:
    fights: dict[str, Combat] = {}
    for n in range(combats):
        cid = f"combat{n:010d}"
        people = {}
        for k in range(per_combat):
            pid = f"c{n:05d}x{k:09d}"
            stats = {"dex": k % 5, "int": k % 3, "proficient": ["perception", "stealth"]}
            people[pid] = Combatant(
                id=pid, name=f"Goblin {k}", owners=(f"player{k % 4:010d}",), is_npc=k % 3 == 0,
                stats=stats, score=float(10 + k % 20),
                ext=Fighter(base=float(10 + k % 20), natural=k % 20 + 1,
                            reroll=Reroll(f"offer{k}", "declined", (f"player{k % 4:010d}",), "1d20", 3)
                            if k % 7 == 0 else None, dashes=((1, 5),) if k % 11 == 0 else ()),
                source=(f"Goblin {k}", [f"player{k % 4:010d}"], k % 3 == 0, False, False, False, None,
                        f"actor{k:011d}", f"token{k:011d}", stats),
            )
        roster = tuple(people)
        plan = plan_text({"round": 2, "current": roster[0],
                          "order": [{"combatant_id": p, "initiative": 30.0 - i / 100, "acts": "full", "tags": [],
                                     "detail": {}, "rules": []} for i, p in enumerate(roster)]})
        fights[cid] = Combat(id=cid, ruleset="balanced-d20", combatants=people, roster=roster, round=2,
                             order=roster, passed=frozenset(roster[:10]), current=roster[10], revision=3,
                             last_plan=plan)
    return World(world="world-big", ruleset="balanced-d20", gm_users=frozenset({"gm"}), last_seq=1000,
                 combats=fights)


async def stall_while(work: Callable[[], Awaitable[None]]) -> tuple[float, float]:
    """(longest loop stall, wall time of ``work``) in seconds, with a 1 ms ticker running."""
    worst = 0.0
    stop = False

    async def ticker() -> None:
        nonlocal worst
        while not stop:
            before = time.perf_counter()
            await asyncio.sleep(0.001)
            worst = max(worst, time.perf_counter() - before - 0.001)

    tick = asyncio.ensure_future(ticker())
    await asyncio.sleep(0.05)
    worst = 0.0
    start = time.perf_counter()
    await work()
    took = time.perf_counter() - start
    await asyncio.sleep(0.05)
    stop = True
    await tick
    return worst, took


async def measure(combats: int, per_combat: int) -> None:
    world = big_world(combats, per_combat)
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "stall.db")

        async def pickle_on_loop() -> None:  # the code before this change, inline
            blob = pickle.dumps(world, protocol=pickle.HIGHEST_PROTOCOL)
            store.db.execute("INSERT OR REPLACE INTO snapshots (world, seq, engine_version, state) "
                             "VALUES (?, ?, ?, ?)", (world.world, world.last_seq, "1", blob))

        async def data_on_loop() -> None:
            store._encoder = snapshots.Encoder()  # every combat encoded
            store.save_snapshot(world)

        async def data_in_thread() -> None:
            store._encoder = snapshots.Encoder()
            await asyncio.wrap_future(store.save_snapshot_soon(world))

        async def next_in_thread() -> None:  # after a message that changed one combat
            nonlocal world
            first = next(iter(world.combats.values()))
            world = replace(world, last_seq=world.last_seq + 1,
                            combats={**world.combats, first.id: replace(first, revision=first.revision + 1)})
            await asyncio.wrap_future(store.save_snapshot_soon(world))

        print(f"world: {combats} combats x {per_combat} combatants; pickle {len(pickle.dumps(world)) / 1e6:.1f} MB, "
              f"snapshot {len(snapshots.Encoder().encode(world)) / 1e6:.1f} MB (MessagePack, zlib level 1; engine version {ENGINE_VERSION})")
        for name, work in (("before: pickle on the event loop", pickle_on_loop),
                           ("data format on the event loop, all combats", data_on_loop),
                           ("after: snapshot thread, all combats", data_in_thread),
                           ("after: snapshot thread, one combat changed", next_in_thread)):
            stalls = [await stall_while(work) for _ in range(3)]
            worst = max(s for s, _ in stalls)
            took = min(t for _, t in stalls)
            print(f"  {name:44s} longest loop stall {worst * 1e3:7.1f} ms; snapshot took {took * 1e3:7.1f} ms")
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--combats", type=int, default=200)
    parser.add_argument("--combatants", type=int, default=500)
    args = parser.parse_args()
    asyncio.run(measure(args.combats, args.combatants))


if __name__ == "__main__":
    main()
