"""The PostgreSQL store's own promises: a versioned schema migrated at start, one lease per
world across processes (gone with the process's connection), and the log's key as a fence."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

# the hosted extra (pip install -e ".[hosted]"): without it these tests are skipped, not broken
pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[hosted]'")
import psycopg  # noqa: E402

from adapter.cli import parser
from adapter.config import ConfigError, from_args
from adapter.errors import ServedElsewhere, StoreUnavailable, StoreUnusable
from adapter.rulesets import RULESETS
from adapter.service import Worlds
from adapter.store.postgres import SCHEMA_VERSION, PostgresStore, redacted
from tests.foundry import combat, combatant, current
from tests.hosted import services
from tests.support.sidecar import GM, auth


def test_the_schema_is_created_at_start_and_a_second_start_changes_nothing(pg_url: str) -> None:
    PostgresStore(pg_url).close()
    store = PostgresStore(pg_url)
    try:
        assert store.db.execute("SELECT version FROM sidecar_schema").fetchall() == [(SCHEMA_VERSION,)]
    finally:
        store.close()


def test_a_store_migrated_by_a_newer_sidecar_is_refused(pg_url: str) -> None:
    PostgresStore(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE sidecar_schema SET version = %s", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreUnusable, match=f"schema version {SCHEMA_VERSION + 1}, newer"):
        PostgresStore(pg_url)


def test_an_unreachable_store_is_refused_without_its_password() -> None:
    url = f"postgresql://sidecar:hunter2@127.0.0.1:{services.free_port()}/none"
    with pytest.raises(StoreUnusable) as refused:
        PostgresStore(url, connect_timeout=1)
    assert "hunter2" not in str(refused.value) and redacted(url) in str(refused.value)


def eventually(check: Callable[[], bool], timeout: float = 5.0) -> bool:
    """PostgreSQL ends a closed session's backend (and frees its locks) a moment after the
    client goes: what a process taking over sees, and why the module retries."""
    end = time.monotonic() + timeout
    while not check():
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


def test_one_process_holds_a_world_until_it_releases_it_or_its_connection_ends(pg_url: str) -> None:
    first, second = PostgresStore(pg_url), PostgresStore(pg_url)
    try:
        assert first.take_lease("w1") and first.take_lease("w1")  # taking it again is a no-op
        assert not second.take_lease("w1")
        assert second.take_lease("w2")  # other worlds are free
        first.release_lease("w1")
        assert second.take_lease("w1")
        assert not first.take_lease("w1")
        second.close()  # the process goes: its session, and every lease with it
        assert eventually(lambda: first.take_lease("w1")) and first.take_lease("w2")
    finally:
        first.close()


def test_a_process_without_the_world_s_lease_stores_nothing_for_it(pg_url: str) -> None:
    owner, other = PostgresStore(pg_url), PostgresStore(pg_url)
    try:
        assert owner.take_lease("w")
        owner.append("w", 1, "hook", {"from": "owner"})
        for seq in (1, 2):  # a seq the owner stored, and one it has not reached
            with pytest.raises(ServedElsewhere) as refused:
                other.append("w", seq, "hook", {"from": "other"})
            assert refused.value.code == "served_elsewhere"
        assert [e.data for e in owner.history("w")] == [{"from": "owner"}]
    finally:
        owner.close()
        other.close()


def test_once_its_session_ends_a_process_stores_nothing_until_it_claims_the_world_again(pg_url: str) -> None:
    """The lease and the log share one session: if PostgreSQL ends it (a restart, a terminated
    backend), the write in flight fails, and later ones are refused until the world is claimed
    again; meanwhile another process may take the world."""
    stale, other = PostgresStore(pg_url), PostgresStore(pg_url)
    try:
        assert stale.take_lease("w")
        stale.append("w", 1, "hook", {"from": "stale"})
        pid = stale.db.info.backend_pid
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))  # waits for it to end
        with pytest.raises(StoreUnavailable):
            stale.append("w", 2, "hook", {"from": "stale"})
        assert other.take_lease("w")
        other.append("w", 2, "hook", {"from": "other"})
        with pytest.raises(ServedElsewhere):
            stale.append("w", 3, "hook", {"from": "stale"})
        assert not stale.take_lease("w")
        assert [e.data["from"] for e in other.history("w")] == ["stale", "other"]
    finally:
        stale.close()
        other.close()


def test_hosted_mode_needs_a_token_given_not_one_made_per_process(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("INITIATIVE_SIDECAR_TOKEN", raising=False)
    args = parser().parse_args(["serve", "--store", "postgresql://sidecar@127.0.0.1/x", "--db",
                                str(tmp_path / "s.db")])
    with pytest.raises(ConfigError, match="needs --token"):
        from_args(args, announce=lambda _: None)
    assert not list(tmp_path.iterdir())  # no token file made
    args = parser().parse_args(["serve", "--store", "postgresql://sidecar@127.0.0.1/x", "--token", "t" * 24])
    assert from_args(args).store == "postgresql://sidecar@127.0.0.1/x"


def test_after_postgresql_ends_the_snapshot_session_the_snapshot_is_written_on_a_new_one_quietly(
    pg_url: str, caplog: pytest.LogCaptureFixture,
) -> None:
    """The snapshot thread has its own session; once PostgreSQL ended it (a restart), every
    later snapshot failed and each claim replayed an ever longer log; then the first one
    after a restart failed with an ERROR in the log. Now that one is written on a new session."""
    from adapter.pipeline import open_session

    store = PostgresStore(pg_url)
    try:
        world = open_session(None, {"world": "snap", "ruleset": "foundry-core", "gm_users": ["gm"]}, rulesets=RULESETS)
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s, 5000)", (store._snapshot_db.info.backend_pid,))
        with caplog.at_level(logging.INFO, logger="initiative_sidecar.store"):
            assert store.save_snapshot_soon(world).result(10) is True
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
        with psycopg.connect(pg_url, autocommit=True) as admin:
            stored = admin.execute("SELECT count(*) FROM snapshots WHERE world = 'snap'").fetchone()
        assert stored == (1,)
    finally:
        store.close()


def test_a_write_that_waits_on_a_lock_fails_instead_of_blocking_the_loop(pg_url: str) -> None:
    """Store calls run on the event loop: a write stuck behind a lock would freeze every world
    of the process. It fails after the lock timeout instead, and is refused, not acked."""
    store = PostgresStore(pg_url)
    try:
        assert store.take_lease("w")
        with psycopg.connect(pg_url) as admin:  # a transaction holding the table
            admin.execute("LOCK TABLE messages IN ACCESS EXCLUSIVE MODE")
            with pytest.raises(StoreUnavailable):
                store.append("w", 1, "hook", {"n": 1})
            admin.rollback()
        store.append("w", 1, "hook", {"n": 1})  # the lock gone, the resend is stored
        assert [e.seq for e in store.history("w")] == [1]
    finally:
        store.close()


@pytest.mark.parametrize("url", [
    "postgresql://sidecar:S3cr%t-pw@127.0.0.1:{port}/none",  # not valid percent-encoding
    "postgresql://sidecar@127.0.0.1:{port}/none?password=S3cr-pw",
    "postgresql://:S3cr-pw@127.0.0.1:{port}/none",  # no user, a password
], ids=["bad-percent", "query", "empty-user"])
def test_the_password_is_not_shown_however_the_url_gives_it(url: str) -> None:
    url = url.format(port=services.free_port())
    with pytest.raises(StoreUnusable) as refused:
        PostgresStore(url, connect_timeout=1)
    assert "S3cr" not in str(refused.value) and "S3cr" not in redacted(url), str(refused.value)
    assert redacted(url) in str(refused.value)


def test_a_statement_postgresql_refuses_is_a_refusal_to_resend_not_an_exception(pg_url: str) -> None:
    """A standby after a failover (read-only), a privilege taken away, a value PostgreSQL
    cannot hold: each is StoreUnavailable, so the message gets a store_unavailable ack."""
    store = PostgresStore(pg_url)
    try:
        assert store.take_lease("w")
        store.db.execute("SET default_transaction_read_only = on")  # as on a hot standby
        with pytest.raises(StoreUnavailable, match="read-only"):
            store.append("w", 1, "hook", {"n": 1})
        store.db.execute("SET default_transaction_read_only = off")
        store.append("w", 1, "hook", {"n": 1})  # nothing was stored: the seq is still free
        with pytest.raises(StoreUnavailable):  # PostgreSQL text cannot hold a NUL
            store.take_lease("w\x00rld")
        assert [e.data for e in store.history("w")] == [{"n": 1}]
    finally:
        store.close()


def test_a_writer_back_after_its_session_ended_is_given_the_world_as_stored(pg_url: str) -> None:
    """Process A's session ends while its writer is idle (PostgreSQL restarted); process B
    serves the world meanwhile and lets it go. When the writer comes back to A, A must load
    the world again, not welcome it at the seq it last saw."""
    a, b = Worlds(PostgresStore(pg_url), rulesets=RULESETS), Worlds(PostgresStore(pg_url), rulesets=RULESETS)
    fight = combat("combatBackAfterEnd", [combatant("c000000000000001", "Ann")])
    try:
        a.claim("w")
        a.connect(auth(world="w"))
        assert a.handle("w", "hook", hook(1, "createCombat", fight)).ack["ok"]
        with psycopg.connect(pg_url, autocommit=True) as admin:  # A's session ends
            admin.execute("SELECT pg_terminate_backend(%s, 5000)", (a.store.db.info.backend_pid,))  # type: ignore[attr-defined]
        b.claim("w")
        b.connect(auth(world="w"))
        for seq in (2, 3):
            assert b.handle("w", "hook", hook(seq, "updateCombat", fight)).ack["ok"]
        b.release("w")
        a.claim("w")
        state = a.states.get("w")
        assert state is not None and state.last_seq == 3
        assert a.handle("w", "hook", hook(4, "updateCombat", fight)).ack["ok"]
    finally:
        a.store.close()
        b.store.close()


def hook(seq: int, name: str, fight: dict[str, Any]) -> dict[str, Any]:
    return {"seq": seq, "user": GM, "world_time": 0, "hook": name, "combat": fight, "current": current()}


async def test_a_hosted_sidecar_logs_the_postgresql_store_it_uses_without_its_password(
    serve_factory: Callable[..., Any], pg_url: str,
) -> None:
    """It logged ``database initiative-sidecar.db``, a file it never opened."""
    with_password = pg_url.replace("sidecar@", "sidecar:s3cret-pw@")  # trust auth: ignored, but given
    a = serve_factory("a", args=("--store", with_password))
    await a.start()
    logs = a.logs()
    assert f"store {pg_url.replace('sidecar@', 'sidecar:***@')} (PostgreSQL)" in logs, logs
    assert "s3cret-pw" not in logs and ".db" not in logs.split("CORS origins")[0]


def test_appends_of_many_worlds_at_once_are_each_committed_and_grouped(pg_url: str) -> None:
    """Worker threads append for 24 worlds at once: every row is stored, in fewer commits
    than rows (rows arriving during a commit go into the next one together)."""
    from concurrent.futures import ThreadPoolExecutor

    store = PostgresStore(pg_url)
    worlds = [f"grouped{i:02d}" for i in range(24)]
    batches: list[int] = []
    commit = store._commits._commit

    def counted(batch: list[Any]) -> None:
        batches.append(len(batch))
        commit(batch)

    store._commits._commit = counted  # type: ignore[method-assign]
    try:
        for w in worlds:
            assert store.take_lease(w)

        def play(world: str) -> None:
            for seq in range(1, 11):
                store.append(world, seq, "hook", {"seq": seq})

        with ThreadPoolExecutor(24) as pool:
            list(pool.map(play, worlds))
        for w in worlds:
            assert [e.data["seq"] for e in store.history(w)] == list(range(1, 11))
        assert sum(batches) == 240 and len(batches) < 240, batches
    finally:
        store.close()


def test_a_refused_row_in_a_grouped_commit_refuses_that_row_only(pg_url: str) -> None:
    from adapter.store.committer import _Row

    store = PostgresStore(pg_url)
    try:
        for w in ("a", "b", "c"):
            assert store.take_lease(w)
        store.append("b", 1, "hook", {"first": True})
        query = "INSERT INTO messages (world, seq, event, payload, error) VALUES (%s, %s, %s, %s, %s)"
        batch = [_Row(query, (w, 1, "hook", '{"n":1}', None), w, 1) for w in ("a", "b", "c")]
        store._commits._commit(batch)
        assert batch[0].done.result() is None and batch[2].done.result() is None
        with pytest.raises(ServedElsewhere):
            batch[1].done.result()
        assert [e.data for e in store.history("b")] == [{"first": True}]
        assert [e.data for e in store.history("a")] == [{"n": 1}]
    finally:
        store.close()
