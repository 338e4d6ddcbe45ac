"""Durable state in SQLite (WAL): the message log per world, sessions, and snapshots.

An ack means "stored": :meth:`Store.append` commits before the server acks. Every message
that used up a ``seq`` is kept, refused ones with their error, so ``last_seq`` and
``export`` have no gaps. On start each world is rebuilt from its newest snapshot plus the
messages after it, through the same pipeline the server uses; a snapshot written by
another engine version is ignored and the world is rebuilt from its whole log.

WAL with ``synchronous=NORMAL`` survives a crash of the sidecar (or a SIGKILL) with every
acked message; a power loss can lose the last transactions (see docs/reliability.md).

What it holds, by module: :mod:`.sqlite` (the SQLite store), :mod:`.postgres` (the hosted
one), :mod:`.snapshots` (the codec of a world's state), :mod:`.rows` (what both stores do
the same way with their rows), :mod:`.guard` (the files, the lock), :mod:`.contract` (the
protocol both meet); this module names what callers use.

Snapshots are data (:mod:`.snapshots`), never pickles: one that cannot be read is named in
the log and the world rebuilt from its log. They are encoded in a worker thread
(:meth:`Store.save_snapshot_soon`), so a large world does not stall the event loop. The
store's files are watched (:mod:`.guard`): a serving store holds ``<db>.lock``, and once
the database or its ``-wal`` is deleted or replaced it refuses every write with
:class:`StoreUnavailable` instead of acking into a file nobody will read again.
"""

from __future__ import annotations

from ..errors import StoreCorrupt, StoreInUse, StoreReadOnly, StoreUnusable
from . import snapshots
from .rows import LogEntry
from .sqlite import Store, damaged

__all__ = ["LogEntry", "Store", "StoreCorrupt", "StoreInUse", "StoreReadOnly", "StoreUnusable", "damaged",
           "snapshots"]
