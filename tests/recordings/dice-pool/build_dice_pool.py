"""Builds the dice-pool recordings (../shared/rules/README.md section 2).

Run from the repository root: ``python tests/recordings/dice-pool/build_dice_pool.py``, then
``python -m adapter replay X.jsonl > X.golden.jsonl`` for each, and read the goldens.
Each recording is what the module would send at a real table: Foundry v13 ``toObject()``
snapshots as the module extends them (``stats``: reaction, wits, size), the pool rolled in
Foundry as ``{pool}d6cs>=4df=1`` and forwarded as ``Roll#toJSON()``, the module writing the
plan's numbers (Foundry forwards each ``updateCombatant``), and the GM's "next turn" with the
module skipping the turns the plan marks ``defend_only`` or ``none``. The pointer moves are
written here by hand from the rule text, so the goldens check the engine against them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from tests.foundry import PointerTable, combat, group, pool_roll
from tests.foundry import combatant as foundry_combatant

GM = "gmDicePool000001"
WORLD = "dicePoolWorld"
SCENE = "dpScene000000001"
SETTINGS = {"die_faces": 6, "success_at": 4, "ones_cancel": True}
SYSTEM = ("worldbuilding", "0.8.2")


def combatant(cid: str, name: str, owner: str | None, reaction: int, wits: int, size: int,
              group: str | None = None) -> dict[str, Any]:
    return foundry_combatant(cid, name, owners=(owner,) if owner else (), npc=owner is None,
                             group=group, actor="act" + cid[3:], token="tok" + cid[3:], scene=SCENE,
                             stats={"reaction": reaction, "wits": wits, "size": size}, system=SYSTEM)


class Table(PointerTable):
    """The module at a table: Foundry's combats, the pointer, and the lines it sends."""

    def __init__(self) -> None:
        super().__init__({
            "world": WORLD, "ruleset": "dice-pool", "settings": SETTINGS, "gm_users": [GM],
            "protocol": 1, "module_version": "0.1.0", "foundry_version": "13.350",
            "system": "worldbuilding"}, GM, tokens=True, folder=HERE)

    def new_combat(self, cid: str, people: list[dict[str, Any]],
                   groups: list[dict[str, Any]] | None = None) -> None:
        self.combat = combat(cid, people, groups=groups or [], scene=SCENE, system=SYSTEM)
        self.pointer = None
        self.hook("createCombat")

    def join(self, person: dict[str, Any]) -> None:
        self.combat["combatants"].append(person)
        self.hook("createCombatant", changed={"_id": person["_id"]})

    def roll(self, cid: str, dice: list[int]) -> None:
        self.hook("initiativeRoll", roll={"combatant_id": cid, "roll": pool_roll(dice)})

    def roll_group(self, gid: str, dice: list[int]) -> None:
        self.hook("initiativeRoll", roll={"group_id": gid, "roll": pool_roll(dice)})

    def next_turn(self, cid: str) -> None:
        """The GM clicks "next turn"; the module's skip lands the pointer on ``cid``."""
        self.pointer = cid
        self._sort()
        self.hook("combatTurn", changed={"turn": self.combat["turn"]}, options={"direction": 1})

JOHN, FLY = "cmb1John00000001", "cmb9Fly000000001"  # John's id sorts first: base decides
P_JOHN = "plrJohn000000001"


def dp_e1() -> None:
    """DP-E1: the fly (size −9, 13 dice) gets 5 successes, John (5 dice) 2: the fly acts
    first. In a second encounter both get 2: the fly still goes first, on its higher base."""
    t = Table()
    t.new_combat("dpSwat0000000001", [combatant(JOHN, "John", P_JOHN, 3, 2, 0),
                                      combatant(FLY, "Fly", None, 2, 2, -9)])
    t.roll(FLY, [6, 5, 4, 4, 6, 4, 1, 2, 3, 2, 3, 2, 3])  # 6 successes − one 1 = 5
    t.roll(JOHN, [5, 4, 2, 3, 3])  # 2
    t.write_initiative(FLY, 5.13)
    t.write_initiative(JOHN, 2.05)
    t.start(FLY)
    t.next_turn(JOHN)
    t.next_round(FLY)
    t.new_combat("dpSwatTie0000001", [combatant(JOHN, "John", P_JOHN, 3, 2, 0),
                                      combatant(FLY, "Fly", None, 2, 2, -9)])
    t.roll(JOHN, [4, 6, 2, 3, 2])  # 2
    t.roll(FLY, [6, 4, 1, 5, 2, 2, 3, 3, 2, 2, 3, 2, 3])  # 3 − 1 = 2
    t.write_initiative(FLY, 2.13)
    t.write_initiative(JOHN, 2.05)
    t.start(FLY)
    t.save("DP-E1-fly-acts-first")


ABEL, BAKER, CHARLIE = "cmbAbel000000001", "cmbBaker00000001", "cmbCharlie000001"


