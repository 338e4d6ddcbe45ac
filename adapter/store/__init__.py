"""Durable state: the message log per world, sessions, and snapshots (docs/reliability.md).

An ack means "stored": :meth:`Store.append` commits before the server acks. By module:
:mod:`.sqlite` (the SQLite store), :mod:`.postgres` (the hosted one), :mod:`.snapshots` (the
codec of a world's state), :mod:`.rows` (what both stores do alike with their rows),
:mod:`.guard` (the files, the lock), :mod:`.contract` (the protocol both meet); this module
names what callers use.
"""

from __future__ import annotations

from ..errors import StoreCorrupt
from . import snapshots
from .rows import LogEntry
from .sqlite import Store, damaged

__all__ = ["LogEntry", "Store", "StoreCorrupt", "damaged", "snapshots"]
