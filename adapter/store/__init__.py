"""Durable state: the message log per world, sessions, and snapshots (docs/reliability.md);
an ack means "stored": :meth:`Store.append` commits before the server acks. This module
names what callers use.
"""

from __future__ import annotations

from ..errors import StoreCorrupt
from . import snapshots
from .rows import LogEntry
from .sqlite import Store, damaged

__all__ = ["LogEntry", "Store", "StoreCorrupt", "damaged", "snapshots"]
