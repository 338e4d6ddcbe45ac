"""Builders for Foundry-shaped payloads (v13 ``toObject()`` fields), shared by the tests.

Shapes follow ../shared/research/foundry-sample-payloads.json: combatants carry Foundry's
own fields (``_stats``, ``flags``, ``system``, ``img``...) plus what the module adds
(``name``, ``owners``, ``is_npc``, ``is_defeated``, ``stats``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

STATS = {
    "coreVersion": "13.350",
    "systemId": "dnd5e",
    "systemVersion": "5.1.2",
    "createdTime": 1764418810000,
    "modifiedTime": 1764419012000,
    "lastModifiedBy": "zQ8mN2vB7xL4pR1s",
    "compendiumSource": None,
    "duplicateSource": None,
    "exportSource": None,
}


SCENE = "Xo4bT8sKq1VnZ6cP"


def foundry_sort(values: dict[str, float | None]) -> list[str]:
    """The order Foundry's ``_sortCombatants`` gives: initiative descending, ties by id."""

    def key(cid: str) -> tuple[bool, float, str]:
        value = values[cid]
        return (value is None, -(value if value is not None else 0.0), cid)

    return sorted(values, key=key)


def stats_of(system: tuple[str, str]) -> dict[str, Any]:
    """A document's ``_stats`` in a world of ``system`` (its id and version)."""
    return {**STATS, "systemId": system[0], "systemVersion": system[1]}


def combatant(
    cid: str,
    name: str,
    *,
    owners: Iterable[str] = (),
    npc: bool = False,
    hidden: bool = False,
    defeated: bool = False,
    stats: dict[str, Any] | None = None,
    group: str | None = None,
    actor: str | None = None,
    token: str | None = None,
    scene: str = SCENE,
    system: tuple[str, str] = ("dnd5e", "5.1.2"),
) -> dict[str, Any]:
    """``Combatant#toObject()`` as the module extends it (actor and token ids derived from
    ``cid`` unless given)."""
    return {
        "_id": cid,
        "type": "base",
        "system": {},
        "actorId": actor or "act" + cid[:13],
        "tokenId": token or "tok" + cid[:13],
        "sceneId": scene,
        "img": None,
        "initiative": None,
        "hidden": hidden,
        "defeated": defeated,
        "group": group,
        "flags": {},
        "_stats": stats_of(system),
        "name": name,
        "owners": list(owners),
        "is_npc": npc,
        "is_defeated": defeated,
        "stats": dict(stats or {}),
    }


def group(gid: str, name: str) -> dict[str, Any]:
    """``CombatantGroup#toObject()`` (v13)."""
    return {"_id": gid, "type": "base", "system": {}, "name": name, "img": None, "initiative": None,
            "ownership": {"default": 0}, "flags": {}}


def combat(cid: str, combatants: list[dict[str, Any]], round_: int = 0, turn: int | None = None,
           *, groups: list[dict[str, Any]] | None = None, scene: str = SCENE,
           system: tuple[str, str] = ("dnd5e", "5.1.2")) -> dict[str, Any]:
    """``Combat#toObject()`` (v13) with the module's combatants."""
    return {
        "_id": cid,
        "type": "base",
        "system": {},
        "scene": scene,
        "groups": groups if groups is not None else [],
        "combatants": combatants,
        "active": True,
        "round": round_,
        "turn": turn,
        "sort": 0,
        "flags": {},
        "_stats": stats_of(system),
    }


def current(round_: int = 0, combatant_id: str | None = None, turn: int | None = None) -> dict[str, Any]:
    return {"round": round_, "turn": turn, "combatantId": combatant_id, "tokenId": None}


