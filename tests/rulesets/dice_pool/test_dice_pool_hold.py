"""DP-5 delay and waiting: the engine's shared hold/act mechanics under dice-pool."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from adapter.errors import NotPermitted, RuleViolation, SidecarError
from tests.foundry import foundry_sort
from tests.rulesets.dice_pool.dp_table import PLAYER, Table

ANN, BOB, CID, DEB = "cmbAnn0000000001", "cmbBob0000000001", "cmbCid0000000001", "cmbDeb0000000001"
HUMAN = {"reaction": 3, "wits": 2}


def fight() -> Table:
    """Ann 3 successes, Bob 2, Cid 1, Deb −1 (defend only for a turn); round 1, Ann's turn."""
    t = Table()
    t.create()
    for cid, name in ((ANN, "Ann"), (BOB, "Bob"), (CID, "Cid"), (DEB, "Deb")):
        t.add(cid, name, HUMAN)
    t.roll(ANN, [6, 5, 4, 2, 2])
    t.roll(BOB, [6, 5, 3, 2, 2])
    t.roll(CID, [6, 2, 3, 2, 2])
    t.roll(DEB, [6, 1, 1, 2, 2])
    t.start()
    return t


def reproduces(t: Table) -> bool:
    values = {e["combatant_id"]: e["initiative"] for e in t.plan["order"]}
    return foundry_sort(values) == t.order()


def refused(t: Table, kind: str, cid: str, args: dict[str, object], user: str) -> SidecarError:
    before = t.world
    with pytest.raises(SidecarError) as error:
        t.intent(kind, cid, args, user=user)
    assert t.world == replace(before, last_seq=t.seq)  # the refusal used up its seq, nothing else
    return error.value


def test_DP_5_a_holder_keeps_its_place_and_steps_in_after_another() -> None:
    t = fight()
    assert t.plan["current"] == ANN
    t.intent("hold", ANN, {}, user=PLAYER)
    assert (t.plan["current"], t.entry(ANN)["acts"]) == (BOB, "held")
    assert "DP-5" in t.entry(ANN)["rules"] and t.order() == [ANN, BOB, CID, DEB]
    t.intent("act", ANN, {"after": BOB}, user=PLAYER)
    assert t.order() == [BOB, ANN, CID, DEB]
    assert t.entry(ANN)["initiative"] // 1 == 1  # Bob's 2 successes − 1
    assert reproduces(t)
    t.next_turn()
    assert t.plan["current"] == ANN
    t.next_round()  # the new place stays for the fight (storyteller ST-1 ruling)
    assert t.order() == [BOB, ANN, CID, DEB] and t.plan["current"] == BOB
    assert reproduces(t)


def test_DP_5_a_readied_interrupt_goes_right_before_its_target() -> None:
    t = fight()
    t.intent("hold", ANN, {}, user=PLAYER)
    t.intent("act", ANN, {"before": CID}, user=PLAYER)
    assert t.order() == [BOB, ANN, CID, DEB]
    assert t.entry(ANN)["initiative"] // 1 == 2  # Cid's 1 success + 1
    assert reproduces(t)


def test_DP_5_an_unused_hold_carries_over_then_returns_to_the_net_successes() -> None:
    t = fight()
    t.intent("hold", ANN, {}, user=PLAYER)
    t.next_turn()  # Bob
    t.next_turn()  # Cid; Deb defends only: round 2
    assert t.plan["round"] == 2 and t.entry(ANN)["acts"] == "held"
    assert "any_point" in t.entry(ANN)["tags"]
    assert t.plan["current"] == BOB
    t.intent("act", ANN, {"before": DEB}, user=PLAYER)
    assert t.order() == [BOB, CID, ANN, DEB] and reproduces(t)
    t.next_round()
    assert t.order() == [ANN, BOB, CID, DEB]
    assert t.entry(ANN)["initiative"] // 1 == 3


def test_DP_4_a_hesitating_combatant_has_no_action_to_delay() -> None:
    t = fight()
    error = refused(t, "hold", DEB, {}, user=PLAYER)
    assert isinstance(error, RuleViolation) and error.rule == "DP-4"
    t.next_turn()
    t.next_turn()
    t.next_turn()  # round 2: Deb acts again, and may hold
    assert t.plan["round"] == 2
    t.intent("hold", DEB, {}, user=PLAYER)
    assert t.entry(DEB)["acts"] == "held"


