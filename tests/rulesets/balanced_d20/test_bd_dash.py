"""BI-4 initiative dash: checks, placement, the dashed turn, reaction and Dominance."""

from __future__ import annotations

import pytest

from tests.foundry import foundry_sort
from tests.rulesets.balanced_d20.bd_table import GM, Table, fighter

OGRE, CLERIC, GHOUL, FIGHTER = ("cmbOgre000000001", "cmbCleric0000001", "cmbGhoul00000001",
                                "cmbFighter000001")
CLERIC_PLAYER, FIGHTER_PLAYER = "playerCleric0001", "playerFighter001"


def bi_e4() -> Table:
    """BI-E4: the cleric acts at 8 with Dex +3; the fighter at 5 is dying."""
    t = Table(
        fighter(OGRE, "Ogre", dex=-1, npc=True),
        fighter(CLERIC, "Cleric", dex=3, owners=(CLERIC_PLAYER,)),
        fighter(GHOUL, "Ghoul", dex=2, npc=True),
        fighter(FIGHTER, "Fighter", dex=1, owners=(FIGHTER_PLAYER,)),
    )
    t.create()
    t.roll(OGRE, 17, -1)  # 16
    t.roll(CLERIC, 5, 3)  # 8
    t.roll(GHOUL, 10, 2)  # 12
    t.roll(FIGHTER, 4, 1)  # 5
    t.start()
    return t


def dash(t: Table, cid: str, amount: int, user: str = GM) -> None:
    t.intent("dash", cid, user=user, amount=amount)


def test_BI_E4_cleric_dashes_to_13_and_acts_before_the_ghoul() -> None:
    t = bi_e4()
    assert t.order() == [OGRE, GHOUL, CLERIC, FIGHTER] and t.plan["current"] == OGRE
    dash(t, CLERIC, 5, CLERIC_PLAYER)
    assert t.order() == [OGRE, CLERIC, GHOUL, FIGHTER]
    entry = t.entry(CLERIC)
    assert entry["initiative"] == 13 and "score" not in entry["detail"]
    assert entry["acts"] == "movement_or_action"
    assert entry["reaction"] == {"available": False, "reason": "dashed"}
    assert {"dashed", "no_dominance"} <= set(entry["tags"]) and entry["detail"]["dash"] == 5
    assert foundry_sort(t.initiatives()) == t.order()
    t.next_turn()
    assert t.plan["current"] == CLERIC  # Healing Word, before the fighter's turn


def test_BI_E4_the_cleric_may_add_up_to_8_but_not_9() -> None:
    t = bi_e4()
    error = t.refused("rule_violation", t.intent_msg("dash", CLERIC, amount=9))
    assert error.rule == "BI-4" and error.path == "/args/amount" and "8" in error.message
    dash(t, CLERIC, 8)
    assert t.entry(CLERIC)["initiative"] == 16 and t.order()[1] == CLERIC


@pytest.mark.parametrize("amount", [0, -2])
def test_a_dash_of_zero_or_less_is_refused(amount: int) -> None:
    t = bi_e4()
    error = t.refused("rule_violation", t.intent_msg("dash", CLERIC, amount=amount))
    assert error.rule == "BI-4" and error.path == "/args/amount"


def test_a_combatant_whose_5_plus_dex_is_not_positive_cannot_dash() -> None:
    slow = "cmbSloth00000001"
    t = Table(fighter(slow, "Sloth", dex=-5, npc=True), fighter(OGRE, "Ogre", npc=True))
    t.create()
    t.roll(slow, 10, -5)
    t.roll(OGRE, 10)
    error = t.refused("rule_violation", t.intent_msg("dash", slow, amount=1))
    assert error.rule == "BI-4" and "cannot dash" in error.message


def test_a_dash_during_its_own_turn_is_refused() -> None:
    t = bi_e4()
    error = t.refused("rule_violation", t.intent_msg("dash", OGRE, amount=2))
    assert error.rule == "BI-4" and "own turn" in error.message


def test_only_the_owner_or_a_gm_may_dash() -> None:
    t = bi_e4()
    t.refused("not_permitted", t.intent_msg("dash", CLERIC, user=FIGHTER_PLAYER, amount=2))


def test_a_dash_before_rolling_is_refused() -> None:
    t = Table(fighter(CLERIC, "Cleric", dex=3), fighter(OGRE, "Ogre", npc=True))
    t.create()
    t.refused("rule_violation", t.intent_msg("dash", CLERIC, amount=2))


def test_a_second_dash_for_the_same_round_is_refused() -> None:
    t = bi_e4()
    dash(t, CLERIC, 2)
    error = t.refused("rule_violation", t.intent_msg("dash", CLERIC, amount=1))
    assert error.rule == "BI-4" and "round 1" in error.message


