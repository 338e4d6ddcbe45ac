"""Property: any sequence of holds, step-ins and "next turn" keeps the plan honest.

After every message: Foundry's sort of the plan's numbers gives the plan's order; nobody
is lost or doubled; ``current`` is the one whose turn it is (every turn before it is over,
none after it, and it acts). Over the whole fight: nobody ends two turns of one round
having acted, and at every round's end each combatant has acted or is still holding.
A spy rule (added to a copy of the ruleset) logs the turn events into ``ctx.ext``, which
the engine keeps only for accepted messages and restores after its preview.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from adapter.engine.context import Ctx
from adapter.engine.events import RoundEnded, TurnEnded
from adapter.engine.holding import is_waiting
from adapter.engine.model import Combat
from adapter.engine.ruleset import SKIPPED_ACTS, chain
from adapter.errors import SidecarError
from adapter.rulesets.storyteller import RULESET
from tests.rulesets.storyteller.st_table import Table
from tests.support.examples import examples

SPY = "storyteller-spy"


def spy(ctx: Ctx, combat: Combat, event: TurnEnded | RoundEnded) -> Combat:
    """Log every turn that ended having acted, and who was still holding at each round end."""
    log: tuple[Any, ...] = ctx.ext.get("spy", ())
    if isinstance(event, TurnEnded) and not event.skipped:
        ctx.ext["spy"] = (*log, ("acted", combat.round, event.combatant_id))
    elif isinstance(event, RoundEnded):
        holders = frozenset(c.id for c in combat.combatants.values() if is_waiting(c))
        ctx.ext["spy"] = (*log, ("round_ended", event.round, holders))
    return combat


#: storyteller with the spy after its own rules (its hold/act mechanics keep their ST ids)
WITH_SPY = {SPY: replace(RULESET, id=SPY, on=chain(RULESET.on, {TurnEnded: (spy,), RoundEnded: (spy,)}))}

IDS = ["cmbAda", "cmbBo", "cmbCy", "cmbDee", "cmbEd"]

people = st.lists(
    st.tuples(st.integers(1, 15), st.integers(0, 4)), min_size=2, max_size=5
)
#: ("next",) | ("hold", who, args, aimed) | ("act", who, kind, anchor, aimed): an aimed step
#: picks among those it can apply to (most steps), the others may well be refused
act = st.tuples(st.just("act"), st.integers(0, 4), st.sampled_from(["after", "before", "now"]),
                st.integers(0, 4), st.integers(0, 3).map(bool))
step = st.one_of(
    st.tuples(st.just("next")),
    st.tuples(st.just("hold"), st.integers(0, 4), st.sampled_from([{}, {"next_round": True}]),
              st.booleans()),
    act,
    act,
)


def pick(pool: list[str], everyone: list[str], n: int, aimed: bool) -> str:
    chosen = pool if aimed and pool else everyone
    return chosen[n % len(chosen)]


def check_plan(t: Table) -> None:
    combat, plan = t.combat, t.plan
    order = t.order()
    assert t.reproduces(), (order, t.values())
    assert sorted(order) == sorted(combat.combatants) and len(set(order)) == len(order)
    assert plan["current"] == combat.current
    if combat.current is None:
        assert set(order) == combat.passed
        return
    at = order.index(combat.current)
    assert plan["turn"] == at
    assert set(order[:at]) == combat.passed, "every turn before the current one is over"
    assert t.entry(combat.current)["acts"] not in SKIPPED_ACTS


def check_turns(t: Table) -> None:
    log: Any = t.world.ext.get("spy", ())  # the spy's tuple, where a ruleset keeps its state
    acted = Counter((r, cid) for kind, r, cid in log if kind == "acted")
    assert max(acted.values(), default=0) <= 1, "nobody acts twice in a round"
    for kind, r, holders in log:
        if kind == "round_ended":
            for cid in t.combat.combatants:
                assert acted[(r, cid)] == 1 or cid in holders, f"{cid} lost in round {r}"


@settings(max_examples=examples(150), deadline=None)
@given(people=people, steps=st.lists(step, max_size=40))
def test_hold_and_act_keep_the_plan_honest(
    people: list[tuple[int, int]], steps: list[tuple[Any, ...]]
) -> None:
    ids = IDS[: len(people)]
    t = Table(SPY, WITH_SPY).setup(*[(cid, total, mod) for cid, (total, mod) in zip(ids, people)])
    check_plan(t)
    for s in steps:
        if s[0] == "next":
            t.next_turn()
        else:
            combat = t.combat
            if s[0] == "hold":
                waiting = [c for c in ids if c not in combat.passed]
                who, args = pick(waiting, ids, s[1], s[3]), s[2]
            else:
                holders = [c for c in ids if is_waiting(combat.combatants[c])]
                who = pick(holders, ids, s[1], s[4])
                anchors = [c for c in ids if c not in combat.passed and c != who
                           and not is_waiting(combat.combatants[c])]
                now = s[2] == "now"
                args = {"now": True} if now else {s[2]: pick(anchors, ids, s[3], s[4])}
            try:
                t.intent(s[0], who, **args)
            except SidecarError:
                pass  # a refusal: apply raised, the table kept its world
        check_plan(t)
        check_turns(t)
