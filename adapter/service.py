"""The worlds the sidecar serves: their state in memory, kept in step with the store.

No sockets here: the server calls :meth:`Worlds.handle` one message at a time per world
(it holds the per-world lock) and emits what comes back. A message is stored before
``handle`` returns, so the ack the server then sends means "stored".
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import logging
import sqlite3
import sys
import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from .config import DEFAULT_MAX_BYTES
from .engine import World
from .engine.plan import PlanMemo
from .errors import ServedElsewhere, StoreUnavailable
from .pipeline import Result, Rulesets, open_session, process, refusal
from .seen import Seen
from .store import StoreCorrupt, damaged
from .store.contract import WorldStore

log = logging.getLogger("initiative_sidecar.service")

#: the smallest combatant list (bytes of its text, some 40 combatants) whose read objects are
#: kept beside the world for the frames repeating it (:func:`.seen.loads_frame`); kept, a
#: smaller list would cost some 1.5 KB per combatant in every world for little time saved
KEEP_READ_FROM = 16_384


@contextmanager
def storing(world_id: str, what: str) -> Iterator[None]:
    """Whatever a store call raises (the disk full, a file that cannot be read, a store bug)
    becomes :class:`StoreUnavailable`, a refusal the module resends: never a message left
    without its ack."""
    try:
        yield
    except StoreUnavailable:
        raise
    except sqlite3.Error as error:  # e.g. the disk is full
        log.error("world %s: %s could not be stored: %s", world_id, what, error)
        raise StoreUnavailable(f"the database could not store {what} ({error}); resend it later") from error
    except Exception as error:
        log.exception("world %s: %s could not be stored", world_id, what)
        raise StoreUnavailable(
            f"the database could not store {what} ({type(error).__name__}); resend it later") from error


@dataclass(eq=False, repr=False)  # a repr would print every world's state into a log
class Worlds:
    store: WorldStore
    _: KW_ONLY
    #: the rulesets its worlds may name, handed to the pipeline (:data:`.pipeline.Rulesets`)
    rulesets: Rulesets
    max_bytes: int = DEFAULT_MAX_BYTES
    snapshot_every: int = 200
    check_outbound: bool = True
    states: dict[str, World] = field(default_factory=dict, init=False)
    #: beside each world, what its hooks last brought and what its plans were last built
    #: from (:data:`.seen.Seen`, :class:`.engine.plan.PlanMemo`), dropped with it
    seen: dict[str, Seen] = field(default_factory=dict, init=False)
    plans: dict[str, PlanMemo] = field(default_factory=dict, init=False)
    _since_snapshot: dict[str, int] = field(default_factory=dict, init=False)
    #: the worlds owed a snapshot (the latest asked for is not written yet: in flight or
    #: failed), each with that request's number: changed on the loop and in the snapshot thread
    _owed: dict[str, int] = field(default_factory=dict, init=False)
    _requests: Iterator[int] = field(default_factory=itertools.count, init=False)
    _owed_lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    #: worlds whose lease this process holds (a shared store: one process per world)
    owned: set[str] = field(default_factory=set, init=False)

    def load(self) -> None:
        """Rebuild every stored world; a database SQLite cannot read raises
        :class:`StoreCorrupt` (never start half-empty). Each world restored is frozen out of
        the garbage collector's walks while the next ones are (docs/performance.md)."""
        try:
            for world_id in self.store.worlds():
                self.load_world(world_id)
                gc.freeze()
        except sqlite3.DatabaseError as error:
            raise StoreCorrupt(damaged(Path(self.store.name), str(error))) from error
        finally:
            gc.unfreeze()

    def load_world(self, world_id: str) -> None:
        """Rebuild one world from the store: its snapshot, then the log after it."""
        state = self.store.snapshot(world_id)
        self.seen.pop(world_id, None)
        self.plans.pop(world_id, None)
        replayed = 0
        for entry in self.store.history(world_id, state.last_seq if state else 0):
            if entry.kind == "session":
                state = open_session(state, entry.data, rulesets=self.rulesets)
            elif state is not None and entry.error is not None:
                # refused when it came: it stays refused (whatever this engine would say)
                state = replace(state, last_seq=entry.seq)
            elif state is not None:
                # accepted when it came: no size limit now (--max-bytes may have been lowered
                # since), or the world rebuilt would not be the one that was served
                state = process(state, entry.kind, entry.data, rulesets=self.rulesets, max_bytes=sys.maxsize,
                                check_outbound=False).world
                replayed += 1
        if state is not None:
            self.states[world_id] = state
            if replayed:  # the next checkpoint saves this replay for the start after
                self._since_snapshot[world_id] = replayed
            log.info("world %s restored at seq %d (%d messages replayed)", world_id, state.last_seq, replayed)

    def claim(self, world_id: str) -> None:
        """Take the world's lease for this process, or raise :class:`ServedElsewhere` or
        :class:`StoreUnavailable`. A shared store's world is (re)loaded whenever its lease is
        taken anew (docs/hosting.md); one that cannot be loaded gives its lease back."""
        held = self.store.holds_lease(world_id)
        if not self.store.take_lease(world_id):
            raise ServedElsewhere(f"world {world_id} is served by another sidecar process; retry")
        if self.store.shared and (world_id not in self.owned or not held):
            self.owned.discard(world_id)
            self.states.pop(world_id, None)
            try:
                self.load_world(world_id)
            except BaseException:
                self.store.release_lease(world_id)
                raise
        self.owned.add(world_id)

    def release(self, world_id: str) -> None:
        """The world's writer left: a shared store's world is snapshotted (if still owned
        here), dropped from memory and its lease released, for any process to take next."""
        if not self.store.shared:
            return
        if world_id in self.owned:
            self.checkpoint(world_id)
        self.owned.discard(world_id)
        self.states.pop(world_id, None)
        self.seen.pop(world_id, None)
        self.plans.pop(world_id, None)
        self._since_snapshot.pop(world_id, None)
        with self._owed_lock:  # the world is no longer this process's to snapshot
            self._owed.pop(world_id, None)
        self.store.release_lease(world_id)

    def connect(self, auth: Mapping[str, Any]) -> World:
        """A connection for a world: record its session (auth minus token) and apply it."""
        data = {k: v for k, v in auth.items() if k != "token"}
        world_id = str(data["world"])
        state = open_session(self.states.get(world_id), data, rulesets=self.rulesets)
        # the session is applied only once stored: a replay of the log must rebuild this state
        with storing(world_id, "this connection's session"):
            self.store.add_session(world_id, state.last_seq, data)
        self.states[world_id] = state
        return state

    def handle(self, world_id: str, event: str, payload: Any, *, from_wire: bool = False) -> Result:
        """Process one message of a connected world; stored before this returns.
        ``from_wire``: read by :func:`.protocol.wirejson.loads` (see :func:`.pipeline.process`)."""
        result = self._process(world_id, event, payload, from_wire)
        if result.record:
            try:  # committed before the state moves on: if this raises, nothing happened
                with storing(world_id, f"seq {result.world.last_seq}"):
                    self.store.append(world_id, result.world.last_seq, event, result.stored, result.error)
            except StoreUnavailable as gone:
                return self._refused(world_id, result, gone)
        return self._adopt(world_id, result)

    async def handle_soon(self, world_id: str, event: str, payload: Any, *, from_wire: bool = False) -> Result:
        """:meth:`handle` on the event loop for a store that commits in its own thread
        (``append_soon``: PostgreSQL): only the commit is waited for, not done, here."""
        result = self._process(world_id, event, payload, from_wire)
        if result.record:
            try:
                with storing(world_id, f"seq {result.world.last_seq}"):
                    soon = self.store.append_soon(  # type: ignore[attr-defined]
                        world_id, result.world.last_seq, event, result.stored, result.error)
                    # shielded: a cancelled handler (a shutdown) must not cancel the commit's
                    # future, which the committer settles for its whole group
                    await asyncio.shield(asyncio.wrap_future(soon))
            except StoreUnavailable as gone:
                return self._refused(world_id, result, gone)
        return self._adopt(world_id, result)

    def _process(self, world_id: str, event: str, payload: Any, from_wire: bool) -> Result:
        return process(
            self.states[world_id], event, payload, rulesets=self.rulesets, max_bytes=self.max_bytes,
            check_outbound=self.check_outbound,
            from_wire=from_wire, seen=self.seen.get(world_id),
            plans=self.plans.setdefault(world_id, PlanMemo()), keep_read=KEEP_READ_FROM,
        )

    def _refused(self, world_id: str, result: Result, gone: StoreUnavailable) -> Result:
        """Refused, not stored: the seq stays free."""
        if isinstance(gone, ServedElsewhere):
            self.owned.discard(world_id)  # stale here: reloaded at the next claim
        return Result(world=self.states[world_id], ack=refusal(result.world.last_seq, gone))

    def _adopt(self, world_id: str, result: Result) -> Result:
        self.states[world_id] = result.world
        if result.seen is not None:
            self.seen[world_id] = result.seen
        if result.record:
            self._snapshot(result.world)
        return result

    def checkpoint(self, world_id: str | None = None) -> None:
        """Snapshot the worlds (or one) with messages since their last snapshot, or owed one
        (docs/reliability.md, "Snapshots are only a cache"): when a writer leaves, at shutdown."""
        for wid in [world_id] if world_id is not None else list(self.states):
            if (self._since_snapshot.get(wid, 0) or wid in self._owed) and wid in self.states:
                self._save_soon(self.states[wid])
                self._since_snapshot[wid] = 0

    def _snapshot(self, world: World) -> None:
        """Every ``snapshot_every`` messages, written in the store's snapshot thread."""
        count = self._since_snapshot.get(world.world, 0) + 1
        if count >= self.snapshot_every:
            self._save_soon(world)
            count = 0
        self._since_snapshot[world.world] = count

    def _save_soon(self, world: World) -> None:
        """Snapshot in the store's thread; the world is owed one until its latest request is
        written, so a failure is asked for again at the next checkpoint."""
        wid = world.world
        with self._owed_lock:
            number = self._owed[wid] = next(self._requests)

        def settled(future: Future[bool]) -> None:
            written = not future.cancelled() and future.exception() is None and future.result()
            with self._owed_lock:
                if written and self._owed.get(wid) == number:
                    del self._owed[wid]

        self.store.save_snapshot_soon(world).add_done_callback(settled)
