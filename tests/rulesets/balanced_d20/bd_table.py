"""A table to drive the pure engine under `balanced-d20`: Foundry-shaped hooks and intents.

The table plays the module's part: it keeps Foundry's combat snapshot, sends hooks and
intents through :func:`adapter.engine.apply`, and moves Foundry's pointer where the plan
says (``plan.current``), as the module does.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import pytest

from adapter.engine import Hook, Intent, Outcome, World, plan_of
from adapter.errors import SidecarError
from tests.decoded import apply, hook, intent

GM = "gmUser0000000001"
COMBAT = "cmbBalanced00001"


def fighter(cid: str, name: str, *, dex: int = 0, int_: int = 0, owners: tuple[str, ...] = (),
            npc: bool = False, proficient: tuple[str, ...] = (), defeated: bool = False,
            token: str | None = None, actor: str | None = None) -> dict[str, Any]:
    """A combatant as the module sends it: Foundry's ``toObject()`` plus the module's fields."""
    return {
        "_id": cid, "type": "base", "system": {}, "actorId": actor or f"act-{cid}",
        "tokenId": token or f"tok-{cid}", "sceneId": "Xo4bT8sKq1VnZ6cP", "img": None,
        "initiative": None, "hidden": False, "defeated": defeated, "group": None, "flags": {},
        "name": name, "owners": list(owners), "is_npc": npc, "is_defeated": defeated,
        "stats": {"dex": dex, "int": int_, "proficient": list(proficient)},
    }


def d20(natural: int, modifier: int = 0, *, modifiers: tuple[str, ...] = ()) -> dict[str, Any]:
    """``Roll#toJSON()`` of ``1d20 + modifier`` (dnd5e's ``D20Roll`` for the initiative)."""
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


class Table:
    def __init__(self, *fighters: dict[str, Any], settings: dict[str, Any] | None = None) -> None:
        self.world = World(world="w", ruleset="balanced-d20", settings=settings or {},
                           gm_users=frozenset({GM}))
        self.seq = 0
        self.time = 0.0
        self.round = 0
        self.pointer: str | None = None
        self.fighters = list(fighters)
        #: Foundry's CombatantGroups, ``{_id, name}`` each
        self.groups: list[dict[str, Any]] = []
        self.outcome: Outcome | None = None

    # ------------------------------------------------------------ sending

    def send(self, message: Callable[[int], Hook | Intent]) -> Outcome:
        self.seq += 1
        outcome = apply(self.world, message(self.seq))
        self.world = outcome.world
        self.outcome = outcome
        return outcome

    def refused(self, code: str, message: Callable[[int], Hook | Intent]) -> SidecarError:
        """Send a message that must be refused with ``code``; the world must not change."""
        self.seq += 1
        before = pickle.dumps(self.world)
        with pytest.raises(SidecarError) as caught:
            apply(self.world, message(self.seq))
        assert caught.value.code == code, caught.value.message
        assert pickle.loads(before) == self.world
        return caught.value

    def snapshot(self) -> dict[str, Any]:
        return {"_id": COMBAT, "type": "base", "system": {}, "scene": "Xo4bT8sKq1VnZ6cP",
                "groups": self.groups, "combatants": self.fighters, "active": True, "round": self.round,
                "turn": None, "sort": 0, "flags": {}}

    def hook_msg(self, name: str, *, roll: dict[str, Any] | None = None,
                 user: str = GM) -> Callable[[int], Hook]:
        current = {"round": self.round, "turn": None, "combatantId": self.pointer, "tokenId": None}
        return lambda seq: hook(seq=seq, user=user, world_time=self.time, hook=name,
                                combat=self.snapshot(), current=current, roll=roll)

    def hook(self, name: str, **kw: Any) -> Outcome:
        return self.send(self.hook_msg(name, **kw))

    def intent_msg(self, kind: str, cid: str | None = None, *, user: str = GM,
                   combat: bool = True, **args: Any) -> Callable[[int], Intent]:
        return lambda seq: intent(seq=seq, user=user, world_time=self.time, kind=kind,
                                  combat_id=COMBAT if combat else None, combatant_id=cid,
                                  args=args)

    def intent(self, kind: str, cid: str | None = None, **kw: Any) -> Outcome:
        return self.send(self.intent_msg(kind, cid, **kw))

    # ------------------------------------------------------------ the module's part

    def create(self) -> Outcome:
        return self.hook("createCombat")

    def roll_msg(self, cid: str, natural: int, modifier: int = 0, *, reroll_of: str | None = None,
                 roll: dict[str, Any] | None = None, user: str = GM) -> Callable[[int], Hook]:
        payload: dict[str, Any] = {"combatant_id": cid, "roll": roll or d20(natural, modifier)}
        if reroll_of is not None:
            payload["reroll_of"] = reroll_of
        return self.hook_msg("initiativeRoll", roll=payload, user=user)

    def roll(self, cid: str, natural: int, modifier: int = 0, **kw: Any) -> Outcome:
        return self.send(self.roll_msg(cid, natural, modifier, **kw))

    def start(self) -> Outcome:
        self.round = 1
        self.pointer = self.plan["next_round"]["current"] if self.plan["next_round"] else None
        outcome = self.hook("combatStart")
        self.pointer = self.plan["current"]
        return outcome

    def next_turn(self) -> Outcome:
        """Foundry's "next turn": the next combatant of the plan that acts, or a new round."""
        plan = self.plan
        order = [e["combatant_id"] for e in plan["order"]]
        after = order[order.index(self.pointer) + 1:] if self.pointer in order else []
        acting = [e for e in plan["order"] if e["combatant_id"] in after
                  and e["acts"] not in ("none", "defend_only", "held")]
        if acting:
            self.pointer = acting[0]["combatant_id"]
            outcome = self.hook("updateCombat")
        else:
            self.round += 1
            self.pointer = plan["next_round"]["current"]
            self.time += 6
            outcome = self.hook("combatRound")
        self.pointer = self.plan["current"]
        return outcome

    def turn_to(self, cid: str) -> None:
        while self.plan["current"] != cid:
            self.next_turn()

    # ------------------------------------------------------------ reading the plan

    @property
    def plan(self) -> dict[str, Any]:
        return plan_of(self.world.combats[COMBAT])

    def entry(self, cid: str) -> dict[str, Any]:
        return next(e for e in self.plan["order"] if e["combatant_id"] == cid)

    def order(self) -> list[str]:
        return [e["combatant_id"] for e in self.plan["order"]]

    def initiatives(self) -> dict[str, float | None]:
        return {e["combatant_id"]: e["initiative"] for e in self.plan["order"]}

    def reaction(self, cid: str) -> tuple[bool, str]:
        r = self.entry(cid)["reaction"]
        return r["available"], r["reason"]

    def prompts(self, kind: str | None = None) -> list[dict[str, Any]]:
        assert self.outcome is not None
        return [p.to_wire() for p in self.outcome.prompts if kind in (None, p.kind)]

    def notices(self) -> list[dict[str, Any]]:
        assert self.outcome is not None
        return [n.to_wire() for n in self.outcome.notices]
