"""Issue 15, item 8: a world's size is capped, and a duplicate ack stays the size of one combat.

300 combats of 500 combatants took 558 MB and a duplicate ack of every plan was 38.8 MB.
Now a hook past :data:`MAX_COMBATANTS` is refused ``too_many_combatants``, one creating a
combat past :data:`MAX_COMBATS` ``too_many_combats`` (both use up their seq and change
nothing), and a duplicate carries the plan and prompts of the combat its message names.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from adapter import protocol
from adapter.engine import World
from adapter.pipeline import MAX_COMBATANTS, MAX_COMBATS, open_session, process
from adapter.rulesets import RULESETS
from tests.foundry import combat, combatant, current
from tests.support.sidecar import GM


def fight(cid: str, people: int) -> dict[str, Any]:
    return combat(cid, [combatant(f"{cid[:6]}{i:010d}", f"Fighter {i}", npc=True) for i in range(people)])


def hook(seq: int, name: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"seq": seq, "user": GM, "world_time": 0, "hook": name, "combat": data, "current": current()}


def start() -> World:
    return open_session(None, {"world": "w", "ruleset": "foundry-core", "gm_users": [GM]}, rulesets=RULESETS)


def refused_unchanged(world: World, payload: dict[str, Any], code: str, path: str) -> World:
    result = process(world, "hook", payload, rulesets=RULESETS)
    assert result.ack["ok"] is False and result.ack["error"]["code"] == code, result.ack
    assert result.ack["error"]["path"] == path and result.ack["seq"] == payload["seq"]
    protocol.check_outbound("ack", result.ack)  # the code is in the schema
    assert result.record is True and result.world.last_seq == payload["seq"]  # the seq is used up
    assert result.world.combats == world.combats and result.world.prompts == world.prompts
    return result.world


def test_a_combat_past_the_combatant_limit_is_refused_too_many_combatants() -> None:
    world = start()
    ok = process(world, "hook", hook(1, "createCombat", fight("combatAtTheLimit", MAX_COMBATANTS)), rulesets=RULESETS)
    assert ok.ack["ok"] is True
    world = refused_unchanged(ok.world, hook(2, "updateCombat", fight("combatAtTheLimit", MAX_COMBATANTS + 1)),
                              "too_many_combatants", "/combat/combatants")
    assert process(world, "hook", hook(3, "updateCombat", fight("combatAtTheLimit", 3)), rulesets=RULESETS).ack["ok"] is True


def test_a_combat_past_the_combat_limit_is_refused_too_many_combats_until_one_is_deleted() -> None:
    world = start()
    for i in range(MAX_COMBATS):
        result = process(world, "hook", hook(i + 1, "createCombat", fight(f"combat{i:011d}", 1)), rulesets=RULESETS)
        assert result.ack["ok"] is True, result.ack
        world = result.world
    seq = MAX_COMBATS + 1
    world = refused_unchanged(world, hook(seq, "createCombat", fight("combatOneTooMany", 1)),
                              "too_many_combats", "/combat/_id")
    updated = process(world, "hook", hook(seq + 1, "updateCombat", fight(f"combat{0:011d}", 2)), rulesets=RULESETS)
    assert updated.ack["ok"] is True  # a known combat is still served
    deleted = process(updated.world, "hook", hook(seq + 2, "deleteCombat", fight(f"combat{0:011d}", 2)), rulesets=RULESETS)
    assert deleted.ack["ok"] is True
    again = process(deleted.world, "hook", hook(seq + 3, "createCombat", fight("combatOneTooMany", 1)), rulesets=RULESETS)
    assert again.ack["ok"] is True


@pytest.fixture(scope="module")
def crowded() -> World:
    world = start()
    for i in range(MAX_COMBATS):
        result = process(world, "hook", hook(i + 1, "createCombat", fight(f"crowd{i:011d}", 20)), rulesets=RULESETS)
        assert result.ack["ok"] is True
        world = result.world
    return world


def test_a_duplicate_ack_carries_only_the_combat_its_message_names(crowded: World) -> None:
    named = f"crowd{7:011d}"
    dup = process(crowded, "hook", hook(3, "updateCombat", fight(named, 20)), rulesets=RULESETS).ack
    assert dup["duplicate"] is True and [p["combat_id"] for p in dup["plans"]] == [named]
    protocol.check_outbound("ack", dup)
    everything = sum(len(orjson.dumps(process(crowded, "hook", hook(1, "updateCombat", fight(cid, 0)), rulesets=RULESETS).ack))
                     for cid in crowded.combats)
    assert len(orjson.dumps(dup)) * MAX_COMBATS <= everything * 1.1  # one combat's worth, not the world's
    intent = {"seq": 2, "user": GM, "world_time": 0, "kind": "initiative.set", "combat_id": named, "args": {}}
    assert [p["combat_id"] for p in process(crowded, "intent", intent, rulesets=RULESETS).ack["plans"]] == [named]
    unknown = process(crowded, "hook", hook(4, "updateCombat", fight("combatNotKnown01", 1)), rulesets=RULESETS).ack
    assert unknown["duplicate"] is True and unknown["plans"] == []
    assert process(crowded, "hook", {"seq": 5}, rulesets=RULESETS).ack["plans"] == []  # nothing named, nothing read
