"""Properties of random sessions under every ruleset, through the real pipeline and store.

A session: a roster (players' characters and NPCs, some in groups), rolls by the GM, owners
and strangers, then a random mix of "next turn", every intent of the protocol (each ruleset
refuses the ones it lacks), joiners, defeats, departures, GM edits and malformed messages.
After every message (checked by :class:`session_table.Table` and :func:`check_plan`):

1. a refused message changes nothing but ``last_seq`` (and never fails internally);
2. the initiative numbers written into the roster, sorted the way Foundry sorts (initiative
   descending, ties by ``_id``), give the plan's order; the same for the next round's;
3. nobody is current at two "next turn" presses of one round, and at a round's end everyone
   in the combat has taken its turn unless something took it away (the plan showed it
   skipped: defeated, holding, hesitating; or, in ``foundry-core``, Foundry's re-sort of a
   new score put it above the turn in progress; or it joined after the round was over);
4. when nothing but "next turn" comes after a plan, the next round starts as that plan's
   ``next_round`` said (round, current, order, numbers, acts);
5. at the end, replaying the stored log gives the same plans, and a restart rebuilds the
   same world from the store;
6. under ``dice-pool`` (DP-5), a round starts in the order the last one ended in, a
   group's members together (DP-6) and whoever stood between two of them right after the
   group (right before it, if it stepped in before a member), unless that round brought it
   a new score, a joiner, a departure, a temporary place that ends, or a place next to a
   group's member; chained step-ins and a holder still holding at the round's end keep
   their places (docs/rules.md, DP-5; the failing example that showed the group's rule is
   tests/rulesets/dice_pool/test_dice_pool_dp5_failure.py).

``--full`` runs the ``sessions-full`` hypothesis profile: 400 sessions per ruleset instead
of 30, and a failure shrunk to a minimal example (the CI profile reports it as found).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from adapter.engine.holding import ANY_POINT, is_waiting
from adapter.engine.model import Combat, Combatant
from tests.rulesets.session_table import COMBAT, GM, PLAYERS, ROLLS, Table, foundry_order
from tests.support.examples import examples

RULESETS = ("foundry-core", "balanced-d20", "dice-pool", "storyteller")
IDS = [f"cmb{c}00000000000{i}" for i, c in enumerate("ABCDEFGH")]
GROUPS = ("grpPack000000001", "grpPack000000002")
USERS = (GM, *PLAYERS, "strangerUser0001")

#: CI-sized; a failure is reported as found (shrinking a long session can take minutes)
settings.register_profile("sessions-ci", max_examples=examples(30), deadline=None,
                          phases=[Phase.explicit, Phase.reuse, Phase.generate],
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
#: more and longer-lived sessions, and a failure shrunk to a minimal example
settings.register_profile("sessions-full", max_examples=400, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

STATS = st.fixed_dictionaries({
    "dex": st.integers(-5, 4), "int": st.integers(-1, 6),
    "proficient": st.lists(st.sampled_from(["insight", "sleight_of_hand", "perception"]), unique=True),
    "reaction": st.integers(0, 4), "wits": st.integers(0, 4), "size": st.integers(-3, 2),
    "pool_modifier": st.integers(-2, 2), "initiative_mod": st.integers(0, 5),
})


# ---------------------------------------------------------------- drawing messages


def who(t: Table, data: st.DataObject, pool: list[str] | None = None) -> str:
    ids = t.ids()
    chosen = pool if pool and data.draw(st.integers(0, 3)) > 0 else ids
    return data.draw(st.sampled_from(chosen))


def user_for(t: Table, data: st.DataObject, cid: str | None, gm_only: bool = False) -> str:
    """Mostly the user the rules expect (a GM, or the owner), sometimes anyone."""
    if data.draw(st.integers(0, 4)) == 0:
        return data.draw(st.sampled_from(USERS))
    owners = t.person(cid)["owners"] if cid in t.ids() else []
    return GM if gm_only or not owners or data.draw(st.booleans()) else owners[0]


def draw_roll(t: Table, data: st.DataObject, cid: str, exact: bool = False) -> dict[str, Any]:
    if t.ruleset == "dice-pool":
        entry = next((e for e in t.plan["order"] if e["combatant_id"] == cid), None) if t.plan else None
        pool = entry["detail"].get("pool", 3) if entry else 3
        if not exact and data.draw(st.integers(0, 9)) == 0:
            pool += 1  # the wrong number of dice: refused (DP-1)
        return ROLLS["dice-pool"](data.draw(st.lists(st.integers(1, 6), min_size=pool, max_size=pool)), 0)
    die = data.draw(st.integers(1, 20 if t.ruleset != "storyteller" else 10))
    return ROLLS[t.ruleset](die, data.draw(st.integers(-1, 5)))


def roll_step(t: Table, data: st.DataObject) -> None:
    cid = who(t, data)
    group = t.person(cid)["group"]
    if group is not None and data.draw(st.integers(0, 3)) > 0:
        t.roll(group, draw_roll(t, data, cid), group=True, user=user_for(t, data, cid))
    else:
        t.roll(cid, draw_roll(t, data, cid), user=user_for(t, data, cid))


def join_step(t: Table, data: st.DataObject) -> None:
    free = [c for c in IDS if c not in t.joined]
    if not free:
        return
    cid = free[0]
    owner = data.draw(st.sampled_from([None, *PLAYERS]))
    group = data.draw(st.sampled_from([None, None, *(g["_id"] for g in t.groups)]))
    round_over = t.plan is not None and t.round > 0 and t.plan["current"] is None
    ack = t.add(cid, cid[3], data.draw(STATS), owner=owner, group=group)
    if ack["ok"] and round_over:
        t.excuse(cid)  # nobody is left to act this round: it acts from the next one
    if t.round > 0 and not rolled(t, cid):
        roll_in(t, data, cid)


def hold_step(t: Table, data: st.DataObject) -> None:
    c = t.world.combats[COMBAT]
    waiting = [x for x in t.ids() if x not in c.passed]
    cid = who(t, data, waiting)
    args = data.draw(st.sampled_from([{}, {}, {"next_round": True}, {"target_aware": True},
                                      {"target_aware": False}]))
    ack = t.intent("hold", args, user=user_for(t, data, cid, "target_aware" in args), cid=cid)
    if args.get("next_round"):
        t.resequence(ack, cid)  # ST-4: a temporary place, back to the old one after


def act_step(t: Table, data: st.DataObject) -> None:
    c = t.world.combats[COMBAT]
    holders = [x for x in t.ids() if x in c.combatants and is_waiting(c.combatants[x])]
    cid = who(t, data, holders)
    anchors = [x for x in t.ids() if x not in c.passed and x != cid
               and x in c.combatants and not is_waiting(c.combatants[x])]
    kind = data.draw(st.sampled_from(["after", "before", "now"]))
    args: dict[str, Any] = {"now": True} if kind == "now" else {kind: who(t, data, anchors)}
    held = c.combatants[cid].hold
    anchor = c.current if kind == "now" else args[kind]
    ack = t.intent("act", args, user=user_for(t, data, cid), cid=cid)
    if held is not None and held.state == ANY_POINT:
        t.resequence(ack, cid)  # ST-4/ST-5 ruling: it returns to its old score next round
    if anchor in t.ids() and t.person(anchor)["group"] is not None:
        t.resequence(ack, cid)  # DP-6 ruling: a place next to a member is next to the group


def prompt_id(t: Table, data: st.DataObject, kind: str) -> tuple[str, dict[str, Any]]:
    pending = [p for p in t.world.prompts.values() if p.kind == kind]
    if pending and data.draw(st.integers(0, 4)) > 0:
        p = data.draw(st.sampled_from(pending))
        return p.prompt_id, {"cid": p.combatant_id, **p.data}
    return f"prompt-{data.draw(st.integers(1, max(1, t.seq)))}.1", {}


def reroll_step(t: Table, data: st.DataObject) -> None:
    stage = data.draw(st.sampled_from(["reroll.decide", "reroll.approve", "roll"]))
    if stage == "roll":
        pid, info = prompt_id(t, data, "reroll.roll")
        cid = info.get("cid") or who(t, data)
        t.roll(cid, draw_roll(t, data, cid), user=user_for(t, data, cid),
               reroll_of=info.get("reroll_of", pid))
        return
    pid, info = prompt_id(t, data, "reroll" if stage == "reroll.decide" else "reroll.approval")
    key = "accept" if stage == "reroll.decide" else "approve"
    t.intent(stage, {"prompt_id": pid, key: data.draw(st.booleans())},
             user=user_for(t, data, info.get("cid"), stage == "reroll.approve"))


def readied_step(t: Table, data: st.DataObject) -> None:
    stage = data.draw(st.sampled_from(["readied.declare", "readied.trigger", "opposed.result",
                                       "reaction.use"]))
    if stage == "readied.declare":
        cid = t.pointer if t.pointer and data.draw(st.integers(0, 3)) > 0 else who(t, data)
        args = {"mode": data.draw(st.sampled_from(["standard", "preemptive"])), "trigger": "t",
                "action": "a", "target_id": who(t, data)}
        t.intent(stage, args, user=user_for(t, data, cid), cid=cid)
    elif stage == "readied.trigger":
        readied = data.draw(st.sampled_from(t.readied_ids or ["readied-1.1"]))
        cid = who(t, data)
        t.intent(stage, {"readied_id": readied}, user=user_for(t, data, cid), cid=cid)
    elif stage == "opposed.result":
        pid, _ = prompt_id(t, data, "opposed_check")
        t.intent(stage, {"prompt_id": pid, "actor_total": data.draw(st.integers(0, 20)),
                         "target_total": data.draw(st.integers(0, 20))},
                 user=user_for(t, data, None, True))
    else:
        cid = who(t, data)
        t.intent(stage, {}, user=user_for(t, data, cid), cid=cid)


def ready_step(t: Table, data: st.DataObject) -> None:
    cid = who(t, data)
    person = t.person(cid)
    kind = data.draw(st.sampled_from(["ready.start", "ready.confirm", "ready.break"]))
    args: dict[str, Any] = {"actor_id": person["actorId"]}
    if kind == "ready.start":
        watched = data.draw(st.lists(st.sampled_from(t.ids()), max_size=2))
        args.update(token_id=person["tokenId"], owners=person["owners"], sees=True,
                    weapon_ready=True, watching=[t.person(w)["tokenId"] for w in watched])
    elif kind == "ready.break":
        args["reason"] = "whispers"
    t.intent(kind, args, user=user_for(t, data, cid, kind == "ready.confirm"), in_combat=False)
    if kind == "ready.start" and data.draw(st.booleans()):
        t.time += 6  # the world clock moves on while it watches


def other_step(t: Table, data: st.DataObject) -> None:
    kind = data.draw(st.sampled_from(["set", "dash", "defeat", "leave", "malformed"]))
    cid = who(t, data)
    if kind == "set":
        t.set_initiative(cid, data.draw(st.integers(-3, 25)), user=user_for(t, data, cid, True))
    elif kind == "dash":
        t.intent("dash", {"amount": data.draw(st.integers(-1, 10))}, user=user_for(t, data, cid), cid=cid)
    elif kind == "defeat":
        t.defeat(cid, not t.person(cid)["is_defeated"])
    elif kind == "leave" and len(t.roster) > 2:
        t.remove(cid)
    elif kind == "malformed":
        t.intent("dash", {"amount": "five"}, cid=cid)  # refused by the schema


STEPS = {
    "foundry-core": [roll_step, other_step, join_step],
    "balanced-d20": [roll_step, other_step, join_step, reroll_step, reroll_step, readied_step,
                     readied_step, ready_step],
    "dice-pool": [roll_step, other_step, join_step, hold_step, hold_step, act_step, act_step],
    "storyteller": [roll_step, other_step, join_step, hold_step, hold_step, act_step, act_step],
}
#: a step that is some ruleset's intent, sent to every ruleset (the others refuse it)
FOREIGN = [hold_step, act_step, reroll_step, readied_step, ready_step]


# ---------------------------------------------------------------- the properties


def check_plan(t: Table) -> None:
    """Property 2: Foundry's sort of the written numbers is the plan's order (and the next
    round's); the plan lists the whole roster once."""
    plan = t.plan
    if plan is None:
        return
    order = [e["combatant_id"] for e in plan["order"]]
    assert sorted(order) == sorted(t.ids()), (order, t.ids())
    assert foundry_order(t.roster) == order, [(e["combatant_id"], e["initiative"]) for e in plan["order"]]
    assert plan["turn"] == (order.index(plan["current"]) if plan["current"] is not None else None)
    upcoming = plan["next_round"]
    if upcoming is not None:
        up = [{"_id": e["combatant_id"], "initiative": e["initiative"]} for e in upcoming["order"]]
        assert foundry_order(up) == [e["combatant_id"] for e in upcoming["order"]]


def check_turns(t: Table, round_ended: int, present: set[str]) -> None:
    """Property 3 at the end of a round: one turn each, unless something took it away."""
    for cid in present:
        taken = t.taken[(round_ended, cid)]
        assert taken <= 1 or (round_ended, cid) in t.repeats, f"{cid} took {taken} turns in round {round_ended}"
        assert taken == 1 or (round_ended, cid) in t.excused, f"{cid} lost its turn in round {round_ended}"


def check_sequence(t: Table, round_ended: int, order: list[str], ended: Combat) -> None:
    """Property 6, DP-5 "Данная последовательность действий сохраняется до конца боя, если не
    заявляется действий, напрямую влияющих на инициативу": under ``dice-pool`` a round starts
    in the order the last one ended in (``order``; ``ended``: the combat then), a place taken
    by stepping in included, but for a group's members (DP-6 ruling): they act together, and
    whoever stood between two of them goes right after the group, or right before it if it
    stepped in before a member (:func:`ruled_order`; chained step-ins and a holder still
    holding when the round ends are no exception: docs/rules.md, DP-5). Compared pair by
    pair, leaving out whoever that round gave a new score, a roster change in its group, a
    temporary place (ST-4/ST-5 rulings) that ends, or a place next to a group's member."""
    if t.ruleset != "dice-pool":
        return
    kept = [c for c in ruled_order(ended, order) if (round_ended, c) not in t.resequenced]
    now = [c for c in plan_order(t) if c in kept]
    assert now == [c for c in kept if c in now], f"round {t.round} does not keep round {round_ended}'s order"
    t.sequences_checked += len(now) > 1


def ruled_order(ended: Combat, order: list[str]) -> list[str]:
    """``order`` with each group's members who keep its place (not apart, as the round ended)
    together at the first one's place, in Foundry's order (``_id``), DP-6; whoever stood
    between two of them right after them, or right before them if its own step-in (as the
    round ended) was before one of them (docs/rules.md, DP-5: between a group's members)."""
    combatants = ended.combatants
    for gid in ended.groups:
        block = [cid for cid in order if cid in combatants and combatants[cid].group == gid
                 and not getattr(combatants[cid].ext, "apart", False)]
        if len(block) < 2:
            continue
        first, last = order.index(block[0]), order.index(block[-1])
        between = [cid for cid in order[first:last + 1] if cid not in block]
        ahead = [cid for cid in between if cid in combatants and _stepped_in_before(combatants[cid], block)]
        order = (order[:first] + ahead + sorted(block) + [c for c in between if c not in ahead]
                 + order[last + 1:])
    return order


def _stepped_in_before(c: Combatant, block: list[str]) -> bool:
    """Its place as the round ended is a step-in before one of ``block`` (still holding
    there, or stepped in)."""
    held = c.hold
    return held is not None and held.point is not None and held.point[0] == "before" and held.point[1] in block


def plan_order(t: Table) -> list[str]:
    return [e["combatant_id"] for e in t.plan["order"]] if t.plan else []


def play(ruleset: str, data: st.DataObject) -> Table:
    t = Table(ruleset, data.draw(st.sampled_from([{}, {"auto_approve_rerolls": True}])),
              snapshot_every=data.draw(st.sampled_from([1, 7, 1000])))
    grouped = data.draw(st.booleans())
    if grouped:
        t.group(GROUPS[0])
    for i in range(data.draw(st.integers(2, 5))):
        group = GROUPS[0] if grouped and data.draw(st.booleans()) else None
        t.add(IDS[i], IDS[i][3], data.draw(STATS), owner=data.draw(st.sampled_from([None, *PLAYERS])),
              group=group)
    for cid in t.ids():
        if data.draw(st.integers(0, 5)) > 0 and not rolled(t, cid):
            roll_in(t, data, cid)
    check_plan(t)
    for _ in range(data.draw(st.integers(5, 80))):
        if t.round == 0 and data.draw(st.integers(0, 3)) == 0:
            for cid in t.ids():
                if not rolled(t, cid):
                    roll_in(t, data, cid)
            t.start()
        elif t.round > 0 and data.draw(st.integers(0, 2)) == 0:
            ending, present, order = t.round, set(t.ids()), plan_order(t)
            ended = t.world.combats[COMBAT]  # groups, apart flags and step-ins as it ends
            t.next_turn()
            if t.round > ending:
                check_turns(t, ending, present)
                check_sequence(t, ending, order, ended)
        else:
            pool = STEPS[ruleset] if data.draw(st.integers(0, 9)) else FOREIGN
            data.draw(st.sampled_from(pool))(t, data)
        check_plan(t)
    return t


def rolled(t: Table, cid: str) -> bool:
    return t.world.combats[COMBAT].combatants[cid].score is not None


def roll_in(t: Table, data: st.DataObject, cid: str) -> None:
    """The GM rolls for a combatant without an initiative (for its group, if it has one that
    has not rolled). Everyone has an initiative once the combat runs: Foundry sorts a null
    initiative last, so an unrolled combatant whose turn has come could not be shown."""
    group = t.person(cid)["group"]
    if group is not None and t.ruleset == "dice-pool":  # DP-6: the group rolls
        ack = t.roll(group, draw_roll(t, data, cid, exact=True), group=True)
    else:
        ack = t.roll(cid, draw_roll(t, data, cid, exact=True))
    assert ack["ok"], ack


def check_store(t: Table) -> None:
    """Property 5: the stored log replays to the same plans; a restart rebuilds the world."""
    assert t.replayed_plans() == t.plans
    assert t.restored() == t.world


@pytest.mark.parametrize("ruleset", RULESETS)
def test_random_sessions_keep_the_properties(ruleset: str, request: pytest.FixtureRequest) -> None:
    profile = settings.get_profile("sessions-full" if request.config.getoption("--full") else "sessions-ci")

    @settings(profile)
    @given(data=st.data())
    def session(data: st.DataObject) -> None:
        t = play(ruleset, data)
        check_store(t)
        event(f"rounds played: {min(t.round, 3)}{'+' if t.round > 3 else ''}")
        event(f"round starts checked against their preview: {min(t.previews_checked, 2)}+")
        event(f"refusals: {'some' if t.refusals else 'none'}")
        if ruleset == "dice-pool":
            event(f"round starts checked against the last round's end (DP-5): {min(t.sequences_checked, 2)}+")

    session()
