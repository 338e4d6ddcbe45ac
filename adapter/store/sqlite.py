"""The SQLite store (WAL): one file per sidecar, held by one process (its lock file), with
the message log per world, the sessions and the snapshots (docs/reliability.md)."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..engine.model import World
from ..errors import StoreCorrupt, StoreReadOnly, StoreUnavailable
from . import contract, snapshots
from .contract import ENGINE_VERSION, LogEntry, WorldStore, json_text, payload_text
from .guard import (
    DatabaseLock,
    FileIdentity,
    identity,
    read_only,
    why_unwritable,
)

log = logging.getLogger("initiative_sidecar.store")

#: messages between two checkpoints in the snapshot thread, and the -wal pages past which
#: SQLite checkpoints inside a commit, should that thread fall behind (docs/performance.md)
CHECKPOINT_EVERY = 300
FALLBACK_CHECKPOINT_PAGES = 10_000
#: SQLite's page cache per connection, KiB: a message is appended once, read back only at start
PAGE_CACHE_KIB = 512

#: SQLite result codes (primary) that mean "cannot write here", not "damaged"
_UNWRITABLE_CODES = {3: "SQLITE_PERM", 8: "SQLITE_READONLY", 14: "SQLITE_CANTOPEN"}

SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    world TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event TEXT NOT NULL,
    payload TEXT NOT NULL,
    error TEXT,
    PRIMARY KEY (world, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    world TEXT NOT NULL,
    after_seq INTEGER NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_world ON sessions (world, id);
CREATE TABLE IF NOT EXISTS snapshots (
    world TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    engine_version TEXT NOT NULL,
    state BLOB NOT NULL
);
"""


def damaged(path: Path, what: str) -> str:
    """The message for a database the sidecar will not start on: which file, and what to do."""
    return (
        f"the database {path} is damaged ({what}). The sidecar will not start on it, so "
        f"nothing is silently lost. To recover: stop the sidecar, move {path} (and its "
        "-wal/-shm files) aside, restore a backup copy, or start with a new --db path; "
        "`initiative-sidecar export --world W --db <file>` may still read the messages of an "
        "older copy."
    )


