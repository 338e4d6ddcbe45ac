"""Sentences of the balanced-d20 text no other test pinned down (docs/rules-coverage.md)."""

from __future__ import annotations

import pytest

from tests.rulesets.balanced_d20.bd_table import GM, Table, fighter

ROGUE, ORC, CLERIC, OGRE = ("cmbRogue00000001", "cmbOrc0000000001", "cmbCleric0000001",
                            "cmbOgre000000001")
FIGHTER, MAGE = "cmbFighter000001", "cmbMage000000001"
ROGUE_PLAYER, CLERIC_PLAYER, FIGHTER_PLAYER = "playerRogue00001", "playerCleric0001", "playerFighter001"
ROGUE_ACTOR, ROGUE_TOKEN, ORC_TOKEN = "actRogue00000001", "tokRogue00000001", "tokOrc0000000001"


@pytest.mark.parametrize(("natural", "bonus", "early"), [(6, 4, True), (5, 4, False), (16, -6, True)])
def test_BI_3_the_early_reaction_needs_10_exactly_or_more(natural: int, bonus: int, early: bool) -> None:
    """«Если ваш результат инициативы 10 или выше — вы можете использовать реакцию до начала
    вашего первого хода»: the initiative result (the total), 10 included, not the die."""
    t = Table(fighter(ROGUE, "Rogue", dex=4, owners=(ROGUE_PLAYER,), actor=ROGUE_ACTOR, token=ROGUE_TOKEN),
              fighter(ORC, "Orc", dex=1, npc=True, token=ORC_TOKEN))
    t.intent("ready.start", user=ROGUE_PLAYER, combat=False, actor_id=ROGUE_ACTOR, token_id=ROGUE_TOKEN,
             owners=[ROGUE_PLAYER], watching=[ORC_TOKEN], sees=True, weapon_ready=True)
    t.intent("ready.confirm", combat=False, actor_id=ROGUE_ACTOR)
    t.create()
    t.roll(ROGUE, natural, bonus)
    t.roll(ORC, 20, 1)
    t.start()
    assert t.plan["current"] == ORC
    expected = (True, "ready_to_strike") if early else (False, "before_first_turn")
    assert t.reaction(ROGUE) == expected
    assert "surprise_immune" in t.entry(ROGUE)["tags"]  # 21: whatever the initiative


def test_BI_4_only_the_accelerated_turn_is_movement_or_action() -> None:
    """«В этот ускоренный ход вы можете использовать только Движение или только Действие»: the
    dashed turn only; the next round's turn (already in the preview) is a full one."""
    t = Table(fighter(OGRE, "Ogre", dex=-1, npc=True), fighter(CLERIC, "Cleric", dex=3, owners=(CLERIC_PLAYER,)))
    t.create()
    t.roll(OGRE, 17, -1)
    t.roll(CLERIC, 5, 3)
    t.start()
    t.intent("dash", CLERIC, user=CLERIC_PLAYER, amount=5)
    assert t.entry(CLERIC)["acts"] == "movement_or_action"
    [upcoming] = [e for e in t.plan["next_round"]["order"] if e["combatant_id"] == CLERIC]
    assert upcoming == {"combatant_id": CLERIC, "initiative": 8.0, "acts": "full"}
    t.next_turn()
    assert t.plan["current"] == CLERIC and t.entry(CLERIC)["acts"] == "movement_or_action"
    t.next_turn()
    assert t.plan["round"] == 2 and t.entry(CLERIC)["acts"] == "full"
    assert "dashed" not in t.entry(CLERIC)["tags"]


def test_BI_5_a_combat_option_using_a_reaction_may_be_readied() -> None:
    """«Теперь в качестве заготовленного действия доступны также Боевые опции (стр. 18–21),
    использующие реакцию»: the readied action is the table's words; a combat option is readied,
    triggered and taken with the reaction like any standard readied action."""
    t = Table(fighter(FIGHTER, "Fighter", dex=2, owners=(FIGHTER_PLAYER,)), fighter(MAGE, "Mage", dex=2, npc=True))
    t.create()
    t.roll(FIGHTER, 13, 2)
    t.roll(MAGE, 10, 2)
    t.start()
    t.intent("readied.declare", FIGHTER, user=FIGHTER_PLAYER, mode="standard",
             trigger="the mage steps away", action="Shove (combat option, p. 19)", target_id=MAGE)
    [notice] = t.notices()
    t.next_turn()
    t.intent("readied.trigger", FIGHTER, user=GM, readied_id=notice["readied_id"])
    assert t.reaction(FIGHTER) == (True, "readied_trigger")
    t.intent("reaction.use", FIGHTER, user=FIGHTER_PLAYER, reason="Shove")
    assert t.reaction(FIGHTER) == (False, "spent")
