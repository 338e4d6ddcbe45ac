"""`dice-pool` conveniences over the one test table (``tests/support/table.py``): combatants
with reaction/wits/size, Foundry's ``{n}d6cs>=4df=1`` pools for a combatant or a group."""

from __future__ import annotations

from typing import Any

from tests.foundry import combatant, pool_die, pool_roll
from tests.support.table import GM
from tests.support.table import Table as BaseTable

__all__ = ["COMBAT", "GM", "PLAYER", "SETTINGS", "Table", "die_result", "pool_roll"]

PLAYER = "playerUser000001"
COMBAT = "dpCombat00000001"
SCENE = "dpScene000000001"
SETTINGS = {"die_faces": 6, "success_at": 4, "ones_cancel": True}
die_result = pool_die


class Table(BaseTable):
    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        self.settings = dict(SETTINGS) if settings is None else settings
        super().__init__("dice-pool", self.settings, world="dp-world", combat_id=COMBAT,
                         system="worldbuilding")

    @property
    def combatants(self) -> list[dict[str, Any]]:
        return self.at.roster

    @property
    def current(self) -> str | None:
        """Foundry's pointer (a test may move it as a module that failed to steer would)."""
        return self.at.pointer

    @current.setter
    def current(self, cid: str | None) -> None:
        self.at.pointer = cid

    @property
    def round(self) -> int:
        return self.at.round

    @round.setter
    def round(self, value: int) -> None:
        self.at.round = value

    def combatant(self, cid: str, name: str, stats: dict[str, Any], group: str | None = None,
                  owners: tuple[str, ...] = (PLAYER,), defeated: bool = False) -> dict[str, Any]:
        return combatant(cid, name, owners=owners, npc=not owners, defeated=defeated, stats=stats,
                         group=group, actor="actor" + cid[5:], token="token" + cid[5:], scene=SCENE)

    def intent(self, kind: str, cid: str | None, args: dict[str, Any], user: str = GM) -> dict[str, Any]:
        return self.ask(kind, cid, args, user=user)

    def create(self) -> dict[str, Any]:
        return self.hook("createCombat")

    def add(self, cid: str, name: str, stats: dict[str, Any], **kw: Any) -> dict[str, Any]:
        return self.join(self.combatant(cid, name, stats, **kw), hook="createCombatant")

    def group(self, gid: str, name: str) -> None:
        self.add_group(gid, name)

    def roll(self, cid: str, dice: list[int], **kw: Any) -> dict[str, Any]:
        return self.send(self.roll_message(pool_roll(dice, **kw), cid=cid))

    def roll_group(self, gid: str, dice: list[int]) -> dict[str, Any]:
        return self.send(self.roll_message(pool_roll(dice), group_id=gid))
