"""The PostgreSQL store (``serve --store postgresql://...``): the log-and-snapshot model of
the SQLite store, shared by every sidecar process of a hosted service (docs/hosting.md, "The
store" and "One owner per world").

* An ack means committed: each message is an ``INSERT`` committed before its ack.
* The schema is migrated at start under an advisory lock (:data:`MIGRATIONS`).
* One owner per world: a session-level advisory lock (the lease), on the session that also
  writes the log, which writes only for worlds it holds (the fence). The session ends when
  the process has sent nothing for :data:`LEASE_SILENCE_MS`; :meth:`PostgresStore.heartbeat`
  keeps it from the event loop, so a stopped process loses its leases. PostgreSQL 14 or newer.
* Grouped commits (:mod:`.committer`): the event loop awaits :meth:`PostgresStore.append_soon`'s
  future, done once the row is committed.
* Snapshots are encoded and written in a worker thread on their own connection.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

from ..engine.model import World
from ..errors import StoreUnavailable, StoreUnusable
from . import contract, snapshots
from .committer import GroupCommitter, unavailable_error
from .contract import ENGINE_VERSION, WorldStore, json_text, payload_text

log = logging.getLogger("initiative_sidecar.store")

#: the schema, one script per version; a new version is a new entry at the end, never an edit
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE messages (
        world text NOT NULL,
        seq bigint NOT NULL,
        event text NOT NULL,
        payload text NOT NULL,
        error text,
        PRIMARY KEY (world, seq)
    );
    CREATE TABLE sessions (
        id bigserial PRIMARY KEY,
        world text NOT NULL,
        after_seq bigint NOT NULL,
        data text NOT NULL
    );
    CREATE INDEX sessions_world ON sessions (world, id);
    CREATE TABLE snapshots (
        world text PRIMARY KEY,
        seq bigint NOT NULL,
        engine_version text NOT NULL,
        state bytea NOT NULL
    );
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)
#: the (two-key) advisory lock that serializes migrations; leases use the one-key space
_MIGRATING = (0x53494445, 1)  # "SIDE"
_LEASE_KEY = "hashtextextended(%s, 0)"
#: the write statements of :mod:`.contract`, in psycopg's parameter style
INSERT_MESSAGE, INSERT_SESSION, SAVE_SNAPSHOT = (query.replace("?", "%s") for query in (
    contract.INSERT_MESSAGE, contract.INSERT_SESSION, contract.SAVE_SNAPSHOT))


def redacted(url: str) -> str:
    """The URL without its password (read as libpq reads it, written again without it), what
    logs and errors may show; a URL libpq cannot read shows its scheme only."""
    try:
        parts = {key: str(value) for key, value in conninfo_to_dict(url).items()}
    except psycopg.Error:
        return url.split("://", 1)[0] + "://(a URL that could not be read)"
    user, host, port = parts.pop("user", ""), parts.pop("host", ""), parts.pop("port", "")
    secret = parts.pop("password", None) is not None
    dbname = parts.pop("dbname", "")
    who = f"{user}:***@" if secret else f"{user}@" if user else ""
    query = "&".join(f"{key}={value}" for key, value in parts.items())
    return f"postgresql://{who}{host}{':' + port if port else ''}/{dbname}{'?' + query if query else ''}"


#: the longest a statement may run, and wait for a lock, before it fails (milliseconds)
STATEMENT_TIMEOUT_MS = 10_000
LOCK_TIMEOUT_MS = 3_000
#: how long the leasing session may stay silent before PostgreSQL ends it, leases and all
LEASE_SILENCE_MS = 5_000
#: a process quiet this long on its leasing session sends a heartbeat (seconds)
HEARTBEAT_S = 1.0


class PostgresStore(WorldStore):
    """Meets :class:`.contract.WorldStore` on PostgreSQL; ``shared``: worlds are leased (a world
    whose lease was lost is refused ``served_elsewhere`` until claimed again)."""

    shared = True
    _snapshot_failures = (psycopg.Error, snapshots.SnapshotUnwritable)

    def __init__(self, url: str, *, connect_timeout: float = 5.0, codec: snapshots.Codec | None = None) -> None:
        self.codec = codec or snapshots.Codec()
        self.url = url
        self.name = redacted(url)
        self._timeout = connect_timeout
        self.db = self._connect(lease=True)
        self._used = time.monotonic()
        try:
            migrate(self.db, self.name)
            self._snapshot_db = self._connect()
        except BaseException:
            self.db.close()
            raise
        self._leases: set[str] = set()  # held by the session of ``self.db``
        self._reopen = threading.Lock()  # the loop and the committer may both find it ended
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="snapshot")
        self._encoder = snapshots.Encoder()
        self._commits = GroupCommitter(self._live, self._leases.__contains__)

    def _connect(self, lease: bool = False) -> psycopg.Connection[Any]:
        try:
            password = conninfo_to_dict(self.url).get("password")
        except psycopg.Error:  # its own message may quote the password: not repeated
            raise StoreUnusable(
                f"cannot read the PostgreSQL store URL {self.name}: not a valid connection URL "
                "(a password holding %, @, / or : must be percent-encoded)") from None
        try:
            return self._open(lease)
        except psycopg.Error as error:
            said = str(error)
            if password:  # libpq does not quote it today; make sure it never does here
                said = said.replace(str(password), "***")
            raise StoreUnusable(f"cannot open the PostgreSQL store {self.name}: {said}") from error

    def _open(self, lease: bool = False) -> psycopg.Connection[Any]:
        # a lock wait or a stalled server ends in an error (a refusal the module resends)
        silence = f" -c idle_session_timeout={LEASE_SILENCE_MS}" if lease else ""
        return psycopg.connect(
            self.url, autocommit=True, connect_timeout=max(1, int(self._timeout)),
            application_name=f"initiative-sidecar {os.getpid()}",
            options=f"-c statement_timeout={STATEMENT_TIMEOUT_MS} -c lock_timeout={LOCK_TIMEOUT_MS}{silence}",
            keepalives=1, keepalives_idle=10, keepalives_interval=5, keepalives_count=3,
            tcp_user_timeout=15000,
        )

    def close(self) -> None:
        self._commits.close()
        self._writer.shutdown(wait=True)
        for conn in (self.db, self._snapshot_db):  # the leases go with their session
            conn.close()
        self._leases.clear()

    def problem(self) -> str | None:
        try:
            self._live().execute("SELECT 1")
        except (psycopg.Error, StoreUnavailable) as error:
            return f"the store cannot be written: {error}"
        return None

    def heartbeat(self) -> None:
        """A ``SELECT 1`` on the leasing session when it has sent nothing for :data:`HEARTBEAT_S`
        (a failure is left to the next write, which opens a session without leases)."""
        if time.monotonic() - self._used < HEARTBEAT_S or self.db.closed or self.db.broken:
            return
        self._used = time.monotonic()
        try:
            self.db.execute("SELECT 1")
        except psycopg.Error as error:
            log.warning("the session holding the leases of %d world(s) did not answer: %s",
                        len(self._leases), error)

    def _live(self) -> psycopg.Connection[Any]:
        """The leasing session, opened again (without any lease) if PostgreSQL ended it."""
        self._used = time.monotonic()
        if self.db.closed or self.db.broken:
            with self._reopen:
                if self.db.closed or self.db.broken:  # not opened by another thread meanwhile
                    if self._leases:
                        log.error("the session holding the leases of %d world(s) on %s ended; they "
                                  "are refused until claimed again", len(self._leases), self.name)
                        self._leases.clear()
                    with unavailable():
                        self.db = self._open(lease=True)
        return self.db

    # ---------------------------------------------------------------- leases

    def take_lease(self, world: str) -> bool:
        db = self._live()
        if world in self._leases:
            return True
        with unavailable():
            row = db.execute(f"SELECT pg_try_advisory_lock({_LEASE_KEY})", (world,)).fetchone()
        if row is None or not row[0]:
            return False
        self._leases.add(world)
        return True

    def holds_lease(self, world: str) -> bool:
        """Asked when a writer connects; the session is asked first (one round trip): psycopg
        learns that an idle session ended (and its locks with it) only at its next statement."""
        if world not in self._leases:
            return False
        try:
            self._used = time.monotonic()
            self.db.execute("SELECT 1")
        except psycopg.Error:
            return False  # the session is gone: the next call opens another, without leases
        return True

    def release_lease(self, world: str) -> None:
        if world in self._leases:
            self._leases.discard(world)
            try:
                self.db.execute(f"SELECT pg_advisory_unlock({_LEASE_KEY})", (world,))
            except psycopg.Error as error:  # the session is gone, and the lock with it
                gone = self.db.closed or self.db.broken
                log.log(logging.DEBUG if gone else logging.WARNING, "world %s: releasing its lease failed (%s)",
                        world, error)

    # ---------------------------------------------------------------- writing

    def append(self, world: str, seq: int, event: str, payload: Any, error: Any = None) -> None:
        self.append_soon(world, seq, event, payload, error).result()

    def append_soon(self, world: str, seq: int, event: str, payload: Any, error: Any = None) -> Future[None]:
        """The row handed to the committer thread: the future is done once it is committed
        (or refused), so the event loop awaits it instead of a thread waiting on it."""
        row = (world, seq, event, json_text(payload) if error is not None else payload_text(payload),
               json_text(error) if error is not None else None)
        return self._commits.write(INSERT_MESSAGE, row, world, seq)

    def add_session(self, world: str, after_seq: int, data: Any) -> None:
        self._commits.write(INSERT_SESSION, (world, after_seq, json_text(data)), world, after_seq).result()

    def save_snapshot(self, state: World) -> None:
        """Write ``state``'s snapshot; on a session PostgreSQL ended since (a restart), once
        more on a new one, quietly (a snapshot is a cache)."""
        row = (state.world, state.last_seq, ENGINE_VERSION, self._encoder.encode(state), ENGINE_VERSION)
        for attempt in (1, 2):
            if self._snapshot_db.closed or self._snapshot_db.broken:  # PostgreSQL restarted since
                self._snapshot_db = self._connect()
            try:
                self._snapshot_db.execute(SAVE_SNAPSHOT, row)
                return
            except psycopg.OperationalError:
                if attempt == 2 or not (self._snapshot_db.closed or self._snapshot_db.broken):
                    raise
                log.info("the snapshot session with %s had ended (PostgreSQL restarted?): opened again", self.name)

    # ---------------------------------------------------------------- reading

    def _rows(self, query: str, *params: Any) -> list[Any]:
        with unavailable():
            return self._live().execute(query.replace("?", "%s"), params).fetchall()

    def _unreadable(self, world: str, where: str, error: Exception) -> Exception:
        return StoreUnusable(f"the store {world!r}: {where} is unreadable: {error}")


@contextmanager
def unavailable() -> Iterator[None]:
    """PostgreSQL unreachable or refusing the statement: :class:`StoreUnavailable`, a refusal
    the module resends, never an exception that would leave a message without its ack."""
    try:
        yield
    except psycopg.Error as error:
        raise unavailable_error(error) from error


def migrate(db: psycopg.Connection[Any], name: str) -> int:
    """Bring the schema to :data:`SCHEMA_VERSION` (one transaction); returns the version found."""
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s, %s)", _MIGRATING)
        db.execute("CREATE TABLE IF NOT EXISTS sidecar_schema (version integer NOT NULL)")
        row = db.execute("SELECT version FROM sidecar_schema").fetchone()
        found = int(row[0]) if row else 0
        if found > SCHEMA_VERSION:
            raise StoreUnusable(
                f"the PostgreSQL store {name} has schema version {found}, newer than this sidecar's "
                f"{SCHEMA_VERSION}: upgrade the sidecar (a downgrade would misread it)")
        for script in MIGRATIONS[found:]:
            db.execute(script.encode())
        if row is None:
            db.execute("INSERT INTO sidecar_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
        elif found < SCHEMA_VERSION:
            db.execute("UPDATE sidecar_schema SET version = %s", (SCHEMA_VERSION,))
    if found < SCHEMA_VERSION:
        log.info("PostgreSQL store %s: schema migrated from version %d to %d", name, found, SCHEMA_VERSION)
    return found
