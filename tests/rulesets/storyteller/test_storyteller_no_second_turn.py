"""Nobody gets a second turn in a round from a pointer nobody moved back (the session
property's failing examples, named).

Foundry keeps a ``turn`` pointer; the sidecar follows it. Two things leave that pointer on a
combatant whose turn has passed this round without anyone pressing "previous turn":

- Foundry's own step off a deleted current combatant: to the next survivor, or, when it was
  the last, to the one before it (``Combatant._preDeleteOperation``: ``nextSurvivor ||
  prevSurvivor``; foundryvtt issue #12009 describes the same);
- the module, which leaves Foundry's pointer where it is when the plan names no current (the
  round is over: everyone left holds).

The next hook reports that pointer (a join, a roll, the deletion itself); only a turn change
(``updateCombat``) may take the turn back.
"""

from __future__ import annotations

from tests.rulesets.storyteller.st_table import Table, d10, owner

SANDERS, MITCH, LARRY = "cmbSanders000001", "cmbMitch00000002", "cmbLarry00000003"
ZED = "cmbZed0000000004"


def now(t: Table) -> tuple[int, str | None]:
    """The plan's round and current combatant."""
    return int(t.plan["round"]), t.current


def larry_leaves_after_mitch_holds() -> Table:
    """Round 1: Sanders 12, Mitch 10, Larry 6. Mitch holds (ST-1), so Larry, the last, is
    current; Larry is deleted from the combat during his turn."""
    t = Table().setup((SANDERS, 12, 2), (MITCH, 10, 2), (LARRY, 6, 2))
    t.next_turn()
    assert t.current == MITCH
    t.intent("hold", MITCH, owner(MITCH))
    assert now(t) == (1, LARRY)
    t.leave(LARRY)
    return t


def test_deleting_the_last_current_combatant_points_foundry_at_the_one_before_it() -> None:
    t = larry_leaves_after_mitch_holds()
    assert t.pointer == MITCH and t.entry(MITCH)["acts"] == "held"
    assert t.order() == [SANDERS, MITCH]


def test_after_a_holder_and_a_leaving_current_combatant_the_next_turn_starts_the_next_round() -> None:
    t = larry_leaves_after_mitch_holds()
    assert now(t) == (1, None)  # the round is over: Mitch holds
    t.next_turn()
    assert now(t) == (2, SANDERS)
    # Mitch's unused hold carries into round 2 (ST-5 ruling): round 2 is Sanders' alone
    assert t.entry(MITCH)["acts"] == "held"
    t.next_turn()
    assert now(t) == (3, SANDERS)


def test_a_last_combatant_deleted_during_its_turn_does_not_give_the_one_before_it_a_second_turn() -> None:
    t = Table().setup((SANDERS, 12, 2), (MITCH, 10, 2), (LARRY, 6, 2))
    t.turn_to(LARRY)
    t.leave(LARRY)
    assert t.pointer == MITCH  # Foundry's step back onto the one before
    assert now(t) == (1, None)  # Mitch has had his turn
    t.next_turn()
    assert now(t) == (2, SANDERS)


def test_a_joiner_after_the_last_holder_does_not_give_the_holder_its_turn_again() -> None:
    t = Table().setup((SANDERS, 12, 2), (MITCH, 10, 2))
    t.next_turn()
    t.intent("hold", MITCH, owner(MITCH))
    assert (t.plan["round"], t.current, t.pointer) == (1, None, MITCH)  # the module left it
    t.add(ZED, "Zed", 0)
    t.hook("createCombatant")
    t.send(t.roll_message(d10(1, 0), cid=ZED))
    assert t.current is None and t.entry(MITCH)["acts"] == "held"
    t.next_turn()  # Zed joined below Mitch before the round ended: his turn comes
    assert now(t) == (1, ZED)
    t.next_turn()
    assert now(t) == (2, SANDERS)


def test_the_gm_may_still_go_back_to_a_passed_turn() -> None:
    t = Table().setup((SANDERS, 12, 2), (MITCH, 10, 2), (LARRY, 6, 2))
    t.turn_to(LARRY)
    t.at.pointer = SANDERS
    t.hook("updateCombat", changed={"turn": 0}, options={"direction": -1})
    assert now(t) == (1, SANDERS)
