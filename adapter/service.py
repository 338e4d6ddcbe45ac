"""The worlds the sidecar serves: their state in memory, kept in step with the store.

No sockets here: the server calls :meth:`Worlds.handle` one message at a time per world
(it holds the per-world lock) and emits what comes back. A message is stored before
``handle`` returns, so the ack the server then sends means "stored".
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .engine import World
from .errors import StoreUnavailable
from .pipeline import DEFAULT_MAX_BYTES, Result, open_session, process, refusal
from .store import Store, StoreCorrupt, damaged

log = logging.getLogger("initiative_sidecar.service")


class Worlds:
    def __init__(
        self,
        store: Store,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        snapshot_every: int = 200,
        check_outbound: bool = True,
    ) -> None:
        self.store = store
        self.max_bytes = max_bytes
        self.snapshot_every = snapshot_every
        self.check_outbound = check_outbound
        self.states: dict[str, World] = {}
        self._since_snapshot: dict[str, int] = {}

    def load(self) -> None:
        """Rebuild every stored world: its snapshot, then the log after it.

        A database SQLite cannot read raises :class:`StoreCorrupt`: never start half-empty."""
        try:
            self._load()
        except sqlite3.DatabaseError as error:
            raise StoreCorrupt(damaged(self.store.path, str(error))) from error

    def _load(self) -> None:
        for world_id in self.store.worlds():
            state = self.store.snapshot(world_id)
            replayed = 0
            for entry in self.store.history(world_id, state.last_seq if state else 0):
                if entry.kind == "session":
                    state = open_session(state, entry.data)
                elif state is not None and entry.error is not None:
                    # refused when it came: it stays refused (whatever this engine would say)
                    state = replace(state, last_seq=entry.seq)
                elif state is not None:
                    state = process(
                        state, entry.kind, entry.data, max_bytes=self.max_bytes, check_outbound=False
                    ).world
                    replayed += 1
            if state is not None:
                self.states[world_id] = state
                if replayed:  # the next checkpoint saves this replay for the start after
                    self._since_snapshot[world_id] = replayed
                log.info("world %s restored at seq %d (%d messages replayed)", world_id, state.last_seq, replayed)

    def connect(self, auth: Mapping[str, Any]) -> World:
        """A connection for a world: record its session (auth minus token) and apply it."""
        data = {k: v for k, v in auth.items() if k != "token"}
        world_id = str(data["world"])
        state = open_session(self.states.get(world_id), data)
        try:
            self.store.add_session(world_id, state.last_seq, data)
        except StoreUnavailable:
            pass  # admitted all the same: each message is then refused store_unavailable, not lost
        self.states[world_id] = state
        return state

    def state(self, world_id: str) -> World | None:
        return self.states.get(world_id)

    def handle(self, world_id: str, event: str, payload: Any) -> Result:
        """Process one message of a connected world; stored before this returns."""
        state = self.states[world_id]
        result = process(
            state, event, payload, max_bytes=self.max_bytes, check_outbound=self.check_outbound
        )
        if result.record:
            # committed before the state moves on: if this raises, nothing happened
            try:
                self.store.append(world_id, result.world.last_seq, event, payload, result.error)
            except StoreUnavailable as gone:  # refused, not stored: the seq stays free
                return Result(world=state, ack=refusal(result.world.last_seq, gone))
        self.states[world_id] = result.world
        if result.record:
            self._snapshot(result.world)
        return result

    def checkpoint(self, world_id: str | None = None) -> None:
        """Snapshot the worlds (or one) with messages since their last snapshot: done when a
        writer leaves and at shutdown (the store's close waits for it), so the next start
        restores them without replaying."""
        for wid in [world_id] if world_id is not None else list(self.states):
            if self._since_snapshot.get(wid, 0) and wid in self.states:
                self.store.save_snapshot_soon(self.states[wid])
                self._since_snapshot[wid] = 0

    def _snapshot(self, world: World) -> None:
        """Every ``snapshot_every`` messages, encoded and written in the store's snapshot
        thread (the state is immutable): the loop goes on serving meanwhile. A snapshot is a
        cache, so failing to write one is logged there and the message stays acked."""
        count = self._since_snapshot.get(world.world, 0) + 1
        if count >= self.snapshot_every:
            self.store.save_snapshot_soon(world)
            count = 0
        self._since_snapshot[world.world] = count
