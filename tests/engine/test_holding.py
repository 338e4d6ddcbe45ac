"""The shared hold/act mechanics (adapter.engine.holding), under a minimal test ruleset.

The ruleset ``hold-test`` is Foundry's roll plus the shared mechanics and nothing else, so
these tests pin the mechanics themselves; the storyteller tests pin the ST rules on top.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from adapter.engine.events import Rolled
from adapter.engine.holding import (
    ANY_POINT,
    HOLDING,
    STEPPED_IN,
    Hold,
    HoldMechanics,
    HoldRuleIds,
    hold_entry,
)
from adapter.engine.messages import Hold as HoldIntent
from adapter.engine.model import Combat, Combatant
from adapter.engine.ruleset import Entry, Ruleset, chain, describe_plain
from adapter.errors import InvalidMessage, NotPermitted, RuleViolation, SidecarError, UnknownCombatant
from adapter.rulesets import RULESETS
from adapter.rulesets.foundry_core import initiative_roll
from tests.foundry import combatant, foundry_sort, total_roll
from tests.support.table import Table as OneTable


def _by_score_then_mod(combat: Combat) -> Callable[[Combatant], Sequence[float]]:
    return lambda c: (c.score if c.score is not None else 0.0, float(c.stats.get("mod", 0)))


def hold_test(ruleset_id: str, ids: HoldRuleIds) -> Ruleset:
    """Foundry's roll plus the shared mechanics, reporting under ``ids``."""
    mechanics = HoldMechanics(ids)
    return Ruleset(
        id=ruleset_id,
        on=chain({Rolled: (initiative_roll,)}, mechanics.on),
        intents=mechanics.intents,
        sort_key=_by_score_then_mod,
        describe=lambda combat, c: hold_entry(combat, c, describe_plain(combat, c), ids),
    )


HOLD_TESTS = {
    "hold-test": hold_test("hold-test", HoldRuleIds.single("hold-test")),
    "hold-test-x1": hold_test("hold-test-x1", HoldRuleIds.single("X-1")),
}


class Table(OneTable):
    """A GM's table under a hold ruleset (the one test table, ``tests/support/table.py``)."""

    def __init__(self, ruleset: str, people: dict[str, tuple[float, float]]) -> None:
        super().__init__(ruleset, world="w", gm="gm", combat_id="c1", rulesets=HOLD_TESTS)
        for cid, (_, m) in people.items():
            self.at.roster.append(combatant(cid, cid.title(), owners=(f"p-{cid}",),
                                            stats={"mod": m, "initiative_mod": m}))
        self.hook("createCombat")
        for cid, (score, _) in people.items():
            self.send(self.roll_message(total_roll(score), cid=cid))

    def intent(self, kind: str, cid: str | None, user: str = "gm", **args: Any) -> dict[str, Any]:
        return self.ask(kind, cid, args, user=user)

    def refused(self, kind: str, cid: str | None, user: str = "gm", **args: Any) -> SidecarError:
        """The intent must be refused (the table checks the world did not change)."""
        with pytest.raises(SidecarError) as info:
            self.intent(kind, cid, user, **args)
        return info.value

    @property
    def combat(self) -> Combat:
        return self.world.combats["c1"]

    def rows(self) -> list[tuple[str, float | None, str]]:
        """The plan's order as (combatant, initiative, acts)."""
        return [(e["combatant_id"], e["initiative"], e["acts"]) for e in self.plan["order"]]

    def check_foundry_sort(self) -> None:
        values = {e["combatant_id"]: e["initiative"] for e in self.plan["order"]}
        assert foundry_sort(values) == [e["combatant_id"] for e in self.plan["order"]]


def table(**people: tuple[float, float]) -> Table:
    return Table("hold-test", people)


def test_hold_on_its_turn_passes_the_turn_and_shows_held() -> None:
    t = table(mitch=(10, 0), larry=(6, 0))
    t.start()
    assert t.plan["current"] == "mitch"
    t.intent("hold", "mitch")
    assert t.plan["current"] == "larry"
    assert t.rows() == [("mitch", 10.0, "held"), ("larry", 6.0, "full")]
    entry = t.plan["order"][0]
    assert entry["tags"] == ["held"] and entry["rules"] == ["hold-test"]
    assert entry["detail"] == {"held_since": 1}


