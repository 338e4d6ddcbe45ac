"""The worlds the sidecar serves: their state in memory, kept in step with the store.

No sockets here: the server calls :meth:`Worlds.handle` one message at a time per world
(it holds the per-world lock) and emits what comes back. A message is stored before
``handle`` returns, so the ack the server then sends means "stored".
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sqlite3
import sys
import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from .engine import World
from .engine.plan import PlanMemo
from .errors import ServedElsewhere, StoreUnavailable
from .limits import DEFAULT_MAX_BYTES
from .pipeline import Result, Rulesets, open_session, process, refusal
from .seen import Seen
from .store import StoreCorrupt, damaged
from .store.contract import WorldStore

log = logging.getLogger("initiative_sidecar.service")

#: the smallest combatant list (bytes of its text) whose read objects are kept beside the
#: world, so that the frames repeating it are read without it (:func:`.seen.loads_frame`,
#: by the server): some 40 combatants; smaller lists are read quickly, and kept they would
#: cost some 1.5 KB of memory per combatant in every world
KEEP_READ_FROM = 16_384


@contextmanager
def storing(world_id: str, what: str) -> Iterator[None]:
    """A store call whose failure must be a refusal the module resends, never an exception
    that leaves a message without its ack or a connection without its answer: whatever the
    store raises (the disk full, a file that cannot be read, a store bug) becomes
    :class:`StoreUnavailable`, and nothing was stored."""
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


class Worlds:
    def __init__(
        self,
        store: WorldStore,
        *,
        rulesets: Rulesets,
        max_bytes: int = DEFAULT_MAX_BYTES,
        snapshot_every: int = 200,
        check_outbound: bool = True,
    ) -> None:
        self.store = store
        #: the rulesets its worlds may name, handed to the pipeline (:data:`.pipeline.Rulesets`)
        self.rulesets = rulesets
        self.max_bytes = max_bytes
        self.snapshot_every = snapshot_every
        self.check_outbound = check_outbound
        self.states: dict[str, World] = {}
        #: beside each world in ``states``, what its hooks last brought (:data:`.seen.Seen`):
        #: moved on with the world, dropped with it (a world loaded again starts without)
        self.seen: dict[str, Seen] = {}
        #: beside each world, what its plans were last built from (:class:`.engine.plan.PlanMemo`:
        #: it checks its own inputs, so it need not move with the world; dropped with it)
        self.plans: dict[str, PlanMemo] = {}
        self._since_snapshot: dict[str, int] = {}
        #: worlds owed a snapshot: the latest one asked for is not written yet (in flight or
        #: failed), so the next checkpoint asks again; and, per world, that latest request's
        #: number. Both change on the loop (asking) and in the store's snapshot thread (a
        #: request settled), under one lock.
        self._unsaved: set[str] = set()
        self._asked: dict[str, int] = {}
        self._owed_lock = threading.Lock()
        #: worlds whose lease this process holds (a shared store: one process per world)
        self.owned: set[str] = set()

    def load(self) -> None:
        """Rebuild every stored world: its snapshot, then the log after it.

        A database SQLite cannot read raises :class:`StoreCorrupt`: never start half-empty."""
        try:
            self._load()
        except sqlite3.DatabaseError as error:
            raise StoreCorrupt(damaged(Path(self.store.name), str(error))) from error

    def _load(self) -> None:
        """Each world restored is set aside from the garbage collector (``gc.freeze``, O(1)),
        so the collections that restoring the next ones triggers do not walk it again (a fifth
        of restoring 1,000 worlds); ``gc.unfreeze`` gives every object back at the end."""
        try:
            for world_id in self.store.worlds():
                self.load_world(world_id)
                gc.freeze()
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
        """Take the world's lease for this process, or raise :class:`ServedElsewhere` (another
        process holds it) or :class:`StoreUnavailable`. A shared store's world is (re)loaded
        when its lease is taken: its last owner may have been another process. That includes a
        lease taken again after the store's session ended (PostgreSQL restarted): another
        process may have served the world meanwhile. A world that cannot be loaded gives its
        lease back."""
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
        """The world's writer left: a shared store's world is snapshotted, dropped from memory
        and its lease released, so any process can take it next. A world no longer owned here
        (its lease found lost at a write) is not snapshotted, but its lease, if this session
        still holds it, is released all the same."""
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
            self._unsaved.discard(world_id)
            self._asked.pop(world_id, None)
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

    def state(self, world_id: str) -> World | None:
        return self.states.get(world_id)

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
            soon = self.store.append_soon(world_id, result.world.last_seq, event, result.stored, result.error)  # type: ignore[attr-defined]
            try:
                with storing(world_id, f"seq {result.world.last_seq}"):
                    await asyncio.wrap_future(soon)
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
        """Snapshot the worlds (or one) with messages since their last snapshot: done when a
        writer leaves and at shutdown (the store's close waits for it), so the next start
        restores them without replaying. A world whose latest snapshot failed, or is still
        being written, is owed one and asked for again (an extra write of the same seq at
        worst: the store keeps the newest)."""
        for wid in [world_id] if world_id is not None else list(self.states):
            if (self._since_snapshot.get(wid, 0) or wid in self._unsaved) and wid in self.states:
                self._save_soon(self.states[wid])
                self._since_snapshot[wid] = 0

    def _snapshot(self, world: World) -> None:
        """Every ``snapshot_every`` messages, encoded and written in the store's snapshot
        thread (the state is immutable): the loop goes on serving meanwhile. A snapshot is a
        cache, so failing to write one is logged there and the message stays acked."""
        count = self._since_snapshot.get(world.world, 0) + 1
        if count >= self.snapshot_every:
            self._save_soon(world)
            count = 0
        self._since_snapshot[world.world] = count

    def _save_soon(self, world: World) -> None:
        """Snapshot in the store's thread. The world is owed a snapshot from this request
        until the latest request for it is written: a failure (or a checkpoint while it is
        still being written) leaves it owed, so a writer leaving or the shutdown asks again
        and the next start does not replay everything since the last good snapshot (the
        message counter was reset when this one was asked for)."""
        wid = world.world
        with self._owed_lock:
            number = self._asked[wid] = self._asked.get(wid, 0) + 1
            self._unsaved.add(wid)

        def settled(future: Future[bool]) -> None:
            written = not future.cancelled() and future.exception() is None and future.result()
            with self._owed_lock:
                if written and self._asked.get(wid) == number:
                    self._unsaved.discard(wid)

        self.store.save_snapshot_soon(world).add_done_callback(settled)
