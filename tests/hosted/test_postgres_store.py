"""The PostgreSQL store's own promises: a versioned schema migrated at start, one lease per
world across processes (gone with the process's connection), and the log's key as a fence."""

from __future__ import annotations

import psycopg
import pytest

from adapter.errors import ServedElsewhere
from adapter.store.guard import StoreUnusable
from adapter.store.postgres import SCHEMA_VERSION, PostgresStore, redacted
from tests.hosted import services


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


def test_one_process_holds_a_world_until_it_releases_it_or_its_connection_ends(pg_url: str) -> None:
    first, second = PostgresStore(pg_url), PostgresStore(pg_url)
    try:
        assert first.take_lease("w1") and first.take_lease("w1")  # taking it again is a no-op
        assert not second.take_lease("w1")
        assert second.take_lease("w2")  # other worlds are free
        first.release_lease("w1")
        assert second.take_lease("w1")
        assert not first.take_lease("w1")
        second.close()  # the process goes: its connection, and every lease with it
        assert first.take_lease("w1") and first.take_lease("w2")
    finally:
        first.close()


def test_a_seq_another_process_stored_is_refused_served_elsewhere(pg_url: str) -> None:
    owner, stale = PostgresStore(pg_url), PostgresStore(pg_url)
    try:
        owner.append("w", 1, "hook", {"from": "owner"})
        with pytest.raises(ServedElsewhere) as refused:
            stale.append("w", 1, "hook", {"from": "stale"})
        assert refused.value.code == "served_elsewhere"
        assert [e.data for e in owner.history("w")] == [{"from": "owner"}]
    finally:
        owner.close()
        stale.close()
