"""Issue 12's latent wedge: once a seq is taken, every failure is an ack.

``check_outbound`` ran outside the ``try`` of ``pipeline.process``: an ack failing its own
schema raised out of the handler, no ack went back, and the module's outbox retried the same
seq forever. A failing check is injected here; the message must be refused
``internal_error`` with its seq used up and the world exactly as it was.
"""

from __future__ import annotations

from typing import Any

import pytest

from adapter import protocol
from adapter.engine import World
from adapter.pipeline import open_session, process
from adapter.rulesets import RULESETS
from tests.foundry import combat, combatant, current
from tests.support.sidecar import GM, Running, auth, connect


def hook(seq: int, name: str = "createCombat") -> dict[str, Any]:
    fight = combat("combatWedge00001", [combatant("c000000000000001", "Ann")])
    return {"seq": seq, "user": GM, "world_time": 0, "hook": name, "combat": fight, "current": current()}


def failing_ack_check(monkeypatch: pytest.MonkeyPatch) -> None:
    real = protocol.check_outbound

    def check(name: str, instance: Any) -> None:
        if name == "ack" and instance.get("ok") is True:
            raise AssertionError("outbound ack fails its schema (injected)")
        real(name, instance)

    monkeypatch.setattr(protocol, "check_outbound", check)


def test_a_failing_outbound_check_is_an_internal_error_ack_with_the_seq_used_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world: World = open_session(None, {"world": "w", "ruleset": "foundry-core", "gm_users": [GM]}, rulesets=RULESETS)
    first = process(world, "hook", hook(1), rulesets=RULESETS)
    assert first.ack["ok"] is True
    before = first.world
    failing_ack_check(monkeypatch)
    result = process(before, "hook", hook(2, "updateCombat"), rulesets=RULESETS)
    assert result.ack["ok"] is False and result.ack["seq"] == 2
    assert result.ack["error"]["code"] == "internal_error"
    assert result.record is True and result.emits == ()
    assert result.world.last_seq == 2
    assert (result.world.combats, result.world.prompts, result.world.ext) == (before.combats, before.prompts, before.ext)


async def test_through_the_server_the_world_goes_on_after_a_failing_outbound_check(
    sidecar: Running, monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = await connect(sidecar.url, auth())
    await client.welcome
    assert (await client.send("hook", hook(1)))["ok"] is True
    with monkeypatch.context() as patched:
        failing_ack_check(patched)
        ack = await client.send("hook", hook(2, "updateCombat"), timeout=5)
        assert ack["ok"] is False and ack["error"]["code"] == "internal_error" and ack["seq"] == 2
    nxt = await client.send("hook", hook(3, "updateCombat"), timeout=5)
    assert nxt["ok"] is True and "duplicate" not in nxt
    await client.close()


async def test_a_superseded_writers_late_message_is_refused_superseded_and_its_seq_stays_free(
    sidecar: Running,
) -> None:
    """docs/reliability.md's table: ``superseded``, not stored, seq not used up."""
    from adapter.server import SIDECAR_KEY

    old = await connect(sidecar.url, auth())
    await old.welcome
    assert (await old.send("hook", hook(1)))["ok"] is True
    old_sid = old.sio.get_sid()
    new = await connect(sidecar.url, auth())
    assert (await new.welcome)["last_seq"] == 1
    assert sidecar.runner is not None
    server = sidecar.runner.app[SIDECAR_KEY]
    late = await server.message(old_sid, "hook", hook(2, "updateCombat"))  # arrives after the takeover
    assert late["ok"] is False and late["seq"] == 2 and late["error"]["code"] == "superseded", late
    nxt = await new.send("hook", hook(2, "updateCombat"))
    assert nxt["ok"] is True and "duplicate" not in nxt  # seq 2 was still free
    await new.close()
    await old.close()


async def test_a_message_the_database_fails_to_store_gets_a_store_unavailable_ack_and_its_resend_is_stored(
    sidecar: Running, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SQLite failing an insert (the disk full, say) used to raise out of the handler: no ack,
    and the module waited out its timeout. Now the ack says store_unavailable, the seq stays
    free and the world unchanged, and the same message resent once the disk has room is stored."""
    import sqlite3

    from adapter.server import SIDECAR_KEY

    client = await connect(sidecar.url, auth())
    await client.welcome
    assert (await client.send("hook", hook(1)))["ok"] is True
    with monkeypatch.context() as patched:
        def disk_full(*args: Any, **kwargs: Any) -> None:
            raise sqlite3.OperationalError("database or disk is full")

        assert sidecar.runner is not None
        patched.setattr(sidecar.runner.app[SIDECAR_KEY].worlds.store, "append", disk_full)
        ack = await client.send("hook", hook(2, "updateCombat"), timeout=5)
        assert ack["ok"] is False and ack["seq"] == 2, ack
        assert ack["error"]["code"] == "store_unavailable" and "disk is full" in ack["error"]["message"]
    again = await client.send("hook", hook(2, "updateCombat"), timeout=5)
    assert again["ok"] is True and "duplicate" not in again, again  # seq 2 was still free
    await client.close()
