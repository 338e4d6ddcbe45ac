"""A pretend Foundry table for the dice-pool tests: real payload shapes, one world.

``Table`` builds ``Combat#toObject()`` snapshots and ``Roll#toJSON()`` pool rolls the way
Foundry v13 does, feeds them to ``adapter.engine.apply`` and keeps every message it sent, so
the same script can be written out as a recording (``lines()``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from adapter.engine import Hook, Intent, Outcome, World
from adapter.engine.model import Session
from tests.decoded import apply, hook, intent

GM = "gmUser0000000001"
PLAYER = "playerUser000001"
COMBAT = "dpCombat00000001"
SCENE = "dpScene000000001"
SETTINGS = {"die_faces": 6, "success_at": 4, "ones_cancel": True}


def die_result(face: int, success_at: int = 4) -> dict[str, Any]:
    """One result as Foundry's ``cs>=4df=1`` leaves it (research notes, section 4)."""
    if face == 1:
        return {"result": 1, "active": True, "count": -1, "failure": True}
    success = face >= success_at
    return {"result": face, "active": True, "success": success, "count": 1 if success else 0}


def pool_roll(dice: list[int], faces: int = 6, number: int | None = None) -> dict[str, Any]:
    """``Roll#toJSON()`` of ``{n}d6cs>=4df=1`` showing ``dice``."""
    results = [die_result(d) for d in dice]
    n = len(dice) if number is None else number
    return {
        "class": "Roll",
        "options": {},
        "dice": [],
        "formula": f"{n}d{faces}cs>=4df=1",
        "terms": [
            {
                "class": "Die",
                "options": {},
                "evaluated": True,
                "number": n,
                "faces": faces,
                "modifiers": ["cs>=4", "df=1"],
                "results": results,
            }
        ],
        "total": sum(r["count"] for r in results),
        "evaluated": True,
    }