def test_hold_before_its_turn_keeps_the_place_and_the_turn_is_passed_over() -> None:
    t = table(a=(15, 0), b=(10, 0), c=(5, 0))
    t.start()
    t.intent("hold", "b", user="p-b")
    assert t.plan["current"] == "a"
    t.next_turn()
    assert t.plan["current"] == "c"
    assert t.combat.combatants["b"].hold == Hold(HOLDING, since=1)


def test_a_hold_when_nobody_else_is_left_ends_the_round() -> None:
    t = table(a=(15, 0), b=(10, 0))
    t.start()
    t.next_turn()
    t.intent("hold", "b")
    assert t.plan["current"] is None and t.plan["turn"] is None
    assert t.plan["next_round"]["current"] == "a"


def test_act_after_the_current_combatant_takes_its_score_minus_one_and_follows_it() -> None:
    t = table(mitch=(10, 0), larry=(6, 0), zed=(2, 0))
    t.start()
    t.intent("hold", "mitch")
    t.intent("act", "mitch", after="larry")
    assert t.rows() == [("larry", 6.0, "full"), ("mitch", 5.0, "full"), ("zed", 2.0, "full")]
    assert t.plan["current"] == "larry"
    t.next_turn()
    assert t.plan["current"] == "mitch"
    t.next_turn()
    assert t.plan["current"] == "zed"


def test_act_before_the_current_combatant_interrupts_it_and_its_turn_follows() -> None:
    t = table(mitch=(10, 0), larry=(6, 0))
    t.start()
    t.intent("hold", "mitch")
    t.intent("act", "mitch", before="larry")
    assert t.rows() == [("mitch", 7.0, "full"), ("larry", 6.0, "full")]
    assert t.plan["current"] == "mitch" and t.plan["turn"] == 0
    t.next_turn()
    assert t.plan["current"] == "larry"


def test_act_before_a_waiting_combatant_goes_right_before_it() -> None:
    t = table(a=(15, 0), b=(10, 0), c=(5, 0))
    t.start()
    t.intent("hold", "a")
    t.intent("act", "a", before="c")
    assert t.rows() == [("b", 10.0, "full"), ("a", 6.0, "full"), ("c", 5.0, "full")]
    assert t.plan["current"] == "b"


def test_act_now_steps_in_right_after_the_turn_in_progress() -> None:
    t = table(a=(15, 0), b=(10, 0), c=(5, 0))
    t.start()
    t.intent("hold", "a")
    t.intent("act", "a", now=True)
    assert [cid for cid, _, _ in t.rows()] == ["b", "a", "c"]
    assert t.combat.combatants["a"].score == 9


def test_act_now_with_no_turn_in_progress_begins_at_once() -> None:
    t = table(a=(15, 0), b=(10, 0))
    t.start()
    t.next_turn()
    t.intent("hold", "b")
    assert t.plan["current"] is None
    t.intent("act", "b", now=True)
    assert t.plan["current"] == "b"
    assert t.rows() == [("a", 15.0, "full"), ("b", 14.0, "full")]


def test_holders_stepping_in_at_one_point_are_ordered_by_the_tie_rule() -> None:
    t = table(x=(20, 0), slow=(18, 1), quick=(16, 3), larry=(6, 0))
    t.start()
    t.intent("hold", "slow")
    t.intent("hold", "quick")
    t.intent("act", "slow", after="larry")
    t.intent("act", "quick", after="larry")  # higher modifier: goes first at that point
    assert [cid for cid, _, _ in t.rows()] == ["x", "larry", "quick", "slow"]
    t.check_foundry_sort()


def test_interrupts_before_one_combatant_are_ordered_by_the_tie_rule() -> None:
    t = table(x=(20, 0), b=(18, 2), a=(16, 2), larry=(6, 0))
    t.start()
    t.intent("hold", "b")
    t.intent("hold", "a")
    t.intent("act", "b", before="larry")
    t.intent("act", "a", before="larry")  # equal modifier: Foundry's order (_id) decides
    assert [cid for cid, _, _ in t.rows()] == ["x", "a", "b", "larry"]
    t.check_foundry_sort()


