"""Reading a forwarded ``Combat#toObject()`` snapshot into the engine's ``Combat``.

What the engine takes from a snapshot: who is in the combat, names (empty or absent: ""),
owners, hidden, defeated, groups, stats, ``roundJoined`` (v14), the round, core's Skip
Defeated (``skip_defeated``, which the module adds to the combat; absent: True) and Foundry's
own turn order (``turn_order``, which the module adds; absent: ties by ``_id``). Initiative
values are read once, at first contact (:mod:`.adopt`); after that scores come only from
``initiativeRoll`` hooks and the GM's ``initiative.set`` intent.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import itemgetter
from typing import Any

from msgspec.structs import replace

from .model import Combat, Combatant

_ID = itemgetter("_id")

#: the snapshot fields the engine reads from a combatant (see the module docstring)
SOURCE_KEYS = ("name", "owners", "is_npc", "hidden", "is_defeated", "defeated", "group", "actorId",
               "tokenId", "stats", "roundJoined")


def read_combatant(data: Mapping[str, Any], known: Combatant | None) -> Combatant:
    """The combatant as the snapshot shows it; ``known`` itself when nothing it reads changed."""
    source = tuple(map(data.get, SOURCE_KEYS))
    if known is not None and known.source == source:
        return known
    defeated = data.get("is_defeated")
    fields: dict[str, Any] = {
        "name": str(data.get("name") or (known.name if known else "") or ""),
        "owners": tuple(data.get("owners") or ()),
        "is_npc": bool(data.get("is_npc", False)),
        "hidden": bool(data.get("hidden", False)),
        "defeated": bool(defeated if defeated is not None else data.get("defeated", False)),
        "group": data.get("group"),
        "actor_id": data.get("actorId"),
        "token_id": data.get("tokenId"),
        "stats": dict(data.get("stats") or {}),
        "round_joined": _round_joined(data.get("roundJoined")),
        "source": source,
    }
    if known is None:
        return Combatant(id=data["_id"], **fields)
    return replace(known, **fields)


def _round_joined(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def read_snapshot(
    combat: Combat, data: Mapping[str, Any], combatants_as_last: bool = False,
) -> tuple[Combat, list[str], list[str]]:
    """The combat updated from the snapshot, with the ids that joined and that left.

    ``combatants_as_last``: the pipeline saw that the snapshot's ``combatants`` are, byte for
    byte, those of the last hook of this combat it accepted (:mod:`adapter.pipeline`, "what
    a message costs"), which this combat was read from: they are not read again, only the
    groups are compared."""
    combat = read_turn_order(read_skip_defeated(combat, data), data)
    if (_same_groups(combat, data) if combatants_as_last else _unchanged(combat, data)):
        return combat, [], []
    return _read(combat, data)


def read_skip_defeated(combat: Combat, data: Mapping[str, Any]) -> Combat:
    """Foundry core's Skip Defeated as the snapshot states it (every snapshot does, from a
    module that sends it); absent (an older module, a recording made before the field), None:
    a defeated combatant's turn is passed over, as the sidecar did before it was told, and a
    pointer Foundry reports on one is moved on (docs/protocol.md, ``hook``)."""
    stated = data.get("skip_defeated")
    skip = stated if isinstance(stated, bool) else None
    return combat if combat.skip_defeated is skip else replace(combat, skip_defeated=skip)


def read_turn_order(combat: Combat, data: Mapping[str, Any]) -> Combat:
    """Foundry's own turn order as the snapshot states it (``turn_order``, the ids of
    ``combat.turns``: the system's sort, its tie rule included); absent (an older module, a
    recording made before the field): (), ties by ``_id`` as core's sort breaks them."""
    order = tuple(data.get("turn_order") or ())
    return combat if combat.turn_order == order else replace(combat, turn_order=order)


def _read(combat: Combat, data: Mapping[str, Any]) -> tuple[Combat, list[str], list[str]]:
    listed = [c["_id"] for c in data.get("combatants", ())]
    by_id = {c["_id"]: c for c in data.get("combatants", ())}
    combatants = {
        cid: read_combatant(by_id[cid], combat.combatants.get(cid)) for cid in by_id
    }
    joined = [cid for cid in listed if cid not in combat.combatants]
    left = [cid for cid in combat.roster if cid not in by_id]
    groups = {g["_id"]: str(g.get("name") or "") for g in data.get("groups") or ()}
    roster = tuple(listed)
    same = (
        roster == combat.roster
        and groups == combat.groups
        and all(combatants[cid] is combat.combatants.get(cid) for cid in combatants)
    )
    if same:
        return combat, joined, left
    updated = replace(combat, combatants=combatants, roster=roster, groups=groups)
    return updated, joined, left


def _unchanged(combat: Combat, data: Mapping[str, Any]) -> bool:
    """The snapshot says what the combat already holds (the same combatants, listed in the
    same order, every one's fields as last read, the same groups): most hooks, read in one
    pass without building anything. What :func:`read_snapshot` would conclude in full."""
    raw = data.get("combatants", ())
    if len(raw) != len(combat.roster) or list(map(_ID, raw)) != list(combat.roster):
        return False
    known = combat.combatants
    for c in raw:
        was = known.get(c["_id"])
        if was is None or was.source != tuple(map(c.get, SOURCE_KEYS)):
            return False
    return _same_groups(combat, data)


def _same_groups(combat: Combat, data: Mapping[str, Any]) -> bool:
    groups = data.get("groups") or ()
    if len(groups) != len(combat.groups):
        return False
    return not groups or {g["_id"]: str(g.get("name") or "") for g in groups} == combat.groups
