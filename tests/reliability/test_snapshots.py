"""Snapshots are data: a tampered one runs nothing, and is refused by name.

A snapshot is a cache of a world's state at some seq (the message log is the truth). It is
read by a typed msgspec decoder that builds only the engine's state classes and those each
ruleset declares, so a database handed to the GM (a "backup", a shared world folder) cannot
make ``serve`` run code.
"""

from __future__ import annotations

import builtins
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
import typing
import weakref
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec
import pytest
from msgspec.structs import replace

from adapter import rulesets
from adapter.engine import World
from adapter.engine.holding import HoldMechanics, HoldRuleIds
from adapter.engine.model import CombatantExt, Notice, Outcome, Session
from adapter.replay import Replay
from adapter.rulesets import RULESETS
from adapter.store import Store, snapshots
from adapter.store.contract import ENGINE_VERSION
from adapter.store.snapshots import Codec
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


#: classes of those modules that are messages or tables, never part of a world's state
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

CODEC = Codec(RULESETS.values())
#: sets and maps in a fixed order: equal states give equal bytes, and an int read back as a
#: float (or a tuple as a list where the type says tuple) would not
CANONICAL = msgspec.msgpack.Encoder(order="deterministic")


def canonical(world: World) -> bytes:
    return CANONICAL.encode(replace(world, combats={k: replace(c, preview_cache=None) for k, c in world.combats.items()}))


@pytest.fixture(scope="module")
def every_ruleset() -> dict[str, Reference]:
    return build_all(31, fights=3, rounds=3)


def test_every_world_of_every_ruleset_comes_back_equal_and_with_the_same_types(
    every_ruleset: dict[str, Reference],
) -> None:
    """Each ruleset's state classes, holds, prompts, frozensets and tuples survive the trip
    (``source``, which equality ignores, too: the canonical bytes are the same)."""
    checked = 0
    for ref in every_ruleset.values():
        for world in ref.worlds[::3] + ref.worlds[-1:]:
            back = CODEC.decode(snapshots.Encoder().encode(world))
            assert back == world
            assert canonical(back) == canonical(world)
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
        replay = Replay(rulesets=RULESETS)
        for number, line in enumerate(recording.read_text(encoding="utf-8").splitlines(), start=1):
            list(replay.feed(number, line))
            if replay.world is None:
                continue
            back = CODEC.decode(snapshots.Encoder().encode(replay.world))
            assert back == replay.world, f"{recording.name}:{number}"
            assert canonical(back) == canonical(replay.world), f"{recording.name}:{number}"
            checked += 1
            kinds |= {type(v).__name__ for v in replay.world.ext.values()}
            kinds |= {type(c.ext).__name__ for c in replay.world.combats.values()}
            kinds |= {type(x.hold).__name__ for c in replay.world.combats.values() for x in c.combatants.values()}
    assert {"WorldState", "DicePoolCombat", "Hold"} <= kinds, kinds
    assert checked > 100


def _reachable(cls: type) -> set[type]:
    """The Structs a declared state class holds, itself included (from its annotations)."""
    found, todo = set(), [cls]
    while todo:
        tp = todo.pop()
        if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
            if tp not in found:
                found.add(tp)
                todo += typing.get_type_hints(tp).values()
        else:
            todo += typing.get_args(tp)
    return found


def test_every_state_class_of_a_ruleset_is_reachable_from_what_it_declares() -> None:
    """A ruleset that adds a class to its ``state`` module must hold it in a class it declares
    (``Ruleset.state_types``), typed, so a snapshot reads it back as that class."""
    modules = {m.name.rsplit(".", 2)[-2]: importlib.import_module(m.name)
               for m in pkgutil.walk_packages(rulesets.__path__, "adapter.rulesets.")
               if m.name.rsplit(".", 1)[-1] == "state"}
    assert set(modules) == {"balanced_d20", "dice_pool"}
    for package, module in modules.items():
        declared = RULESETS[package.replace("_", "-")].state_types
        reachable = set().union(*(_reachable(c) for c in declared))
        found = {obj for obj in vars(module).values()
                 if isinstance(obj, type) and issubclass(obj, msgspec.Struct) and obj.__module__ == module.__name__}
        assert found and found <= reachable, f"{package}: {sorted(c.__name__ for c in found - reachable)}"


