"""A storyteller table for the tests: the engine, Foundry's pointer, and the module.

The module follows each plan as the real one does: it moves Foundry's pointer to the
plan's ``current`` (an ``updateCombat`` hook the engine must take as a no-op), and the GM's
"next turn" moves on along the plan's order, skipping the turns the module skips; past the
last one Foundry starts the next round at the plan's ``next_round.current``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from adapter.engine.messages import Hook, Intent
from adapter.engine.model import Combat, Outcome, World
from adapter.engine.order import foundry_sort
from adapter.engine.ruleset import SKIPPED_ACTS, Ruleset
from adapter.errors import SidecarError
from adapter.rulesets import RULESETS
from tests.decoded import apply, hook, intent, renumbered

GM = "gmStoryteller001"
COMBAT = "stCombat00000001"


def d10(die: int, mod: int) -> dict[str, Any]:
    """``Roll#toJSON()`` of the system's ``1d10 + mod``."""
    return {"class": "Roll", "formula": f"1d10 + {mod}", "total": die + mod, "evaluated": True,
            "terms": [{"class": "Die", "number": 1, "faces": 10, "modifiers": [],
                       "results": [{"result": die, "active": True}]},
                      {"class": "OperatorTerm", "operator": "+"},
                      {"class": "NumericTerm", "number": mod}]}


def owner(cid: str) -> str:
    return "plr" + cid


class Table:
    def __init__(self, ruleset: str = "storyteller", rulesets: Mapping[str, Ruleset] = RULESETS) -> None:
        self.rulesets = rulesets
        self.world = World(world="w", ruleset=ruleset, gm_users=frozenset({GM}))
        self.seq = 0
        self.round = 0
        self.pointer: str | None = None
        self.people: list[dict[str, Any]] = []

    # ---------------------------------------------------------------- sending

    def _apply(self, message: Hook | Intent) -> Outcome:
        self.seq += 1
        out = apply(self.world, renumbered(message, self.seq), self.rulesets)
        self.world = out.world
        return out

    def hook(self, name: str, roll: Any = None) -> Outcome:
        combat = {"_id": COMBAT, "round": self.round, "combatants": self.people}
        current = {"round": self.round, "turn": None, "combatantId": self.pointer, "tokenId": None}
        return self._apply(hook(1, GM, 0.0, name, combat, current, roll=roll))

    def intent(self, kind: str, cid: str | None, user: str = GM, **args: Any) -> Outcome:
        out = self._apply(intent(1, user, 0.0, kind, COMBAT, cid, args))
        self.follow()
        return out

    def refused(self, kind: str, cid: str | None, user: str = GM, **args: Any) -> SidecarError:
        """The intent must be refused and leave the world exactly as it was."""
        before, seq = self.world, self.seq
        with pytest.raises(SidecarError) as info:
            self.intent(kind, cid, user, **args)
        assert self.world is before
        self.seq = seq
        return info.value

    # ---------------------------------------------------------------- the table

    def add(self, cid: str, name: str, mod: int) -> None:
        self.people.append({"_id": cid, "name": name, "owners": [owner(cid)], "is_npc": False,
                            "stats": {"initiative_mod": mod}})

    def defeat(self, cid: str) -> Outcome:
        """The GM marks a combatant defeated (an ``updateCombatant`` snapshot)."""
        for person in self.people:
            if person["_id"] == cid:
                person["is_defeated"] = True
        return self.hook("updateCombatant")

    def roll(self, cid: str, die: int, mod: int) -> Outcome:
        return self.hook("initiativeRoll", roll={"combatant_id": cid, "roll": d10(die, mod)})

    def setup(self, *people: tuple[str, int, int]) -> Table:
        """``(id, total, initiative_mod)`` each: join, roll ``total - mod`` + mod, start."""
        for cid, _, mod in people:
            self.add(cid, cid.title(), mod)
        self.hook("createCombat")
        for cid, total, mod in people:
            self.roll(cid, total - mod, mod)
        self.round = 1
        self.pointer = self.plan["next_round"]["current"]
        self.hook("combatStart")
        return self

    def follow(self) -> None:
        """The module moves Foundry's pointer to the plan's current (a no-op for the engine)."""
        wanted = self.plan["current"]
        if wanted is not None and wanted != self.pointer:
            before = self.combat
            self.pointer = wanted
            self.hook("updateCombat")
            assert self.combat.current == before.current

    def next_turn(self) -> Outcome:
        """The GM ends the turn: Foundry moves on, skipping what the module skips."""
        plan = self.plan
        ids = [e["combatant_id"] for e in plan["order"]]
        if plan["current"] is not None:
            at = ids.index(self.pointer) + 1
            for entry in plan["order"][at:]:
                if entry["acts"] not in SKIPPED_ACTS:
                    self.pointer = entry["combatant_id"]
                    return self.hook("combatTurn")
        self.round += 1
        self.pointer = plan["next_round"]["current"]
        return self.hook("combatRound")

    # ---------------------------------------------------------------- reading

    @property
    def combat(self) -> Combat:
        return self.world.combats[COMBAT]

    @property
    def plan(self) -> dict[str, Any]:
        assert self.combat.last_plan is not None
        return dict(self.combat.last_plan)

    @property
    def current(self) -> str | None:
        current: str | None = self.plan["current"]
        return current

    def order(self) -> list[str]:
        return [e["combatant_id"] for e in self.plan["order"]]

    def values(self) -> dict[str, float | None]:
        return {e["combatant_id"]: e["initiative"] for e in self.plan["order"]}

    def entry(self, cid: str) -> dict[str, Any]:
        for e in self.plan["order"]:
            if e["combatant_id"] == cid:
                return dict(e)
        raise KeyError(cid)

    def reproduces(self) -> bool:
        return foundry_sort(self.values()) == self.order()
