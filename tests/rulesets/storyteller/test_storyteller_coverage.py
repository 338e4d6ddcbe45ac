"""Sentences of the storyteller text no other test pinned down (docs/rules-coverage.md)."""

from __future__ import annotations

from tests.rulesets.storyteller.st_table import GM, Table, owner

SANDERS, WASHINGTON = "cmbSanders000001", "cmbWashington001"
SNIPER, VICTIM, GUARD = "cmbSniper0000001", "cmbVictim0000001", "cmbGuard00000001"


def test_ST_E3_without_a_declaration_sanders_acts_before_washington_every_round() -> None:
    """«На протяжении всего боя Сандерс действует перед Вашингтоном»."""
    t = Table().setup((SANDERS, 12, 6), (WASHINGTON, 8, 4))
    for round_ in (1, 2, 3):
        assert t.plan["round"] == round_ and t.order() == [SANDERS, WASHINGTON]
        assert t.values() == {SANDERS: 12, WASHINGTON: 8}
        t.next_turn()
        t.next_turn()


def test_ST_4_in_the_next_round_it_may_act_at_any_point_also_last() -> None:
    """«во втором раунде он может действовать с любой позиции в перечне Инициативы»: after
    Sanders too, at 11; «В третьем раунде Инициатива Вашингтона возвращается к результату 8»."""
    t = Table().setup((SANDERS, 12, 6), (WASHINGTON, 8, 4))
    t.intent("hold", WASHINGTON, owner(WASHINGTON), next_round=True)
    t.next_turn()
    t.next_turn()
    assert t.plan["round"] == 2 and t.current == SANDERS and t.entry(WASHINGTON)["acts"] == "held"
    t.intent("act", WASHINGTON, owner(WASHINGTON), after=SANDERS)
    assert t.values() == {SANDERS: 12, WASHINGTON: 11}
    t.next_turn()
    assert t.current == WASHINGTON
    t.next_turn()
    assert t.plan["round"] == 3 and t.values() == {SANDERS: 12, WASHINGTON: 8}


def test_ST_5_a_sniper_may_wait_several_rounds() -> None:
    """«Персонаж может придерживать за собой действие из раунда в раунд»: the sniper waits
    three rounds, then shoots right before the victim; the next round it is back at 9."""
    t = Table().setup((SNIPER, 9, 4), (VICTIM, 7, 2), (GUARD, 5, 1))
    t.intent("hold", SNIPER, owner(SNIPER))
    t.intent("hold", SNIPER, GM, target_aware=True)
    for round_ in (1, 2, 3):
        assert t.plan["round"] == round_ and t.entry(SNIPER)["acts"] == "held"
        assert "target_aware" in t.entry(SNIPER)["tags"]
        while t.plan["round"] == round_:
            t.next_turn()
    assert t.current == VICTIM
    t.intent("act", SNIPER, owner(SNIPER), before=VICTIM)
    assert t.current == SNIPER and t.values() == {SNIPER: 8, VICTIM: 7, GUARD: 5}
    t.next_turn()
    t.next_turn()
    t.next_turn()
    assert t.plan["round"] == 5 and t.values() == {SNIPER: 9, VICTIM: 7, GUARD: 5}