def test_interrupts_of_the_current_combatant_share_the_moment_until_the_pointer_moves() -> None:
    t = table(b=(18, 2), a=(16, 5), c=(14, 1), larry=(6, 0))
    t.start()
    for who in ("b", "a", "c"):
        t.intent("hold", who)
    assert t.plan["current"] == "larry"
    t.intent("act", "b", before="larry")
    t.intent("act", "a", before="larry")  # higher modifier: takes the turn from b
    assert [cid for cid, _, _ in t.rows()] == ["c", "a", "b", "larry"]  # c still holds
    assert t.plan["current"] == "a"
    t.next_turn()  # a's turn ends: the moment is closed
    assert t.plan["current"] == "b"
    t.intent("act", "c", before="larry")  # a new moment: after b, whose turn has begun
    assert [cid for cid, _, _ in t.rows()] == ["a", "b", "c", "larry"]
    assert t.plan["current"] == "b"
    t.check_foundry_sort()


def test_placement_wins_over_arithmetic() -> None:
    t = table(mitch=(10, 0), larry=(6, 0), bob=(5, 9))
    t.start()
    t.intent("hold", "mitch")
    t.intent("act", "mitch", after="larry")  # 5, like bob, and bob would win the tie
    assert [cid for cid, _, _ in t.rows()] == ["larry", "mitch", "bob"]
    t.check_foundry_sort()


def test_a_hold_used_in_its_round_keeps_the_new_score_next_round() -> None:
    t = table(mitch=(10, 0), larry=(6, 0))
    t.start()
    t.intent("hold", "mitch")
    t.intent("act", "mitch", after="larry")
    t.next_turn()
    t.next_turn()
    assert t.plan["round"] == 2
    assert t.rows() == [("larry", 6.0, "full"), ("mitch", 5.0, "full")]
    assert t.combat.combatants["mitch"].hold is None


def test_an_unused_hold_carries_over_and_returns_to_the_original_score_after_use() -> None:
    t = table(a=(12, 0), b=(8, 0))
    t.start()
    t.next_turn()
    out = t.intent("hold", "b")
    assert t.plan["current"] is None
    out = t.next_turn()
    assert [n["kind"] for n in out["notices"]] == ["hold.carried_over"]
    assert t.plan["round"] == 2 and t.plan["current"] == "a"
    assert t.combat.combatants["b"].hold == Hold(ANY_POINT, since=1, original=8)
    entry = t.plan["order"][1]
    assert entry["acts"] == "held" and entry["tags"] == ["held", "any_point"]
    t.intent("act", "b", before="a")
    assert t.rows() == [("b", 13.0, "full"), ("a", 12.0, "full")]
    assert t.plan["current"] == "b"
    upcoming = t.plan["next_round"]["order"][1]
    assert upcoming == {"combatant_id": "b", "initiative": 8.0, "acts": "full"}
    t.next_turn()
    t.next_turn()
    assert t.plan["round"] == 3
    assert t.rows() == [("a", 12.0, "full"), ("b", 8.0, "full")]


def test_hold_next_round_moves_only_then_acts_anywhere_then_returns() -> None:
    t = table(a=(12, 0), b=(8, 0))
    t.start()
    t.intent("hold", "b", next_round=True)
    assert t.rows() == [("a", 12.0, "full"), ("b", 8.0, "movement_only")]
    assert t.plan["order"][1]["tags"] == ["gave_up_action"]
    err = t.refused("act", "b", now=True)
    assert isinstance(err, RuleViolation)
    t.next_turn()
    assert t.plan["current"] == "b"  # its movement
    t.next_turn()
    assert t.plan["round"] == 2
    assert t.plan["order"][1]["acts"] == "held"
    t.intent("act", "b", before="a")
    assert t.plan["current"] == "b"
    t.next_turn()
    t.next_turn()
    assert t.rows() == [("a", 12.0, "full"), ("b", 8.0, "full")]


def test_target_aware_is_a_gm_tag_on_a_waiting_combatant() -> None:
    t = table(a=(12, 0), b=(8, 0))
    t.start()
    t.intent("hold", "b", user="p-b")
    err = t.refused("hold", "b", user="p-b", target_aware=True)
    assert isinstance(err, NotPermitted)
    t.intent("hold", "b", target_aware=True)
    assert t.plan["order"][1]["tags"] == ["held", "target_aware"]


