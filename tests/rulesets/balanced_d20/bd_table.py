"""`balanced-d20` conveniences over the one test table (``tests/support/table.py``): fighters
with dnd5e's stats, dnd5e's ``D20Roll`` for the initiative, intents by keyword."""

from __future__ import annotations

from typing import Any

import pytest

from adapter.errors import SidecarError
from tests.foundry import combatant
from tests.foundry import dnd5e_d20 as d20
from tests.support.table import GM, Message
from tests.support.table import Table as BaseTable

__all__ = ["COMBAT", "GM", "Table", "d20", "fighter"]

COMBAT = "cmbBalanced00001"


def fighter(cid: str, name: str, *, dex: int = 0, int_: int = 0, owners: tuple[str, ...] = (),
            npc: bool = False, proficient: tuple[str, ...] = (), defeated: bool = False,
            token: str | None = None, actor: str | None = None) -> dict[str, Any]:
    """A dnd5e combatant as the module sends it (dex, int, proficient skills)."""
    return combatant(cid, name, owners=owners, npc=npc, defeated=defeated,
                     actor=actor or f"act-{cid}", token=token or f"tok-{cid}",
                     stats={"dex": dex, "int": int_, "proficient": list(proficient)})


class Table(BaseTable):
    def __init__(self, *fighters: dict[str, Any], settings: dict[str, Any] | None = None) -> None:
        super().__init__("balanced-d20", settings, world="w", combat_id=COMBAT)
        self.at.roster.extend(fighters)

    @property
    def fighters(self) -> list[dict[str, Any]]:
        return self.at.roster

    @property
    def groups(self) -> list[dict[str, Any]]:
        return self.at.groups

    @groups.setter
    def groups(self, groups: list[dict[str, Any]]) -> None:
        self.at.groups = groups

    def snapshot(self) -> dict[str, Any]:
        return self.at.snapshot()

    def refused(self, code: str, message: Message) -> SidecarError:
        """Send a message that must be refused with ``code`` (the table checks that the world
        did not change)."""
        with pytest.raises(SidecarError) as caught:
            self.send(message)
        assert caught.value.code == code, caught.value.message
        return caught.value

    def intent_msg(self, kind: str, cid: str | None = None, *, user: str = GM,
                   combat: bool = True, **args: Any) -> Message:
        return self.intent_message(kind, cid, args, user=user, in_combat=combat)

    def intent(self, kind: str, cid: str | None = None, *, user: str = GM, combat: bool = True,
               **args: Any) -> dict[str, Any]:
        return self.send(self.intent_msg(kind, cid, user=user, combat=combat, **args))

    def create(self) -> dict[str, Any]:
        return self.hook("createCombat")

    def roll_msg(self, cid: str, natural: int, modifier: int = 0, *, reroll_of: str | None = None,
                 roll: dict[str, Any] | None = None, user: str = GM) -> Message:
        return self.roll_message(roll or d20(natural, modifier), cid=cid, reroll_of=reroll_of, user=user)

    def roll(self, cid: str, natural: int, modifier: int = 0, *, reroll_of: str | None = None,
             roll: dict[str, Any] | None = None, user: str = GM) -> dict[str, Any]:
        return self.send(self.roll_msg(cid, natural, modifier, reroll_of=reroll_of, roll=roll, user=user))

    def reaction(self, cid: str) -> tuple[bool, str]:
        r = self.entry(cid)["reaction"]
        return r["available"], r["reason"]
