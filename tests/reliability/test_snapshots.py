"""Snapshots are data: a tampered one runs nothing, and is refused by name.

A snapshot is a cache of a world's state at some seq (the message log is the truth). It is
read by a decoder that builds only the engine's own state classes from JSON values, so a
database handed to the GM (a "backup", a shared world folder) cannot make ``serve`` run code.
"""

from __future__ import annotations

import builtins
import logging
import pickle
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from adapter import store as store_module
from tests.reliability.gadget import gadget
from tests.reliability.table import Reference, build, state_of
from tests.reliability.test_store_damage import fill, reopen

#: audit events seen while a watch is on (a hook cannot be removed: it is gated instead)
_AUDIT: list[tuple[str, tuple[Any, ...]]] | None = None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _AUDIT is not None and event in ("pickle.find_class", "exec", "compile", "os.system",
                                        "subprocess.Popen", "os.exec", "os.posix_spawn"):
        _AUDIT.append((event, args))


sys.addaudithook(_audit)


@contextmanager
def watching() -> Iterator[list[tuple[str, tuple[Any, ...]]]]:
    global _AUDIT
    _AUDIT = seen = []
    try:
        yield seen
    finally:
        _AUDIT = None


@pytest.fixture(scope="module")
def story() -> Reference:
    return build("world-snapshots", "balanced-d20", 5, fights=3, rounds=3)


def plant(db: Path, blob: bytes, version: str | None = None) -> int:
    """Replace the world's snapshot with ``blob``; the seq it claims to be at."""
    con = sqlite3.connect(db)
    try:
        (seq,) = con.execute("SELECT seq FROM snapshots").fetchone()
        con.execute("UPDATE snapshots SET state = ?, engine_version = coalesce(?, engine_version)",
                    (blob, version))
        con.commit()
    finally:
        con.close()
    return int(seq)


def test_the_planted_pickle_gadget_runs_nothing_and_the_world_is_rebuilt_from_its_log(
    tmp_path: Path, story: Reference, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    db = tmp_path / "handed-over.db"
    fill(db, story, snapshot_every=10).store.close()
    marker = tmp_path / "pwned"
    evaluated: list[Any] = []

    def tripwire(*args: Any, **kw: Any) -> Any:
        evaluated.append(args)
        raise AssertionError("eval was called while loading a snapshot")

    # the gadget, as the current version's snapshot (so the loader really tries to read it)
    seq = plant(db, gadget(f"open({str(marker)!r}, 'w').write('ran')"), store_module.ENGINE_VERSION)
    monkeypatch.setattr(builtins, "eval", tripwire)
    with caplog.at_level(logging.WARNING), watching() as seen:
        worlds = reopen(db)
    monkeypatch.undo()
    assert not marker.exists(), "the snapshot ran code"
    assert evaluated == [], "the snapshot reached eval"
    assert [e for e, _ in seen] == [], f"loading the snapshot unpickled or compiled code: {seen[:3]}"
    assert state_of(worlds.states[story.world]) == story.final
    assert worlds.states[story.world].last_seq == len(story.messages)
    refused = [r.getMessage() for r in caplog.records if "snapshot" in r.getMessage()]
    assert any(story.world in m and f"seq {seq}" in m and "rebuil" in m for m in refused), refused


def test_an_old_pickle_snapshot_is_not_trusted_and_the_world_is_rebuilt_from_its_log(
    tmp_path: Path, story: Reference, caplog: pytest.LogCaptureFixture,
) -> None:
    """A database written before snapshots were data: its (harmless) pickle is not read either."""
    db = tmp_path / "older.db"
    fill(db, story, snapshot_every=10).store.close()
    worlds = reopen(db)
    seq = plant(db, pickle.dumps(worlds.states[story.world], protocol=4), "1")
    worlds.store.close()
    with caplog.at_level(logging.WARNING), watching() as seen:
        worlds = reopen(db)
    assert [e for e, _ in seen if e == "pickle.find_class"] == []
    assert state_of(worlds.states[story.world]) == story.final
    refused = [r.getMessage() for r in caplog.records if "snapshot" in r.getMessage()]
    assert any(story.world in m and f"seq {seq}" in m for m in refused), refused
