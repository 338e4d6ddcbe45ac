"""Snapshots are data: a tampered one runs nothing, and is refused by name.

A snapshot is a cache of a world's state at some seq (the message log is the truth). It is
read by a decoder that builds only the engine's own state classes from JSON values, so a
database handed to the GM (a "backup", a shared world folder) cannot make ``serve`` run code.
"""

from __future__ import annotations

import builtins
import dataclasses
import gc
import importlib
import logging
import math
import pickle
import pkgutil
import re
import sqlite3
import struct
import sys
import weakref
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest

from adapter import rulesets
from adapter.engine import World
from adapter.engine.holding import HoldMechanics, HoldRuleIds
from adapter.engine.model import Notice, Outcome, Session
from adapter.replay import Replay
from adapter.store import Store, snapshots
from adapter.store.rows import ENGINE_VERSION
from tests.reliability.gadget import gadget
from tests.reliability.table import Reference, build, build_all, state_of
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
    seen: list[tuple[str, tuple[Any, ...]]] = []
    _AUDIT = seen
    try:
        yield seen
    finally:
        _AUDIT = None


#: dataclasses of those modules that are messages or tables, never part of a world's state
STATE_ADJACENT = {Session, Notice, Outcome, HoldRuleIds, HoldMechanics}


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
    seq = plant(db, gadget(f"open({str(marker)!r}, 'w').write('ran')"), ENGINE_VERSION)
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


# ---------------------------------------------------------------- the format


@pytest.fixture(scope="module")
def every_ruleset() -> dict[str, Reference]:
    return build_all(31, fights=3, rounds=3)


def test_every_world_of_every_ruleset_comes_back_equal_and_with_the_same_types(
    every_ruleset: dict[str, Reference],
) -> None:
    """Each ruleset's state classes, holds, prompts, frozensets and tuples survive the trip;
    re-encoding the decoded world gives the same bytes (so ``source``, which equality
    ignores, and every container type came back too)."""
    checked = 0
    for ref in every_ruleset.values():
        for world in ref.worlds[::3] + ref.worlds[-1:]:
            blob = snapshots.encode(world)
            back = snapshots.decode(blob)
            assert back == world
            assert snapshots.encode(back) == blob
            checked += 1
    kinds = {type(c.ext).__name__ for ref in every_ruleset.values() for w in ref.worlds
             for combat in w.combats.values() for c in combat.combatants.values()}
    assert {"Fighter", "DicePoolState"} <= kinds, kinds  # the rulesets' own state was in there
    assert checked > 100


def test_every_world_of_every_recording_comes_back_equal(root: Path) -> None:
    """The golden recordings reach state the seeded sessions do not (Ready to strike watches,
    readied actions, holds carried over, group rolls): after every line, the world survives."""
    checked, kinds = 0, set()
    for recording in sorted((root / "tests" / "recordings").rglob("*.jsonl")):
        if recording.name.endswith(".golden.jsonl"):
            continue
        replay = Replay()
        for number, line in enumerate(recording.read_text(encoding="utf-8").splitlines(), start=1):
            list(replay.feed(number, line))
            if replay.world is None:
                continue
            blob = snapshots.encode(replay.world)
            assert snapshots.decode(blob) == replay.world, f"{recording.name}:{number}"
            assert snapshots.encode(snapshots.decode(blob)) == blob, f"{recording.name}:{number}"
            checked += 1
            kinds |= {type(v).__name__ for v in replay.world.ext.values()}
            kinds |= {type(c.ext).__name__ for c in replay.world.combats.values()}
            kinds |= {type(x.hold).__name__ for c in replay.world.combats.values() for x in c.combatants.values()}
    assert {"WorldState", "DicePoolCombat", "Hold"} <= kinds, kinds
    assert checked > 100


def test_every_state_class_of_the_engine_and_the_rulesets_is_in_the_decoder_s_table() -> None:
    """A ruleset that adds a class to its ``state`` module must list it for snapshots (else
    its worlds' snapshots fail and every start replays their logs)."""
    modules = [importlib.import_module(m.name) for m in pkgutil.walk_packages(rulesets.__path__, "adapter.rulesets.")
               if m.name.rsplit(".", 1)[-1] == "state"]
    modules += [importlib.import_module("adapter.engine.model"), importlib.import_module("adapter.engine.holding")]
    found = {obj for module in modules for obj in vars(module).values()
             if isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__ == module.__name__}
    unlisted = found - set(snapshots.STATE_CLASSES) - STATE_ADJACENT
    assert not unlisted, f"not in adapter/store/snapshots.py STATE_CLASSES: {sorted(c.__name__ for c in unlisted)}"
    assert len(found) > 10


def test_values_json_has_no_plain_form_for_come_back_as_they_were() -> None:
    odd = {"ints": (2**64 + 1, -(2**70), 10**5000), "floats": (math.inf, -math.inf),
           "keys": {1: "one", (1, 2): "pair", "$": "dollar", "$tuple": "a key like a tag"},
           "sets": (frozenset({"a", "b"}), {"c"}), "text": "cut emoji \ud83d", "list": [(), [], {}]}
    world = World(world="w", settings=odd, last_seq=3)
    back = snapshots.decode(snapshots.encode(world))
    assert back.settings == odd and back.settings["ints"][2] == 10**5000
    assert type(back.settings["sets"][1]) is set and type(back.settings["list"][0]) is tuple
    nan = snapshots.decode(snapshots.encode(World(world="w", settings={"x": math.nan}))).settings["x"]
    assert math.isnan(nan)


