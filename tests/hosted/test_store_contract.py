"""The store's contract, the same checks on SQLite (the default) and PostgreSQL (hosted).

Whatever engine keeps the store, an appended message is read back after a reopen, the history
interleaves sessions and messages as they happened (refused ones with their error), a snapshot
round-trips and an older one never replaces a newer, and worlds rebuilt from the store equal
the uninterrupted run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from adapter.rulesets import RULESETS
from adapter.service import Worlds
from adapter.store import Store, contract
from adapter.store.contract import WorldStore
from adapter.store.snapshots import Codec
from tests.reliability.table import Reference, build, session_data, state_of
from tests.support.sidecar import TOKEN

#: reads the snapshots of every built-in ruleset's worlds
CODEC = Codec(RULESETS.values())

KINDS = ["sqlite", "postgresql"]

Opener = Callable[[], WorldStore]


@pytest.fixture(params=KINDS)
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens the store (again and again: a reopen is a restart); closes what it opened."""
    opened: list[WorldStore] = []
    if request.param == "sqlite":
        make: Opener = lambda: Store(tmp_path / "contract.db", codec=CODEC)  # noqa: E731
    else:
        # the hosted extra: without psycopg the PostgreSQL half is skipped, SQLite's still runs
        pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[hosted]'")
        from adapter.store.postgres import PostgresStore

        url = request.getfixturevalue("pg_url")
        make = lambda: PostgresStore(url, codec=CODEC)  # noqa: E731

    def open_one() -> WorldStore:
        opened.append(make())
        return opened[-1]

    yield open_one
    for store in opened:
        try:
            store.close()
        except Exception:  # closed by the test already
            pass


@pytest.fixture(scope="module")
def story() -> Reference:
    return build("world-contract", "balanced-d20", 5, fights=2, rounds=3)


def entries(store: WorldStore, world: str, after: int = 0) -> list[tuple[str, int, Any, Any]]:
    return [(e.kind, e.seq, e.data, e.error) for e in store.history(world, after)]


def test_history_interleaves_sessions_and_messages_as_they_happened(opener: Opener) -> None:
    store = opener()
    assert store.take_lease("w") and store.take_lease("other")  # a world is written under its lease
    store.add_session("w", 0, {"n": 1})
    store.append("w", 1, "hook", {"a": 1})
    store.append("w", 2, "intent", {"b": "é"}, {"code": "rule_violation", "message": "no"})
    store.add_session("w", 2, {"n": 2})
    store.append("w", 3, "hook", {"c": [1, 2]})
    store.append("other", 1, "hook", {"x": 0})
    assert entries(store, "w") == [
        ("session", 0, {"n": 1}, None), ("hook", 1, {"a": 1}, None),
        ("intent", 2, {"b": "é"}, {"code": "rule_violation", "message": "no"}),
        ("session", 2, {"n": 2}, None), ("hook", 3, {"c": [1, 2]}, None),
    ]
    assert entries(store, "w", 2) == [("session", 2, {"n": 2}, None), ("hook", 3, {"c": [1, 2]}, None)]
    assert store.worlds() == ["other", "w"]


def test_an_appended_message_is_read_back_after_a_reopen(opener: Opener) -> None:
    store = opener()
    assert store.take_lease("w")
    store.add_session("w", 0, {"n": 1})
    for seq in range(1, 21):
        store.append("w", seq, "hook", {"seq": seq})
    store.close()
    again = opener()
    assert [e.seq for e in again.history("w")] == [0, *range(1, 21)]
    assert again.problem() is None


def test_a_snapshot_round_trips_and_an_older_one_never_replaces_a_newer(opener: Opener, story: Reference) -> None:
    store = opener()
    newer, older = story.worlds[30], story.worlds[10]
    store.save_snapshot(newer)
    store.save_snapshot_soon(older).result()
    got = store.snapshot(story.world)
    assert got is not None and got.last_seq == 30 and state_of(got) == state_of(newer)
    assert store.snapshot("nobody") is None


def test_a_snapshot_of_another_engine_version_is_not_used(opener: Opener, story: Reference,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    store = opener()
    store.save_snapshot(story.worlds[12])
    monkeypatch.setattr(contract, "ENGINE_VERSION", "99")
    assert store.snapshot(story.world) is None


def test_worlds_rebuilt_from_the_store_equal_the_uninterrupted_run(opener: Opener, story: Reference) -> None:
    worlds = Worlds(opener(), snapshot_every=17, rulesets=RULESETS)
    worlds.claim(story.world)
    worlds.connect({"token": TOKEN, **session_data(story.world, story.ruleset)})
    acks = [worlds.handle(story.world, event, data).ack for event, data in story.messages]
    assert acks == story.acks
    worlds.checkpoint()
    worlds.store.close()
    again = Worlds(opener(), rulesets=RULESETS)
    again.load_world(story.world)
    assert state_of(again.states[story.world]) == story.final
    assert again.states[story.world].last_seq == len(story.messages)