def dp_e2() -> None:
    """DP-E2: Abel −1 (ordinary failure), Baker −2 (critical), Charlie 2. Order Charlie,
    Abel, Baker; Abel only defends in round 1, Baker does nothing in rounds 1 and 2; in
    round 3 everyone acts, in the same order."""
    t = Table()
    t.new_combat("dpCombat00000001", [
        combatant(ABEL, "Abel", "plrAbel000000001", 3, 2, 0),
        combatant(BAKER, "Baker", "plrBaker00000001", 2, 3, 0),
        combatant(CHARLIE, "Charlie", "plrCharlie000001", 4, 3, 0),
    ])
    t.roll(ABEL, [4, 3, 1, 2, 1])
    t.roll(BAKER, [3, 2, 3, 1, 1])
    t.roll(CHARLIE, [4, 4, 6, 2, 1, 3, 3])
    t.write_initiative(CHARLIE, 2.07)
    t.write_initiative(ABEL, -0.95)
    t.write_initiative(BAKER, -1.95)
    t.start(CHARLIE)
    t.next_round(CHARLIE)  # round 1: Abel (defend only) and Baker (none) are skipped
    t.next_turn(ABEL)
    t.next_round(CHARLIE)  # round 2: Baker's second lost turn is skipped
    t.next_turn(ABEL)
    t.next_turn(BAKER)  # round 3: Baker acts again
    t.next_round(CHARLIE)
    t.save("DP-E2-hesitation")


DAN, EVE, FOX = "cmbDan0000000001", "cmbEve0000000001", "cmbFox0000000001"
OLD, YOUNG, CUB = "cmbWolfOld000001", "cmbWolfYoung0001", "cmbWolfCub000001"
PACK = "grpPack000000001"
P_DAN = "plrDan0000000001"


def dp_6() -> None:
    """DP-6 with DP-5: the pack rolls once with its slowest wolf's 2 dice; Dan holds and
    steps in after the young wolf, and keeps that place before Eve in later rounds (DP-5:
    the sequence a declaration changed stays changed); in round 2 a cub joins the pack
    (sharing its roll) and a fox joins and rolls; the order is never rerolled."""
    t = Table()
    t.new_combat("dpWolves00000001", [
        combatant(OLD, "Old wolf", None, 1, 1, 0, PACK),
        combatant(DAN, "Dan", P_DAN, 2, 2, 0),
        combatant(YOUNG, "Young wolf", None, 4, 2, 0, PACK),
        combatant(EVE, "Eve", "plrEve0000000001", 3, 2, 0),
    ], [group(PACK, "Wolf pack")])
    t.roll_group(PACK, [6, 5])  # 2 dice (the old wolf's base 2): 2 successes
    t.roll(DAN, [6, 4, 4, 1])  # 2, base 4: before the pack
    t.roll(EVE, [6, 2, 2, 3, 2])  # 1
    t.write_initiative(DAN, 2.04)
    t.write_initiative(OLD, 2.02)
    t.write_initiative(YOUNG, 2.02)
    t.write_initiative(EVE, 1.05)
    t.start(DAN)
    t.intent("hold", DAN, P_DAN)
    t.next_turn(OLD)
    t.next_turn(YOUNG)
    t.intent("act", DAN, P_DAN, after=YOUNG)
    t.write_initiative(DAN, 1.01)
    t.write_initiative(EVE, 1.0)
    t.next_turn(DAN)
    t.next_turn(EVE)
    t.next_round(OLD)  # DP-5: Dan keeps the place he stepped into, before Eve (1.01, 1.00)
    t.join(combatant(CUB, "Wolf cub", None, 0, 1, 0, PACK))  # shares the pack's roll
    t.write_initiative(CUB, 2.01)
    t.write_initiative(YOUNG, 2.0)
    t.join(combatant(FOX, "Fox", None, 1, 1, -3))
    t.roll(FOX, [6, 6, 4, 1, 2])  # 5 dice: 2, base 5; the pack's turn has begun: after it
    t.write_initiative(OLD, 2.03)
    t.write_initiative(CUB, 2.02)
    t.write_initiative(YOUNG, 2.01)
    t.write_initiative(FOX, 2.0)
    t.next_turn(CUB)
    t.next_turn(YOUNG)
    t.next_turn(FOX)
    t.next_turn(DAN)
    t.next_turn(EVE)
    t.next_round(FOX)  # round 3: the fox before the pack (base 5 against 2)
    t.write_initiative(FOX, 2.05)
    t.write_initiative(OLD, 2.02)
    t.write_initiative(CUB, 2.02)
    t.write_initiative(YOUNG, 2.02)
    t.next_turn(CUB)
    t.save("DP-6-pack-joiners-and-hold")


def main() -> None:
    """Every recording of this ruleset, written beside this script."""
    dp_e1()
    dp_e2()
    dp_6()


if __name__ == "__main__":
    main()