def test_a_codec_without_the_world_s_ruleset_refuses_its_state_and_names_it(
    every_ruleset: dict[str, Reference],
) -> None:
    world = every_ruleset["balanced-d20"].worlds[-1]
    with pytest.raises(snapshots.SnapshotUnreadable, match="CombatantExt holds state, and no ruleset known here"):
        Codec().decode(snapshots.Encoder().encode(world))


def test_a_codec_refuses_a_state_class_it_could_not_read_back() -> None:
    """Each declared class must be a Struct, tagged (a union of them is read by its tag), and
    marked with the one place it lives in."""

    class Untagged(msgspec.Struct, CombatantExt, frozen=True):
        n: int = 0

    class Unmarked(msgspec.Struct, frozen=True, tag=True):
        n: int = 0

    for cls in (Untagged, Unmarked):
        with pytest.raises(TypeError, match=cls.__qualname__):
            Codec([replace(RULESETS["storyteller"], state_types=(cls,))])


@pytest.mark.parametrize("version, magic, head", [
    ("3", b"ISJ1", b'{"$":"World","world":"w"}'),
    ("4", b"ISM1", msgspec.msgpack.encode({"world": "w", "ext": {"balanced-d20": {"watches": {}}}})),
], ids=["tagged-json", "messagepack-of-dataclasses"])
def test_a_snapshot_of_an_older_engine_version_is_not_read_and_the_world_is_rebuilt_from_its_log(
    tmp_path: Path, story: Reference, caplog: pytest.LogCaptureFixture, version: str, magic: bytes, head: bytes,
) -> None:
    """A database written by the tagged-JSON codec (engine version 3) or by version 4
    (MessagePack of dataclasses, the rulesets' state untagged): its snapshots are not trusted
    as this version's (by the row's version, and, were that lost, by their first bytes); the
    world comes back whole from its log."""
    db = tmp_path / f"v{version}.db"
    fill(db, story, snapshot_every=10).store.close()
    blob = magic + _frame(head)
    seq = plant(db, blob, version)
    with caplog.at_level(logging.WARNING):
        worlds = reopen(db)
    assert state_of(worlds.states[story.world]) == story.final
    said = [r.getMessage() for r in caplog.records if "snapshot" in r.getMessage()]
    assert any(f"seq {seq}" in m and f"'{version}'" in m and "rebuil" in m for m in said), said
    with pytest.raises(snapshots.SnapshotUnreadable, match=f"engine version {version}"):
        CODEC.decode(blob)


@pytest.mark.parametrize("value, says", [
    ({"new-ruleset": Path("/")}, "PosixPath"),
    ({"text": "cut emoji \ud83d"}, "surrogates"),
    ({"n": 2**70}, "ints"),
], ids=["not-a-state-class", "a-lone-surrogate", "an-int-beyond-64-bits"])
def test_a_state_the_format_cannot_hold_is_not_written_and_says_why(value: Any, says: str) -> None:
    with pytest.raises(snapshots.SnapshotUnwritable, match=says):
        snapshots.Encoder().encode(World(world="w", ext=value))


def test_a_nan_and_infinities_come_back() -> None:
    back = CODEC.decode(snapshots.Encoder().encode(World(world="w", settings={"x": math.nan, "y": -math.inf})))
    assert math.isnan(back.settings["x"]) and back.settings["y"] == -math.inf


def _frame(data: bytes) -> bytes:
    packed = zlib.compress(data)
    return struct.pack(">I", len(packed)) + packed


def _blob(*values: Any) -> bytes:
    return snapshots.MAGIC + b"".join(_frame(msgspec.msgpack.encode(v)) for v in values)


WORLD = {"world": "w"}


