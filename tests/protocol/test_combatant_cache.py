"""The hook fast path skips combatants already checked byte for byte, and nothing else."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from adapter import protocol
from adapter.errors import InvalidMessage
from tests.foundry import combat, combatant, current


def hook() -> dict[str, Any]:
    fighters = [combatant(f"cache{i:011d}", f"Fighter {i}", owners=["p0000000000001"]) for i in range(4)]
    return {"seq": 1, "user": "gm00000000000001", "world_time": 0, "hook": "updateCombat",
            "combat": combat("cacheCombat00001", fighters, round_=1), "current": current(1, fighters[0]["_id"])}


def test_a_changed_combatant_is_checked_again_even_after_its_old_self_passed() -> None:
    good = hook()
    protocol.validate("hook", good)  # every combatant now known
    bad = copy.deepcopy(good)
    bad["combat"]["combatants"][2]["owners"] = "everyone"
    with pytest.raises(InvalidMessage) as refused:
        protocol.validate("hook", bad)
    assert refused.value.path == "/combat/combatants/2/owners"


def test_known_combatants_do_not_excuse_the_rest_of_the_hook() -> None:
    good = hook()
    protocol.validate("hook", good)
    bad = copy.deepcopy(good)
    bad["combat"]["round"] = -3
    with pytest.raises(InvalidMessage) as refused:
        protocol.validate("hook", bad)
    assert refused.value.path == "/combat/round"


def test_a_refused_hook_teaches_the_cache_nothing() -> None:
    bad = hook()  # valid combatants never seen before, but the hook itself is wrong
    new_fighter = bad["combat"]["combatants"][1]
    new_fighter["name"] = "Never Seen Before 31337"
    bad["current"] = "not an object"
    with pytest.raises(InvalidMessage):
        protocol.validate("hook", bad)
    import orjson

    assert orjson.dumps(new_fighter) not in protocol._CHECKED_ITEMS["hook"]


def test_the_cache_keeps_a_bounded_number_of_combatants() -> None:
    for n in range(protocol.CHECKED_ITEMS_KEPT // 4 + 10):
        h = hook()
        for c in h["combat"]["combatants"]:
            c["name"] = f"{c['name']} {n}"
        protocol.validate("hook", h)
    assert len(protocol._CHECKED_ITEMS["hook"]) <= protocol.CHECKED_ITEMS_KEPT


def test_an_object_trusted_as_a_plan_entry_is_not_trusted_as_a_combatant() -> None:
    entry = {"combatant_id": "cacheEntry000001", "initiative": 12.0, "acts": "full", "reaction": None,
             "tags": [], "detail": {}, "rules": []}
    ack = {"ok": True, "seq": 1, "plans": [{"combat_id": "c", "revision": 1, "round": 1, "turn": 0,
           "current": "cacheEntry000001", "next_round": None, "order": [entry]}], "prompts": [], "notices": []}
    protocol.check_outbound("ack", ack)
    sneaky = hook()
    sneaky["combat"]["combatants"].append(dict(entry))  # no _id: not a combatant
    with pytest.raises(InvalidMessage) as refused:
        protocol.validate("hook", sneaky)
    assert refused.value.path == "/combat/combatants/4"


def test_a_broken_plan_entry_still_fails_the_outbound_check() -> None:
    ack = {"ok": True, "seq": 1, "plans": [{"combat_id": "c", "revision": 1, "round": 1, "turn": 0,
           "current": None, "next_round": None, "order": [{"combatant_id": "x", "initiative": 1.0,
           "acts": "sprinting", "reaction": None, "tags": [], "detail": {}, "rules": []}]}],
           "prompts": [], "notices": []}
    with pytest.raises(AssertionError):
        protocol.check_outbound("ack", ack)