def hook_line(seq: int, user: str, world_time: float, name: str, combat_doc: dict[str, Any],
              current_: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """One ``hook`` line of a recording (a copy of the combat as it stands)."""
    return {"event": "hook", "data": {
        "seq": seq, "user": user, "world_time": world_time, "hook": name,
        "combat": copy.deepcopy(combat_doc), "current": current_, **extra}}


def intent_line(seq: int, user: str, world_time: float, kind: str, combat_id: str,
                combatant_id: str, args: dict[str, Any]) -> dict[str, Any]:
    """One ``intent`` line of a recording."""
    return {"event": "intent", "data": {
        "seq": seq, "user": user, "world_time": world_time, "kind": kind,
        "combat_id": combat_id, "combatant_id": combatant_id, "args": args}}


def d20_roll(natural: int, modifier: int = 0, *, cls: str = "Roll") -> dict[str, Any]:
    """``Roll#toJSON()`` of ``1d20 + modifier``."""
    terms: list[dict[str, Any]] = [
        {"class": "Die", "options": {}, "evaluated": True, "number": 1, "faces": 20,
         "modifiers": [], "results": [{"result": natural, "active": True}]},
    ]
    if modifier:
        terms += [
            {"class": "OperatorTerm", "options": {}, "evaluated": True, "operator": "+" if modifier > 0 else "-"},
            {"class": "NumericTerm", "options": {}, "evaluated": True, "number": abs(modifier)},
        ]
    formula = f"1d20 {'+' if modifier >= 0 else '-'} {abs(modifier)}" if modifier else "1d20"
    return {"class": cls, "options": {}, "dice": [], "formula": formula, "terms": terms,
            "total": natural + modifier, "evaluated": True}


def dnd5e_d20(natural: int, modifier: int = 0, *, modifiers: tuple[str, ...] = ()) -> dict[str, Any]:
    """dnd5e's ``D20Roll#toJSON()`` of ``1d20 + modifier`` (its initiative roll; ``modifiers``
    such as ``"kh"`` on the die)."""
    terms: list[dict[str, Any]] = [{
        "class": "D20Die", "options": {}, "evaluated": True, "number": 1, "faces": 20,
        "modifiers": list(modifiers), "results": [{"result": natural, "active": True}],
    }]
    if modifier:
        terms += [
            {"class": "OperatorTerm", "options": {}, "evaluated": True,
             "operator": "+" if modifier > 0 else "-"},
            {"class": "NumericTerm", "options": {}, "evaluated": True, "number": abs(modifier)},
        ]
    formula = "1d20" + "".join(modifiers) + (
        f" {'+' if modifier > 0 else '-'} {abs(modifier)}" if modifier else "")
    return {"class": "D20Roll", "options": {"advantageMode": 0, "critical": 20, "fumble": 1},
            "dice": [], "formula": formula, "terms": terms, "total": natural + modifier,
            "evaluated": True}


def pool_die(face: int, success_at: int = 4) -> dict[str, Any]:
    """One result as Foundry's ``cs>=4df=1`` leaves it (research notes, section 4)."""
    if face == 1:
        return {"result": 1, "active": True, "count": -1, "failure": True}
    success = face >= success_at
    return {"result": face, "active": True, "success": success, "count": 1 if success else 0}


def pool_roll(dice: list[int], faces: int = 6, number: int | None = None) -> dict[str, Any]:
    """``Roll#toJSON()`` of a dice pool ``{n}d6cs>=4df=1`` showing ``dice`` (dice-pool, DP-1/DP-3)."""
    results = [pool_die(d) for d in dice]
    n = len(dice) if number is None else number
    return {"class": "Roll", "options": {}, "dice": [], "formula": f"{n}d{faces}cs>=4df=1",
            "terms": [{"class": "Die", "options": {}, "evaluated": True, "number": n, "faces": faces,
                       "modifiers": ["cs>=4", "df=1"], "results": results}],
            "total": sum(r["count"] for r in results), "evaluated": True}


def d10_roll(die: int, mod: int) -> dict[str, Any]:
    """``Roll#toJSON()`` of a Storyteller system's ``1d10 + mod`` (Dexterity + Composure)."""
    return {"class": "Roll", "options": {}, "dice": [], "formula": f"1d10 + {mod}",
            "terms": [{"class": "Die", "options": {}, "evaluated": True, "number": 1, "faces": 10,
                       "modifiers": [], "results": [{"result": die, "active": True}]},
                      {"class": "OperatorTerm", "options": {}, "evaluated": True, "operator": "+"},
                      {"class": "NumericTerm", "options": {}, "evaluated": True, "number": mod}],
            "total": die + mod, "evaluated": True}


def total_roll(total: float, formula: str = "1d10 + 5") -> dict[str, Any]:
    """A roll whose dice do not matter to the ruleset (only its total)."""
    return {"class": "Roll", "options": {}, "dice": [], "formula": formula, "terms": [],
            "total": total, "evaluated": True}


class Session:
    """Builds a recording: a session line, then hooks and intents with increasing seq."""

    def __init__(self, world: str, ruleset: str, gm: str = "gmUser0000000001", settings: dict[str, Any] | None = None) -> None:
        self.seq = 0
        self.gm = gm
        self.lines: list[dict[str, Any]] = [{"event": "session", "data": {
            "world": world, "ruleset": ruleset, "settings": settings or {}, "gm_users": [gm],
            "protocol": 1, "module_version": "0.1.0", "foundry_version": "13.350", "system": "dnd5e"}}]

    def hook(self, name: str, combat_: dict[str, Any], current_: dict[str, Any], *, user: str | None = None,
             world_time: float = 0, **extra: Any) -> dict[str, Any]:
        self.seq += 1
        data = {"seq": self.seq, "user": user or self.gm, "world_time": world_time, "hook": name,
                "combat": combat_, "current": current_, **extra}
        self.lines.append({"event": "hook", "data": data})
        return data

    def intent(self, kind: str, args: dict[str, Any], *, user: str | None = None, combat_id: str | None = None,
               combatant_id: str | None = None, world_time: float = 0) -> dict[str, Any]:
        self.seq += 1
        data: dict[str, Any] = {"seq": self.seq, "user": user or self.gm, "world_time": world_time, "kind": kind, "args": args}
        if combat_id is not None:
            data["combat_id"] = combat_id
        if combatant_id is not None:
            data["combatant_id"] = combatant_id
        self.lines.append({"event": "intent", "data": data})
        return data

    def jsonl(self) -> str:
        return jsonl(self.lines)


def jsonl(lines: Iterable[dict[str, Any]]) -> str:
    """Recording lines as JSON Lines text (characters as they are, not escaped)."""
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


class PointerTable:
    """The module at a table, for the recording builders that move Foundry's pointer by hand
    (dice-pool, storyteller): the combat, the pointer, and the lines the module sends. The
    turn is where the pointer sits in Foundry's sort (initiative high to low, the unrolled
    last, ties by id); ``tokens``: the hook's ``current`` names the pointer's token too;
    ``folder``: where :meth:`save` writes."""

    def __init__(self, session: dict[str, Any], gm: str, *, tokens: bool, folder: Path) -> None:
        self.folder = folder
        self.seq = 0
        self.time = 0
        self.gm = gm
        self.tokens = tokens
        self.combat: dict[str, Any] = {}
        self.pointer: str | None = None
        self.turns: list[str] = []  # Foundry's sorted turns, as its clients compute them
        self.lines: list[dict[str, Any]] = [{"event": "session", "data": session}]

    def _sort(self) -> None:
        def key(c: dict[str, Any]) -> tuple[bool, float, str]:
            value = c["initiative"]
            return (value is None, -(value or 0), c["_id"])

        self.turns = [c["_id"] for c in sorted(self.combat["combatants"], key=key)]
        self.combat["turn"] = self.turns.index(self.pointer) if self.pointer in self.turns else None

    def hook(self, name: str, **extra: Any) -> None:
        self.seq += 1
        self._sort()
        token = "tok" + self.pointer[3:] if self.tokens and self.pointer else None
        current_ = {"round": self.combat["round"], "turn": self.combat["turn"],
                    "combatantId": self.pointer, "tokenId": token}
        self.lines.append(hook_line(self.seq, self.gm, self.time, name, self.combat, current_, **extra))

    def intent(self, kind: str, who: str, user: str, **args: Any) -> None:
        self.seq += 1
        self.lines.append(intent_line(self.seq, user, self.time, kind, self.combat["_id"], who, args))

    def write_initiative(self, cid: str, value: float) -> None:
        """The module writes the plan's number; Foundry forwards the combatant update."""
        for c in self.combat["combatants"]:
            if c["_id"] == cid:
                c["initiative"] = value
        self.hook("updateCombatant", changed={"_id": cid, "initiative": value})

    def start(self, first: str) -> None:
        self.combat["round"] = 1
        self.pointer = first
        self.hook("combatStart", options={"direction": 1})

    def next_round(self, first: str) -> None:
        """Nobody left to act this round: Foundry's nextRound; the pointer goes to ``first``."""
        self.combat["round"] += 1
        self.time += 6
        self.pointer = first
        self.hook("combatRound", options={"direction": 1, "worldTime": {"delta": 6}})

    def save(self, name: str) -> None:
        """The recording as ``<folder>/<name>.jsonl``, UTF-8 whatever the locale."""
        (self.folder / f"{name}.jsonl").write_text(jsonl(self.lines), encoding="utf-8")
