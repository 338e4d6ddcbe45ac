"""`storyteller` conveniences over the one test table (``tests/support/table.py``): players'
characters with an initiative modifier, the system's ``1d10 + mod`` roll, intents by keyword."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from adapter.engine.model import Combat
from adapter.engine.ruleset import Ruleset
from adapter.errors import SidecarError
from tests.foundry import combatant, d10_roll, foundry_sort
from tests.support.table import Table as BaseTable

__all__ = ["COMBAT", "GM", "Table", "d10", "owner"]

GM = "gmStoryteller001"
COMBAT = "stCombat00000001"
d10 = d10_roll


def owner(cid: str) -> str:
    return "plr" + cid


class Table(BaseTable):
    def __init__(self, ruleset: str = "storyteller", rulesets: Mapping[str, Ruleset] | None = None) -> None:
        super().__init__(ruleset, world="w", gm=GM, combat_id=COMBAT, rulesets=rulesets)

    @property
    def people(self) -> list[dict[str, Any]]:
        return self.at.roster

    @property
    def pointer(self) -> str | None:
        """Foundry's pointer (a test may move it, as the GM does by hand)."""
        return self.at.pointer

    @pointer.setter
    def pointer(self, cid: str | None) -> None:
        self.at.pointer = cid

    def intent(self, kind: str, cid: str | None, user: str = GM, **args: Any) -> dict[str, Any]:
        return self.ask(kind, cid, args, user=user)

    def refused(self, kind: str, cid: str | None, user: str = GM, **args: Any) -> SidecarError:
        """The intent must be refused (the table checks the world did not change)."""
        with pytest.raises(SidecarError) as info:
            self.intent(kind, cid, user, **args)
        return info.value

    # ---------------------------------------------------------------- the table

    def add(self, cid: str, name: str, mod: int) -> None:
        """A character joins Foundry's roster (the hook that tells the sidecar comes later)."""
        self.at.roster.append(combatant(cid, name, owners=(owner(cid),), stats={"initiative_mod": mod}))

    def defeat(self, cid: str) -> dict[str, Any]:
        """The GM marks a combatant defeated (an ``updateCombatant`` snapshot)."""
        person = self.at.person(cid)
        person["defeated"] = person["is_defeated"] = True
        return self.hook("updateCombatant")

    def roll(self, cid: str, die: int, mod: int) -> dict[str, Any]:
        return self.send(self.roll_message(d10(die, mod), cid=cid))

    def setup(self, *people: tuple[str, int, int]) -> Table:
        """``(id, total, initiative_mod)`` each: join, roll ``total - mod`` + mod, start."""
        for cid, _, mod in people:
            self.add(cid, cid.title(), mod)
        self.hook("createCombat")
        for cid, total, mod in people:
            self.roll(cid, total - mod, mod)
        self.start()
        return self

    # ---------------------------------------------------------------- reading

    @property
    def combat(self) -> Combat:
        return self.world.combats[COMBAT]

    @property
    def current(self) -> str | None:
        current: str | None = self.plan["current"]
        return current

    def values(self) -> dict[str, float | None]:
        return self.initiatives()

    def reproduces(self) -> bool:
        return foundry_sort(self.values()) == self.order()
