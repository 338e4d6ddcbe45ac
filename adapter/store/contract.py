"""The store interface, met by :class:`adapter.store.Store` (SQLite, one process) and
:class:`adapter.store.postgres.PostgresStore` (PostgreSQL, shared by processes, each world
leased to one: docs/hosting.md); tests/hosted/test_store_contract.py checks both alike.
Both subclass :class:`WorldStore` and do alike with their rows what this module holds: the
JSON text of a payload or an error, a snapshot row checked before use, and a world's sessions
and messages merged back into the order they happened.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from ..engine.model import World
from ..protocol.wirejson import Encoded
from . import snapshots

log = logging.getLogger("initiative_sidecar.store")

#: bump when the engine's state classes change shape: older snapshots are then ignored
#: ("1" was a pickle, "3" tagged JSON, "4" MessagePack of dataclasses; docs/reliability.md)
ENGINE_VERSION = "5"


@dataclass(frozen=True)
class LogEntry:
    """One stored line of a world's history, in the order it happened."""

    kind: str  # "session", "hook", "intent"
    seq: int
    data: Any
    error: Any = None


#: the statements both stores write with, in SQLite's parameter style (``?``; PostgreSQL's
#: ``%s`` in :mod:`.postgres`): a snapshot replaces an older one, or another engine version's
INSERT_MESSAGE = "INSERT INTO messages (world, seq, event, payload, error) VALUES (?, ?, ?, ?, ?)"
INSERT_SESSION = "INSERT INTO sessions (world, after_seq, data) VALUES (?, ?, ?)"
SAVE_SNAPSHOT = (
    "INSERT INTO snapshots (world, seq, engine_version, state) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (world) DO UPDATE SET seq = excluded.seq, engine_version = excluded.engine_version, "
    "state = excluded.state WHERE excluded.seq >= snapshots.seq OR snapshots.engine_version != ?")


def snapshot_from(world: str, blob: bytes, version: str, seq: int, codec: snapshots.Codec) -> World | None:
    """The world a snapshot row holds, or None: another version's, or one that cannot be read
    (named in the log; the caller rebuilds the world from its log)."""
    try:
        if version != ENGINE_VERSION:
            raise snapshots.SnapshotUnreadable(
                "a pickle of older versions, no longer read: it could run code" if version == "1"
                else f"engine version {version!r}, not {ENGINE_VERSION!r}")
        state = codec.decode(bytes(blob))
        if state.world != world or state.last_seq != seq:
            raise snapshots.SnapshotUnreadable(
                f"it holds world {state.world!r} at seq {state.last_seq}, not this row's")
    except snapshots.SnapshotUnreadable as error:
        log.warning("world %s: the snapshot at seq %s is refused (%s); rebuilding the world from its log",
                    world, seq, error)
        return None
    return state


def payload_text(value: Any) -> str:
    """JSON text of an accepted payload (plain JSON values only: it passed its checks): the
    text it was encoded to once (:class:`Encoded`), else orjson's; the standard library for
    what orjson will not take."""
    if type(value) is Encoded:
        return value.text
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # e.g. an integer beyond 64 bits
        return json_text(value)


def json_text(value: Any) -> str:
    """JSON text of a stored payload; a value JSON has no type for (only in a refused message,
    e.g. bytes) is kept as its type's name, so a refusal can always be stored."""
    return json.dumps(
        value, ensure_ascii=False, separators=(",", ":"), allow_nan=True,
        default=lambda v: f"<{type(v).__name__}>",
    )


class WorldStore(Protocol):
    """What a store does; a store that subclasses it and that no other process writes takes
    the defaults of ``shared`` and the leases (every world's lease is its own). A subclass
    reads through :meth:`_rows` and :meth:`_unreadable`: the reading is the same SQL on both."""

    #: said in logs and errors (a file path, or a URL without its password)
    name: str
    #: other processes write it too: worlds are leased, and loaded when their writer connects
    shared: bool = False
    #: reads the snapshots
    codec: snapshots.Codec
    #: the snapshot thread, and what a snapshot written there may fail with (logged)
    _writer: ThreadPoolExecutor
    _snapshot_failures: tuple[type[Exception], ...]

    def append(self, world: str, seq: int, event: str, payload: Any, error: Any = None) -> None:
        """Store one message that used up its seq; committed when this returns, else raises
        :class:`adapter.errors.StoreUnavailable` (or a subclass) and nothing is stored."""

    def add_session(self, world: str, after_seq: int, data: Any) -> None: ...

    def save_snapshot(self, state: World) -> None: ...

    def save_snapshot_soon(self, state: World) -> Future[bool]:
        """Encode and write the snapshot in the snapshot thread (``_writer``); a failure (one of
        ``_snapshot_failures``) is logged there and the result is False (True once written),
        never raised: a snapshot is a cache, the log has every message."""
        return self._writer.submit(self._written, state)

    def _written(self, state: World) -> bool:
        try:
            self.save_snapshot(state)
        except self._snapshot_failures as error:
            log.error("world %s: the snapshot at seq %d was not written: %s",
                      state.world, state.last_seq, error)
            return False
        return True

    def worlds(self) -> list[str]:
        rows = self._rows("SELECT world FROM sessions UNION SELECT world FROM messages ORDER BY 1")
        return [row[0] for row in rows]

    def snapshot(self, world: str) -> World | None:
        """The world's snapshot, or None (see :func:`snapshot_from`)."""
        query = "SELECT state, engine_version, seq FROM snapshots WHERE world = ?"
        for blob, version, seq in self._rows(query, world):
            return snapshot_from(world, blob, version, seq, self.codec)
        return None

    def history(self, world: str, after_seq: int = 0) -> Iterator[LogEntry]:
        """Sessions and messages after ``after_seq``, in the order they happened: a session
        comes before the messages after its seq. A row that cannot be read raises
        :meth:`_unreadable`'s error naming it."""
        sessions = list(self._rows(
            "SELECT after_seq, data FROM sessions WHERE world = ? AND after_seq >= ? ORDER BY id",
            world, after_seq))
        messages = self._rows(
            "SELECT seq, event, payload, error FROM messages WHERE world = ? AND seq > ? ORDER BY seq",
            world, after_seq)
        for seq, event, payload, error in messages:
            while sessions and sessions[0][0] < seq:
                after, data = sessions.pop(0)
                yield LogEntry("session", after, self._read(data, world, f"session after seq {after}"))
            where = f"message {seq}"
            yield LogEntry(event, seq, self._read(payload, world, where),
                           self._read(error, world, where) if error else None)
        for after, data in sessions:
            yield LogEntry("session", after, self._read(data, world, f"session after seq {after}"))

    def _read(self, text: Any, world: str, where: str) -> Any:
        try:
            return json.loads(text)
        except (TypeError, ValueError) as error:
            raise self._unreadable(world, where, error) from error

    def _rows(self, query: str, *params: Any) -> Iterable[Any]:
        """The rows of a query (``?`` marks its parameters)."""

    def _unreadable(self, world: str, where: str, error: Exception) -> Exception:
        """The error for a stored JSON text of ``world`` that cannot be read (``where``: which)."""

    def take_lease(self, world: str) -> bool:
        """Become the world's only writer across processes; False if another process is."""
        return True

    def holds_lease(self, world: str) -> bool:
        """Whether this process holds the world's lease now (False once the session that
        held it ended: another process may have served the world since)."""
        return True

    def release_lease(self, world: str) -> None:
        return None

    def problem(self) -> str | None:
        """None when the store can be written now, else why not (for /healthz)."""

    def close(self) -> None: ...