@pytest.mark.parametrize("blob, says", [
    (pickle.dumps(World(world="w")), "a pickle"),
    (b"", "not in the snapshot format"),
    (snapshots.MAGIC, "no world"),
    (snapshots.MAGIC + b"not zlib", "damaged"),
    (snapshots.MAGIC + struct.pack(">I", 8) + b"not zlib", "damaged"),
    (snapshots.MAGIC + _frame(b"\xc1"), "invalid"),
    (_blob({"id": "x"}), "missing required field `world`"),
    (_blob({**WORLD, "last_seq": "os.system"}), "Expected `int`"),
    (_blob({**WORLD, "combats": {"c": {"id": "c", "ruleset": "x"}}}), "holding its combats"),
    (_blob(WORLD, ["c", {"id": "c"}]), "missing required field `ruleset`"),
    (_blob(WORLD, {"c": 1}), "Expected `array`"),
    (_blob(WORLD, ["c", {"id": "c", "ruleset": "x", "last_plan": {"round": 1}}]), "`str | null`"),
    (_blob({**WORLD, "ext": {"balanced-d20": {"type": "WorldState", "watches": {"a": {"actor_id": 1}}}}}),
     "WorldExt: Expected `str`, got `int` - at `$.watches[...].actor_id` - at `$.ext[...]`"),
    (_blob(WORLD, ["c", {"id": "c", "ruleset": "x", "combatants": {"a": {"id": "a", "ext": {"base": 1}}}}]),
     "CombatantExt: Object missing required field `type`"),
    (_blob({**WORLD, "ext": {"no-such-ruleset": {"type": "Thing", "x": 1}}}), "WorldExt: Invalid value 'Thing'"),
    (_blob(WORLD, ["c", {"id": "c", "ruleset": "storyteller", "ext": {"type": "Fighter"}}]),
     "CombatExt: Invalid value 'Fighter' - at `$.type` - at `$[1].ext`"),
    (_blob(WORLD, ["c", {"id": "c", "ruleset": "x", "combatants": {"a": {"id": "a", "hold": {"state": 1}}}}]),
     "at `$[1].combatants[...].hold.state`"),
    (snapshots.MAGIC + _frame(msgspec.msgpack.encode({**WORLD, "settings": {"x": None}})[:-1]
                              + b"\x91" * 100_000 + b"\xc0"), "recursion"),
], ids=["old-pickle", "empty", "no-frame", "cut-short", "not-zlib", "not-msgpack", "not-a-world", "a-wrong-type",
        "combats-in-the-head", "a-field-missing", "a-frame-not-a-pair", "a-plan-not-kept-as-text",
        "a-ruleset-state-of-the-wrong-shape", "a-ruleset-state-without-its-tag", "a-tag-no-ruleset-declares",
        "state-where-a-ruleset-keeps-none",
        "a-hold-of-the-wrong-shape", "nested-100000-deep"])
def test_the_decoder_refuses_what_it_cannot_read_and_says_what(blob: bytes, says: str) -> None:
    with watching() as seen, pytest.raises(snapshots.SnapshotUnreadable, match=re.escape(says)):
        CODEC.decode(blob)
    assert seen == []


@pytest.mark.parametrize("blob, says", [
    (_blob(WORLD, ["c", {"id": "c", "ruleset": "storyteller", "combatants": {"a": {"id": "a", "ext": {"type": "Fighter"}}}}]),
     "combat 'c' holds Fighter, which ruleset 'storyteller' does not declare"),
    (_blob(WORLD, ["c", {"id": "c", "ruleset": "balanced-d20", "ext": {"type": "DicePoolCombat"}}]),
     "combat 'c' holds DicePoolCombat, which ruleset 'balanced-d20'"),
    (_blob({**WORLD, "ext": {"dice-pool": {"type": "WorldState"}}}), "World.ext['dice-pool'] holds WorldState, which ruleset 'dice-pool'"),
], ids=["a-combatant", "a-combat", "the-world"])
def test_the_decoder_refuses_a_ruleset_s_state_where_another_ruleset_plays(blob: bytes, says: str) -> None:
    """Each place is read as the union of every given ruleset's classes, so the tag alone
    would let one ruleset's state into another's combat: its owner is checked too."""
    with pytest.raises(snapshots.SnapshotUnreadable, match=re.escape(says)):
        CODEC.decode(blob)


