"""A combat's last plan is kept as JSON text (``Combat.last_plan``): what a plan may hold
must survive it, and a resent message gets back the plan it was sent."""

from __future__ import annotations

from msgspec.structs import replace

from tests.engine.first_contact import Contact, entries
from tests.foundry import combat, combatant

BIG = 10**20  # beyond 64 bits: a stat a player may type on the sheet (the schema bounds no stat)


def test_a_stat_beyond_64_bits_is_planned_and_resent_as_it_was() -> None:
    table = Contact("dice-pool")
    doc = combat("c1", [combatant("a" * 16, "A", stats={"reaction": float(BIG), "wits": 3, "size": 0}),
                        combatant("b" * 16, "B", stats={"reaction": 2, "wits": 2, "size": 0})])
    sent = table.meet(doc, None)
    assert sent.ack["ok"], sent.ack.get("error")
    [plan] = sent.ack["plans"]
    detail = entries(plan)["a" * 16]["detail"]
    # DP-1: Reaction + Wits + size, exact (as a float, 10**20 + 3 would be 1e20)
    assert detail["pool"] == BIG + 3 and type(detail["pool"]) is int
    resent = table.send_again()
    assert resent.ack["duplicate"] and resent.ack["plans"] == [plan]


def test_a_plan_whose_parts_are_those_of_last_time_is_found_unchanged_without_joining_its_text() -> None:
    from adapter.engine.model import Combat, Combatant
    from adapter.engine.plan import PlanMemo, plan_text
    from adapter.rulesets import RULESETS

    rs, memo = RULESETS["balanced-d20"], PlanMemo()
    ids = ["a" * 16, "b" * 16]
    fight = Combat(id="c1", ruleset="balanced-d20", round=1, order=tuple(ids), current=ids[0],
                   combatants={cid: Combatant(id=cid, score=float(10 - i)) for i, cid in enumerate(ids)})
    first = plan_text(memo.body(rs, fight, None, None), memo, fight.id)
    again = plan_text(memo.body(rs, fight, None, None), memo, fight.id)
    assert again is first  # compared by its entries, not joined and decoded again
    moved = plan_text(memo.body(rs, replace(fight, current=ids[1]), None, None), memo, fight.id)
    assert moved != first and '"turn":1' in moved
