"""One writer per world, worlds isolated from each other, and per-world tokens.

A connection is bound at connect to the world its auth names. Whatever ids it sends
afterwards (another world's combat, combatants, prompts), it reads and changes its own world
only; another world's client never hears of it.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import socketio

from adapter.cli import parser
from adapter.config import ConfigError, from_args
from tests.foundry import combat, combatant, current, d20_roll
from tests.reliability.table import read_state
from tests.support.sidecar import GM, TOKEN, Client, Running, auth, connect, refused, until

B_COMBAT = "combatOfWorldB01"
B_HERO = "heroOfWorldB0001"
B_PLAYER = "playerOfWorldB01"


def b_fight() -> dict[str, Any]:
    return combat(B_COMBAT, [
        combatant(B_HERO, "Hero", owners=[B_PLAYER], stats={"dex": 2, "int": 3}),
        combatant("ogreOfWorldB0001", "Ogre", npc=True, stats={"dex": 0, "int": -2}),
    ])


def hook(seq: int, name: str, fight: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"seq": seq, "user": GM, "world_time": 0, "hook": name, "combat": fight,
            "current": current(), **extra}


def intent(seq: int, kind: str, args: dict[str, Any], **ids: Any) -> dict[str, Any]:
    return {"seq": seq, "user": GM, "world_time": 0, "kind": kind, "args": args, **ids}


async def state(client: Client, seq: int, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The world's plans and prompts, read with a duplicate of an already stored message."""
    dup = await client.send(event, {**payload, "seq": seq})
    assert dup["duplicate"] is True
    return {"plans": dup["plans"], "prompts": dup["prompts"]}


async def test_a_connection_for_world_a_never_reads_or_changes_world_b(sidecar: Running) -> None:
    b = await connect(sidecar.url, auth(world="worldB", ruleset="balanced-d20"))
    await b.welcome
    created = hook(1, "createCombat", b_fight())
    await b.send("hook", created)
    rolled = await b.send("hook", hook(2, "initiativeRoll", b_fight(),
                                       roll={"combatant_id": B_HERO, "roll": d20_roll(2, 2)}))
    [offer] = rolled["prompts"]  # BI-2: a natural 2 <= Int 3 offers a reroll
    assert offer["kind"] == "reroll" and offer["to"] == [B_PLAYER]
    before = await state(b, 2, "hook", created)
    b.events.clear()

    a = await connect(sidecar.url, auth(world="worldA", ruleset="balanced-d20"))
    welcome = await a.welcome
    assert welcome["combats"] == [] and welcome["last_seq"] == 0  # nothing of B shows
    own = combat("combatOfWorldA01", [combatant("heroOfWorldA0001", "Mine", owners=[B_PLAYER])])
    assert (await a.send("hook", hook(1, "createCombat", own)))["ok"]
    attempts = [
        ("intent", intent(2, "initiative.set", {"value": 30}, combat_id=B_COMBAT, combatant_id=B_HERO),
         ("unknown_combat", "/combat_id")),
        ("intent", intent(3, "reroll.decide", {"prompt_id": offer["prompt_id"], "accept": True},
                          combat_id=own["_id"]), ("unknown_prompt", "/args/prompt_id")),
        ("intent", {**intent(4, "reroll.decide", {"prompt_id": offer["prompt_id"], "accept": True},
                             combat_id=B_COMBAT), "user": B_PLAYER},
         ("unknown_combat", "/combat_id")),
        ("intent", intent(5, "reroll.approve", {"prompt_id": offer["prompt_id"], "approve": True},
                          combat_id=B_COMBAT), ("unknown_combat", "/combat_id")),
        ("intent", intent(6, "dash", {"amount": 3}, combat_id=B_COMBAT, combatant_id=B_HERO),
         ("unknown_combat", "/combat_id")),
        ("intent", intent(7, "initiative.set", {"value": 30}, combat_id=own["_id"], combatant_id=B_HERO),
         ("unknown_combatant", "/combatant_id")),
    ]
    for event, payload, (code, path) in attempts:
        ack = await a.send(event, {**payload, "world": "worldB"})  # naming B changes nothing
        assert ack["ok"] is False and (ack["error"]["code"], ack["error"].get("path")) == (code, path), ack
    # a hook with B's combat id makes a combat of A's own: none of B's rolls or prompts in it
    mine = await a.send("hook", {**hook(8, "createCombat", b_fight()), "world": "worldB"})
    [plan] = mine["plans"]
    assert plan["combat_id"] == B_COMBAT and all(e["initiative"] is None for e in plan["order"])
    assert mine["prompts"] == []
    theirs = await a.send("hook", hook(9, "updateCombat", b_fight()))
    assert theirs["ok"] and theirs["plans"] == []
    mine_now = await read_state(a.send, 9, [own["_id"], B_COMBAT])
    assert mine_now["prompts"] == [] and sorted(p["combat_id"] for p in mine_now["plans"]) == sorted(
        [own["_id"], B_COMBAT])

    await asyncio.sleep(0.1)
    assert await state(b, 2, "hook", created) == before, "world B changed"
    assert b.events == [], "world B heard of world A"
    again = await b.send("intent", {**intent(3, "reroll.decide", {"prompt_id": offer["prompt_id"], "accept": False},
                                             combat_id=B_COMBAT), "user": B_PLAYER})
    assert again["ok"] is True  # B's own prompt is still pending for B
    await a.close()
    await b.close()


