"""Every refusal of the dice-pool ruleset: the rule id and path expected, and message, rule
id and path agreeing (issue 11)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from msgspec.structs import replace

from adapter.errors import SidecarError
from tests.rulesets.dice_pool.dp_table import PLAYER, SETTINGS, Table, pool_roll
from tests.rulesets.refusals import ADAPTER, assert_reaches, expect, raise_site

ANN, BOB, CID = "cmbAnn0000000001", "cmbBob0000000001", "cmbCid0000000001"
PACK = "grpPack000000001"
HUMAN = {"reaction": 3, "wits": 2}
Step = Callable[[Table], Any]


def table(stats: dict[str, Any] = HUMAN, settings: dict[str, Any] | None = None) -> Table:
    t = Table(settings=dict(settings or SETTINGS))
    t.create()
    t.add(ANN, "Ann", stats)
    t.add(BOB, "Bob", HUMAN)
    return t


def roll(cid: str, dice: list[int], **kw: Any) -> Step:
    return lambda t: t.roll(cid, dice, **kw)


def two_terms(t: Table) -> Any:
    r = pool_roll([6, 5, 4, 2, 2])
    r["terms"] = r["terms"] * 2
    return t.hook("initiativeRoll", {"combatant_id": ANN, "roll": r})


def grouped(t: Table) -> Table:
    t.group(PACK, "Pack")
    t.add(CID, "Cid", HUMAN, group=PACK)
    return t


def started(t: Table) -> Table:
    t.roll(ANN, [6, 5, 4, 2, 2])
    t.roll(BOB, [6, 1, 1, 2, 2])  # −1: hesitates in round 1
    t.start()
    return t


# id, the table, the refused step, rule, path
CASES: list[tuple[str, Callable[[], Table], Step, str, str | None]] = [
    ("a-missing-stat", lambda: table({"wits": 2}), roll(ANN, [6, 5]),
     "DP-1", "/combat/combatants/0/stats"),
    ("a-stat-that-is-not-whole", lambda: table({"reaction": "3", "wits": 2}), roll(ANN, [6, 5]),
     "DP-1", "/combat/combatants/0/stats/reaction"),
    ("a-modifier-that-is-not-whole", lambda: table({**HUMAN, "pool_modifier": 1.5}),
     roll(ANN, [6, 5]), "DP-7", "/combat/combatants/0/stats/pool_modifier"),
    ("a-group-without-members", lambda: _with_group(table()), lambda t: t.roll_group(PACK, [6]),
     "DP-6", "/roll/group_id"),
    ("two-dice-terms", table, two_terms, "DP-1", "/roll/roll/terms"),
    ("another-die-size", table, roll(ANN, [6, 5, 4, 2, 2], faces=10), "DP-3",
     "/roll/roll/terms/0/faces"),
    ("another-pool-size", table, roll(ANN, [6, 5, 4, 2]), "DP-1", "/roll/roll/terms/0/number"),
    ("a-die-showing-no-face", table, roll(ANN, [6, 5, 4, 2, 7]), "DP-3",
     "/roll/roll/terms/0/results"),
    ("settings-that-make-no-die", lambda: table(settings={**SETTINGS, "success_at": 9}),
     roll(ANN, [6, 5, 4, 2, 2]), "DP-3", None),
    ("a-member-rolling-alone", lambda: grouped(table()), roll(CID, [6, 5, 4, 2, 2]),
     "DP-6", "/roll/combatant_id"),
    ("a-second-roll-in-the-fight", lambda: started(table()), roll(ANN, [6, 6, 6, 6, 6]),
     "DP-5", "/roll"),
    ("a-hesitating-hold", lambda: started(table()), lambda t: t.intent("hold", BOB, {}, PLAYER),
     "DP-4", "/combatant_id"),
    ("stepping-in-without-holding", lambda: started(table()),
     lambda t: t.intent("act", ANN, {"now": True}, PLAYER), "DP-5", "/combatant_id"),
]


def _with_group(t: Table) -> Table:
    t.group(PACK, "Pack")
    t.hook("updateCombat")
    return t


def refuse(t: Table, step: Step) -> tuple[pytest.ExceptionInfo[SidecarError], dict[str, Any]]:
    before = t.world
    t.trace_raises = True
    with pytest.raises(SidecarError) as info:
        step(t)
    assert t.world == replace(before, last_seq=t.seq)  # the refusal used up its seq, nothing else
    return info, t.sent[-1]["data"]


@pytest.mark.parametrize(("setup", "step", "rule", "path"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_a_refusal_names_its_rule_and_path_and_they_agree_with_the_message(
    setup: Callable[[], Table], step: Step, rule: str, path: str | None,
) -> None:
    info, sent = refuse(setup(), step)
    expect(info, sent, "dice-pool", "rule_violation", rule, path)


def test_the_table_reaches_every_rule_violation_of_the_ruleset() -> None:
    hit = {raise_site(refuse(setup(), step)[0]) for _, setup, step, *_ in CASES}
    assert_reaches(hit, *(ADAPTER / "rulesets" / "dice_pool").glob("*.py"))