def test_a_raised_value_above_the_turn_in_progress_waits_for_it_to_end() -> None:
    t = bi_e4()
    t.next_turn()  # the ghoul (12) is acting
    assert t.plan["current"] == GHOUL
    dash(t, FIGHTER, 6)  # 5 + 6 = 11 < 12: simply before nobody else
    dash(t, CLERIC, 8)  # 16 > 12: right after the ghoul's turn
    assert t.order() == [OGRE, GHOUL, CLERIC, FIGHTER]
    entry = t.entry(CLERIC)
    assert entry["initiative"] < t.entry(GHOUL)["initiative"]
    assert entry["detail"]["score"] == 16 and entry["detail"]["dash"] == 8
    assert foundry_sort(t.initiatives()) == t.order()
    t.next_turn()
    assert t.plan["current"] == CLERIC


def test_a_dash_after_acting_applies_to_the_next_round() -> None:
    t = bi_e4()
    t.turn_to(FIGHTER)  # the cleric has acted in round 1
    dash(t, CLERIC, 5)
    assert t.entry(CLERIC)["initiative"] == 8 and t.entry(CLERIC)["acts"] == "full"
    assert t.reaction(CLERIC) == (False, "dashed")
    upcoming = t.plan["next_round"]
    assert [e["combatant_id"] for e in upcoming["order"]] == [OGRE, CLERIC, GHOUL, FIGHTER]
    assert upcoming["order"][1] == {"combatant_id": CLERIC, "initiative": 13,
                                    "acts": "movement_or_action"}
    t.next_turn()
    assert t.plan["round"] == 2 and t.order()[1] == CLERIC
    assert t.entry(CLERIC)["acts"] == "movement_or_action"


def test_a_dash_before_the_combat_applies_to_round_1_and_may_come_first() -> None:
    t = Table(fighter(OGRE, "Ogre", npc=True), fighter(CLERIC, "Cleric", dex=3))
    t.create()
    t.roll(OGRE, 11)
    t.roll(CLERIC, 5, 3)
    dash(t, CLERIC, 6)
    assert t.order() == [CLERIC, OGRE] and t.entry(CLERIC)["initiative"] == 14
    t.refused("rule_violation", t.intent_msg("dash", CLERIC, amount=1))
    t.start()
    assert t.plan["current"] == CLERIC and t.entry(CLERIC)["acts"] == "movement_or_action"
    t.next_turn()
    t.next_turn()
    assert t.plan["round"] == 2 and t.order() == [OGRE, CLERIC]
    assert t.entry(CLERIC)["initiative"] == 8 and t.entry(CLERIC)["acts"] == "full"


def test_the_dashed_round_starts_with_the_dasher_when_it_now_comes_first() -> None:
    t = bi_e4()
    t.turn_to(FIGHTER)  # the cleric has acted
    dash(t, CLERIC, 8)  # 16 in round 2, tied with the ogre: Dex +3 beats Dex -1
    assert t.plan["next_round"]["current"] == CLERIC
    t.next_turn()
    assert t.plan["round"] == 2 and t.plan["current"] == CLERIC and t.plan["turn"] == 0
    assert t.order() == [CLERIC, OGRE, GHOUL, FIGHTER]
    assert foundry_sort(t.initiatives()) == t.order()


def test_no_reaction_until_its_first_turn_after_the_dashed_one() -> None:
    t = bi_e4()
    t.next_turn()  # the ghoul acts
    dash(t, CLERIC, 3)  # 11 < 12: after the ghoul
    t.next_turn()
    assert t.plan["current"] == CLERIC
    assert t.reaction(CLERIC) == (False, "dashed")  # its dashed turn
    t.next_turn()
    t.next_turn()  # round 2: ogre
    assert t.plan["round"] == 2 and t.reaction(CLERIC) == (False, "dashed")
    assert "no_dominance" in t.entry(CLERIC)["tags"]
    t.refused("rule_violation", t.intent_msg("reaction.use", CLERIC))
    t.turn_to(CLERIC)
    assert t.reaction(CLERIC) == (True, "available")
    assert "no_dominance" not in t.entry(CLERIC)["tags"]
    assert t.entry(CLERIC)["initiative"] == 8  # back at its own value


def test_no_dominance_lasts_until_its_next_non_dashed_turn() -> None:
    t = bi_e4()
    dash(t, CLERIC, 5)  # round 1, before its turn
    t.turn_to(FIGHTER)
    dash(t, CLERIC, 5)  # round 2 as well, after acting
    t.next_turn()
    t.turn_to(CLERIC)  # round 2: dashed again
    assert "no_dominance" in t.entry(CLERIC)["tags"]
    assert t.reaction(CLERIC) == (False, "dashed")
    t.turn_to(FIGHTER)
    t.next_turn()
    t.turn_to(CLERIC)  # round 3: not dashed
    assert "no_dominance" not in t.entry(CLERIC)["tags"]
    assert t.reaction(CLERIC) == (True, "available")
