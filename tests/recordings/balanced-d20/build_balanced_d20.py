"""Builds the balanced-d20 recordings BI-E1 .. BI-E6 (../shared/rules/README.md section 1).

Run from the repository root: ``.venv/bin/python tests/recordings/balanced-d20/build_balanced_d20.py``,
then ``.venv/bin/python -m adapter replay X.jsonl > X.golden.jsonl`` for each, and read the
goldens. Each recording is what the module would send at a real table: Foundry v13
``toObject()`` snapshots as the module extends them (``stats``: Dex and Int modifiers,
proficiencies), dnd5e ``D20Roll`` initiative rolls, the players' and the GM's intents, and
Foundry's pointer following the plan. The table is the one test table
(``tests/support/table.py``): it runs the same pipeline (as the module reads its acks) to
learn the plan's pointer and numbers, which the module writes into the combatants, the ids
the sidecar makes (prompts, readied actions), and steers "next turn" as the module does.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from tests.foundry import combatant as foundry_combatant
from tests.foundry import dnd5e_d20, jsonl
from tests.support.table import Table as OneTable

GM = "gmBalanced000001"
COMBAT = "bdCombat00000001"
SCENE = "bdScene000000001"


def combatant(cid: str, name: str, *, dex: int, int_: int = 0, owner: str | None = None,
              proficient: tuple[str, ...] = ()) -> dict[str, Any]:
    return foundry_combatant(cid, name, owners=(owner,) if owner else (), npc=owner is None,
                             actor="act" + cid[3:], token="tok" + cid[3:], scene=SCENE,
                             stats={"dex": dex, "int": int_, "proficient": list(proficient)})


class Table(OneTable):
    """The one test table (``tests/support/table.py``), writing down what it sends."""

    def __init__(self, people: list[dict[str, Any]], settings: dict[str, Any] | None = None,
                 time: float = 0) -> None:
        super().__init__("balanced-d20", settings, world="balancedWorld", gm=GM, combat_id=COMBAT)
        self.refusals = "ack"  # some steps are refused on purpose: the golden shows the refusal
        self.time = time
        self.at.roster.extend(people)

    def intent(self, kind: str, who: str | None, user: str, *, combat: bool = True,
               **args: Any) -> dict[str, Any]:
        return self.ask(kind, who, args, user=user, in_combat=combat)

    def roll(self, cid: str, natural: int, mod: int, reroll_of: str | None = None) -> None:
        self.send(self.roll_message(dnd5e_d20(natural, mod), cid=cid, reroll_of=reroll_of))

    def roll_group(self, gid: str, natural: int, mod: int, reroll_of: str | None = None) -> None:
        self.send(self.roll_message(dnd5e_d20(natural, mod), group_id=gid, reroll_of=reroll_of))

    def prompt(self, kind: str) -> dict[str, Any]:
        return next(p for p in self.ack["prompts"] if p["kind"] == kind)

    def notice(self, kind: str) -> dict[str, Any]:
        return next(n for n in self.ack["notices"] if n["kind"] == kind)

    def save(self, name: str) -> None:
        (HERE / f"{name}.jsonl").write_text(jsonl(self.sent), encoding="utf-8")


# ---------------------------------------------------------------- the examples

P_WIZARD, P_ROGUE, P_BARBARIAN, P_CLERIC, P_FIGHTER = (
    "plrWizard0000001", "plrRogue00000001", "plrBarbarian0001", "plrCleric0000001",
    "plrFighter000001")


def bi_e1() -> None:
    """BI-E1: the wizard (Int +4) rolls a natural 3: reroll offered; the reroll shows 2, and
    the 2 stands with no second offer although 2 <= 4."""
    wizard, orc, fighter = "cmbWizard0000001", "cmbOrc0000000001", "cmbFighter000001"
    t = Table([combatant(wizard, "Wizard", dex=2, int_=4, owner=P_WIZARD),
               combatant(orc, "Orc", dex=1),
               combatant(fighter, "Fighter", dex=1, owner=P_FIGHTER)])
    t.hook("createCombat")
    t.roll(orc, 10, 1)  # 11
    t.roll(fighter, 6, 1)  # 7
    t.roll(wizard, 3, 2)  # 5: natural 3 <= Int 4
    offer = t.prompt("reroll")["prompt_id"]
    t.intent("reroll.decide", None, P_WIZARD, prompt_id=offer, accept=True)
    approval = t.prompt("reroll.approval")["prompt_id"]
    t.intent("reroll.approve", None, P_WIZARD, prompt_id=approval, approve=True)  # not_permitted
    t.intent("reroll.approve", None, GM, prompt_id=approval, approve=True)
    t.roll(wizard, 2, 2, reroll_of=offer)  # 4 stands
    t.roll(wizard, 1, 2, reroll_of=offer)  # a second reroll: refused
    t.start()
    t.save("BI-E1-wizard-reroll")


def bi_2_offer_withdrawn() -> None:
    """BI-2 (issue 11): the wizard (Int +4) rolls a natural 3 and is offered a reroll; before
    anyone answers, the GM rolls its initiative again: a natural 2. The first offer is
    withdrawn (answering it is refused) and a new one comes: a withdrawn offer does not use up
    the "once". The wizard takes it; the reroll shows 1, and it stands."""
    wizard, orc = "cmbWizard0000001", "cmbOrc0000000001"
    t = Table([combatant(wizard, "Wizard", dex=2, int_=4, owner=P_WIZARD),
               combatant(orc, "Orc", dex=1)], settings={"auto_approve_rerolls": True})
    t.hook("createCombat")
    t.roll(orc, 10, 1)  # 11
    t.roll(wizard, 3, 2)  # 5: natural 3 <= Int 4
    first = t.prompt("reroll")["prompt_id"]
    t.roll(wizard, 2, 2)  # the GM rolls again: 4, natural 2 <= 4
    offer = t.prompt("reroll")["prompt_id"]
    t.intent("reroll.decide", None, P_WIZARD, prompt_id=first, accept=True)  # unknown_prompt
    t.intent("reroll.decide", None, P_WIZARD, prompt_id=offer, accept=True)
    t.roll(wizard, 1, 2, reroll_of=offer)  # 3 stands
    t.start()
    t.save("BI-2-offer-withdrawn-by-a-new-roll")


def bi_2_group_reroll() -> None:
    """BI-2 for a group roll (issue 11): a goblin pack (Int +3 and +1) rolls one initiative,
    a natural 1: every member would qualify on its own (ruling: the lowest Int decides), so
    the GM is offered the reroll for the pack, takes it, and the 12 goes to both goblins."""
    gob_a, gob_b, fighter = "cmbGoblinA000001", "cmbGoblinB000001", "cmbFighter000001"
    pack = "grpGoblins000001"
    a, b = combatant(gob_a, "Goblin", dex=2, int_=3), combatant(gob_b, "Goblin", dex=2, int_=1)
    a["group"] = b["group"] = pack
    t = Table([a, b, combatant(fighter, "Fighter", dex=1, owner=P_FIGHTER)])
    t.add_group(pack, "Goblins")
    t.hook("createCombat")
    t.roll(fighter, 9, 1)  # 10
    t.roll_group(pack, 1, 2)  # 3: natural 1 <= +1
    offer = t.prompt("reroll")["prompt_id"]
    t.intent("reroll.decide", None, GM, prompt_id=offer, accept=True)
    approval = t.prompt("reroll.approval")["prompt_id"]
    t.intent("reroll.approve", None, GM, prompt_id=approval, approve=True)
    t.roll_group(pack, 10, 2, reroll_of=offer)  # 12 for both
    t.start()
    t.save("BI-2-group-reroll")


def patrol(time: float) -> tuple[Table, str, str, str]:
    rogue, orc1, orc2 = "cmbRogue00000001", "cmbOrc0000000001", "cmbOrc0000000002"
    barbarian = "cmbBarbarian0001"
    t = Table([combatant(rogue, "Rogue", dex=4, owner=P_ROGUE),
               combatant(barbarian, "Barbarian", dex=1, owner=P_BARBARIAN),
               combatant(orc1, "Orc", dex=1), combatant(orc2, "Orc", dex=1)], time=time)
    return t, rogue, orc1, orc2


def watch(t: Table, rogue: str, orcs: list[str]) -> None:
    t.intent("ready.start", None, P_ROGUE, combat=False, actor_id="act" + rogue[3:],
             token_id="tok" + rogue[3:], owners=[P_ROGUE],
             watching=["tok" + o[3:] for o in orcs], sees=True, weapon_ready=True)


def fight(t: Table, rogue: str, orc1: str, orc2: str) -> None:
    t.hook("createCombat")
    t.roll(orc1, 15, 1)  # 16
    t.roll(orc2, 7, 1)  # 8
    t.roll("cmbBarbarian0001", 9, 1)  # 10
    t.roll(rogue, 10, 4)  # 14
    t.start()


def bi_e2() -> None:
    """BI-E2: the rogue watches the orcs 10 s, daggers drawn: ready. Combat starts, the rogue
    rolls 14 and at once takes an opportunity attack before the orcs have moved."""
    t, rogue, orc1, orc2 = patrol(time=3600)
    watch(t, rogue, [orc1, orc2])
    t.time += 10
    fight(t, rogue, orc1, orc2)
    t.intent("reaction.use", rogue, P_ROGUE, reason="opportunity attack")
    t.intent("reaction.use", "cmbBarbarian0001", P_BARBARIAN)  # before its first turn: refused
    t.next_turn()  # the rogue's turn: its reaction is back
    t.save("BI-E2-rogue-ready-to-strike")


def bi_e3() -> None:
    """BI-E3: the rogue whispers to the barbarian for a second: the state is lost, and 6 more
    seconds of silent watching are needed (here it gets only 4)."""
    t, rogue, orc1, orc2 = patrol(time=3600)
    watch(t, rogue, [orc1, orc2])
    t.time += 3
    t.intent("ready.break", None, P_ROGUE, combat=False, actor_id="act" + rogue[3:],
             reason="whispers to the barbarian")
    t.time += 1
    watch(t, rogue, [orc1, orc2])
    t.time += 4
    fight(t, rogue, orc1, orc2)
    t.intent("reaction.use", rogue, P_ROGUE, reason="opportunity attack")  # refused
    t.save("BI-E3-whisper-breaks-ready")


def bi_3_unwatched_foe() -> None:
    """BI-3 (issue 11): the rogue watched the orc patrol 10 s, daggers drawn: ready. A wolf
    none of them watched attacks instead. The rogue rolls 14 and still has its reaction before
    its first turn (initiative >= 10 does not depend on who is watched); it is not
    ``surprise_immune`` (that is limited to the watched creatures)."""
    rogue, wolf = "cmbRogue00000001", "cmbWolf000000001"
    t = Table([combatant(rogue, "Rogue", dex=4, owner=P_ROGUE), combatant(wolf, "Wolf", dex=2)],
              time=3600)
    watch(t, rogue, ["cmbOrc0000000001", "cmbOrc0000000002"])
    t.time += 10
    t.hook("createCombat")
    t.roll(wolf, 15, 2)  # 17
    t.roll(rogue, 10, 4)  # 14
    t.start()
    t.intent("reaction.use", rogue, P_ROGUE, reason="opportunity attack")
    t.next_turn()  # the rogue's turn: its reaction is back
    t.save("BI-3-ready-against-an-unwatched-foe")


def bi_e4() -> None:
    """BI-E4: the cleric acts at 8 with Dex +3 (may add up to +8); the fighter at 5 has failed
    two death saves. The cleric dashes +5, acts at 13, before the ghoul, with its action only,
    and has no reaction until its next turn; in round 2 it is back at 8."""
    ogre, cleric, ghoul, fighter = ("cmbOgre000000001", "cmbCleric0000001", "cmbGhoul00000001",
                                    "cmbFighter000001")
    t = Table([combatant(ogre, "Ogre", dex=-1), combatant(cleric, "Cleric", dex=3, owner=P_CLERIC),
               combatant(ghoul, "Ghoul", dex=2),
               combatant(fighter, "Fighter", dex=1, owner=P_FIGHTER)])
    t.hook("createCombat")
    t.roll(ogre, 17, -1)  # 16
    t.roll(cleric, 5, 3)  # 8
    t.roll(ghoul, 10, 2)  # 12
    t.roll(fighter, 4, 1)  # 5
    t.start()  # the ogre acts: the fighter is down and fails death saves
    t.intent("dash", cleric, P_CLERIC, amount=9)  # above 5 + Dex: refused
    t.intent("dash", cleric, P_CLERIC, amount=5)
    t.next_turn()  # the cleric at 13: Healing Word, no movement
    t.intent("reaction.use", cleric, P_CLERIC)  # refused: dashed
    t.next_turn()  # ghoul
    t.next_turn()  # fighter
    t.next_turn()  # round 2: ogre; the cleric is back at 8, still without a reaction
    t.next_turn()  # ghoul
    t.next_turn()  # cleric: its first turn after the dashed one
    t.save("BI-E4-cleric-dashes-to-13")


def bi_e5() -> None:
    """BI-E5: the fighter readies "if the mage starts casting, I hit him"; the mage starts
    casting; the fighter uses its reaction and attacks."""
    fighter, mage = "cmbFighter000001", "cmbMage000000001"
    t = Table([combatant(fighter, "Fighter", dex=2, owner=P_FIGHTER), combatant(mage, "Mage", dex=2)])
    t.hook("createCombat")
    t.roll(fighter, 13, 2)  # 15
    t.roll(mage, 10, 2)  # 12
    t.start()
    t.intent("readied.declare", fighter, P_FIGHTER, mode="standard",
             trigger="the mage starts casting", action="attack the mage", target_id=mage)
    readied = t.notice("readied.declared")["readied_id"]
    t.next_turn()  # the mage starts casting
    t.intent("readied.trigger", fighter, GM, readied_id=readied)
    t.intent("reaction.use", fighter, P_FIGHTER, reason="readied attack")
    t.save("BI-E5-fighter-readied-attack")


def bi_e6() -> None:
    """BI-E6: the rogue readies "before he pulls the lever, I knock his hand away": opposed
    check, Sleight of Hand vs the villain's Perception. Round 1 the rogue wins: the lever is
    not pulled. Round 2 the rogue loses: its reaction is spent, and the readied action fires
    at the end of the villain's turn."""
    rogue, villain, guard = "cmbRogue00000001", "cmbVillain000001", "cmbGuard00000001"
    t = Table([combatant(rogue, "Rogue", dex=4, owner=P_ROGUE,
                         proficient=("sleight_of_hand", "stealth")),
               combatant(villain, "Villain", dex=1), combatant(guard, "Guard", dex=0)])
    t.hook("createCombat")
    t.roll(rogue, 14, 4)  # 18
    t.roll(villain, 13, 1)  # 14
    t.roll(guard, 9, 0)  # 9
    t.start()
    for actor_total, target_total in ((19, 12), (11, 15)):
        t.intent("readied.declare", rogue, P_ROGUE, mode="preemptive",
                 trigger="the villain pulls the trap lever", action="knock his hand away",
                 target_id=villain)
        readied = t.notice("readied.declared")["readied_id"]
        t.next_turn()  # the villain reaches for the lever
        t.intent("readied.trigger", rogue, P_ROGUE, readied_id=readied)
        check = t.prompt("opposed_check")["prompt_id"]
        t.intent("opposed.result", rogue, GM, prompt_id=check, actor_total=actor_total,
                 target_total=target_total)
        t.next_turn()  # the villain's turn ends; the guard's begins
        if actor_total <= target_total:
            t.intent("readied.trigger", rogue, P_ROGUE, readied_id=readied)  # fires, no reaction
        t.next_turn()  # next round: the rogue
    t.save("BI-E6-rogue-preemptive-lever")


def main() -> None:
    """Every recording of this ruleset, written beside this script."""
    bi_e1()
    bi_2_offer_withdrawn()
    bi_2_group_reroll()
    bi_e2()
    bi_e3()
    bi_3_unwatched_foe()
    bi_e4()
    bi_e5()
    bi_e6()


if __name__ == "__main__":
    main()
