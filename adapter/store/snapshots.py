"""Snapshots as data (docs/reliability.md, "Snapshots are data, not code"): a world's state
in msgspec's MessagePack, read back typed as the engine's state Structs and, in the places
marked for a ruleset's state (``PLACES``), as the tagged Structs the :class:`Codec`'s
rulesets declare, each only in a place of the ruleset that declares it. Fields a class does
not have are ignored; ``Combat.preview_cache`` is never written, and dropped if found.

The bytes: ``MAGIC``, then frames, each a 4-byte length and zlib-compressed MessagePack:
the world without its combats, then one ``[combat key, combat]`` per combat.
"""

from __future__ import annotations

import gc
import struct
import threading
import weakref
import zlib
from collections.abc import Iterable, Iterator
from functools import partial
from typing import Any, TypeVar, Union

import msgspec
from msgspec.structs import replace

from ..engine.model import Combat, CombatantExt, CombatExt, World, WorldExt
from ..engine.ruleset import Ruleset

#: the first bytes of a snapshot in this format; older formats are named in the refusal
MAGIC = b"ISM2"
OLDER = {b"ISJ1": "the JSON format of engine version 3", b"ISM1": "the MessagePack of engine version 4"}

#: where a ruleset keeps state, each marked by its class
PLACES = (CombatantExt, CombatExt, WorldExt)

#: the most one frame may inflate to (a tampered snapshot must not exhaust memory)
MAX_FRAME = 512 * 1024 * 1024

T = TypeVar("T")
_MSGPACK = msgspec.msgpack.Encoder()



