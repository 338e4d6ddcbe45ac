"""Sentences of the dice-pool text no other test pinned down (docs/rules-coverage.md)."""

from __future__ import annotations

from tests.rulesets.dice_pool.dp_table import Table

ABEL, BAKER = "cmbAbel000000001", "cmbBaker00000001"
HUMAN = {"reaction": 3, "wits": 2, "size": 0}  # 5 dice, base 5


def test_DP_2_a_critical_failure_of_minus_1_acts_before_an_ordinary_failure_of_minus_3() -> None:
    """DP-E2's «за ним Абель (-1 успех, но не критический провал), за ним - Бейкер» says why
    Abel is punished less (DP-4); the order is DP-2's «Те, у кого больше успехов действуют
    раньше», even when the critical failure is the better count."""
    t = Table()
    t.create()
    t.add(ABEL, "Abel", HUMAN)
    t.add(BAKER, "Baker", HUMAN)
    t.roll(ABEL, [4, 1, 1, 1, 1])  # one success, four 1s: -3, ordinary
    t.roll(BAKER, [1, 2, 2, 3, 3])  # no success, one 1: -1, critical
    assert t.order() == [BAKER, ABEL]
    assert (t.entry(BAKER)["acts"], t.entry(BAKER)["detail"]["turns_lost"]) == ("none", 1)
    assert (t.entry(ABEL)["acts"], t.entry(ABEL)["detail"]["turns_lost"]) == ("defend_only", 3)
