"""Durable state in SQLite (WAL): the message log per world, sessions, and snapshots.

An ack means "stored": :meth:`Store.append` commits before the server acks. Every message
that used up a ``seq`` is kept, refused ones with their error, so ``last_seq`` and
``export`` have no gaps. On start each world is rebuilt from its newest snapshot plus the
messages after it, through the same pipeline the server uses; a snapshot written by
another engine version is ignored and the world is rebuilt from its whole log.

WAL with ``synchronous=NORMAL`` survives a crash of the sidecar (or a SIGKILL) with every
acked message; a power loss can lose the last transactions (see docs/reliability.md).
"""

from __future__ import annotations

import io
import json
import pickle
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..engine.model import World

#: bump when the engine's state classes change shape: older snapshots are then ignored
ENGINE_VERSION = "1"

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


class StoreCorrupt(Exception):
    """The database file cannot be trusted; the sidecar must not start on it."""


def damaged(path: Path, what: str) -> str:
    """The message for a database the sidecar will not start on: which file, and what to do."""
    return (
        f"the database {path} is damaged ({what}). The sidecar will not start on it, so "
        f"nothing is silently lost. To recover: stop the sidecar, move {path} (and its "
        "-wal/-shm files) aside, restore a backup copy, or start with a new --db path; "
        "`initiative-sidecar export --world W --db <file>` may still read the messages of an "
        "older copy."
    )


def _refuse_emptied(path: Path) -> None:
    """An existing database file of 0 bytes was truncated: the sidecar writes its first page
    as it opens a file (WAL mode), so it never leaves one behind; opening it would silently
    start empty. (Unless its -wal file holds the data: SQLite then recovers from that.)"""
    wal = path.with_name(path.name + "-wal")
    if path.exists() and path.stat().st_size == 0 and not (wal.exists() and wal.stat().st_size > 0):
        raise StoreCorrupt(damaged(path, "the file is empty: 0 bytes, truncated or not written by the sidecar"))


@dataclass(frozen=True)
class LogEntry:
    """One stored line of a world's history, in the order it happened."""

    kind: str  # "session", "hook", "intent"
    seq: int
    data: Any
    error: Any = None


class _SafeUnpickler(pickle.Unpickler):
    """Snapshots hold only the engine's own frozen dataclasses and builtins."""

    ALLOWED_PREFIXES = ("adapter.engine.", "adapter.rulesets.")
    ALLOWED_BUILTINS = frozenset({"frozenset", "set", "tuple", "list", "dict"})

    def find_class(self, module: str, name: str) -> Any:
        if module.startswith(self.ALLOWED_PREFIXES) or (
            module == "builtins" and name in self.ALLOWED_BUILTINS
        ):
            found = super().find_class(module, name)
            if isinstance(found, type):  # classes only: no function of ours is called
                return found
        raise pickle.UnpicklingError(f"snapshot refers to {module}.{name}, which is not allowed")


def dump_state(world: World) -> bytes:
    return pickle.dumps(world, protocol=pickle.HIGHEST_PROTOCOL)


def load_state(blob: bytes) -> World:
    world = _SafeUnpickler(io.BytesIO(blob)).load()
    if not isinstance(world, World):
        raise pickle.UnpicklingError("snapshot is not a World")
    return world


class Store:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        _refuse_emptied(self.path)
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            verdict = self.db.execute("PRAGMA quick_check").fetchone()[0]
            if verdict != "ok":
                raise sqlite3.DatabaseError(verdict)
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as error:
            raise StoreCorrupt(damaged(self.path, str(error))) from error

    def close(self) -> None:
        self.db.close()

    # ---------------------------------------------------------------- writing

    def append(self, world: str, seq: int, event: str, payload: Any, error: Any = None) -> None:
        """Store one message that used up its seq; committed when this returns."""
        self.db.execute(
            "INSERT INTO messages (world, seq, event, payload, error) VALUES (?, ?, ?, ?, ?)",
            (world, seq, event, _json(payload) if error is not None else _plain_json(payload),
             _json(error) if error is not None else None),
        )

    def add_session(self, world: str, after_seq: int, data: Any) -> None:
        self.db.execute(
            "INSERT INTO sessions (world, after_seq, data) VALUES (?, ?, ?)",
            (world, after_seq, _json(data)),
        )

    def save_snapshot(self, state: World) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO snapshots (world, seq, engine_version, state) VALUES (?, ?, ?, ?)",
            (state.world, state.last_seq, ENGINE_VERSION, dump_state(state)),
        )

    # ---------------------------------------------------------------- reading

    def worlds(self) -> list[str]:
        rows = self.db.execute(
            "SELECT world FROM sessions UNION SELECT world FROM messages ORDER BY 1"
        ).fetchall()
        return [r[0] for r in rows]

    def snapshot(self, world: str) -> World | None:
        row = self.db.execute(
            "SELECT state, engine_version FROM snapshots WHERE world = ?", (world,)
        ).fetchone()
        if row is None or row[1] != ENGINE_VERSION:
            return None
        try:
            return load_state(row[0])
        except Exception:  # noqa: BLE001 - a snapshot is only a cache: rebuild from the log
            return None

    def history(self, world: str, after_seq: int = 0) -> Iterator[LogEntry]:
        """Sessions and messages after ``after_seq``, in the order they happened.

        A row SQLite or JSON cannot read raises :class:`StoreCorrupt` naming it."""
        try:
            yield from self._history(world, after_seq)
        except sqlite3.DatabaseError as error:
            raise StoreCorrupt(damaged(self.path, f"world {world!r}: {error}")) from error

    def _history(self, world: str, after_seq: int) -> Iterator[LogEntry]:
        sessions = self.db.execute(
            "SELECT after_seq, data FROM sessions WHERE world = ? AND after_seq >= ? ORDER BY id",
            (world, after_seq),
        ).fetchall()
        messages = self.db.execute(
            "SELECT seq, event, payload, error FROM messages WHERE world = ? AND seq > ? ORDER BY seq",
            (world, after_seq),
        )
        pending = list(sessions)
        for seq, event, payload, error in messages:
            while pending and pending[0][0] < seq:
                s_after, s_data = pending.pop(0)
                yield LogEntry("session", s_after, self._read(s_data, world, f"session after seq {s_after}"))
            where = f"message {seq}"
            yield LogEntry(
                event, seq, self._read(payload, world, where),
                self._read(error, world, where) if error else None,
            )
        for s_after, s_data in pending:
            yield LogEntry("session", s_after, self._read(s_data, world, f"session after seq {s_after}"))

    def _read(self, text: Any, world: str, where: str) -> Any:
        try:
            return json.loads(text)
        except (TypeError, ValueError) as error:
            raise StoreCorrupt(
                damaged(self.path, f"{where} of world {world!r} is unreadable: {error}")
            ) from error



def _plain_json(value: Any) -> str:
    """JSON text of an accepted payload (plain JSON values only: it passed its checks), by
    orjson on the hot path; the standard library for what orjson will not take."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # e.g. an integer beyond 64 bits
        return _json(value)


def _json(value: Any) -> str:
    """JSON text of a stored payload; a value JSON has no type for (only in a refused message,
    e.g. bytes) is kept as its type's name, so a refusal can always be stored."""
    return json.dumps(
        value, ensure_ascii=False, separators=(",", ":"), allow_nan=True,
        default=lambda v: f"<{type(v).__name__}>",
    )