@dataclass
class Encounter:
    """What Foundry holds for one combat: its roster, groups, round and pointer."""

    id: str
    round: int = 0
    current: str | None = None
    combatants: list[dict[str, Any]] = field(default_factory=list)
    groups: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Table:
    settings: dict[str, Any] = field(default_factory=lambda: dict(SETTINGS))
    world: World = field(init=False)
    seq: int = 0
    sent: list[dict[str, Any]] = field(default_factory=list)
    time: float = 0.0
    encounters: dict[str, Encounter] = field(default_factory=dict)
    at: Encounter = field(init=False)

    def __post_init__(self) -> None:
        self.world = World(world="dp-world")
        self.at = self.encounters.setdefault(COMBAT, Encounter(COMBAT))
        session = {
            "world": "dp-world", "ruleset": "dice-pool", "settings": self.settings,
            "gm_users": [GM], "protocol": 1, "module_version": "0.1.0",
            "foundry_version": "13.350", "system": "worldbuilding",
        }
        self.sent.append({"event": "session", "data": session})
        self.world = apply(
            self.world,
            Session(world="dp-world", ruleset="dice-pool", settings=self.settings,
                    gm_users=frozenset({GM})),
        ).world

    # ------------------------------------------------------------ which combat

    def switch(self, combat_id: str) -> None:
        """Work on another combat of the same world (created on first use)."""
        self.at = self.encounters.setdefault(combat_id, Encounter(combat_id))

    @property
    def round(self) -> int:
        return self.at.round

    @round.setter
    def round(self, value: int) -> None:
        self.at.round = value

    @property
    def current(self) -> str | None:
        return self.at.current

    @current.setter
    def current(self, value: str | None) -> None:
        self.at.current = value

    @property
    def combatants(self) -> list[dict[str, Any]]:
        return self.at.combatants

    @property
    def groups(self) -> list[dict[str, Any]]:
        return self.at.groups

    # ------------------------------------------------------------ snapshots

    def combatant(self, cid: str, name: str, stats: dict[str, Any], group: str | None = None,
                  owners: tuple[str, ...] = (PLAYER,), defeated: bool = False) -> dict[str, Any]:
        return {
            "_id": cid, "type": "base", "system": {}, "actorId": "actor" + cid[5:],
            "tokenId": "token" + cid[5:], "sceneId": SCENE, "img": None, "initiative": None,
            "hidden": False, "defeated": defeated, "group": group, "flags": {},
            "name": name, "owners": list(owners), "is_npc": not owners,
            "is_defeated": defeated, "stats": stats,
        }

    def snapshot(self) -> dict[str, Any]:
        return {
            "_id": self.at.id, "type": "base", "system": {}, "scene": SCENE,
            "groups": self.groups, "combatants": self.combatants, "active": True,
            "round": self.round, "turn": None, "sort": 0, "flags": {},
        }

    def pointer(self) -> dict[str, Any]:
        token = None
        for c in self.combatants:
            if c["_id"] == self.current:
                token = c["tokenId"]
        if self.round == 0:
            return {"round": 0, "turn": None, "combatantId": None, "tokenId": None}
        return {"round": self.round, "turn": 0, "combatantId": self.current, "tokenId": token}

    # ------------------------------------------------------------ messages

    def hook(self, name: str, roll: dict[str, Any] | None = None, user: str = GM) -> Outcome:
        self.seq += 1
        payload: dict[str, Any] = {
            "seq": self.seq, "user": user, "world_time": self.time, "hook": name,
            "combat": self.snapshot(), "current": self.pointer(),
        }
        if roll is not None:
            payload["roll"] = roll
        self.sent.append({"event": "hook", "data": payload})
        message = hook(seq=self.seq, user=user, world_time=self.time, hook=name,
                       combat=payload["combat"], current=payload["current"], roll=roll)
        return self._apply(message)

    def intent(self, kind: str, cid: str | None, args: dict[str, Any], user: str = GM) -> Outcome:
        self.seq += 1
        payload = {"seq": self.seq, "user": user, "world_time": self.time, "kind": kind,
                   "combat_id": self.at.id, "combatant_id": cid, "args": args}
        self.sent.append({"event": "intent", "data": payload})
        return self._apply(intent(seq=self.seq, user=user, world_time=self.time, kind=kind,
                                  combat_id=self.at.id, combatant_id=cid, args=args))

    def _apply(self, message: Hook | Intent) -> Outcome:
        outcome = apply(self.world, message)
        self.world = outcome.world
        combat = self.world.combats.get(self.at.id)
        plan = combat.last_plan if combat is not None else None
        if plan:
            self.current = plan["current"]
        return outcome

    # ------------------------------------------------------------ table actions

    def create(self) -> Outcome:
        return self.hook("createCombat")

    def add(self, cid: str, name: str, stats: dict[str, Any], **kw: Any) -> Outcome:
        self.combatants.append(self.combatant(cid, name, stats, **kw))
        return self.hook("createCombatant")

    def group(self, gid: str, name: str) -> None:
        self.groups.append({"_id": gid, "type": "base", "system": {}, "name": name,
                            "img": None, "initiative": None, "ownership": {"default": 0},
                            "flags": {}})

    def roll(self, cid: str, dice: list[int], **kw: Any) -> Outcome:
        return self.hook("initiativeRoll", {"combatant_id": cid, "roll": pool_roll(dice, **kw)})

    def roll_group(self, gid: str, dice: list[int]) -> Outcome:
        return self.hook("initiativeRoll", {"group_id": gid, "roll": pool_roll(dice)})

    def start(self) -> Outcome:
        self.round = 1
        self.current = self.plan()["order"][0]["combatant_id"]
        return self.hook("combatStart")

    def next_turn(self) -> Outcome:
        """The GM presses "next turn": Foundry's pointer moves to the next who acts."""
        plan = self.plan()
        ids = [e["combatant_id"] for e in plan["order"]]
        at = ids.index(plan["current"]) if plan["current"] in ids else len(ids)
        for entry in plan["order"][at + 1:]:
            if entry["acts"] not in ("none", "defend_only", "held"):
                self.current = entry["combatant_id"]
                self.time += 0
                return self.hook("combatTurn")
        return self.next_round()

    def next_round(self) -> Outcome:
        upcoming = self.plan()["next_round"]
        self.round += 1
        self.current = upcoming["current"] if upcoming else None
        self.time += 6
        return self.hook("combatRound")

    # ------------------------------------------------------------ reading

    def plan(self) -> dict[str, Any]:
        return dict(self.world.combats[self.at.id].last_plan)

    def entry(self, cid: str) -> dict[str, Any]:
        return next(e for e in self.plan()["order"] if e["combatant_id"] == cid)

    def order(self) -> list[str]:
        return [e["combatant_id"] for e in self.plan()["order"]]