class GcPause:
    """The garbage collector paused while any thread is inside (``with GC_PAUSE``: hosted mode
    decodes snapshots in several threads at once): the last to leave enables it again, if it
    was enabled before the first came in. Each thread reading ``gc.isenabled()`` for itself
    could see another's pause and leave the collector off for good."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._inside = 0
        self._was_enabled = False

    def __enter__(self) -> None:
        with self._lock:
            if self._inside == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._inside += 1

    def __exit__(self, *_: object) -> None:
        with self._lock:
            self._inside -= 1
            if self._inside == 0 and self._was_enabled:
                gc.enable()


GC_PAUSE = GcPause()

class SnapshotUnreadable(Exception):
    """The bytes are not a snapshot this decoder reads (another format, damaged, tampered)."""


class SnapshotUnwritable(Exception):
    """The state holds a value the format cannot hold (a lone surrogate, an int past 64 bits)."""


# ---------------------------------------------------------------- encoding


class Encoder:
    """Encodes worlds, keeping each combat's frame while that same combat object lives (held
    weakly: a combat the world moved past is freed at once, and its frame dropped with it)."""

    def __init__(self) -> None:
        self._frames: dict[str, dict[str, tuple[weakref.ref[Combat], bytes]]] = {}
        self._lock = threading.Lock()

    def encode(self, world: World) -> bytes:
        """The snapshot bytes of a world."""
        with self._lock:
            parts = [MAGIC, _frame(replace(world, combats={}))]
            kept = self._frames.get(world.world, {})
            frames: dict[str, tuple[weakref.ref[Combat], bytes]] = {}
            for key, combat in world.combats.items():
                cached = kept.get(key)
                if cached is None or cached[0]() is not combat:
                    ref = weakref.ref(combat, partial(self._drop, world.world, key))
                    kept_combat = combat if combat.preview_cache is None else replace(combat, preview_cache=None)
                    cached = (ref, _frame((key, kept_combat)))
                frames[key] = cached
                parts.append(cached[1])
            if frames:
                self._frames[world.world] = frames
            else:
                self._frames.pop(world.world, None)
            return b"".join(parts)

    def _drop(self, world_id: str, key: str, ref: weakref.ref[Combat]) -> None:
        """A cached combat was freed (on whichever thread let it go): its frame goes too. No
        lock: single dict operations; a race only costs a later snapshot one re-encoding."""
        frames = self._frames.get(world_id)
        if frames is not None and frames.get(key, (None, b""))[0] is ref:
            frames.pop(key, None)
            if not frames:
                self._frames.pop(world_id, None)


def _frame(value: Any) -> bytes:
    try:
        packed = zlib.compress(_MSGPACK.encode(value), 1)
    except (TypeError, UnicodeEncodeError, OverflowError) as error:
        raise SnapshotUnwritable(str(error)) from error
    return struct.pack(">I", len(packed)) + packed


# ---------------------------------------------------------------- decoding


class Codec:
    """Reads snapshots of worlds played under ``rulesets`` (their ``state_types``)."""

    def __init__(self, rulesets: Iterable[Ruleset] = ()) -> None:
        #: each ruleset's id -> its classes: the only state a combat under it (or its
        #: ``World.ext`` entry) may hold
        self._owned = {rs.id: rs.state_types for rs in rulesets}
        declared = [cls for kinds in self._owned.values() for cls in kinds]
        for cls in declared:
            if not (issubclass(cls, msgspec.Struct) and cls.__struct_config__.tag
                    and sum(issubclass(cls, place) for place in PLACES) == 1):
                raise TypeError(f"{cls.__qualname__} is not a tagged Struct marked with one place of {PLACES}")
        #: each place: the union of the classes declared for it (None: no ruleset keeps state there)
        self._unions: dict[type, Any] = {
            place: Union[kinds] if (kinds := tuple(c for c in declared if issubclass(c, place))) else None  # noqa: UP007
            for place in PLACES}
        self._head = msgspec.msgpack.Decoder(World, dec_hook=self._ruleset_state)
        self._combat = msgspec.msgpack.Decoder(tuple[str, Combat], dec_hook=self._ruleset_state)

    def decode(self, blob: bytes) -> World:
        """The world in snapshot bytes; :class:`SnapshotUnreadable` for anything else."""
        if not blob.startswith(MAGIC):
            older = "a pickle, the format of older versions" if blob[:1] == b"\x80" else OLDER.get(blob[:4])
            raise SnapshotUnreadable("not in the snapshot format" + (f" ({older}, no longer read)" if older else ""))
        # no garbage collection meanwhile: every object decoded lives on (no cycles), and each
        # collection their allocation triggers would walk them all again
        with GC_PAUSE:
            frames = _frames(blob)
            head = next(frames, None)
            if head is None:
                raise SnapshotUnreadable("no world in it")
            world = _read(self._head, head)
            if world.combats:
                raise SnapshotUnreadable("starts with a World holding its combats, not one without")
            for ruleset, kept in world.ext.items():
                self._owned_by(ruleset, kept, f"World.ext[{ruleset!r}]")
            combats: dict[str, Combat] = {}
            for frame in frames:
                key, combat = _read(self._combat, frame)
                for state in (combat.ext, *(c.ext for c in combat.combatants.values())):
                    self._owned_by(combat.ruleset, state, f"combat {key!r}")
                # the preview's cache is never written; whatever a tampered file puts there is dropped
                combats[key] = combat if combat.preview_cache is None else replace(combat, preview_cache=None)
            return replace(world, combats=combats)

    def _owned_by(self, ruleset: str, state: Any, where: str) -> None:
        """The tag alone would let one ruleset's state into another's place."""
        if state is not None and type(state) not in self._owned.get(ruleset, ()):
            raise SnapshotUnreadable(f"{where} holds {type(state).__name__}, which ruleset {ruleset!r} does not declare")

    def _ruleset_state(self, place: type, raw: Any) -> Any:
        """msgspec's hook for the marked places: ``raw`` read as the rulesets' classes."""
        if place not in self._unions:
            raise NotImplementedError  # not a place: msgspec says the type is unsupported
        kinds = self._unions[place]
        if kinds is None:
            raise ValueError(f"{place.__name__} holds state, and no ruleset known here keeps state there")
        try:
            return msgspec.convert(raw, kinds)
        except (msgspec.ValidationError, RecursionError) as error:
            raise ValueError(f"{place.__name__}: {error}") from error


def _read(decoder: msgspec.msgpack.Decoder[T], frame: bytes) -> T:
    try:
        return decoder.decode(frame)
    except (msgspec.DecodeError, RecursionError) as error:  # ValidationError is a DecodeError
        raise SnapshotUnreadable(str(error)) from error


def _frames(blob: bytes) -> Iterator[bytes]:
    """The MessagePack bytes of each frame after MAGIC."""
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
            data = inflate.decompress(packed, MAX_FRAME)
        except zlib.error as error:
            raise SnapshotUnreadable(f"damaged: {error}") from error
        if inflate.unconsumed_tail or not inflate.eof:
            raise SnapshotUnreadable(f"damaged, or a frame larger than {MAX_FRAME} bytes")
        yield data
