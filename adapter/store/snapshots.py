"""Snapshots as data: a world's state written as tagged JSON, read back by a decoder that
builds nothing but the engine's own state classes.

Why not pickle: a snapshot lives in a file the GM may have been handed (a "backup", a shared
world folder), and unpickling one can call any callable it can name (issue 15 planted one
that reached ``eval``). Here the bytes go through ``orjson.loads`` (JSON values only), then a
walk that turns a few tagged objects back into Python values:

    {"$": "Combatant", "id": ..., ...}   an instance of a class in STATE_CLASSES, by its
                                         name; its fields must be the class's own fields
    {"$tuple": [...]}, {"$frozenset": [...]}, {"$set": [...]}
    {"$map": [[key, value], ...]}        a dict whose keys are not all plain strings
    {"$float": "nan" | "inf" | "-inf"}, {"$int": "-0x1f..."}   (an int beyond 64 bits, in hex)

A tag names a class only through the explicit table below: nothing is imported, looked up
by attribute, or called but the dataclass's generated ``__init__``. Anything else (an
unknown tag, a field a class does not have, bytes that are not this format) raises
:class:`SnapshotUnreadable`; the store then names the snapshot and rebuilds the world from
its log. The limit: a decoder that builds only state classes still builds whatever values
the file holds, so a tampered snapshot can give a wrong state, as a tampered message log
can; it cannot run code.

The bytes: ``MAGIC``, then frames, each a 4-byte length and zlib-compressed JSON: first the
world without its combats, then one frame per combat (``[combat key, combat]``). A combat is
encoded once and its frame reused by later snapshots for as long as the world holds the same
(immutable) combat object, so a snapshot after a message re-encodes the combats that
message changed, not all of them. The state is never mutated, so the snapshot thread can
encode a world while the event loop moves on; per-combat frames also keep each step short
(the thread gives the loop the interpreter back between them, and the garbage collector
never sees one huge temporary tree).
"""

from __future__ import annotations

import gc
import json
import math
import struct
import threading
import weakref
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import MISSING, fields, is_dataclass, replace
from functools import partial
from typing import Any

import orjson

from ..engine.holding import Hold
from ..engine.model import Combat, Combatant, Prompt, World
from ..rulesets.balanced_d20.state import Fighter, Readied, Reroll, Watch, WorldState
from ..rulesets.dice_pool.state import DicePoolCombat, DicePoolState, PoolRoll

#: the first bytes of a snapshot in this format (a pickle starts with b"\x80")
MAGIC = b"ISJ1"

#: every class a snapshot may hold: the engine's state and each ruleset's own state. A ruleset
#: with a new state class adds it here (until then its worlds' snapshots fail, logged, and
#: the world comes back from its log; test_snapshots.py round-trips every ruleset's worlds)
STATE_CLASSES: tuple[type, ...] = (
    World, Combat, Combatant, Prompt, Hold,
    Fighter, Reroll, Readied, Watch, WorldState,
    PoolRoll, DicePoolState, DicePoolCombat,
)
_BY_NAME: dict[str, type] = {cls.__name__: cls for cls in STATE_CLASSES}
_FIELDS: dict[type, tuple[str, ...]] = {
    cls: tuple(f.name for f in fields(cls) if f.name != "preview_cache") for cls in STATE_CLASSES
}
assert len(_BY_NAME) == len(STATE_CLASSES), "two state classes share a name"

_INT64 = 2**63


class SnapshotUnreadable(Exception):
    """The bytes are not a snapshot this decoder reads (another format, damaged, tampered)."""


class SnapshotUnwritable(Exception):
    """The state holds a value the format has no tag for (a class missing from STATE_CLASSES)."""


# ---------------------------------------------------------------- encoding


class Encoder:
    """Encodes worlds, keeping each combat's frame while that same combat object lives.

    A frame holds its combat by a weak reference: once the world has moved past a combat
    (the next message builds a new one) and nothing else holds it, the combat is freed and
    its frame dropped with it, instead of both staying until the world's next snapshot
    (a writer that left and came back kept its old combat, plan and preview alive)."""

    def __init__(self) -> None:
        self._frames: dict[str, dict[str, tuple[weakref.ref[Combat], bytes]]] = {}
        self._lock = threading.Lock()

    def encode(self, world: World) -> bytes:
        """The snapshot bytes of a world."""
        with self._lock, _heap_frozen():
            parts = [MAGIC, _frame(_out(replace(world, combats={})))]
            kept = self._frames.get(world.world, {})
            frames: dict[str, tuple[weakref.ref[Combat], bytes]] = {}
            for key, combat in world.combats.items():
                cached = kept.get(key)
                if cached is None or cached[0]() is not combat:
                    cached = (weakref.ref(combat, partial(self._drop, world.world, key)), _frame([key, _out(combat)]))
                frames[key] = cached
                parts.append(cached[1])
            if frames:
                self._frames[world.world] = frames
            else:
                self._frames.pop(world.world, None)
            return b"".join(parts)

    def cached(self) -> int:
        """How many frames are kept."""
        return sum(len(frames) for frames in list(self._frames.values()))

    def _drop(self, world_id: str, key: str, ref: weakref.ref[Combat]) -> None:
        """A cached combat was freed (on whichever thread let it go): its frame goes too. No
        lock: single dict operations; a race only costs a later snapshot one re-encoding."""
        frames = self._frames.get(world_id)
        if frames is not None and frames.get(key, (None, b""))[0] is ref:
            frames.pop(key, None)
            if not frames:
                self._frames.pop(world_id, None)