def test_a_gm_number_for_a_stepped_in_combatant_stays() -> None:
    t = table(a=(12, 0), b=(8, 0))
    t.start()
    t.next_turn()
    t.intent("hold", "b")
    t.next_turn()
    t.intent("act", "b", before="a")
    t.intent("initiative.set", "b", value=20)
    t.next_turn()
    t.next_turn()
    assert t.rows()[0] == ("b", 20.0, "full")


@pytest.mark.parametrize(
    ("setup", "kind", "cid", "user", "args", "error", "path"),
    [
        ([], "act", "a", "gm", {"now": True}, RuleViolation, "/combatant_id"),
        ([("hold", "b")], "act", "b", "gm", {"after": "ghost"}, UnknownCombatant, "/args/after"),
        ([], "hold", "b", "p-a", {}, NotPermitted, None),
        ([("hold", "b")], "act", "b", "p-a", {"now": True}, NotPermitted, None),
        ([("hold", "b")], "act", "b", "gm", {"after": "b"}, RuleViolation, "/args/after"),
        ([("hold", "b")], "act", "b", "gm", {}, InvalidMessage, "/args"),
        ([("hold", "b")], "act", "b", "gm", {"now": True, "after": "a"}, InvalidMessage, "/args"),
        ([("hold", "b")], "hold", "b", "gm", {}, RuleViolation, "/combatant_id"),
        (
            [("hold", "b"), ("hold", "c")], "act", "b", "gm", {"after": "c"},
            RuleViolation, "/args/after",
        ),
    ],
)
def test_refusals_change_nothing(
    setup: list[tuple[str, str]], kind: str, cid: str, user: str, args: dict[str, Any],
    error: type[Exception], path: str | None,
) -> None:
    t = table(a=(15, 0), b=(10, 0), c=(5, 0))
    t.start()
    for k, who in setup:
        t.intent(k, who)
    err = t.refused(kind, cid, user, **args)
    assert type(err) is error
    if path is not None:
        assert err.path == path


def test_after_or_before_a_combatant_whose_turn_is_over_is_refused() -> None:
    t = table(a=(15, 0), b=(10, 0), c=(5, 0))
    t.start()
    t.next_turn()
    t.intent("hold", "b")
    for kind in ("after", "before"):
        err = t.refused("act", "b", **{kind: "a"})
        assert isinstance(err, RuleViolation) and "is over" in str(err)


def test_a_hold_after_its_turn_or_before_the_start_is_refused() -> None:
    t = table(a=(15, 0), b=(10, 0))
    assert isinstance(t.refused("hold", "a"), RuleViolation)
    t.start()
    t.next_turn()
    err = t.refused("hold", "a", next_round=True)
    assert isinstance(err, RuleViolation) and err.rule == "hold-test"


def test_rule_ids_travel_with_the_ruleset() -> None:
    from adapter.rulesets.dice_pool.delay import HOLD as DICE_POOL
    from adapter.rulesets.storyteller import HOLD as STORYTELLER

    assert STORYTELLER.ids == HoldRuleIds("ST-1", "ST-2", "ST-3", "ST-4", "ST-5")
    assert DICE_POOL.ids == HoldRuleIds.single("DP-5")
    assert RULESETS["storyteller"].intents[HoldIntent] == STORYTELLER.hold  # the same bound method


def test_the_same_mechanics_refuse_under_the_ids_their_ruleset_gives() -> None:
    t = Table("hold-test-x1", {"a": (15, 0), "b": (10, 0)})
    t.start()
    t.next_turn()
    err = t.refused("hold", "a", next_round=True)
    assert isinstance(err, RuleViolation) and err.rule == "X-1"


def test_hold_state_pickles_and_an_entry_without_hold_is_untouched() -> None:
    held = Hold(STEPPED_IN, since=2, original=8.0, point=("before", "a"))
    assert pickle.loads(pickle.dumps(held)) == held
    combat = Combat(id="c", ruleset="hold-test")
    entry = Entry(acts="defend_only", tags=("x",))
    ids = HoldRuleIds.single("hold-test")
    assert hold_entry(combat, Combatant(id="a"), entry, ids) is entry
    merged = hold_entry(combat, Combatant(id="a", hold=held), entry, ids)
    assert merged.detail == {"stepped_in": {"before": "a"}, "returns_to": 8.0}
