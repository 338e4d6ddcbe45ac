"""What the database promises: an ack follows the commit; a damaged file stops the start.

A database that is truncated or corrupted must never give a sidecar that silently starts
empty (or half-empty): ``serve`` refuses, exits non-zero, names the file and says how to
recover, and leaves the file as it was. A snapshot is only a cache: a damaged or hostile one
is ignored and the world is rebuilt from its message log.
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from adapter.cli import parser
from adapter.config import from_args
from adapter.engine.model import World
from adapter.rulesets import RULESETS
from adapter.service import Worlds
from adapter.store import Store
from adapter.store.snapshots import Codec
from tests.reliability.harness import TOKEN, Serve
from tests.reliability.table import Reference, build, session_data, state_of
from tests.support.sidecar import Running, auth, connect

#: reads the snapshots of every built-in ruleset's worlds
CODEC = Codec(RULESETS.values())

PAGE = 4096


@pytest.fixture(scope="module")
def story() -> Reference:
    return build("world-damage", "storyteller", 11, fights=3, rounds=3)


def fill(db: Path, ref: Reference, *, snapshot_every: int = 50) -> Worlds:
    """Store a whole session as the server would (same Worlds, same Store)."""
    worlds = Worlds(Store(db, codec=CODEC), snapshot_every=snapshot_every, rulesets=RULESETS)
    worlds.load()
    worlds.connect({"token": TOKEN, **session_data(ref.world, ref.ruleset)})
    for event, data in ref.messages:
        worlds.handle(ref.world, event, data)
    return worlds


def reopen(db: Path, snapshot_every: int = 50) -> Worlds:
    worlds = Worlds(Store(db, codec=CODEC), snapshot_every=snapshot_every, rulesets=RULESETS)
    worlds.load()
    return worlds


async def test_an_ack_arrives_only_after_its_message_is_committed(sidecar: Running, story: Reference) -> None:
    client = await connect(sidecar.url, auth(world=story.world, ruleset=story.ruleset))
    await client.welcome
    reader = sqlite3.connect(f"file:{sidecar.config.db}?mode=ro", uri=True)
    try:
        for event, data in story.messages[:60]:
            ack = await client.send(event, data)
            row = reader.execute("SELECT seq, error FROM messages WHERE world = ? AND seq = ?",
                                 (story.world, data["seq"])).fetchone()
            assert row is not None, f"seq {data['seq']} was acked before another connection could read it"
            assert ack == story.acks[data["seq"] - 1]
    finally:
        reader.close()
        await client.close()


# ---------------------------------------------------------------- damaged files


def truncate_mid_page(db: Path) -> None:
    os.truncate(db, (db.stat().st_size // PAGE // 2) * PAGE + 1234)


def truncate_to_nothing(db: Path) -> None:
    os.truncate(db, 0)


def overwrite_header(db: Path) -> None:
    with open(db, "r+b") as handle:
        handle.write(b"this is not a database file at all, sorry" * 2)


def garble_pages(db: Path) -> None:
    """Overwrite the b-tree page headers of the pages after the first (random, seeded)."""
    import random

    rng = random.Random(7)
    pages = db.stat().st_size // PAGE
    with open(db, "r+b") as handle:
        for page in range(1, pages):
            handle.seek(page * PAGE)
            handle.write(bytes(rng.randrange(256) for _ in range(64)))


def unreadable_message(db: Path) -> None:
    """The newest message (after the last snapshot, so the start must read it) is cut short."""
    con = sqlite3.connect(db)
    con.execute("UPDATE messages SET payload = '{\"seq\": 1, \"hook\": ' "
                "WHERE seq = (SELECT max(seq) FROM messages)")
    con.commit()
    con.close()


@pytest.mark.parametrize("damage, says", [
    (truncate_mid_page, "malformed"),
    (truncate_to_nothing, "empty"),
    (overwrite_header, "not a database"),
    (garble_pages, "damaged"),
    (unreadable_message, "is unreadable"),
], ids=["truncated-mid-page", "truncated-to-0-bytes", "header-overwritten", "pages-garbled",
        "a-message-unreadable"])
async def test_a_damaged_database_stops_the_start_with_the_file_and_how_to_recover(
    tmp_path: Path, story: Reference, damage: Callable[[Path], None], says: str,
    serve_factory: Callable[..., Serve],
) -> None:
    db = tmp_path / "game.db"
    fill(db, story).store.close()
    for suffix in ("-wal", "-shm"):
        assert not Path(f"{db}{suffix}").exists()  # a clean close checkpoints the WAL
    damage(db)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    serve = serve_factory("damaged", db=db)
    with pytest.raises(RuntimeError, match="did not start"):
        await serve.start(timeout=20)
    assert serve.proc is not None and serve.proc.returncode not in (0, None)
    err = serve.log.read_text()
    assert str(db) in err and says in err, err
    assert "To recover" in err and "backup" in err and "--db" in err
    assert "Traceback" not in err
    assert "listening" not in serve.out.read_text()
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before, "the damaged file was changed"


async def test_a_sigkilled_sidecar_leaves_a_database_that_starts(tmp_path: Path, story: Reference,
                                                                  serve_factory: Callable[..., Serve]) -> None:
    """The opposite case, so the refusals above are not a sidecar that refuses everything."""
    serve = serve_factory("killed")
    await serve.start()
    serve.kill()
    await serve.wait()
    await serve.start()
    await serve.stop()
    assert serve.proc is not None and serve.proc.returncode == 0


# ---------------------------------------------------------------- snapshots


@pytest.mark.parametrize("blob", ["garbage", "hostile", "other-class"])
def test_a_damaged_or_hostile_snapshot_is_ignored_and_the_world_rebuilt_from_its_log(
    tmp_path: Path, story: Reference, blob: str,
) -> None:
    db = tmp_path / "game.db"
    fill(db, story, snapshot_every=10).store.close()
    marker = tmp_path / "pwned"

    class Hostile:
        def __reduce__(self) -> tuple[Any, ...]:
            return (os.system, (f"touch {marker}",))

    data = {
        "garbage": b"\x80\x05garbage that is not a pickle",
        "hostile": pickle.dumps(Hostile()),
        "other-class": pickle.dumps(sqlite3.Row),
    }[blob]
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM snapshots").fetchone()[0] == 1
    con.execute("UPDATE snapshots SET state = ?", (data,))
    con.commit()
    con.close()
    worlds = reopen(db)
    assert not marker.exists(), "a snapshot ran code"
    assert state_of(worlds.states[story.world]) == story.final
    assert worlds.states[story.world].last_seq == len(story.messages)


@pytest.mark.parametrize("every", [1, 7, 1000])
def test_any_snapshot_interval_restores_the_same_world(tmp_path: Path, story: Reference, every: int) -> None:
    db = tmp_path / f"every-{every}.db"
    fill(db, story, snapshot_every=every).store.close()
    con = sqlite3.connect(db)
    rows = con.execute("SELECT seq FROM snapshots").fetchall()
    con.close()
    total = len(story.messages)
    assert rows == ([(total - total % every,)] if every <= total else [])
    worlds = reopen(db, snapshot_every=every)
    assert state_of(worlds.states[story.world]) == story.final


@pytest.mark.parametrize("fails", [True, False])
def test_a_world_whose_periodic_snapshot_failed_is_still_snapshotted_when_its_writer_leaves(
    tmp_path: Path, story: Reference, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, fails: bool,
) -> None:
    """The periodic snapshot at the last message fails (a full disk for a moment): the world is
    still owed one, so the checkpoint when its writer leaves writes it; the counter alone said
    nothing was owed, and the next start replayed the whole log. Control: when the periodic
    snapshot is written, the checkpoint writes nothing more."""
    written = first_snapshot_write(monkeypatch, fails=fails)
    db = tmp_path / "owed.db"
    total = len(story.messages)
    with caplog.at_level(logging.ERROR):
        worlds = fill(db, story, snapshot_every=total)  # one periodic snapshot, at the last message
        store = worlds.store
        assert isinstance(store, Store)
        store._writer.submit(lambda: None).result()  # that attempt has settled
        worlds.checkpoint(story.world)  # the writer leaves
        store.close()
    assert written == ([total, total] if fails else [total])
    assert any("not written" in r.getMessage() for r in caplog.records) is fails
    assert snapshot_seqs(db) == [total]
    assert worlds._owed == {}


def test_a_checkpoint_while_the_periodic_snapshot_is_still_being_written_asks_again(
    tmp_path: Path, story: Reference, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    """The writer leaves while the periodic snapshot is still being written, and that write
    then fails: the checkpoint counted the world as owed (its latest snapshot not written
    yet) and asked again, so the world still gets its snapshot."""
    held = threading.Event()
    written = first_snapshot_write(monkeypatch, fails=True, held=held)
    db = tmp_path / "racing.db"
    total = len(story.messages)
    with caplog.at_level(logging.ERROR):
        worlds = fill(db, story, snapshot_every=total)  # the periodic snapshot, now held
        worlds.checkpoint(story.world)  # the writer leaves meanwhile
        held.set()
        worlds.store.close()  # waits for both
    assert written == [total, total]
    assert snapshot_seqs(db) == [total]
    assert worlds._owed == {}


def first_snapshot_write(monkeypatch: pytest.MonkeyPatch, *, fails: bool, held: threading.Event | None = None) -> list[int]:
    """Every snapshot write from now on is noted (its seq, in the list returned); the first
    one waits for ``held`` if given, then fails if ``fails`` (a full disk for a moment)."""
    written: list[int] = []
    real = Store.save_snapshot

    def write(self: Store, state: World) -> None:
        written.append(state.last_seq)
        if len(written) == 1:
            if held is not None:
                assert held.wait(10), "the test never let the first write go"
            if fails:
                raise sqlite3.OperationalError("database or disk is full")
        real(self, state)

    monkeypatch.setattr(Store, "save_snapshot", write)
    return written


def snapshot_seqs(db: Path) -> list[int]:
    con = sqlite3.connect(db)
    try:
        return [seq for (seq,) in con.execute("SELECT seq FROM snapshots")]
    finally:
        con.close()


def test_the_snapshot_interval_is_a_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    args = parser().parse_args(["serve", "--db", str(tmp_path / "x.db"), "--token", "t", "--snapshot-every", "17"])
    assert from_args(args).snapshot_every == 17
    monkeypatch.setenv("INITIATIVE_SIDECAR_SNAPSHOT_EVERY", "33")
    args = parser().parse_args(["serve", "--db", str(tmp_path / "x.db"), "--token", "t"])
    assert from_args(args).snapshot_every == 33
