"""Durable state: the message log per world, sessions, and snapshots (docs/reliability.md);
an ack means "stored": :meth:`Store.append` commits before the server acks. This module
names what callers use, and opens the store a serving sidecar uses (:func:`open_store`).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import StoreCorrupt, StoreUnusable
from . import snapshots
from .contract import LogEntry, WorldStore
from .sqlite import Store, damaged

__all__ = ["LogEntry", "Store", "StoreCorrupt", "damaged", "open_store", "snapshots"]


def open_store(store: str, db: Path, codec: snapshots.Codec) -> WorldStore:
    """PostgreSQL when ``--store`` names one (hosted mode), else the SQLite file ``--db`` (the
    default, for a GM's own machine); ``codec`` reads the snapshots: it knows the rulesets the
    worlds are played under."""
    if store:
        from .postgres import PostgresStore

        if not store.startswith(("postgresql://", "postgres://")):
            raise StoreUnusable("--store takes a postgresql://user@host/db URL (the value given is "
                                "not one); leave it out for the SQLite file --db")
        return PostgresStore(store, codec=codec)
    return Store(db, serving=True, codec=codec)