def test_a_snapshot_holding_another_ruleset_s_state_is_refused_and_the_world_rebuilt_from_its_log(
    tmp_path: Path, story: Reference, caplog: pytest.LogCaptureFixture,
) -> None:
    db = tmp_path / "swapped.db"
    fill(db, story, snapshot_every=10).store.close()
    store = Store(db, codec=CODEC)
    stored = store.snapshot(story.world)
    store.close()
    assert stored is not None
    swapped = replace(stored, combats={k: replace(c, ruleset="storyteller") for k, c in stored.combats.items()})
    assert any(type(c.ext).__name__ == "Fighter" for combat in swapped.combats.values()
               for c in combat.combatants.values())  # balanced-d20's state, now under storyteller
    seq = plant(db, snapshots.Encoder().encode(swapped), ENGINE_VERSION)
    with caplog.at_level(logging.WARNING):
        worlds = reopen(db)
    assert state_of(worlds.states[story.world]) == story.final
    said = [r.getMessage() for r in caplog.records if "snapshot" in r.getMessage()]
    assert any(f"seq {seq}" in m and "holds Fighter" in m and "rebuil" in m for m in said), said


def test_a_preview_cache_planted_in_a_snapshot_is_dropped() -> None:
    """The preview would take it for its own cache on the next message: it never comes back."""
    combat = {"id": "c", "ruleset": "foundry-core", "preview_cache": {"view": {"planted": True}}}
    assert CODEC.decode(_blob(WORLD, ["c", combat])).combats["c"].preview_cache is None


def test_a_frame_inflating_past_the_limit_is_refused_before_it_fills_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshots, "MAX_FRAME", 10_000)
    bomb = _blob({**WORLD, "settings": {"x": " " * 20_000}})
    assert len(bomb) < 200
    with pytest.raises(snapshots.SnapshotUnreadable, match="larger than 10000 bytes"):
        CODEC.decode(bomb)


def test_a_value_without_a_tag_is_not_written_and_the_message_stays_acked(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    """A value that is not state (a new ruleset's class that is no dataclass) fails the
    snapshot, loudly, never the message; the world then comes back from its log."""
    store = Store(tmp_path / "x.db")
    world = World(world="w", last_seq=0, ext={"new-ruleset": Path("/")})  # type: ignore[dict-item]
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
    earlier, later = (CODEC.decode(snapshots.Encoder().encode(w)) for w in pair)  # copies nobody else holds
    encoder = snapshots.Encoder()
    assert encoder.encode(earlier) == snapshots.Encoder().encode(earlier)
    assert sum(map(len, encoder._frames.values())) == len(earlier.combats)
    gone = [weakref.ref(c) for c in earlier.combats.values()]
    del earlier
    gc.collect()
    assert all(ref() is None for ref in gone)
    assert not encoder._frames
    blob = encoder.encode(later)
    assert blob == snapshots.Encoder().encode(later)
    frames = [frame for _, frame in encoder._frames[later.world].values()]
    assert encoder.encode(later) == blob  # the same combats: their frames, not encoded again
    again = [frame for _, frame in encoder._frames[later.world].values()]
    assert all(a is b for a, b in zip(frames, again, strict=True))


def test_overlapping_decodes_keep_the_collector_paused_until_the_last_ends_then_turn_it_back_on() -> None:
    # hosted mode decodes snapshots in several worker threads at once: each reading
    # gc.isenabled() for itself, one could see another's pause and leave the collector off
    from adapter.store.snapshots import GC_PAUSE

    assert gc.isenabled()
    try:
        with GC_PAUSE:  # one thread's decode
            with GC_PAUSE:  # another's, begun meanwhile
                pass  # it ends first
            assert not gc.isenabled()  # the first is still decoding
        assert gc.isenabled()
        gc.disable()  # a collector the process turned off stays off
        with GC_PAUSE:
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
