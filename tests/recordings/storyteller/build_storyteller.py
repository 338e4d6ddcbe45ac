"""Builds the storyteller recordings ST-E1, ST-E2, ST-E3 (../shared/rules/README.md section 3).

Run from the repository root: ``python tests/recordings/storyteller/build_storyteller.py``, then
``python -m adapter replay X.jsonl > X.golden.jsonl`` for each and read the goldens.
Each recording is what the module would send at a real table: Foundry v13 ``toObject()``
snapshots as the module extends them, the system's ``1d10 + mod`` initiative rolls, the
players' ``hold``/``act`` intents, and Foundry's pointer following the plan (the module
moves it to the plan's ``current``, then writes the plan's numbers: Foundry v13 keeps its
pointer on the same combatant when an initiative changes, so a number written first would
forward a stale pointer; the GM clicks "next turn", which skips held turns).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from tests.foundry import PointerTable, combat, d10_roll
from tests.foundry import combatant as foundry_combatant

GM = "gmStoryteller001"
COMBAT = "stCombat00000001"
SCENE = "stScene000000001"
SYSTEM = ("worldofdarkness", "4.2.0")


def combatant(cid: str, name: str, owner: str, mod: int) -> dict[str, Any]:
    return foundry_combatant(cid, name, owners=(owner,), actor="act" + cid[3:], token="tok" + cid[3:],
                             scene=SCENE, stats={"initiative_mod": mod, "speed": 9}, system=SYSTEM)


class Table(PointerTable):
    """The module at a table: Foundry's combat, its pointer, and the lines it sends."""

    def __init__(self, world: str, people: list[dict[str, Any]]) -> None:
        super().__init__({
            "world": world, "ruleset": "storyteller", "settings": {}, "gm_users": [GM],
            "protocol": 1, "module_version": "0.1.0", "foundry_version": "13.350",
            "system": "worldofdarkness"}, GM, tokens=False, folder=HERE)
        self.combat = combat(COMBAT, people, scene=SCENE, system=SYSTEM)
        self.hook("createCombat")

    def roll(self, cid: str, die: int, mod: int) -> None:
        self.hook("initiativeRoll", roll={"combatant_id": cid, "roll": d10_roll(die, mod)})

    def move_pointer(self, cid: str | None, hook: str = "updateCombat") -> None:
        self.pointer = cid
        self._sort()
        self.hook(hook, changed={"turn": self.combat["turn"]}, options={"direction": 1})

MITCH, LARRY = "cmbMitch00000001", "cmbLarry00000002"
SANDERS, WASHINGTON = "cmbSanders000001", "cmbWashington001"
P_MITCH, P_LARRY = "plrMitch00000001", "plrLarry00000002"
P_SANDERS, P_WASHINGTON = "plrSanders000001", "plrWashington001"


def mitch_and_larry() -> Table:
    """Mitch rolls 10, Larry 6; round 1 begins with Mitch, who holds; Larry is current."""
    t = Table("storytellerWorld", [combatant(MITCH, "Mitch", P_MITCH, 5),
                                   combatant(LARRY, "Larry", P_LARRY, 3)])
    t.roll(MITCH, 5, 5)
    t.roll(LARRY, 3, 3)
    t.write_initiative(MITCH, 10)
    t.write_initiative(LARRY, 6)
    t.start(MITCH)
    t.intent("hold", MITCH, P_MITCH)
    t.move_pointer(LARRY)
    return t


def st_e1() -> None:
    """ST-E1: Mitch (10) holds, acts right after Larry (6) and gets 5; it stays 5 (ruling)."""
    t = mitch_and_larry()
    t.intent("act", MITCH, P_MITCH, after=LARRY)
    t.write_initiative(MITCH, 5)
    t.move_pointer(MITCH, "combatTurn")  # the GM ends Larry's turn
    t.next_round(LARRY)
    t.move_pointer(MITCH, "combatTurn")
    t.save("ST-E1-act-after-larry")


def st_e2() -> None:
    """ST-E2: Mitch readied against Larry (6) interrupts him at 7; Larry's turn follows."""
    t = mitch_and_larry()
    t.intent("act", MITCH, P_MITCH, before=LARRY)
    t.move_pointer(MITCH)  # the module moves the pointer first, then writes the number
    t.write_initiative(MITCH, 7)
    t.move_pointer(LARRY, "combatTurn")
    t.next_round(MITCH)
    t.move_pointer(LARRY, "combatTurn")
    t.save("ST-E2-interrupt-before-larry")