def _frame(text: bytes) -> bytes:
    packed = zlib.compress(text)
    return struct.pack(">I", len(packed)) + packed


def _blob(tree: Any, *combats: Any) -> bytes:
    return snapshots.MAGIC + b"".join(_frame(orjson.dumps(t)) for t in (tree, *combats))


WORLD = {"$": "World", "world": "w"}


@pytest.mark.parametrize("blob, says", [
    (pickle.dumps(World(world="w")), "a pickle"),
    (b"", "not in the snapshot format"),
    (snapshots.MAGIC + b"not zlib", "damaged"),
    (snapshots.MAGIC + struct.pack(">I", 8) + b"not zlib", "damaged"),
    (snapshots.MAGIC + _frame(b"{not json"), "not JSON"),
    (_blob({"$": "Ruleset", "id": "x"}), "not a state class"),
    (_blob({"$": "os.system", "command": "touch /tmp/x"}), "not a state class"),
    (_blob({**WORLD, "__class__": "x"}), "fields it does not have"),
    (_blob({"$": "World"}), "World:"),
    (_blob({"$": "Combatant", "id": "c"}), "not a World"),
    (_blob({**WORLD, "combats": {"c": {"$": "Combat", "id": "c", "ruleset": "x"}}}), "not a World without"),
    (_blob(WORLD, ["c", {"$": "Prompt"}]), "Prompt:"),
    (_blob(WORLD, ["c", WORLD]), "holds a World"),
    (_blob(WORLD, {"c": 1}), "not [key, combat]"),
    (_blob({**WORLD, "settings": {"$eval": "1+1"}}), "unknown tag $eval"),
    (_blob({**WORLD, "settings": {"$map": [[[1], 2]]}}), "$map"),
    (_blob({**WORLD, "settings": {"$tuple": "abc"}}), "not a list"),
    (_blob({**WORLD, "settings": {"$int": "1e9"}}), "unknown tag $int"),
    (snapshots.MAGIC + _frame(b'{"$":"World","world":"w","settings":{"x":' + b"[" * 300 + b"]" * 300 + b"}}"),
     "nested deeper"),
    (snapshots.MAGIC + _frame(b"[" * 100_000 + b"]" * 100_000), "not JSON"),
    (_blob(WORLD, ["c", {"$": "Combat", "id": "c", "ruleset": "x", "last_plan": {"round": 1}}]),
     "last plan is a dict"),
], ids=["old-pickle", "empty", "cut-short", "not-zlib", "not-json", "a-class-not-in-the-table", "a-dotted-name",
        "a-field-the-class-lacks", "a-field-missing", "not-a-world", "combats-in-the-head",
        "a-prompt-for-a-combat", "a-world-for-a-combat", "a-frame-not-a-pair", "an-unknown-tag", "an-unhashable-key",
        "a-tuple-of-a-string", "an-int-not-in-hex", "nested-300-deep", "nested-100000-deep",
        "a-plan-not-kept-as-text"])
def test_the_decoder_refuses_what_it_cannot_read_and_says_what(blob: bytes, says: str) -> None:
    with watching() as seen, pytest.raises(snapshots.SnapshotUnreadable, match=re.escape(says)):
        snapshots.decode(blob)
    assert seen == []


def test_a_frame_inflating_past_the_limit_is_refused_before_it_fills_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshots, "MAX_FRAME", 10_000)
    bomb = _blob({**WORLD, "settings": {"x": " " * 20_000}})
    assert len(bomb) < 200
    with pytest.raises(snapshots.SnapshotUnreadable, match="larger than 10000 bytes"):
        snapshots.decode(bomb)


def test_a_value_without_a_tag_is_not_written_and_the_message_stays_acked(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    """A class missing from STATE_CLASSES (a new ruleset's) fails the snapshot, loudly, never
    the message; the world then comes back from its log."""
    store = Store(tmp_path / "x.db")
    world = World(world="w", last_seq=0, ext={"new-ruleset": Path("/")})
    with caplog.at_level(logging.ERROR):
        store.save_snapshot_soon(world).result()
    assert any("not written" in r.getMessage() and "PosixPath" in r.getMessage() for r in caplog.records)
    assert store.snapshot("w") is None
    store.close()


def test_the_frame_cache_keeps_no_combat_the_world_has_moved_past(every_ruleset: dict[str, Reference]) -> None:
    """A combat's frame is reused while the world holds that combat; once nothing else holds
    it, the cache lets it go (it used to keep it, its plan and its preview until the world's
    next snapshot) and drops its frame."""
    worlds = every_ruleset["foundry-core"].worlds
    pair = next((a, b) for a, b in zip(worlds, worlds[1:])
                if a.combats and a.combats.keys() == b.combats.keys() and a.combats != b.combats)
    earlier, later = (snapshots.decode(snapshots.encode(w)) for w in pair)  # copies nobody else holds
    encoder = snapshots.Encoder()
    assert encoder.encode(earlier) == snapshots.encode(earlier)
    assert encoder.cached() == len(earlier.combats)
    gone = [weakref.ref(c) for c in earlier.combats.values()]
    del earlier
    gc.collect()
    assert all(ref() is None for ref in gone)
    assert encoder.cached() == 0
    blob = encoder.encode(later)
    assert blob == snapshots.encode(later)
    frames = [frame for _, frame in encoder._frames[later.world].values()]
    assert encoder.encode(later) == blob  # the same combats: their frames, not encoded again
    again = [frame for _, frame in encoder._frames[later.world].values()]
    assert all(a is b for a, b in zip(frames, again, strict=True))
