"""Whatever a store raises, a message gets its ack and a connection its answer: a refusal the
module resends (``store_unavailable``), nothing stored, the state unchanged. A store that
failed in a way the sidecar did not foresee (a file it may not look at, an error of its own)
must never leave a message unanswered: the module would take the server's "could not be
read" for a refusal to drop, and the world's log and its outbox would part."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from adapter.errors import StoreUnavailable
from adapter.rulesets import RULESETS
from adapter.server import SIDECAR_KEY
from adapter.service import Worlds
from adapter.store import Store
from adapter.store.snapshots import Codec
from tests.foundry import combat, combatant, current
from tests.support.sidecar import GM, Running, auth, connect, refused

#: reads the snapshots of every built-in ruleset's worlds
CODEC = Codec(RULESETS.values())

FIGHT = combat("combatStoreFails", [combatant("c000000000000001", "Ann")])


def hook(seq: int, name: str = "updateCombat") -> dict[str, Any]:
    return {"seq": seq, "user": GM, "world_time": 0, "hook": name, "combat": FIGHT, "current": current()}


def once(error: Exception, call: Any) -> Any:
    """``call`` that raises ``error`` the first time only."""
    raised: list[bool] = []

    def failing(*args: Any, **kwargs: Any) -> Any:
        if not raised:
            raised.append(True)
            raise error
        return call(*args, **kwargs)

    return failing


def test_an_error_the_store_did_not_foresee_is_a_store_unavailable_ack_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = Store(tmp_path / "w.db", codec=CODEC)
    worlds = Worlds(store, rulesets=RULESETS)
    try:
        worlds.connect(auth(world="w"))
        assert worlds.handle("w", "hook", hook(1, "createCombat")).ack["ok"]
        before = worlds.states.get("w")
        monkeypatch.setattr(store, "append", once(RuntimeError("a bug in the store"), store.append))
        ack = worlds.handle("w", "hook", hook(2)).ack
        assert (ack["ok"], ack["seq"], ack["error"]["code"]) == (False, 2, "store_unavailable")
        assert "RuntimeError" in ack["error"]["message"]
        assert worlds.states.get("w") is before  # nothing happened
        assert worlds.handle("w", "hook", hook(2)).ack["ok"]  # the resend is stored
        assert [e.seq for e in store.history("w") if e.kind == "hook"] == [1, 2]
    finally:
        store.close()


def test_a_commit_the_loop_awaits_that_fails_is_a_store_unavailable_ack_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Hosted mode: :meth:`Worlds.handle_soon` awaits the future of the store's ``append_soon``
    (PostgreSQL's committer thread); a failed commit there is refused like one in ``append``."""
    store = Store(tmp_path / "w.db", codec=CODEC)
    worlds = Worlds(store, rulesets=RULESETS)

    def append_soon(*args: Any) -> Future[None]:
        done: Future[None] = Future()
        try:
            store.append(*args)
        except Exception as error:
            done.set_exception(error)
        else:
            done.set_result(None)
        return done

    monkeypatch.setattr(store, "append_soon", append_soon, raising=False)
    try:
        worlds.connect(auth(world="w"))
        assert asyncio.run(worlds.handle_soon("w", "hook", hook(1, "createCombat"))).ack["ok"]
        before = worlds.states.get("w")
        monkeypatch.setattr(store, "append", once(RuntimeError("a bug in the store"), store.append))
        ack = asyncio.run(worlds.handle_soon("w", "hook", hook(2))).ack
        assert (ack["ok"], ack["seq"], ack["error"]["code"]) == (False, 2, "store_unavailable")
        assert worlds.states.get("w") is before  # nothing happened
        assert asyncio.run(worlds.handle_soon("w", "hook", hook(2))).ack["ok"]  # the resend is stored
        assert [e.seq for e in store.history("w") if e.kind == "hook"] == [1, 2]
    finally:
        store.close()


