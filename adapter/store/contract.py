"""The store interface, met by :class:`adapter.store.Store` (SQLite, one process) and
:class:`adapter.store.postgres.PostgresStore` (PostgreSQL, shared by processes, each world
leased to one: docs/hosting.md); tests/hosted/test_store_contract.py checks both alike.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from typing import Any, Protocol

from ..engine.model import World
from . import snapshots
from .rows import LogEntry, merged, snapshot_from


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

    def append(self, world: str, seq: int, event: str, payload: Any, error: Any = None) -> None:
        """Store one message that used up its seq; committed when this returns, else raises
        :class:`adapter.errors.StoreUnavailable` (or a subclass) and nothing is stored."""

    def add_session(self, world: str, after_seq: int, data: Any) -> None: ...

    def save_snapshot(self, state: World) -> None: ...

    def save_snapshot_soon(self, state: World) -> Future[bool]:
        """Encode and write the snapshot in a worker thread; a failure is logged there and
        the result is False (True once written)."""

    def worlds(self) -> list[str]:
        rows = self._rows("SELECT world FROM sessions UNION SELECT world FROM messages ORDER BY 1")
        return [row[0] for row in rows]

    def snapshot(self, world: str) -> World | None:
        """The world's snapshot, or None (see :func:`.rows.snapshot_from`)."""
        query = "SELECT state, engine_version, seq FROM snapshots WHERE world = ?"
        for blob, version, seq in self._rows(query, world):
            return snapshot_from(world, blob, version, seq, self.codec)
        return None

    def history(self, world: str, after_seq: int = 0) -> Iterator[LogEntry]:
        """Sessions and messages after ``after_seq``, in the order they happened; a row that
        cannot be read raises :meth:`_unreadable`'s error naming it."""
        sessions = list(self._rows(
            "SELECT after_seq, data FROM sessions WHERE world = ? AND after_seq >= ? ORDER BY id",
            world, after_seq))
        messages = self._rows(
            "SELECT seq, event, payload, error FROM messages WHERE world = ? AND seq > ? ORDER BY seq",
            world, after_seq)
        yield from merged(world, sessions, messages, self._read)

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
