"""A served turn change does not read again a large combatant list its world keeps: the
guard reads the frame through ``seen.frame_reader`` (adapter/seen.py; adapter/pipeline.py,
"what a message costs"), and the acks are those of the whole read."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import orjson

from adapter import seen
from adapter.pipeline import open_session, process
from adapter.rulesets import RULESETS
from adapter.service import KEEP_READ_FROM
from tests.foundry import combat, combatant, current
from tests.support.sidecar import GM, Running, auth, connect

COMBAT_ID = "cmbt000000000001"


def hooks(count: int) -> list[dict[str, Any]]:
    people = [combatant(f"c{i:015d}", f"Fighter {i}", stats={"dex": i % 5}) for i in range(60)]
    for i, person in enumerate(people):
        person["initiative"] = float(100 - i)
    doc = combat(COMBAT_ID, people)
    out = [{"seq": 1, "user": GM, "world_time": 0, "hook": "createCombat", "combat": copy.deepcopy(doc),
            "current": current()}]
    for seq in range(2, count + 2):
        turn = seq - 2
        doc = {**doc, "round": 1, "turn": turn}
        out.append({"seq": seq, "user": GM, "world_time": 6.0 * seq, "hook": "combatStart" if turn == 0 else "combatTurn",
                    "combat": copy.deepcopy(doc), "current": current(1, people[turn]["_id"], turn)})
    return out


async def test_a_turn_change_reads_a_kept_list_once_and_acks_as_the_whole_read(sidecar: Running, monkeypatch: Any) -> None:
    taken: list[bool] = []
    real = seen._read_around

    def counting(*args: Any) -> Any:
        item = real(*args)
        taken.append(item is not None)
        return item

    monkeypatch.setattr(seen, "_read_around", counting)
    messages = hooks(5)
    assert len(orjson.dumps(messages[0]["combat"]["combatants"])) >= KEEP_READ_FROM
    client = await connect(sidecar.url, auth())
    await asyncio.wait_for(client.welcome, 5)
    world = open_session(None, {k: v for k, v in auth().items() if k != "token"}, rulesets=RULESETS)
    for message in messages:
        ack = await client.send("hook", message)
        whole = process(world, "hook", orjson.loads(orjson.dumps(message)), from_wire=True, rulesets=RULESETS)
        world = whole.world
        assert ack == orjson.loads(orjson.dumps(whole.ack))
    await client.close()
    assert taken == [True] * (len(messages) - 1)  # every hook after the first