async def test_a_new_connection_supersedes_only_its_own_worlds_writer(sidecar: Running) -> None:
    fight = combat("combatSuperseded", [combatant("c000000000000001", "Ann")])
    a1 = await connect(sidecar.url, auth(world="worldA"))
    b = await connect(sidecar.url, auth(world="worldB"))
    await a1.welcome
    await b.welcome
    assert (await a1.send("hook", hook(1, "createCombat", fight)))["ok"]
    a2 = await connect(sidecar.url, auth(world="worldA"))
    assert (await a2.welcome)["last_seq"] == 1
    try:  # the old writer, in the moment before it is disconnected, can change nothing
        late = await a1.send("hook", hook(2, "updateCombat", fight), timeout=0.5)
    except socketio.exceptions.SocketIOError:  # or it is already gone
        late = None
    assert late is None or late["ok"] is False, late
    assert await until(lambda: not a1.sio.connected)
    assert ("superseded", {
        "world": "worldA", "message": "another connection took over this world"}) in a1.events
    assert b.sio.connected and not any(name == "superseded" for name, _ in b.events)
    nxt = await a2.send("hook", hook(2, "updateCombat", fight))
    assert nxt["ok"] is True and "duplicate" not in nxt  # seq 2 was not used by the old writer
    assert (await b.send("hook", hook(1, "createCombat", fight)))["ok"] is True
    await a2.close()
    await b.close()


@pytest.fixture
async def per_world(sidecar: Running) -> Running:
    await sidecar.stop()
    sidecar.config = replace(sidecar.config, world_tokens={"worldA": "token-of-a", "worldB": "token-of-b"})
    await sidecar.start()
    return sidecar


@pytest.mark.parametrize("world, token, admitted", [
    ("worldA", "token-of-a", True),
    ("worldA", "token-of-b", False),
    ("worldA", TOKEN, False),  # a world with its own token no longer takes the shared one
    ("worldB", "token-of-b", True),
    ("worldB", "token-of-a", False),
    ("worldC", TOKEN, True),  # other worlds keep the shared token
    ("worldC", "token-of-a", False),
])
async def test_per_world_tokens_admit_each_world_only_with_its_own_token(
    per_world: Running, world: str, token: str, admitted: bool,
) -> None:
    if admitted:
        client = await connect(per_world.url, auth(world=world, token=token))
        assert (await client.welcome)["world"] == world
        await client.close()
    else:
        assert (await refused(per_world.url, auth(world=world, token=token)))["code"] == "auth_failed"


def test_the_tokens_file_is_read_and_a_bad_one_stops_the_start(tmp_path: Path) -> None:
    good = tmp_path / "tokens.json"
    good.write_text(json.dumps({"worldA": "token-of-a"}))
    good.chmod(0o600)  # a tokens file open to others is refused (test_secrets.py)
    args = parser().parse_args(["serve", "--db", str(tmp_path / "x.db"), "--token", "t", "--tokens-file", str(good)])
    config = from_args(args)
    assert config.token_for("worldA") == "token-of-a" and config.token_for("other") == "t"
    for text in ("[1, 2]", '{"worldA": ""}', '{"worldA": 3}', "{not json"):
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        bad.chmod(0o600)
        args = parser().parse_args(["serve", "--db", str(tmp_path / "x.db"), "--token", "t", "--tokens-file", str(bad)])
        with pytest.raises(ConfigError, match="tokens file"):
            from_args(args)