@contextmanager
def _heap_frozen() -> Iterator[None]:
    """While encoding, the garbage collector leaves the objects that existed before alone.

    Encoding allocates many short-lived objects; each full collection they trigger walks the
    whole heap (a second and a half for 100,000 combatants), holding the interpreter, so the
    event loop stalls however the work is threaded. ``gc.freeze`` sets the existing objects
    aside (in O(1)) and ``gc.unfreeze`` gives them back: nothing is leaked, and garbage made
    meanwhile is still collected."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def encode(world: World) -> bytes:
    """The snapshot bytes of a world, encoded from scratch."""
    return Encoder().encode(world)


def _frame(tree: Any) -> bytes:
    try:
        text = orjson.dumps(tree)
    except TypeError:  # a lone surrogate in a string: the standard library escapes it
        text = json.dumps(tree, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode()
    packed = zlib.compress(text, 1)
    return struct.pack(">I", len(packed)) + packed


def _out(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:
        return value if -_INT64 <= value < _INT64 else {"$int": hex(value)}
    if kind is float:
        return value if math.isfinite(value) else {"$float": repr(value)}
    if kind is tuple:
        return {"$tuple": [_out(v) for v in value]}
    if kind is list:
        return [_out(v) for v in value]
    if kind is dict:
        if all(type(k) is str and not k.startswith("$") for k in value):
            return {k: _out(v) for k, v in value.items()}
        return {"$map": [[_out(k), _out(v)] for k, v in value.items()]}
    if kind is frozenset or kind is set:
        return {"$frozenset" if kind is frozenset else "$set": [_out(v) for v in _in_order(value)]}
    names = _FIELDS.get(kind)
    if names is None:
        what = "a dataclass" if is_dataclass(value) else "a value"
        raise SnapshotUnwritable(f"{what} of type {kind.__module__}.{kind.__qualname__} has no snapshot tag")
    attrs = value.__dict__
    out = {"$": kind.__name__}
    for name in names:
        out[name] = _out(attrs[name])
    return out


def _in_order(members: frozenset[Any] | set[Any]) -> list[Any]:
    """A set's members sorted when they can be (the same state gives the same bytes)."""
    try:
        return sorted(members)
    except TypeError:
        return list(members)


# ---------------------------------------------------------------- decoding


#: the most one frame may inflate to (a tampered snapshot must not exhaust memory)
MAX_FRAME = 512 * 1024 * 1024


def decode(blob: bytes) -> World:
    """The world in snapshot bytes; :class:`SnapshotUnreadable` for anything else."""
    if not isinstance(blob, bytes) or not blob.startswith(MAGIC):
        start = blob[:1] if isinstance(blob, bytes) else b""
        hint = " (a pickle, the format of older versions, no longer read)" if start == b"\x80" else ""
        raise SnapshotUnreadable(f"not in the snapshot format{hint}")
    with _collection_paused():
        return _decode(blob)


def _decode(blob: bytes) -> World:
    frames = _frames(blob)
    world = _in(next(frames, None), 0)
    if not isinstance(world, World) or world.combats:
        raise SnapshotUnreadable(f"starts with a {type(world).__name__}, not a World without its combats")
    combats: dict[str, Combat] = {}
    for tree in frames:
        if not (isinstance(tree, list) and len(tree) == 2 and isinstance(tree[0], str)):
            raise SnapshotUnreadable("a combat frame is not [key, combat]")
        combat = _in(tree[1], 0)
        if not isinstance(combat, Combat):
            raise SnapshotUnreadable(f"a combat frame holds a {type(combat).__name__}")
        if not isinstance(combat.last_plan, (str, type(None))):  # read back by plan_of
            raise SnapshotUnreadable(f"a combat's last plan is a {type(combat.last_plan).__name__}")
        combats[tree[0]] = combat
    return replace(world, combats=combats)