def st_e3() -> None:
    """ST-E3: Washington (8) gives up round 1 (moves only), acts at 13 before Sanders (12) in
    round 2, and is back at 8 in round 3."""
    t = Table("storytellerWorld", [combatant(SANDERS, "Sanders", P_SANDERS, 6),
                                   combatant(WASHINGTON, "Washington", P_WASHINGTON, 4)])
    t.roll(SANDERS, 6, 6)
    t.roll(WASHINGTON, 4, 4)
    t.write_initiative(SANDERS, 12)
    t.write_initiative(WASHINGTON, 8)
    t.start(SANDERS)
    t.intent("hold", WASHINGTON, P_WASHINGTON, next_round=True)
    t.move_pointer(WASHINGTON, "combatTurn")  # his movement
    t.next_round(SANDERS)
    t.intent("act", WASHINGTON, P_WASHINGTON, before=SANDERS)
    t.move_pointer(WASHINGTON)
    t.write_initiative(WASHINGTON, 13)
    t.move_pointer(SANDERS, "combatTurn")
    t.next_round(SANDERS)
    t.write_initiative(WASHINGTON, 8)
    t.move_pointer(WASHINGTON, "combatTurn")
    t.save("ST-E3-hold-into-next-round")


def st_4_holder_carries_over() -> None:
    """ST-4 from a hold (issue 11): Mitch (10) holds on his turn; the GM's target_aware for
    Larry, who is not holding, is refused (ST-5); while Larry acts Mitch carries his held
    action into round 2 (movement only, right after Larry); in round 2 he interrupts Larry at
    7; in round 3 he is back at 10."""
    t = mitch_and_larry()
    t.intent("hold", LARRY, GM, target_aware=True)  # refused: Larry is not waiting
    t.intent("hold", MITCH, P_MITCH, next_round=True)
    t.write_initiative(MITCH, 6)  # his movement turn, right after Larry's
    t.move_pointer(MITCH, "combatTurn")  # Larry's turn ends: Mitch moves
    t.next_round(LARRY)  # Mitch's held turn is passed over
    t.write_initiative(MITCH, 10)
    t.intent("act", MITCH, P_MITCH, before=LARRY)
    t.move_pointer(MITCH)
    t.write_initiative(MITCH, 7)
    t.move_pointer(LARRY, "combatTurn")
    t.next_round(MITCH)
    t.write_initiative(MITCH, 10)
    t.move_pointer(LARRY, "combatTurn")
    t.save("ST-4-holder-carries-over")


NINA, P_NINA = "cmbNina000000004", "plrNina000000004"


def both_hold_and_nina_interrupts(t: Table) -> None:
    """Mitch's turn: he holds; Nina's: she holds; Larry's begins, and Nina interrupts it."""
    t.intent("hold", MITCH, P_MITCH)
    t.move_pointer(NINA)
    t.intent("hold", NINA, P_NINA)
    t.move_pointer(LARRY)
    t.intent("act", NINA, P_NINA, before=LARRY)
    t.move_pointer(NINA)


def st_3_shared_moment() -> None:
    """ST-3 (issue 11): Mitch (10, modifier 5) and Nina (8, modifier 3) hold; as Larry's (6)
    turn begins, Nina and then Mitch interrupt him: they share the moment, and Mitch goes
    first by the tie rule. In round 2 both hold again; Nina interrupts Larry and acts; once
    the GM ends her turn the moment is closed, and Mitch's interrupt comes after hers."""
    t = Table("storytellerWorld", [combatant(MITCH, "Mitch", P_MITCH, 5),
                                   combatant(NINA, "Nina", P_NINA, 3),
                                   combatant(LARRY, "Larry", P_LARRY, 3)])
    t.roll(MITCH, 5, 5)
    t.roll(NINA, 5, 3)
    t.roll(LARRY, 3, 3)
    t.write_initiative(MITCH, 10)
    t.write_initiative(NINA, 8)
    t.write_initiative(LARRY, 6)
    t.start(MITCH)
    both_hold_and_nina_interrupts(t)
    t.write_initiative(NINA, 7)
    t.intent("act", MITCH, P_MITCH, before=LARRY)  # the same moment: Mitch first
    t.move_pointer(MITCH)
    t.write_initiative(MITCH, 7)
    t.move_pointer(NINA, "combatTurn")
    t.move_pointer(LARRY, "combatTurn")
    t.next_round(MITCH)  # both keep 7 (ST-2 ruling): Mitch, Nina, Larry
    both_hold_and_nina_interrupts(t)
    t.move_pointer(LARRY, "combatTurn")  # Nina has acted: the moment is closed
    t.intent("act", MITCH, P_MITCH, before=LARRY)  # after Nina, right before Larry
    t.move_pointer(MITCH)
    t.write_initiative(NINA, 7.01)
    t.move_pointer(LARRY, "combatTurn")
    t.save("ST-3-shared-interrupt-moment")


def main() -> None:
    """Every recording of this ruleset, written beside this script."""
    st_e1()
    st_e2()
    st_e3()
    st_4_holder_carries_over()
    st_3_shared_moment()


if __name__ == "__main__":
    main()
