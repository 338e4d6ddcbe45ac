"""Round trips through a real socket.io client against the real server on a free port."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from adapter import protocol
from tests.foundry import combat, combatant, current, d20_roll
from tests.support.sidecar import GM, Running, auth, connect, refused, until

COMBAT_ID = "cmbt000000000001"


def fight(round_: int = 0) -> dict[str, Any]:
    return combat(COMBAT_ID, [
        combatant("aaaa000000000001", "Aria", owners=["player000000001"]),
        combatant("bbbb000000000002", "Boss", npc=True, hidden=True),
    ], round_=round_)


def hook(seq: int, name: str = "createCombat", **extra: Any) -> dict[str, Any]:
    return {"seq": seq, "user": GM, "world_time": 0, "hook": name, "combat": fight(),
            "current": current(), **extra}


def roll(seq: int, cid: str, natural: int) -> dict[str, Any]:
    return hook(seq, "initiativeRoll", roll={"combatant_id": cid, "roll": d20_roll(natural, 2)})


@pytest.mark.parametrize("bad, code", [
    ({"token": "wrong-token"}, "auth_failed"),
    ({"ruleset": "no-such-ruleset"}, "unknown_ruleset"),
    ({"protocol": 2}, "protocol_mismatch"),
    ({"world": ""}, "invalid_auth"),
])
async def test_connect_is_refused_with_a_reason_code(sidecar: Running, bad: dict[str, Any], code: str) -> None:
    error = await refused(sidecar.url, auth(**bad))
    assert error["code"] == code
    protocol.check_outbound("connect-error", error)


async def test_connect_without_auth_is_refused(sidecar: Running) -> None:
    error = await refused(sidecar.url, None)
    assert error["code"] == "invalid_auth"


async def test_welcome_then_hook_gets_ack_with_plan(sidecar: Running) -> None:
    client = await connect(sidecar.url, auth())
    welcome = await asyncio.wait_for(client.welcome, 5)
    assert welcome == {"world": "world0000000001", "ruleset": "foundry-core", "last_seq": 0, "combats": [],
                       "intents": [], "skipped_acts": ["defend_only", "held", "none"]}
    protocol.check_outbound("welcome", welcome)
    ack = await client.send("hook", hook(1))
    assert ack["ok"] and ack["seq"] == 1
    assert [p["revision"] for p in ack["plans"]] == [1]
    ack = await client.send("hook", roll(2, "bbbb000000000002", 15))
    plan = ack["plans"][0]
    assert plan["revision"] == 2
    assert [e["combatant_id"] for e in plan["order"]] == ["bbbb000000000002", "aaaa000000000001"]
    assert plan["order"][0]["initiative"] == 17
    protocol.check_outbound("ack", ack)
    await client.close()


@pytest.mark.parametrize("mutate, code, path", [
    (lambda p: p.update(world_time="noon"), "invalid_message", "/world_time"),
    (lambda p: p.pop("current"), "invalid_message", ""),
    (lambda p: p.update(hook="combatExplode"), "invalid_message", "/hook"),
    (lambda p: p["combat"]["combatants"][0].update(owners="everyone"), "invalid_message",
     "/combat/combatants/0/owners"),
    (lambda p: p["combat"]["combatants"][1].pop("_id"), "invalid_message", "/combat/combatants/1"),
    (lambda p: p["combat"].update(padding="x" * 300_000), "too_large", None),
])
async def test_bad_payload_is_refused_with_code_and_path_and_changes_nothing(
    sidecar: Running, mutate: Any, code: str, path: str | None
) -> None:
    client = await connect(sidecar.url, auth())
    await client.welcome
    first = await client.send("hook", roll(1, "aaaa000000000001", 12))
    bad = roll(2, "bbbb000000000002", 19)
    mutate(bad)
    ack = await client.send("hook", bad)
    assert ack["ok"] is False and ack["seq"] == 2
    assert ack["error"]["code"] == code
    assert ack["error"].get("path") == path
    if code == "invalid_message" and path == "":
        assert "current" in ack["error"]["message"]
    protocol.check_outbound("ack", ack)
    again = await client.send("hook", roll(1, "aaaa000000000001", 12))  # a duplicate: current plans
    assert again["duplicate"] is True
    assert again["plans"] == first["plans"]
    nxt = await client.send("hook", hook(3, "updateCombat"))
    assert nxt["ok"] is True and nxt["plans"] == []  # the refused seq 2 was used up
    await client.close()


async def test_duplicate_seq_is_acked_without_being_applied_twice(sidecar: Running) -> None:
    client = await connect(sidecar.url, auth())
    await client.welcome
    await client.send("hook", hook(1))
    ack = await client.send("hook", roll(2, "aaaa000000000001", 12))
    dup = await client.send("hook", roll(2, "aaaa000000000001", 3))
    assert dup["ok"] and dup["duplicate"] is True
    assert dup["plans"] == ack["plans"]  # the lower second roll was not applied
    await client.close()


async def test_gap_in_seq_is_refused_out_of_order_and_not_used_up(sidecar: Running) -> None:
    client = await connect(sidecar.url, auth())
    await client.welcome
    await client.send("hook", hook(1))
    gap = await client.send("hook", hook(3, "updateCombat"))
    assert gap["ok"] is False and gap["error"]["code"] == "out_of_order"
    assert (await client.send("hook", hook(2, "updateCombat")))["ok"] is True
    assert (await client.send("hook", hook(3, "updateCombat")))["ok"] is True
    await client.close()


async def test_second_connection_for_a_world_supersedes_the_first(sidecar: Running) -> None:
    first = await connect(sidecar.url, auth())
    await first.welcome
    await first.send("hook", hook(1))
    second = await connect(sidecar.url, auth())
    welcome = await second.welcome
    assert welcome["last_seq"] == 1
    assert await until(lambda: not first.sio.connected)
    notice = {"world": "world0000000001", "message": "another connection took over this world"}
    assert ("superseded", notice) in first.events
    assert not first.sio.connected
    assert (await second.send("hook", hook(2, "updateCombat")))["ok"] is True
    await second.close()


async def test_restart_on_the_same_database_gives_the_same_plans_and_last_seq(sidecar: Running) -> None:
    client = await connect(sidecar.url, auth())
    await client.welcome
    await client.send("hook", hook(1))
    await client.send("hook", roll(2, "aaaa000000000001", 12))
    last = await client.send("hook", roll(3, "bbbb000000000002", 14))
    await client.close()
    await sidecar.restart()
    client = await connect(sidecar.url, auth())
    welcome = await client.welcome
    assert welcome["last_seq"] == 3
    assert welcome["combats"] == [{"combat_id": COMBAT_ID, "revision": last["plans"][0]["revision"]}]
    dup = await client.send("hook", roll(3, "bbbb000000000002", 14))
    assert dup["plans"] == last["plans"]
    await client.close()


async def test_intent_for_an_unknown_combat_is_refused(sidecar: Running) -> None:
    client = await connect(sidecar.url, auth())
    await client.welcome
    ack = await client.send("intent", {"seq": 1, "user": GM, "world_time": 0, "kind": "initiative.set",
                                       "combat_id": "nope", "combatant_id": "x", "args": {"value": 3}})
    assert ack["error"]["code"] == "unknown_combat" and ack["error"]["path"] == "/combat_id"
    await client.close()


async def test_a_leaving_writer_leaves_a_snapshot_so_a_restart_replays_nothing(sidecar: Running) -> None:
    from adapter.engine import World
    from adapter.store import Store

    client = await connect(sidecar.url, auth())
    await client.welcome
    await client.send("hook", hook(1))
    await client.send("hook", roll(2, "aaaa000000000001", 12))
    await client.close()
    def stored() -> World | None:
        store = Store(sidecar.config.db)
        try:
            return store.snapshot("world0000000001")
        finally:
            store.close()

    assert await until(lambda: stored() is not None)
    snap = stored()
    assert snap is not None and snap.last_seq == 2
