"""Which store a serving sidecar opens: PostgreSQL when ``--store`` names one (hosted mode),
else the SQLite file ``--db`` (the default, for a GM's own machine)."""

from __future__ import annotations

from pathlib import Path

from .contract import WorldStore
from .snapshots import Codec


def open_store(store: str, db: Path, codec: Codec) -> WorldStore:
    """``codec`` reads the snapshots: it knows the rulesets the worlds are played under."""
    if store:
        from .postgres import PostgresStore, is_postgres

        if not is_postgres(store):
            from .guard import StoreUnusable

            raise StoreUnusable("--store takes a postgresql://user@host/db URL (the value given is "
                                "not one); leave it out for the SQLite file --db")
        return PostgresStore(store, codec=codec)
    from . import Store

    return Store(db, serving=True, codec=codec)