def test_DP_4_a_lost_turn_keeps_the_hesitation_until_its_round_ends() -> None:
    t = Table()
    t.create()
    t.add(ANN, "Ann", HUMAN)
    t.add(BOB, "Bob", HUMAN)
    t.add(CID, "Cid", HUMAN)
    t.roll(ANN, [6, 6, 2, 2, 2])  # 2
    t.roll(BOB, [4, 3, 1, 2, 1])  # −1: defends only for one turn
    t.roll(CID, [3, 2, 3, 1, 1])  # −2, critical: nothing for two turns
    t.start()
    t.intent("hold", ANN, {}, user=PLAYER)  # nobody else acts: Bob's and Cid's turns pass
    assert t.plan["current"] is None
    for cid, acts, lost in ((BOB, "defend_only", 0), (CID, "none", 1)):
        entry = t.entry(cid)
        assert (entry["acts"], entry["detail"]["turns_lost"]) == (acts, lost)
        assert "hesitating" in entry["tags"]
    error = refused(t, "hold", BOB, {}, user=PLAYER)
    assert error.rule == "DP-4"
    t.intent("act", ANN, {"now": True}, user=PLAYER)
    plan = t.plan
    assert (plan["current"], t.order()) == (ANN, [BOB, CID, ANN])
    assert t.entry(BOB)["acts"] == "defend_only" and reproduces(t)
    upcoming = {e["combatant_id"]: e["acts"] for e in t.plan["next_round"]["order"]}
    assert upcoming == {ANN: "full", BOB: "full", CID: "none"}


def test_DP_4_the_refusal_counts_this_rounds_lost_turn_as_this_rounds() -> None:
    t = Table()
    t.create()
    t.add(ANN, "Ann", HUMAN)
    t.add(BOB, "Bob", HUMAN)
    t.add(CID, "Cid", HUMAN)
    t.roll(ANN, [6, 6, 2, 2, 2])  # 2
    t.roll(BOB, [4, 3, 1, 2, 1])  # −1: loses round 1's active phase, nothing after
    t.roll(CID, [3, 2, 3, 1, 1])  # −2, critical: loses rounds 1 and 2
    t.start()
    bob = refused(t, "hold", BOB, {}, user=PLAYER)
    assert "its turn in round 1" in bob.message and "more" not in bob.message
    cid = refused(t, "hold", CID, {}, user=PLAYER)
    assert "its turn in round 1 and 1 more after it" in cid.message
    t.next_turn()  # Bob's and Cid's round-1 turns pass
    t.next_turn()
    assert t.plan["round"] == 2
    cid = refused(t, "hold", CID, {}, user=PLAYER)
    assert "its turn in round 2" in cid.message and "more" not in cid.message
    assert all(e.rule == "DP-4" and e.path == "/combatant_id" for e in (bob, cid))


def test_DP_5_refusals_name_DP_5_and_change_nothing() -> None:
    t = fight()
    error = refused(t, "act", BOB, {"after": CID}, user=PLAYER)
    assert error.rule == "DP-5" and "not holding" in error.message
    error = refused(t, "hold", BOB, {}, user="someoneElse00001")
    assert isinstance(error, NotPermitted)


def pair_fight() -> Table:
    """The pair Ann and Bob (one roll: 2 successes), Cid 1 success, Deb 0 (defends only in
    round 1); round 1, Ann's turn."""
    t = Table()
    t.create()
    t.group("grpPair000000001", "Pair")
    t.add(ANN, "Ann", HUMAN, group="grpPair000000001")
    t.add(BOB, "Bob", HUMAN, group="grpPair000000001")
    t.add(CID, "Cid", HUMAN)
    t.add(DEB, "Deb", HUMAN)
    t.roll_group("grpPair000000001", [6, 6, 2, 2, 2])
    t.roll(CID, [6, 2, 2, 2, 2])
    t.roll(DEB, [2, 2, 2, 2, 2])
    t.start()
    return t


def test_DP_6_a_group_member_may_delay_on_its_own() -> None:
    t = pair_fight()
    t.intent("hold", ANN, {}, user=PLAYER)
    t.intent("act", ANN, {"after": CID}, user=PLAYER)
    assert t.order() == [BOB, CID, ANN, DEB] and reproduces(t)


