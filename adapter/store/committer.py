"""Grouped commits for the PostgreSQL store: rows queued from any thread are written by one
committer thread, those that arrive during a commit in one transaction (one WAL flush). Each
caller gets a future, done once its row is committed or refused, so an ack still means
committed. A batch that fails on a row (a duplicate seq) is written again row by row, so each
row gets its own answer; a row of a world whose lease is gone is refused ``served_elsewhere``
(the fence)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import psycopg

from ..errors import ServedElsewhere, StoreUnavailable

#: the most rows one grouped commit writes
MAX_BATCH = 256


def unavailable_error(error: Exception) -> StoreUnavailable:
    return StoreUnavailable(f"the sidecar's database is unavailable ({error}); nothing was stored. "
                            "Resend it later.")


@dataclass
class _Row:
    query: str
    row: tuple[Any, ...]
    world: str
    seq: int
    done: Future[None] = field(default_factory=Future)

    def settle(self, error: BaseException | None = None) -> None:
        """Answer the caller once (a future already answered is left as it is)."""
        if self.done.done():
            return
        if error is None:
            self.done.set_result(None)
        else:
            self.done.set_exception(error)


class GroupCommitter:
    """The committer thread. ``live``: the leasing session (opened again if it ended);
    ``holds``: whether this process still leases a world."""

    def __init__(self, live: Callable[[], psycopg.Connection[Any]], holds: Callable[[str], bool]) -> None:
        self._live = live
        self._holds = holds
        self._pending: queue.SimpleQueue[_Row | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="commits", daemon=True)
        self._thread.start()

    def write(self, query: str, row: tuple[Any, ...], world: str, seq: int) -> Future[None]:
        item = _Row(query, row, world, seq)
        self._pending.put(item)
        return item.done

    def close(self) -> None:
        """Commit what is queued, then stop."""
        self._pending.put(None)
        self._thread.join()

    def _loop(self) -> None:
        while True:
            first = self._pending.get()
            if first is None:
                return
            batch = [first]
            while len(batch) < MAX_BATCH:
                try:
                    item = self._pending.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    self._pending.put(None)  # closing: after this batch
                    break
                batch.append(item)
            try:
                self._commit(batch)
            except BaseException as error:  # never leave a caller waiting
                for item in batch:
                    item.settle(error)

    def _commit(self, batch: list[_Row]) -> None:
        try:
            db = self._live()
        except StoreUnavailable as error:
            for item in batch:
                item.settle(error)
            return
        held = []
        for item in batch:
            if self._holds(item.world):
                held.append(item)
            else:
                item.settle(ServedElsewhere(
                    f"world {item.world!r}: this sidecar process no longer holds the world's lease (its "
                    "session with PostgreSQL ended); the message was not stored. Reconnect and resend it."))
        if len(held) > 1:
            try:
                with db.transaction():
                    for item in held:
                        db.execute(item.query, item.row)
            except psycopg.Error as error:
                if db.closed or db.broken:  # nothing of the batch was committed
                    for item in held:
                        item.settle(unavailable_error(error))
                    return
                # a row refused (a duplicate seq...): each row again on its own
            else:
                for item in held:
                    item.settle()
                return
        for item in held:
            try:
                db.execute(item.query, item.row)
            except psycopg.errors.UniqueViolation:
                item.settle(ServedElsewhere(
                    f"world {item.world!r}: seq {item.seq} was stored by another sidecar process, which "
                    "serves this world now; the message was not stored. Reconnect and resend it."))
            except psycopg.Error as error:  # down, read-only, no privilege...: refused, resent
                item.settle(unavailable_error(error))
            else:
                item.settle()