def test_database_files_that_cannot_be_looked_at_refuse_the_message_but_do_not_end_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Permission denied or a stale NFS handle on ``stat``: this message is refused (its
    commit cannot be proved to be in the live file), and serving resumes once the files can be
    looked at again; a real deletion is still told apart."""
    store = Store(tmp_path / "w.db", serving=True, watch_every=3600, codec=CODEC)
    worlds = Worlds(store, rulesets=RULESETS)
    real_stat = os.stat
    try:
        worlds.connect(auth(world="w"))
        assert worlds.handle("w", "hook", hook(1, "createCombat")).ack["ok"]

        def denied(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
            if str(path).startswith(str(tmp_path)):
                raise PermissionError(13, "Permission denied", str(path))
            return real_stat(path, *args, **kwargs)

        monkeypatch.setattr(os, "stat", denied)
        ack = worlds.handle("w", "hook", hook(2)).ack
        assert (ack["ok"], ack["seq"], ack["error"]["code"]) == (False, 2, "store_unavailable")
        assert "Permission denied" in ack["error"]["message"]
        assert store.gone is None
        monkeypatch.setattr(os, "stat", real_stat)
        assert worlds.handle("w", "hook", hook(2)).ack["ok"]
        os.unlink(tmp_path / "w.db")
        with pytest.raises(StoreUnavailable, match="was deleted"):
            store.check()
    finally:
        monkeypatch.setattr(os, "stat", real_stat)
        store.close()


async def test_a_connection_whose_session_cannot_be_stored_is_refused_and_the_world_keeps_its_session(
    sidecar: Running, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Applied but not stored, a new session (its GMs, its settings) would be lost at the next
    replay of the log: the connection is refused store_unavailable instead, answered at once
    (never left waiting), and the world keeps the session it had."""
    assert sidecar.runner is not None
    worlds = sidecar.runner.app[SIDECAR_KEY].worlds
    first = await connect(sidecar.url, auth(world="w"))
    await first.welcome
    assert (await first.send("hook", hook(1, "createCombat")))["ok"]
    await first.close()
    store = worlds.store
    full = sqlite3.OperationalError("database or disk is full")
    monkeypatch.setattr(store, "add_session", once(full, store.add_session))
    answer = await refused(sidecar.url, auth(world="w", gm_users=[GM, "gmUser0000000002"]))
    assert answer["code"] == "store_unavailable" and "disk is full" in answer["message"], answer
    state = worlds.states.get("w")
    assert state is not None and state.gm_users == frozenset({GM}), state
    again = await connect(sidecar.url, auth(world="w", gm_users=[GM, "gmUser0000000002"]))
    assert (await again.welcome)["last_seq"] == 1
    state = worlds.states.get("w")
    assert state is not None and state.gm_users == frozenset({GM, "gmUser0000000002"})
    await again.close()


def test_a_message_accepted_under_a_larger_size_limit_is_replayed_under_a_smaller_one(tmp_path: Path) -> None:
    """The log holds what was accepted: restarting with a lower --max-bytes must rebuild the
    world that was served, not refuse, at replay, a message that was acked."""
    store = Store(tmp_path / "w.db", codec=CODEC)
    worlds = Worlds(store, max_bytes=1_000_000, snapshot_every=10_000, rulesets=RULESETS)
    joined = combat("combatStoreFails", [combatant("c000000000000001", "Ann"), combatant("c000000000000002", "Bo")])
    big = {**hook(2), "combat": joined, "options": {"pad": "x" * 50_000}}  # Bo joins
    try:
        worlds.connect(auth(world="w"))
        assert worlds.handle("w", "hook", hook(1, "createCombat")).ack["ok"]
        assert worlds.handle("w", "hook", big).ack["ok"]
        served = worlds.states.get("w")
    finally:
        store.close()
    store = Store(tmp_path / "w.db", codec=CODEC)
    try:
        again = Worlds(store, max_bytes=10_000, rulesets=RULESETS)
        again.load()
        state = again.states.get("w")
        assert state is not None and state == served
        assert "c000000000000002" in state.combats["combatStoreFails"].combatants
    finally:
        store.close()


def test_a_handler_cancelled_while_its_commit_is_pending_leaves_the_commit_to_the_committer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A shutdown cancels the handlers still awaiting their commit; the commit's future belongs
    to the committer thread, which settles a whole group at once: were it cancelled, settling it
    would raise there and fail the other worlds' commits of that group."""
    store = Store(tmp_path / "w.db", codec=CODEC)
    worlds = Worlds(store, rulesets=RULESETS)
    pending: list[Future[None]] = []

    def append_soon(*args: Any) -> Future[None]:
        pending.append(Future())
        return pending[-1]

    monkeypatch.setattr(store, "append_soon", append_soon, raising=False)

    async def cancelled_while_committing() -> None:
        task = asyncio.ensure_future(worlds.handle_soon("w", "hook", hook(1, "createCombat")))
        while not pending:
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    try:
        worlds.connect(auth(world="w"))
        asyncio.run(cancelled_while_committing())
        assert not pending[0].cancelled()
        pending[0].set_result(None)  # the committer settles it as ever
    finally:
        store.close()