# ---------------------------------------------------------------- DP-5: the sequence is kept

def bases_fight() -> Table:
    """Ann 3 successes (base 4), Bob 2 (base 5), Cid 1 (base 6); round 1, Ann's turn."""
    t = Table()
    t.create()
    t.add(ANN, "Ann", {"reaction": 2, "wits": 2})
    t.add(BOB, "Bob", HUMAN)
    t.add(CID, "Cid", {"reaction": 3, "wits": 3})
    t.roll(ANN, [6, 5, 4, 2])
    t.roll(BOB, [6, 5, 2, 2, 2])
    t.roll(CID, [6, 2, 2, 2, 2, 2])
    t.start()
    return t


def test_DP_5_a_step_in_keeps_its_place_in_later_rounds_whatever_the_bases() -> None:
    """Issue 11: Ann steps in after Bob with 1 success (base 4); Cid also has 1, with base
    6, yet no later round puts Cid ahead of her without a new declaration."""
    t = bases_fight()
    t.intent("hold", ANN, {}, user=PLAYER)
    t.intent("act", ANN, {"after": BOB}, user=PLAYER)
    assert t.order() == [BOB, ANN, CID]
    assert [e["combatant_id"] for e in t.plan["next_round"]["order"]] == [BOB, ANN, CID]
    for round_ in (2, 3):
        t.next_round()
        assert t.plan["round"] == round_ and t.order() == [BOB, ANN, CID] and reproduces(t)
        assert t.entry(ANN)["initiative"] // 1 == 1  # Bob's 2 successes − 1


def test_DP_5_a_step_in_relative_to_a_stepped_in_combatant_keeps_the_chain() -> None:
    t = bases_fight()
    t.intent("hold", ANN, {}, user=PLAYER)
    t.intent("act", ANN, {"after": BOB}, user=PLAYER)
    t.next_round()
    t.intent("hold", CID, {}, user=PLAYER)
    t.intent("act", CID, {"before": ANN}, user=PLAYER)  # 2 successes, base 6: still after Bob
    assert t.order() == [BOB, CID, ANN]
    t.next_round()
    assert t.order() == [BOB, CID, ANN] and reproduces(t)


def test_DP_5_a_step_in_from_a_carried_hold_returns_to_the_kept_place() -> None:
    t = bases_fight()
    t.intent("hold", ANN, {}, user=PLAYER)
    t.intent("act", ANN, {"after": BOB}, user=PLAYER)
    t.next_round()  # round 2: Bob, Ann, Cid
    t.next_turn()
    t.intent("hold", ANN, {}, user=PLAYER)  # waits; carried into round 3 (ST-5 ruling)
    t.next_round()
    assert t.plan["round"] == 3
    t.intent("act", ANN, {"before": BOB}, user=PLAYER)
    assert t.order() == [ANN, BOB, CID]
    t.next_round()  # round 4: back at its place after Bob, not by the bases
    assert t.order() == [BOB, ANN, CID] and reproduces(t)


def test_DP_5_the_gms_number_replaces_a_kept_place() -> None:
    t = bases_fight()
    t.intent("hold", ANN, {}, user=PLAYER)
    t.intent("act", ANN, {"after": BOB}, user=PLAYER)
    t.next_round()
    t.intent("initiative.set", ANN, {"value": 0})
    t.next_round()
    assert t.order() == [BOB, CID, ANN] and reproduces(t)


def test_DP_5_a_step_in_stays_where_the_round_ended_when_its_anchor_steps_in_elsewhere() -> None:
    """Ann steps in after Bob; then Bob holds and steps in after Cid. Round 1 ends Ann, Cid,
    Bob, and round 2 starts so: Ann's place is where she ended, not "after Bob" wherever
    he went (DP-5 ruling: the sequence as it ended is kept)."""
    t = bases_fight()
    t.intent("hold", ANN, {}, user=PLAYER)  # Bob's turn
    t.intent("act", ANN, {"after": BOB}, user=PLAYER)
    t.intent("hold", BOB, {}, user=PLAYER)  # Ann's turn
    t.intent("act", BOB, {"after": CID}, user=PLAYER)
    assert t.order() == [ANN, CID, BOB] and reproduces(t)
    assert [e["combatant_id"] for e in t.plan["next_round"]["order"]] == [ANN, CID, BOB]
    for round_ in (2, 3):
        t.next_round()
        assert t.plan["round"] == round_ and t.order() == [ANN, CID, BOB] and reproduces(t)


