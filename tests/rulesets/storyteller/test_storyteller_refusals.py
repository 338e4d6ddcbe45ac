"""Every refusal of the storyteller ruleset (and of the shared hold/act mechanics it is made
of): the rule id and path expected, and message, rule id and path agreeing (issue 11)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from adapter.errors import SidecarError
from tests.rulesets.refusals import ADAPTER, assert_reaches, expect, raise_site
from tests.rulesets.storyteller.st_table import GM, Table, owner

MITCH, LARRY, ZED = "cmbMitch00000001", "cmbLarry00000002", "cmbZed0000000003"
Setup = Callable[[], Table]


def fight() -> Table:
    return Table().setup((MITCH, 10, 5), (LARRY, 6, 3), (ZED, 2, 1))


def holds(*who: str, then: Callable[[Table], Any] | None = None) -> Setup:
    def setup() -> Table:
        t = fight()
        for cid in who:
            t.intent("hold", cid)
        if then is not None:
            then(t)
        return t
    return setup


def not_started() -> Table:
    t = Table()
    for cid, mod in ((MITCH, 5), (LARRY, 3)):
        t.add(cid, cid.title(), mod)
    t.hook("createCombat")
    t.roll(MITCH, 5, 5)
    return t


def gm_back_to(cid: str) -> Callable[[Table], Any]:
    def back(t: Table) -> None:
        t.pointer = cid
        t.hook("updateCombat")
    return back


def unrolled_joins(t: Table) -> None:
    t.add("cmbNew0000000004", "New", 0)
    t.hook("createCombatant")


# id, setup, (kind, combatant, user, args), code, rule, path
CASES: list[tuple[str, Setup, tuple[str, str, str, dict[str, Any]], str, str | None, str | None]] = [
    ("hold-defeated", holds(then=lambda t: t.defeat(LARRY)), ("hold", LARRY, GM, {}),
     "rule_violation", "ST-1", "/combatant_id"),
    ("target-aware-not-holding", fight, ("hold", LARRY, GM, {"target_aware": True}),
     "rule_violation", "ST-5", "/args/target_aware"),
    ("target-aware-by-a-player", holds(MITCH), ("hold", MITCH, owner(MITCH), {"target_aware": True}),
     "not_permitted", None, None),
    ("hold-twice", holds(MITCH), ("hold", MITCH, GM, {}), "rule_violation", "ST-1", "/combatant_id"),
    ("hold-twice-carried", holds(MITCH, then=lambda t: t.next_turn() and t.next_turn()),
     ("hold", MITCH, GM, {}), "rule_violation", "ST-5", "/combatant_id"),
    ("hold-before-the-start", not_started, ("hold", MITCH, GM, {}),
     "rule_violation", "ST-1", "/combat_id"),
    ("next-round-after-stepping-in",
     holds(MITCH, then=lambda t: t.intent("act", MITCH, after=LARRY)),
     ("hold", MITCH, GM, {"next_round": True}), "rule_violation", "ST-4", "/args/next_round"),
    ("hold-after-its-turn", holds(then=lambda t: t.next_turn()), ("hold", MITCH, GM, {}),
     "rule_violation", "ST-1", "/combatant_id"),
    ("next-round-after-its-turn", holds(then=lambda t: t.next_turn()),
     ("hold", MITCH, GM, {"next_round": True}), "rule_violation", "ST-4", "/combatant_id"),
    ("give-up-twice", holds(then=lambda t: t.intent("hold", LARRY, next_round=True)),
     ("hold", LARRY, GM, {"next_round": True}), "rule_violation", "ST-4", "/args/next_round"),
    ("act-defeated", holds(MITCH, then=lambda t: t.defeat(MITCH)), ("act", MITCH, GM, {"now": True}),
     "rule_violation", "ST-1", "/combatant_id"),
    ("act-while-giving-up", holds(then=lambda t: t.intent("hold", LARRY, next_round=True)),
     ("act", LARRY, GM, {"now": True}), "rule_violation", "ST-4", "/combatant_id"),
    ("act-without-holding", fight, ("act", LARRY, GM, {"now": True}),
     "rule_violation", "ST-1", "/combatant_id"),
    ("act-after-itself", holds(MITCH), ("act", MITCH, GM, {"after": MITCH}),
     "rule_violation", "ST-1", "/args/after"),
    ("act-before-itself", holds(MITCH), ("act", MITCH, GM, {"before": MITCH}),
     "rule_violation", "ST-2", "/args/before"),
    ("act-after-in-its-own-turn", holds(MITCH, then=gm_back_to(MITCH)),
     ("act", MITCH, GM, {"after": LARRY}), "rule_violation", "ST-1", "/args/after"),
    ("act-before-a-holder", holds(MITCH, LARRY), ("act", MITCH, GM, {"before": LARRY}),
     "rule_violation", "ST-2", "/args/before"),
    ("act-after-a-holder", holds(MITCH, LARRY), ("act", MITCH, GM, {"after": LARRY}),
     "rule_violation", "ST-1", "/args/after"),
    ("act-after-a-turn-that-is-over", holds(then=lambda t: t.next_turn() and t.intent("hold", ZED)),
     ("act", ZED, GM, {"after": MITCH}), "rule_violation", "ST-1", "/args/after"),
    ("act-before-a-turn-that-is-over", holds(then=lambda t: t.next_turn() and t.intent("hold", ZED)),
     ("act", ZED, GM, {"before": MITCH}), "rule_violation", "ST-2", "/args/before"),
    ("act-after-one-without-initiative", holds(MITCH, then=unrolled_joins),
     ("act", MITCH, GM, {"after": "cmbNew0000000004"}), "rule_violation", "ST-1", "/args/after"),
    ("an-intent-of-another-ruleset", fight, ("dash", MITCH, GM, {"amount": 2}),
     "rule_violation", "storyteller", "/kind"),
]


def refuse(t: Table, kind: str, cid: str, user: str, args: dict[str, Any]
           ) -> tuple[pytest.ExceptionInfo[SidecarError], dict[str, Any]]:
    t.trace_raises = True
    with pytest.raises(SidecarError) as info:
        t.intent(kind, cid, user, **args)
    return info, t.sent[-1]["data"]


@pytest.mark.parametrize(("setup", "sent", "code", "rule", "path"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_refusal_names_its_rule_and_path_and_they_agree_with_the_message(
    setup: Setup, sent: tuple[str, str, str, dict[str, Any]], code: str, rule: str | None,
    path: str | None,
) -> None:
    info, message = refuse(setup(), *sent)
    expect(info, message, "storyteller", code, rule, path)


def test_the_table_reaches_every_rule_violation_of_the_hold_mechanics() -> None:
    hit = {raise_site(refuse(setup(), *sent)[0]) for _, setup, sent, *_ in CASES}
    files = [*(ADAPTER / "engine" / "holding").glob("*.py"), ADAPTER / "engine" / "apply.py",
             *(ADAPTER / "rulesets" / "storyteller").glob("*.py")]
    assert_reaches(hit, *files)
