"""SQLite's checkpoints (copying the -wal into the database, with its fsyncs) run in the
store's snapshot thread, not inside a commit on the event loop (issue 12), and lose nothing."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from adapter.rulesets import RULESETS
from adapter.store import Store
from adapter.store import sqlite as store_module
from adapter.store.snapshots import Codec

#: reads the snapshots of every built-in ruleset's worlds
CODEC = Codec(RULESETS.values())


class Recording:
    """The checkpoint connection, noting the thread of each statement."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        self.threads: list[str] = []

    def execute(self, sql: str) -> Any:
        self.threads.append(threading.current_thread().name)
        return self.connection.execute(sql)

    def close(self) -> None:
        self.connection.close()


def test_the_commits_leave_checkpoints_to_the_snapshot_thread(tmp_path: Path) -> None:
    store = Store(tmp_path / "x.db", serving=True, codec=CODEC)
    recording = Recording(store._checkpointer)
    store._checkpointer = recording  # type: ignore[assignment]
    pages = store.db.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    assert pages == store_module.FALLBACK_CHECKPOINT_PAGES > 1000
    count = store_module.CHECKPOINT_EVERY * 2 + 1
    for seq in range(1, count + 1):
        store.append("w", seq, "hook", {"seq": seq, "filler": "x" * 3000})
    store._writer.submit(lambda: None).result()  # the queued checkpoints are done
    assert recording.threads and all(name.startswith("snapshot") for name in recording.threads)
    busy, frames, copied = store.db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    assert busy == 0 and copied == frames
    store.close()
    again = Store(tmp_path / "x.db", codec=CODEC)
    assert [entry.seq for entry in again.history("w")] == list(range(1, count + 1))
    again.close()


def test_both_connections_keep_a_small_page_cache(tmp_path: Path) -> None:
    """SQLite's page cache is per connection (2,000 KiB by default); the store's two keep
    PAGE_CACHE_KIB each (docs/reliability.md, Memory)."""
    store = Store(tmp_path / "x.db", serving=True, codec=CODEC)
    try:
        for connection in (store.db, store._checkpointer):
            assert connection.execute("PRAGMA cache_size").fetchone()[0] == -store_module.PAGE_CACHE_KIB
        assert store_module.PAGE_CACHE_KIB < 2000
    finally:
        store.close()
