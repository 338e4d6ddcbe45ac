"""Issue 15, item 2: a message that cannot be stored as it came is still acked.

A lone UTF-16 surrogate (what ``JSON.stringify`` makes of a name cut inside an emoji), a
5,000-digit integer and JSON nested 990 levels deep used to end in a traceback with no ack,
and the world stopped (the next seq was ``out_of_order``). Each is now refused
``invalid_message`` with its path, its seq used up as for any refusal, and the world goes on.
The frames are written by hand: python-socketio cannot send a 5,000-digit integer.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from adapter.pipeline import open_session, process
from adapter.rulesets import RULESETS
from tests.foundry import combat, combatant, current
from tests.server.rawclient import RawClient
from tests.support.sidecar import GM, Running, auth, connect, refused

SURROGATE = "\\ud83d"  # JSON text of a lone high surrogate


def hook_text(seq: int, *, user: str = f'"{GM}"', options: str = "null", combatants: str = "[]") -> str:
    return ('["hook",{"seq":' + str(seq) + ',"user":' + user + ',"world_time":0,"hook":"updateCombat",'
            '"combat":{"_id":"combatUnstorable","round":0,"combatants":' + combatants + '},'
            '"current":{"round":0,"combatantId":null},"options":' + options + '}]')


DEEP = "[" * 988 + "0" + "]" * 988

CASES = [
    ("surrogate in a field", dict(user=f'"{SURROGATE}"'), "/user"),
    ("surrogate in free text", dict(options=f'{{"label":"ab{SURROGATE}"}}'), "/options/label"),
    ("surrogate in a key", dict(options=f'{{"{SURROGATE}":1}}'), "/options/\\ud83d"),
    ("5,000-digit integer", dict(options='{"n":' + "7" * 5000 + "}"), "/options/n"),
    ("350-digit initiative", dict(combatants='[{"_id":"c1","name":"A","initiative":' + "9" * 350 + "}]"),
     "/combat/combatants/0/initiative"),
    ("990 levels deep", dict(options='{"d":' + DEEP + "}"), "/options/d" + "/0" * 31),
]


@pytest.mark.parametrize("name, parts, path", CASES, ids=[c[0] for c in CASES])
async def test_an_unstorable_message_is_refused_with_its_path_and_its_seq_used_up(
    sidecar: Running, name: str, parts: dict[str, str], path: str,
) -> None:
    raw = await RawClient.open(sidecar.url)
    try:
        assert "sid" in await raw.connect(auth())
        ack = await raw.ack(await raw.emit_raw(hook_text(1, **parts)), timeout=5)
        assert ack["ok"] is False and ack["seq"] == 1, ack
        assert ack["error"]["code"] == "invalid_message" and ack["error"]["path"] == path, ack
        nxt = await raw.ack(await raw.emit_raw(hook_text(2)))
        assert nxt["ok"] is True and "duplicate" not in nxt, nxt  # seq 1 was used up, seq 2 follows
        again = await raw.ack(await raw.emit_raw(hook_text(1, **parts)))
        assert again["duplicate"] is True and again["seq"] == 1  # a resend changes nothing
    finally:
        await raw.close()
    # and it was stored: a restart knows seq 2 and rebuilds the world
    await sidecar.restart()
    client = await connect(sidecar.url, auth())
    assert (await client.welcome)["last_seq"] == 2
    await client.close()


async def test_a_surrogate_in_auth_is_refused_invalid_auth_not_a_hang(sidecar: Running) -> None:
    error = await refused(sidecar.url, auth(world="world\ud83d"))
    assert error["code"] == "invalid_auth" and "/world" in error["message"]
    client = await connect(sidecar.url, auth())  # the server still serves
    assert (await client.welcome)["last_seq"] == 0
    await client.close()


async def test_a_world_id_equal_to_another_connections_sid_connects(sidecar: Running) -> None:
    first = await connect(sidecar.url, auth())
    await first.welcome
    sid = first.sio.get_sid()
    assert sid
    second = await connect(sidecar.url, auth(world=sid))
    welcome = await second.welcome
    assert welcome["world"] == sid and welcome["last_seq"] == 0
    payload: dict[str, Any] = json.loads(hook_text(1))[1]
    assert (await second.send("hook", payload))["ok"] is True
    assert (await first.send("hook", payload))["ok"] is True  # the first world is its own
    await first.close()
    await second.close()


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1, 10**20, int("9" * 350)], ids=["2 to the 64", "below -2 to the 63", "1e20", "350 digits"])
def test_an_integer_beyond_64_bits_is_refused_with_its_path_not_an_internal_error(value: int) -> None:
    """Over the socket such a number arrives as a float; a replayed recording (read with the
    standard library) or an in-process caller hands the pipeline a Python int, which the log
    cannot store: it used to end as ``internal_error`` with a traceback."""
    world = open_session(None, {"world": "w", "ruleset": "foundry-core", "gm_users": [GM]}, rulesets=RULESETS)
    fight = combat("combatBigInt0001", [{**combatant("c000000000000001", "Ann"), "initiative": value}])
    message = {"seq": 1, "user": GM, "world_time": 0, "hook": "createCombat", "combat": fight, "current": current()}
    result = process(world, "hook", message, rulesets=RULESETS)
    assert result.ack["ok"] is False and result.ack["seq"] == 1
    assert result.ack["error"]["code"] == "invalid_message", result.ack
    assert result.ack["error"]["path"] == "/combat/combatants/0/initiative"
    assert result.world.combats == world.combats and result.world.last_seq == 1