def test_DP_5_a_step_in_after_a_joiner_stays_where_the_round_ended_when_the_joiner_is_sorted_in() -> None:
    """Round 2 ends Bob, Cid (joined with 3 successes), Ann (stepped in after Cid). In round
    3 the joiner takes its place by successes and base (first), and Ann stays after Bob."""
    t = Table()
    t.create()
    t.add(ANN, "Ann", {"reaction": 2, "wits": 2})
    t.add(BOB, "Bob", HUMAN)
    t.roll(ANN, [6, 5, 4, 2])  # 3, base 4
    t.roll(BOB, [6, 5, 2, 2, 2])  # 2, base 5
    t.start()
    t.intent("hold", ANN, {}, user=PLAYER)
    t.intent("act", ANN, {"after": BOB}, user=PLAYER)
    t.next_round()  # round 2: Bob, Ann
    assert t.order() == [BOB, ANN] and t.plan["current"] == BOB
    t.intent("hold", ANN, {}, user=PLAYER)
    t.add(CID, "Cid", {"reaction": 3, "wits": 3})
    t.roll(CID, [6, 5, 4, 2, 2, 2])  # 3, base 6: among those still to act, first
    t.intent("act", ANN, {"after": CID}, user=PLAYER)
    assert t.order() == [BOB, CID, ANN] and reproduces(t)
    upcoming = [e["combatant_id"] for e in t.plan["next_round"]["order"]]
    assert upcoming == [CID, BOB, ANN]
    t.next_turn()
    t.next_turn()
    t.next_round()
    assert t.plan["round"] == 3 and t.order() == [CID, BOB, ANN] and reproduces(t)


@pytest.mark.parametrize(("kind", "anchor", "kept"), [
    ("after", ANN, [ANN, BOB, CID, DEB]),
    ("before", BOB, [CID, ANN, BOB, DEB]),
])
def test_DP_6_a_step_in_between_a_groups_members_is_kept_next_to_the_whole_group(
    kind: str, anchor: str, kept: list[str]
) -> None:
    t = pair_fight()
    t.intent("hold", CID, {}, user=PLAYER)
    t.intent("act", CID, {kind: anchor}, user=PLAYER)
    assert t.order() == [ANN, CID, BOB, DEB] and reproduces(t)
    for round_ in (2, 3):
        t.next_round()
        assert t.plan["round"] == round_ and t.order() == kept and reproduces(t)


def test_DP_6_a_member_that_stepped_in_elsewhere_keeps_its_own_place() -> None:
    """Bob leaves the pair to step in after Cid, then holds again before his turn: he is
    apart from Ann from now on, holding at the place he stepped into."""
    t = pair_fight()
    t.intent("hold", BOB, {}, user=PLAYER)
    t.next_turn()  # Cid
    t.intent("act", BOB, {"after": CID}, user=PLAYER)
    t.intent("hold", BOB, {}, user=PLAYER)
    assert t.order() == [ANN, CID, BOB, DEB] and reproduces(t)
    t.next_round()
    assert t.order() == [ANN, CID, BOB, DEB] and "any_point" in t.entry(BOB)["tags"]
    assert reproduces(t)


def test_DP_5_the_gms_number_places_a_combatant_among_those_still_to_act() -> None:
    t = fight()  # round 1, Ann's turn: Bob, Cid, Deb to come
    t.intent("initiative.set", CID, {"value": 5})
    assert t.order() == [ANN, CID, BOB, DEB] and reproduces(t)
    t.next_round()
    assert t.order() == [CID, ANN, BOB, DEB] and reproduces(t)


# ---------------------------------------------------------------- issue 24: the kept order

