"""The store interface, met by :class:`adapter.store.Store` (SQLite, one process) and
:class:`adapter.store.postgres.PostgresStore` (PostgreSQL, shared by processes, each world
leased to one: docs/hosting.md); tests/hosted/test_store_contract.py checks both alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any, Protocol

from ..engine.model import World
from .rows import LogEntry


class WorldStore(Protocol):
    """What a store does; a store that subclasses it and that no other process writes takes
    the defaults of ``shared`` and the leases (every world's lease is its own)."""

    #: said in logs and errors (a file path, or a URL without its password)
    name: str
    #: other processes write it too: worlds are leased, and loaded when their writer connects
    shared: bool = False

    def append(self, world: str, seq: int, event: str, payload: Any, error: Any = None) -> None:
        """Store one message that used up its seq; committed when this returns, else raises
        :class:`adapter.errors.StoreUnavailable` (or a subclass) and nothing is stored."""

    def add_session(self, world: str, after_seq: int, data: Any) -> None: ...

    def save_snapshot(self, state: World) -> None: ...

    def save_snapshot_soon(self, state: World) -> Future[bool]:
        """Encode and write the snapshot in a worker thread; a failure is logged there and
        the result is False (True once written)."""

    def worlds(self) -> list[str]: ...

    def snapshot(self, world: str) -> World | None: ...

    def history(self, world: str, after_seq: int = 0) -> Iterator[LogEntry]: ...

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
