"""Real ``hook`` payloads: a Foundry v13 combat (``Combat#toObject()`` with the module's
extensions) that is created, rolled for, started, and whose turn then advances by one per
message, round after round. Every world gets the same bytes; only the connect auth differs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..version import __version__

GM = "benchGm000000001"
COMBAT_ID = "benchCombat00001"
SCENE = "Xo4bT8sKq1VnZ6cP"
_STATS = {
    "coreVersion": "13.350",
    "systemId": "dnd5e",
    "systemVersion": "5.1.2",
    "createdTime": 1764418810000,
    "modifiedTime": 1764419012000,
    "lastModifiedBy": GM,
}
NAMES = ("Aria", "Brak", "Cyra", "Dorn", "Elke", "Fenn", "Gala", "Hask", "Iona", "Jorv")


def combatant_id(i: int) -> str:
    return f"cbt{i:013d}"


def combatant(i: int) -> dict[str, Any]:
    npc = i % 3 == 2
    return {
        "_id": combatant_id(i),
        "type": "base",
        "system": {},
        "actorId": f"act{i:013d}",
        "tokenId": f"tok{i:013d}",
        "sceneId": SCENE,
        "img": None,
        "initiative": None,
        "hidden": False,
        "defeated": False,
        "group": None,
        "flags": {},
        "_stats": {"coreVersion": "13.350", "systemId": "dnd5e", "modifiedTime": 1764419012000},
        "name": f"{NAMES[i % len(NAMES)]} {i}",
        "owners": [] if npc else [f"player{i:09d}"],
        "is_npc": npc,
        "is_defeated": False,
        "stats": {"dex": i % 5},
    }


def roll_total(i: int) -> int:
    """Distinct totals, so the order is known without asking the server: 20, 19, ..."""
    return 20 - i


def roll(total: int) -> dict[str, Any]:
    return {
        "class": "Roll", "options": {}, "dice": [], "formula": "1d20 + 2", "evaluated": True,
        "terms": [{"class": "Die", "options": {}, "evaluated": True, "number": 1, "faces": 20,
                   "modifiers": [], "results": [{"result": total - 2, "active": True}]}],
        "total": total,
    }


def hooks(count: int, combatants: int = 8, rolls: bool = True,
          total: Callable[[int], int] = roll_total) -> list[dict[str, Any]]:
    """``count`` hook payloads, ``seq`` 1..count: create, one roll each (combatant ``i`` rolls
    ``total(i)``; unless ``rolls`` is false: then nobody has rolled and the order is by id),
    start, then turns in the order of ``roll_total``."""
    people = [combatant(i) for i in range(combatants)]
    out: list[dict[str, Any]] = []
    round_, turn, rolled = 0, None, 0  # combatants 0 .. rolled - 1 have rolled

    def add(name: str, **extra: Any) -> None:
        if len(out) >= count:
            return
        for i, person in enumerate(people):
            person["initiative"] = float(total(i)) if i < rolled else None
        current = {"round": round_, "turn": turn,
                   "combatantId": combatant_id(turn) if turn is not None else None,
                   "tokenId": None}
        combat = {"_id": COMBAT_ID, "type": "base", "system": {}, "scene": SCENE, "groups": [],
                  "combatants": [dict(p) for p in people], "active": True, "round": round_,
                  "turn": turn, "sort": 0, "flags": {}, "_stats": dict(_STATS),
                  "skip_defeated": False}  # core's Skip Defeated (its default), as the module adds it
        out.append({"seq": len(out) + 1, "user": GM, "world_time": float(len(out) * 6),
                    "hook": name, "combat": combat, "current": current, **extra})

    add("createCombat")
    for i in range(combatants if rolls else 0):
        rolled = i + 1
        add("initiativeRoll", roll={"combatant_id": combatant_id(i), "roll": roll(total(i))})
    round_, turn = 1, 0
    add("combatStart")
    while len(out) < count:
        if turn + 1 < combatants:
            turn += 1
            add("combatTurn")
        else:
            round_, turn = round_ + 1, 0
            add("combatRound")
    return out


def session(world: str, ruleset: str = "foundry-core") -> dict[str, Any]:
    """A connect's auth without its token: what a recording's session line holds."""
    return {"world": world, "ruleset": ruleset, "settings": {}, "gm_users": [GM], "protocol": 1,
            "module_version": __version__, "foundry_version": "13.350", "system": "dnd5e"}


def auth(world: str, token: str, ruleset: str = "foundry-core") -> dict[str, Any]:
    return {"token": token, **session(world, ruleset)}
