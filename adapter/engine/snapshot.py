"""Reading a forwarded ``Combat#toObject()`` snapshot into the engine's ``Combat``: who is
in it and what Foundry says of each (docs/protocol.md, ``hook``). Initiative values are read
only at first contact (:mod:`.adopt`); after that scores come from rolls and ``initiative.set``.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import itemgetter
from typing import Any

from msgspec.structs import replace

from .model import Combat, Combatant

_ID = itemgetter("_id")

#: the snapshot fields the engine reads from a combatant
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

    ``combatants_as_last``: the snapshot's ``combatants`` are, byte for byte, those of the last
    hook of this combat the pipeline accepted: they are not read again, only the groups."""
    stated = data.get("skip_defeated")
    skip = stated if isinstance(stated, bool) else None  # not stated: None, passed over as on
    order = tuple(data.get("turn_order") or ())  # not stated: (), ties by _id
    if combat.skip_defeated is not skip or combat.turn_order != order:
        combat = replace(combat, skip_defeated=skip, turn_order=order)
    if _groups(data) == combat.groups and (combatants_as_last or _unchanged(combat, data)):
        return combat, [], []
    return _read(combat, data)


def _read(combat: Combat, data: Mapping[str, Any]) -> tuple[Combat, list[str], list[str]]:
    listed = [c["_id"] for c in data.get("combatants", ())]
    by_id = {c["_id"]: c for c in data.get("combatants", ())}
    combatants = {cid: read_combatant(by_id[cid], combat.combatants.get(cid)) for cid in by_id}
    joined = [cid for cid in listed if cid not in combat.combatants]
    left = [cid for cid in combat.roster if cid not in by_id]
    groups, roster = _groups(data), tuple(listed)
    if (
        roster != combat.roster
        or groups != combat.groups
        or any(combatants[cid] is not combat.combatants.get(cid) for cid in combatants)
    ):
        combat = replace(combat, combatants=combatants, roster=roster, groups=groups)
    return combat, joined, left


def _unchanged(combat: Combat, data: Mapping[str, Any]) -> bool:
    """The snapshot lists the combatants the combat holds, in order, every one's fields as last
    read: most hooks, seen in one pass without building anything."""
    raw = data.get("combatants", ())
    if len(raw) != len(combat.roster) or list(map(_ID, raw)) != list(combat.roster):
        return False
    known = combat.combatants
    for c in raw:
        was = known.get(c["_id"])
        if was is None or was.source != tuple(map(c.get, SOURCE_KEYS)):
            return False
    return True


def _groups(data: Mapping[str, Any]) -> dict[str, str]:
    return {g["_id"]: str(g.get("name") or "") for g in data.get("groups") or ()}