class Store(WorldStore):
    """The database of one sidecar. ``serving=True`` (the server's store) also takes the
    database's lock and watches its files; tools (``export``, tests) open it plainly. No other
    process shares it (the lock file), so every world's lease is its own: the contract's
    defaults. ``codec`` reads its snapshots (without one, a world holding a ruleset's state is
    rebuilt from its log)."""

    _snapshot_failures = (sqlite3.Error, snapshots.SnapshotUnwritable, StoreUnavailable)

    def __init__(self, path: str | Path, *, serving: bool = False, watch_every: float = 2.0,
                 codec: snapshots.Codec | None = None) -> None:
        self.codec = codec or snapshots.Codec()
        self.path = Path(path)
        self.name = str(self.path)
        if serving and (why := why_unwritable(self.path)):
            raise StoreReadOnly(read_only(self.path, why))
        self.lock = DatabaseLock(self.path) if serving else None
        try:
            self._open()
        except BaseException:
            if self.lock is not None:
                self.lock.release()
            raise
        #: serializes the connection between the event loop and the snapshot thread
        self._mutex = threading.Lock()
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="snapshot")
        self._encoder = snapshots.Encoder()  # keeps unchanged combats' frames between snapshots
        self._appended = 0  # messages since the last background checkpoint was asked for
        self._checkpointing = False
        self.files = FileIdentity(self.path)
        self._checking = threading.Lock()
        self.gone: str | None = None  # why the store refuses to write (once set, for good)
        self._unchecked = False  # the files could not be looked at last time (said once)
        self._stop = threading.Event()
        if serving:
            threading.Thread(target=self._watch, args=(watch_every,), name="store-watch", daemon=True).start()

    def _open(self) -> None:
        # an existing 0-byte database (without a -wal holding its data) was truncated: opening it
        # would silently start empty (docs/reliability.md, "A damaged database stops the start")
        path, wal = self.path, self.path.with_name(self.path.name + "-wal")
        if path.exists() and path.stat().st_size == 0 and not (wal.exists() and wal.stat().st_size > 0):
            raise StoreCorrupt(damaged(path, "the file is empty: 0 bytes, truncated or not written by the sidecar"))
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            for pragma in ("journal_mode=WAL", "synchronous=NORMAL",
                           f"wal_autocheckpoint={FALLBACK_CHECKPOINT_PAGES}", f"cache_size=-{PAGE_CACHE_KIB}"):
                self.db.execute(f"PRAGMA {pragma}")
            verdict = self.db.execute("PRAGMA quick_check").fetchone()[0]
            if verdict != "ok":
                raise sqlite3.DatabaseError(verdict)
            self.db.executescript(SCHEMA)
            # the snapshot thread's own connection for checkpoints, opened now: opened later,
            # after the file was deleted, it would create an empty database in its place
            self._checkpointer = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._checkpointer.execute(f"PRAGMA cache_size=-{PAGE_CACHE_KIB}")
        except sqlite3.DatabaseError as error:
            code = getattr(error, "sqlite_errorcode", 0) & 0xFF
            if code in _UNWRITABLE_CODES:
                why = why_unwritable(self.path) or f"SQLite says {error} ({_UNWRITABLE_CODES[code]})"
                raise StoreReadOnly(read_only(self.path, why)) from error
            raise StoreCorrupt(damaged(self.path, str(error))) from error

    def close(self) -> None:
        self._stop.set()
        self._writer.shutdown(wait=True)  # snapshots queued before the close are written
        self._checkpointer.close()
        self.db.close()
        if self.lock is not None:
            self.lock.release()

    # ---------------------------------------------------------------- the files

    def check(self) -> None:
        """Refuse (:class:`StoreUnavailable`) once the database or its -wal is gone: a commit
        into a deleted file is lost at the next start, so it must not be acked."""
        with self._checking:  # the watcher thread and the event loop: say it once
            try:
                what = self.files.changed() if self.gone is None else None
            except OSError as error:  # e.g. permission denied, a stale NFS handle: for now
                if not self._unchecked:
                    log.warning("the database files cannot be checked (%s): messages are refused "
                                "until they can", error)
                self._unchecked = True
                raise StoreUnavailable(
                    f"the sidecar cannot check its database files ({error}); the message was not "
                    "stored. Resend it later.") from error
            self._unchecked = False
            if what:
                self.gone = what
                log.error(
                    "%s while the sidecar was serving: no message is acked from now on "
                    "(they would be lost at the next start). %s Stop the sidecar, put the database "
                    "back (or start with a new --db), and start it again.", what, self._rescue(),
                )
        if self.gone is not None:
            raise StoreUnavailable(
                f"the sidecar's database is unavailable ({self.gone}); the message was not "
                "stored. Resend it after the sidecar is restarted."
            )

    def _rescue(self) -> str:
        """Save what can be saved: a deleted -wal still open here is copied into the database."""
        if identity(self.path) != self.files.expected[self.path]:
            return ("Messages acked until now are only in the deleted file, still open in this "
                    "process: they are lost when it stops.")
        try:
            with self._mutex:
                busy, frames, copied = self.db.execute("PRAGMA wal_checkpoint(FULL)").fetchone()
        except sqlite3.Error as error:
            return f"Copying the -wal into the database failed ({error})."
        if busy:
            return "Copying the -wal into the database did not finish."
        return f"Every message acked until now ({copied} of {frames} WAL pages) was copied into {self.path}."

    def _watch(self, every: float) -> None:
        while not self._stop.wait(every):
            try:
                self.check()
            except StoreUnavailable:
                if self.gone is not None:
                    return  # said once, in the log; writes are refused from now on

    def problem(self) -> str | None:
        """None if the store takes a write transaction now, else why not (for /healthz); under
        the mutex: the snapshot thread's insert must not land in this probe's transaction."""
        if self.gone:  # the database or its -wal deleted while serving
            return f"the store cannot be written: {self.gone}"
        try:
            with self._mutex:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.execute("ROLLBACK")
        except sqlite3.Error as error:
            return f"the store cannot be written: {error}"
        return None

    # ---------------------------------------------------------------- writing

    def append(self, world: str, seq: int, event: str, payload: Any, error: Any = None) -> None:
        """Store one message that used up its seq; committed when this returns. The files are
        checked before the commit and after it (:class:`StoreUnavailable` if gone)."""
        self.check()
        row = (world, seq, event, json_text(payload) if error is not None else payload_text(payload),
               json_text(error) if error is not None else None)
        with self._mutex:
            self.db.execute(contract.INSERT_MESSAGE, row)
        self.check()
        self._appended += 1
        if self._appended >= CHECKPOINT_EVERY and not self._checkpointing:
            self._appended = 0
            self._checkpointing = True
            self._writer.submit(self._checkpoint)

    def _checkpoint(self) -> None:
        """Copy the -wal into the database in the snapshot thread, not inside a commit on the
        event loop (docs/performance.md); PASSIVE never blocks the writer."""
        try:
            if self.gone is None:  # a deleted database is left as it is (see check)
                self._checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error as error:  # the fallback autocheckpoint still bounds the -wal
            log.warning("a background checkpoint of %s failed: %s", self.path, error)
        finally:
            self._checkpointing = False

    def add_session(self, world: str, after_seq: int, data: Any) -> None:
        self.check()
        with self._mutex:
            self.db.execute(contract.INSERT_SESSION, (world, after_seq, json_text(data)))

    def save_snapshot(self, state: World) -> None:
        """Write the world's snapshot now (encoded on the caller's thread)."""
        blob = self._encoder.encode(state)
        self.check()
        with self._mutex:
            self.db.execute(contract.SAVE_SNAPSHOT,
                            (state.world, state.last_seq, ENGINE_VERSION, blob, ENGINE_VERSION))

    # ---------------------------------------------------------------- reading

    def _rows(self, query: str, *params: Any) -> Iterator[Any]:
        return self.db.execute(query, params)

    def history(self, world: str, after_seq: int = 0) -> Iterator[LogEntry]:
        """A row SQLite itself cannot read names the damaged file (:class:`StoreCorrupt`)."""
        try:
            yield from super().history(world, after_seq)
        except sqlite3.DatabaseError as error:
            raise StoreCorrupt(damaged(self.path, f"world {world!r}: {error}")) from error

    def _unreadable(self, world: str, where: str, error: Exception) -> Exception:
        return StoreCorrupt(
            damaged(self.path, f"{where} of world {world!r} is unreadable: {error}"))