@contextmanager
def _collection_paused() -> Iterator[None]:
    """No garbage collection while a snapshot is decoded (at start, before serving).

    Every object decoded lives on, and each full collection their allocation triggers walks
    all of them again: a start with 100,000 combatants took twice as long. The decoded state
    has no reference cycles, so nothing is left for the collector afterwards."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _frames(blob: bytes) -> Iterator[Any]:
    """The JSON value of each frame after MAGIC."""
    at = len(MAGIC)
    while at < len(blob):
        if at + 4 > len(blob):
            raise SnapshotUnreadable("damaged: cut in a frame's length")
        (size,) = struct.unpack_from(">I", blob, at)
        packed = blob[at + 4:at + 4 + size]
        if len(packed) != size:
            raise SnapshotUnreadable("damaged: cut in a frame")
        at += 4 + size
        inflate = zlib.decompressobj()
        try:
            text = inflate.decompress(packed, MAX_FRAME)
        except zlib.error as error:
            raise SnapshotUnreadable(f"damaged: {error}") from error
        if inflate.unconsumed_tail or not inflate.eof:
            raise SnapshotUnreadable(f"damaged, or a frame larger than {MAX_FRAME} bytes")
        yield _json(text)


def _json(text: bytes) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        try:  # written by the standard library (lone surrogates escaped), or too deep for orjson
            return json.loads(text)
        except (ValueError, RecursionError) as error:
            raise SnapshotUnreadable(f"not JSON: {error}") from error


#: deeper than any state the engine builds (a world's values nest a dozen levels or so)
MAX_DEPTH = 200


def _in(value: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise SnapshotUnreadable(f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, list):
        return [_in(v, depth + 1) for v in value]
    if not isinstance(value, dict):
        return value
    if "$" in value:
        return _instance(value, depth)
    if len(value) == 1:
        ((tag, inner),) = value.items()
        if tag.startswith("$"):
            return _tagged(tag, inner, depth)
    return {k: _in(v, depth + 1) for k, v in value.items()}


def _instance(value: dict[str, Any], depth: int) -> Any:
    """An instance of a state class, its fields set as the engine's ``evolve`` sets them:
    no ``__init__`` (a frozen dataclass's sets each field through ``object.__setattr__``,
    half the time of a large start), so no code of any class runs at all."""
    name = value["$"]
    cls = _BY_NAME.get(name) if isinstance(name, str) else None
    if cls is None:
        raise SnapshotUnreadable(f"names {name!r}, which is not a state class")
    names = _FIELDS[cls]
    extra = [k for k in value if k != "$" and k not in names]
    if extra:
        raise SnapshotUnreadable(f"gives {name} fields it does not have: {', '.join(extra[:5])}")
    attrs = {k: _in(v, depth + 1) for k, v in value.items() if k != "$"}
    if len(attrs) < len(names):
        for field_name in names:
            if field_name not in attrs:
                attrs[field_name] = _default(cls, field_name)
    obj: Any = object.__new__(cls)
    obj.__dict__.update(attrs)
    return obj


def _default(cls: type, name: str) -> Any:
    """The default of a field a snapshot left out, as the dataclass would give it."""
    field = next(f for f in fields(cls) if f.name == name)
    if field.default is not MISSING:
        return field.default
    if field.default_factory is not MISSING:
        return field.default_factory()
    raise SnapshotUnreadable(f"{cls.__name__}: the required field {name!r} is missing")


def _tagged(tag: str, inner: Any, depth: int) -> Any:
    if tag in ("$tuple", "$frozenset", "$set", "$map") and not isinstance(inner, list):
        raise SnapshotUnreadable(f"{tag} of a {type(inner).__name__}, not a list")
    try:
        if tag == "$tuple":
            return tuple(_in(v, depth + 1) for v in inner)
        if tag == "$frozenset":
            return frozenset(_in(v, depth + 1) for v in inner)
        if tag == "$set":
            return {_in(v, depth + 1) for v in inner}
        if tag == "$map":
            return {_in(k, depth + 1): _in(v, depth + 1) for k, v in inner}
        if tag == "$float" and inner in ("nan", "inf", "-inf"):
            return float(inner)
        if tag == "$int" and isinstance(inner, str) and inner.lstrip("-").startswith("0x"):
            return int(inner, 16)  # no digit limit for hex
    except (TypeError, ValueError) as error:  # an unhashable key or member, a bad pair
        raise SnapshotUnreadable(f"{tag}: {error}") from error
    raise SnapshotUnreadable(f"unknown tag {tag} (or a bad value for it)")
