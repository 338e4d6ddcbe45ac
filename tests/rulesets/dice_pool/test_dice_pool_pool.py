"""DP-1 pool, DP-7 modifiers, DP-6 group pool: how many dice, and the base that breaks ties."""

from __future__ import annotations

from typing import Any

import pytest

from adapter.engine.model import Combat, Combatant
from adapter.errors import RuleViolation
from adapter.rulesets.dice_pool.pool import base_initiative, dice_for, group_pool, pool


def combat_of(*combatants: Combatant, groups: dict[str, str] | None = None) -> Combat:
    return Combat(
        id="c", ruleset="dice-pool", combatants={c.id: c for c in combatants},
        roster=tuple(c.id for c in combatants), groups=groups or {},
    )


def who(cid: str, group: str | None = None, **stats: object) -> Combatant:
    return Combatant(id=cid, name=cid.title(), stats=stats, group=group)


def test_DP_E1_the_fly_of_size_minus_9_rolls_13_dice_and_john_5() -> None:
    fly, john = who("fly", reaction=2, wits=2, size=-9), who("john", reaction=3, wits=2, size=0)
    combat = combat_of(fly, john)
    assert pool(combat, fly).pool == 13 and base_initiative(combat, fly) == 13
    assert pool(combat, john).pool == 5 and base_initiative(combat, john) == 5


def test_a_larger_creature_loses_dice_for_its_size() -> None:
    ogre = who("ogre", reaction=3, wits=2, size=2)
    assert pool(combat_of(ogre), ogre).pool == 3


def test_a_missing_size_counts_as_a_human_0() -> None:
    john = who("john", reaction=3, wits=2)
    assert pool(combat_of(john), john).pool == 5


def test_DP_7_the_gms_modifier_changes_the_pool_not_the_base() -> None:
    hurt = who("hurt", reaction=3, wits=3, size=0, pool_modifier=-2)
    dice = pool(combat_of(hurt), hurt)
    assert (dice.pool, dice.base) == (4, 6)
    keen = who("keen", reaction=3, wits=3, pool_modifier=2)
    assert (pool(combat_of(keen), keen).pool, pool(combat_of(keen), keen).base) == (8, 6)


def test_a_pool_below_zero_rolls_no_dice() -> None:
    stunned = who("stunned", reaction=1, wits=1, size=0, pool_modifier=-5)
    assert pool(combat_of(stunned), stunned).pool == 0


@pytest.mark.parametrize("missing", ["reaction", "wits"])
def test_a_combatant_without_reaction_or_wits_has_no_pool(missing: str) -> None:
    stats: dict[str, Any] = {"reaction": 3, "wits": 2}
    del stats[missing]
    c = who("x", **stats)
    with pytest.raises(RuleViolation) as refused:
        pool(combat_of(c), c)
    assert refused.value.rule == "DP-1" and missing in refused.value.message
    assert refused.value.field == ("combat", "combatants", 0, "stats")
    assert dice_for(combat_of(c), c) is None


@pytest.mark.parametrize("value", ["3", 2.5, True])
def test_a_stat_that_is_not_a_whole_number_is_refused(value: object) -> None:
    c = who("x", reaction=value, wits=2)
    with pytest.raises(RuleViolation) as refused:
        pool(combat_of(c), c)
    assert refused.value.field == ("combat", "combatants", 0, "stats", "reaction")


def test_a_modifier_that_is_not_a_whole_number_names_DP_7() -> None:
    c = who("x", reaction=2, wits=2, pool_modifier="lots")
    with pytest.raises(RuleViolation) as refused:
        pool(combat_of(c), c)
    assert refused.value.rule == "DP-7"


def test_DP_6_ruling_a_group_rolls_with_its_slowest_member() -> None:
    quick = who("quick", "g", reaction=5, wits=5)
    slow = who("slow", "g", reaction=2, wits=1, pool_modifier=1)
    other = who("other", None, reaction=1, wits=1)
    combat = combat_of(quick, slow, other, groups={"g": "Wolves"})
    dice = group_pool(combat, "g")
    assert (dice.pool, dice.base, dice.source) == (4, 3, "slow")
    assert dice_for(combat, quick) == dice


def test_DP_6_ruling_members_tied_for_lowest_base_take_the_smaller_pool() -> None:
    a = who("a", "g", reaction=2, wits=2, pool_modifier=2)
    b = who("b", "g", reaction=2, wits=2, pool_modifier=-1)
    assert group_pool(combat_of(a, b, groups={"g": ""}), "g").pool == 3


def test_a_group_without_members_is_refused() -> None:
    with pytest.raises(RuleViolation) as refused:
        group_pool(combat_of(groups={"g": "Empty"}), "g")
    assert refused.value.rule == "DP-6" and refused.value.field == ("roll", "group_id")