def test_DP_5_chained_step_ins_before_one_combatant_start_the_next_round_as_they_ended() -> None:
    """Ann steps in before Deb; then Cid holds and steps in before Deb too, during Ann's
    turn (a turn in progress is never interrupted): Bob, Ann, Cid, Deb. Both have Deb's −1
    + 1 = 0 successes, and Cid the higher base, yet round 2 starts as round 1 ended: no new
    declaration, so no re-sort (DP-5: «сохраняется до конца боя»)."""
    t = Table()
    t.create()
    t.add(ANN, "Ann", {"reaction": 2, "wits": 2})
    t.add(BOB, "Bob", HUMAN)
    t.add(CID, "Cid", {"reaction": 3, "wits": 3})
    t.add(DEB, "Deb", HUMAN)
    t.roll(ANN, [6, 5, 4, 2])  # 3, base 4
    t.roll(BOB, [6, 5, 2, 2, 2])  # 2, base 5
    t.roll(CID, [6, 2, 2, 2, 2, 2])  # 1, base 6
    t.roll(DEB, [6, 1, 1, 2, 2])  # −1, base 5
    t.start()
    t.intent("hold", ANN, {}, user=PLAYER)
    t.intent("act", ANN, {"before": DEB}, user=PLAYER)
    t.next_turn()
    t.intent("hold", CID, {}, user=PLAYER)
    assert t.plan["current"] == ANN
    t.intent("act", CID, {"before": DEB}, user=PLAYER)
    assert t.order() == [BOB, ANN, CID, DEB] and reproduces(t)
    assert [e["combatant_id"] for e in t.plan["next_round"]["order"]] == [BOB, ANN, CID, DEB]
    for round_ in (2, 3):
        t.next_round()
        assert t.plan["round"] == round_ and t.order() == [BOB, ANN, CID, DEB] and reproduces(t)


def test_DP_5_a_holder_still_holding_when_the_round_ends_keeps_its_place() -> None:
    """Bob holds and never steps in: round 2 starts with him where he stood (held, free to
    step in anywhere); stepping in then is for that round only."""
    t = fight()
    t.intent("hold", BOB, {}, user=PLAYER)
    t.next_turn()  # Cid; Deb defends only: the round is over
    t.next_round()
    assert t.order() == [ANN, BOB, CID, DEB] and "any_point" in t.entry(BOB)["tags"]
    t.intent("act", BOB, {"after": CID}, user=PLAYER)
    assert t.order() == [ANN, CID, BOB, DEB]
    t.next_round()
    assert t.order() == [ANN, BOB, CID, DEB] and reproduces(t)


def test_DP_5_a_holder_that_stepped_in_then_holds_again_keeps_the_place_it_stepped_into() -> None:
    """Issue 24: Eve joins in round 1 (1 success, base 5), steps in right after Ann (2
    successes, ahead of Bob), then holds again and is still holding when the round ends. A
    holder keeps its place (ST-1): round 2 starts Ann, Eve, Bob, not by DP-2 (which would
    put Bob, with her successes and base and the smaller id, first)."""
    eve = "cmbEve0000000001"
    t = fight()
    t.add(eve, "Eve", HUMAN)
    t.roll(eve, [6, 2, 2, 2, 2])
    t.intent("hold", eve, {}, user=PLAYER)
    t.intent("act", eve, {"now": True}, user=PLAYER)
    t.intent("hold", eve, {}, user=PLAYER)
    assert t.order() == [ANN, eve, BOB, CID, DEB] and t.entry(eve)["acts"] == "held"
    assert [e["combatant_id"] for e in t.plan["next_round"]["order"]] == [ANN, eve, BOB, CID, DEB]
    t.next_round()
    assert t.order() == [ANN, eve, BOB, CID, DEB] and "any_point" in t.entry(eve)["tags"]
    assert reproduces(t)


def test_DP_5_a_carried_holder_that_steps_in_then_holds_again_goes_back_to_its_place() -> None:
    """A step-in from a carried hold is for one round (ST-4/ST-5 rulings): holding again at
    that place does not keep it."""
    t = fight()
    t.intent("hold", BOB, {}, user=PLAYER)
    t.next_turn()
    t.next_round()  # round 2: Bob carries his hold
    t.intent("act", BOB, {"before": ANN}, user=PLAYER)
    t.intent("hold", BOB, {}, user=PLAYER)
    assert t.order() == [BOB, ANN, CID, DEB]
    t.next_round()
    assert t.order() == [ANN, BOB, CID, DEB] and reproduces(t)
