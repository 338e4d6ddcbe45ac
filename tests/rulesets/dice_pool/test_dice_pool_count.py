"""DP-3: the recount of a pool roll, and the refusal of a roll that is not the pool."""

from __future__ import annotations

import pytest

from adapter.errors import RuleViolation
from adapter.rulesets.dice_pool.pool import DiceSettings, pool_dice, success_count
from tests.decoded import as_roll
from tests.rulesets.dice_pool.dp_table import pool_roll

D6 = DiceSettings()


@pytest.mark.parametrize(
    ("dice", "successes", "ones", "net", "critical"),
    [
        ((4, 3, 1, 2, 1), 1, 2, -1, False),  # DP-E2 Abel: ordinary failure
        ((3, 2, 3, 1, 1), 0, 2, -2, True),  # DP-E2 Baker: critical failure
        ((4, 4, 6, 2, 1, 3, 3), 3, 1, 2, False),  # DP-E2 Charlie
        ((5, 2, 1, 6, 4, 3), 3, 1, 2, False),  # the research sample, total 2
        ((2, 3, 2), 0, 0, 0, False),  # nothing: 0, not critical
        ((), 0, 0, 0, False),  # an empty pool
    ],
)
def test_DP_3_successes_minus_ones(
    dice: tuple[int, ...], successes: int, ones: int, net: int, critical: bool
) -> None:
    count = success_count(dice, D6)
    assert (count.successes, count.ones, count.net, count.critical) == (
        successes, ones, net, critical,
    )


def test_DP_3_the_settings_change_the_die_the_threshold_and_the_ones() -> None:
    d10 = DiceSettings(die_faces=10, success_at=8, ones_cancel=False)
    count = success_count((8, 10, 7, 1, 1), d10)
    assert (count.successes, count.net, count.critical) == (2, 2, False)
    assert success_count((1, 2), d10).critical and success_count((1, 2), d10).net == 0
    assert d10.formula(5) == "5d10cs>=8" and D6.formula(13) == "13d6cs>=4df=1"


def test_the_recount_ignores_foundrys_counts() -> None:
    roll = pool_roll([6, 6, 1])
    for result in roll["terms"][0]["results"]:
        result["count"] = 0
    assert pool_dice(as_roll(roll), 3, D6, "X") == (6, 6, 1)


def test_rerolled_and_discarded_dice_are_not_counted() -> None:
    roll = pool_roll([6, 1, 5])
    roll["terms"][0]["results"][1].update(active=False, rerolled=True)
    roll["terms"][0]["results"].append({"result": 4, "active": True})
    assert pool_dice(as_roll(roll), 3, D6, "X") == (6, 5, 4)


def test_a_roll_with_fewer_dice_than_the_pool_is_refused_naming_both_numbers() -> None:
    with pytest.raises(RuleViolation) as refused:
        pool_dice(as_roll(pool_roll([4, 4, 4, 4])), 5, D6, "John")
    assert refused.value.rule == "DP-1"
    assert "5 dice" in refused.value.message and "4 dice" in refused.value.message
    assert refused.value.field == ("roll", "roll", "terms", 0, "number")


def test_a_roll_whose_results_disagree_with_its_number_is_refused() -> None:
    with pytest.raises(RuleViolation) as refused:
        pool_dice(as_roll(pool_roll([4, 4, 4, 4], number=5)), 5, D6, "John")
    assert refused.value.field == ("roll", "roll", "terms", 0, "results")
    assert "5 dice" in refused.value.message and "4 dice" in refused.value.message


def test_a_roll_with_other_faces_is_refused_naming_both() -> None:
    with pytest.raises(RuleViolation) as refused:
        pool_dice(as_roll(pool_roll([4, 4, 4, 4, 4], faces=10)), 5, D6, "John")
    assert refused.value.rule == "DP-3" and refused.value.field == ("roll", "roll", "terms", 0, "faces")
    assert "d6" in refused.value.message and "d10" in refused.value.message


def test_a_die_showing_an_impossible_face_is_refused() -> None:
    roll = pool_roll([4, 4])
    roll["terms"][0]["results"][0]["result"] = 7
    with pytest.raises(RuleViolation) as refused:
        pool_dice(as_roll(roll), 2, D6, "John")
    assert refused.value.rule == "DP-3"


def test_a_roll_of_two_pools_is_refused() -> None:
    roll = pool_roll([4, 4])
    roll["terms"] = [roll["terms"][0], {"class": "OperatorTerm", "operator": "+"}, roll["terms"][0]]
    with pytest.raises(RuleViolation) as refused:
        pool_dice(as_roll(roll), 4, D6, "John")
    assert refused.value.rule == "DP-1" and "2 dice terms" in refused.value.message


def test_a_roll_without_dice_is_refused() -> None:
    with pytest.raises(RuleViolation):
        pool_dice(as_roll({"class": "Roll", "terms": [{"class": "NumericTerm", "number": 3}]}), 3, D6, "X")
