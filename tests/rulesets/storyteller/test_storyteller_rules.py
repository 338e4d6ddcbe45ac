"""Ruleset ``storyteller``: ST-1 … ST-5, ST-E1 … ST-E3 and the rulings, through ``apply``."""

from __future__ import annotations

import json
from pathlib import Path

from adapter.engine.holding import ANY_POINT, Hold
from adapter.errors import NotPermitted, RuleViolation, UnknownCombatant
from adapter.replay import Replay, replay_lines
from adapter.rulesets import RULESETS
from tests.rulesets.storyteller.st_table import GM, Table, owner

MITCH, LARRY, ZED = "cmbMitch00000001", "cmbLarry00000002", "cmbZed0000000003"
SANDERS, WASHINGTON = "cmbSanders000001", "cmbWashington001"
RECORDINGS = Path(__file__).resolve().parents[2] / "recordings" / "storyteller"


def mitch_holds() -> Table:
    """Mitch 10, Larry 6; round 1 begins with Mitch, who holds (ST-1)."""
    t = Table().setup((MITCH, 10, 5), (LARRY, 6, 3))
    t.intent("hold", MITCH, owner(MITCH))
    return t


# ---------------------------------------------------------------- initiative


def test_the_score_is_the_system_roll_total_ties_by_initiative_mod_then_id() -> None:
    t = Table().setup(("cmbB", 9, 2), ("cmbA", 9, 2), ("cmbC", 9, 4), ("cmbD", 11, 0))
    assert t.order() == ["cmbD", "cmbC", "cmbA", "cmbB"]
    assert [t.combat.combatants[c].score for c in t.order()] == [11, 9, 9, 9]
    values = t.values()
    assert t.reproduces() and (values["cmbC"] or 0) > (values["cmbA"] or 0) >= 9


# ---------------------------------------------------------------- ST-1


def test_ST_1_hold_keeps_the_place_and_the_turn_passes_on() -> None:
    t = mitch_holds()
    assert t.current == LARRY
    assert t.entry(MITCH)["acts"] == "held" and t.entry(MITCH)["rules"] == ["ST-1"]
    assert t.order() == [MITCH, LARRY]


def test_ST_E1_mitch_acts_after_larry_at_5() -> None:
    t = mitch_holds()
    t.intent("act", MITCH, owner(MITCH), after=LARRY)
    assert t.order() == [LARRY, MITCH] and t.values() == {LARRY: 6, MITCH: 5}
    assert t.current == LARRY  # Larry's turn goes on; Mitch's follows it
    t.next_turn()
    assert t.current == MITCH


def test_ST_1_ruling_the_new_score_stays_for_the_rest_of_the_fight() -> None:
    t = mitch_holds()
    t.intent("act", MITCH, owner(MITCH), after=LARRY)
    for round_ in (2, 3):
        t.next_turn()
        t.next_turn()
        assert t.plan["round"] == round_ and t.values() == {LARRY: 6, MITCH: 5}


def test_ST_1_a_hold_when_nobody_else_is_left_ends_the_round() -> None:
    t = Table().setup((MITCH, 10, 5), (LARRY, 6, 3))
    t.next_turn()
    t.intent("hold", LARRY, owner(LARRY))
    assert t.plan["current"] is None and t.plan["turn"] is None
    t.next_turn()
    assert t.plan["round"] == 2 and t.current == MITCH


def test_ST_1_a_joining_combatant_does_not_make_a_holder_current() -> None:
    t = Table().setup((MITCH, 10, 5), (LARRY, 6, 3))
    t.intent("hold", MITCH)
    t.intent("hold", LARRY, owner(LARRY))
    t.next_turn()  # round 2: both still hold, nobody acts; Foundry points at Mitch
    assert (t.plan["round"], t.plan["current"], t.pointer) == (2, None, MITCH)
    t.add(ZED, "Zed", 1)
    t.hook("createCombatant")
    assert t.plan["current"] is None and t.entry(MITCH)["acts"] == "held"


def test_ST_1_act_now_steps_in_right_after_the_current_turn() -> None:
    t = Table().setup((MITCH, 10, 5), (LARRY, 6, 3), (ZED, 2, 1))
    t.intent("hold", MITCH)
    t.intent("act", MITCH, owner(MITCH), now=True)
    assert t.order() == [LARRY, MITCH, ZED] and t.values()[MITCH] == 5


# ---------------------------------------------------------------- ST-2


def test_ST_E2_mitch_interrupts_larry_at_7_and_larrys_turn_follows() -> None:
    t = mitch_holds()
    t.intent("act", MITCH, owner(MITCH), before=LARRY)
    assert t.order() == [MITCH, LARRY] and t.values() == {MITCH: 7, LARRY: 6}
    assert t.current == MITCH and t.plan["turn"] == 0
    t.next_turn()
    assert t.current == LARRY
    t.next_turn()
    assert t.plan["round"] == 2 and t.values() == {MITCH: 7, LARRY: 6}


def test_ST_2_ruling_placement_wins_over_arithmetic() -> None:
    t = Table().setup((MITCH, 10, 5), (ZED, 7, 9), (LARRY, 6, 3))
    t.intent("hold", MITCH)
    t.intent("act", MITCH, owner(MITCH), before=LARRY)  # 7, like Zed, who wins the tie
    assert t.order() == [ZED, MITCH, LARRY] and t.reproduces()
    assert t.combat.combatants[MITCH].score == 7


# ---------------------------------------------------------------- ST-3


def test_ST_3_holders_stepping_in_together_are_ordered_by_the_tie_rule() -> None:
    t = Table().setup(("cmbSlow", 12, 1), ("cmbQuick", 11, 4), ("cmbTwin", 10, 4), (LARRY, 6, 3))
    for who in ("cmbSlow", "cmbQuick", "cmbTwin"):
        t.intent("hold", who)
    for who in ("cmbSlow", "cmbTwin", "cmbQuick"):
        t.intent("act", who, after=LARRY)
    assert t.order() == [LARRY, "cmbQuick", "cmbTwin", "cmbSlow"]
    assert {t.combat.combatants[c].score for c in t.order()[1:]} == {5}
    assert t.reproduces()
    assert all("ST-3" in t.entry(c)["rules"] for c in ("cmbSlow", "cmbQuick", "cmbTwin"))
    assert "ST-3" not in t.entry(LARRY)["rules"]


# ---------------------------------------------------------------- ST-4


def test_ST_E3_washington_gives_up_round_1_acts_at_13_then_is_back_at_8() -> None:
    t = Table().setup((SANDERS, 12, 6), (WASHINGTON, 8, 4))
    t.intent("hold", WASHINGTON, owner(WASHINGTON), next_round=True)
    assert t.entry(WASHINGTON)["acts"] == "movement_only"
    assert t.entry(WASHINGTON)["rules"] == ["ST-4"]
    t.next_turn()
    assert t.current == WASHINGTON  # he may still move
    t.next_turn()
    assert t.plan["round"] == 2 and t.current == SANDERS
    assert t.entry(WASHINGTON)["acts"] == "held"
    t.intent("act", WASHINGTON, owner(WASHINGTON), before=SANDERS)
    assert t.values() == {WASHINGTON: 13, SANDERS: 12} and t.current == WASHINGTON
    assert t.plan["next_round"]["order"][1] == {
        "combatant_id": WASHINGTON, "initiative": 8.0, "acts": "full"}
    t.next_turn()
    assert t.current == SANDERS
    t.next_turn()
    assert t.plan["round"] == 3 and t.values() == {SANDERS: 12, WASHINGTON: 8}


def test_ST_4_it_may_do_this_again() -> None:
    t = Table().setup((SANDERS, 12, 6), (WASHINGTON, 8, 4))
    for round_ in (1, 3):
        assert t.plan["round"] == round_
        t.intent("hold", WASHINGTON, next_round=True)
        t.next_turn()
        t.next_turn()
        t.intent("act", WASHINGTON, before=SANDERS)
        t.next_turn()
        t.next_turn()
    assert t.plan["round"] == 5 and t.values() == {SANDERS: 12, WASHINGTON: 8}


def test_ST_4_it_may_give_up_again_in_the_round_it_could_act_anywhere() -> None:
    t = Table().setup((SANDERS, 12, 6), (WASHINGTON, 8, 4))
    t.intent("hold", WASHINGTON, owner(WASHINGTON), next_round=True)
    t.next_turn()
    t.next_turn()
    assert t.plan["round"] == 2 and t.entry(WASHINGTON)["acts"] == "held"
    t.intent("hold", WASHINGTON, owner(WASHINGTON), next_round=True)
    assert t.entry(WASHINGTON)["acts"] == "movement_only"  # he may still move this round
    t.next_turn()
    assert t.current == WASHINGTON
    t.next_turn()
    assert t.plan["round"] == 3 and t.entry(WASHINGTON)["acts"] == "held"
    t.intent("act", WASHINGTON, owner(WASHINGTON), before=SANDERS)
    assert t.values() == {WASHINGTON: 13, SANDERS: 12}
    t.next_turn()
    t.next_turn()
    assert t.plan["round"] == 4 and t.values() == {SANDERS: 12, WASHINGTON: 8}


def test_a_defeated_combatant_can_neither_hold_nor_step_in() -> None:
    t = mitch_holds()
    t.defeat(MITCH)
    error = t.refused("act", MITCH, owner(MITCH), after=LARRY)
    assert isinstance(error, RuleViolation) and error.rule == "ST-1"
    t2 = Table().setup((SANDERS, 12, 6), (WASHINGTON, 8, 4))
    t2.defeat(WASHINGTON)
    error = t2.refused("hold", WASHINGTON, owner(WASHINGTON))
    assert isinstance(error, RuleViolation) and "defeated" in error.message


def test_ST_4_stepping_in_the_round_it_gave_up_is_refused() -> None:
    t = Table().setup((SANDERS, 12, 6), (WASHINGTON, 8, 4))
    t.intent("hold", WASHINGTON, next_round=True)
    error = t.refused("act", WASHINGTON, owner(WASHINGTON), before=SANDERS)
    assert isinstance(error, RuleViolation) and error.rule == "ST-4"


# ---------------------------------------------------------------- ST-5


def test_ST_5_an_unused_hold_carries_over_then_returns_to_the_original_score() -> None:
    t = mitch_holds()
    out = t.next_turn()
    assert t.plan["round"] == 2 and t.current == LARRY
    assert [n["kind"] for n in out["notices"]] == ["hold.carried_over"]
    assert t.combat.combatants[MITCH].hold == Hold(ANY_POINT, since=1, original=10)
    assert t.entry(MITCH)["rules"] == ["ST-5"] and "any_point" in t.entry(MITCH)["tags"]
    t.intent("act", MITCH, owner(MITCH), after=LARRY)
    assert t.values() == {LARRY: 6, MITCH: 5}
    t.next_turn()
    t.next_turn()
    assert t.plan["round"] == 3 and t.values() == {MITCH: 10, LARRY: 6}


def test_ST_5_target_aware_is_the_gms_tag() -> None:
    t = mitch_holds()
    error = t.refused("hold", MITCH, owner(MITCH), target_aware=True)
    assert isinstance(error, NotPermitted)
    t.intent("hold", MITCH, GM, target_aware=True)
    assert t.entry(MITCH)["tags"] == ["held", "target_aware"]
    t.next_turn()
    assert t.entry(MITCH)["tags"] == ["held", "any_point", "target_aware"]


# ---------------------------------------------------------------- refusals


def test_stepping_in_without_holding_is_refused() -> None:
    t = Table().setup((MITCH, 10, 5), (LARRY, 6, 3))
    error = t.refused("act", LARRY, owner(LARRY), now=True)
    assert isinstance(error, RuleViolation) and error.rule == "ST-1"
    assert "not holding" in error.message


def test_acting_relative_to_a_combatant_not_in_the_combat_is_refused() -> None:
    t = mitch_holds()
    error = t.refused("act", MITCH, owner(MITCH), before="cmbNobody0000000")
    assert isinstance(error, UnknownCombatant) and error.path == "/args/before"


def test_acting_for_a_combatant_one_does_not_own_is_refused() -> None:
    t = mitch_holds()
    assert isinstance(t.refused("act", MITCH, owner(LARRY), after=LARRY), NotPermitted)
    assert isinstance(t.refused("hold", LARRY, owner(MITCH)), NotPermitted)


def test_after_x_once_xs_turn_is_over_is_refused_use_now() -> None:
    t = Table().setup((MITCH, 10, 5), (LARRY, 6, 3), (ZED, 2, 1))
    t.next_turn()
    t.intent("hold", LARRY)
    error = t.refused("act", LARRY, owner(LARRY), after=MITCH)
    assert isinstance(error, RuleViolation) and error.rule == "ST-1"
    assert error.path == "/args/after" and "now" in error.message
    error = t.refused("act", LARRY, owner(LARRY), before=MITCH)
    assert isinstance(error, RuleViolation) and error.rule == "ST-2"


def test_a_refusal_reaches_the_module_as_a_rule_violation_with_rule_and_path() -> None:
    lines = (RECORDINGS / "ST-E1-act-after-larry.jsonl").read_text().splitlines()
    seq = len(lines)  # the session line has no seq
    late = {"event": "intent", "data": {"seq": seq, "user": "plrMitch00000001", "world_time": 6,
                                        "kind": "act", "combat_id": "stCombat00000001",
                                        "combatant_id": MITCH, "args": {"after": LARRY}}}
    out = list(replay_lines([*lines, json.dumps(late)], Replay(rulesets=RULESETS)))
    ack = out[-1]["data"]
    assert ack["ok"] is False and ack["seq"] == seq
    assert ack["error"]["code"] == "rule_violation" and ack["error"]["rule"] == "ST-1"
    assert ack["error"]["path"] == "/combatant_id"  # Mitch acted already: not holding


# ---------------------------------------------------------------- issue 11: ST-5 target aware


def test_ST_5_target_aware_for_a_combatant_that_is_not_holding_is_refused() -> None:
    t = Table().setup((MITCH, 10, 5), (LARRY, 6, 3))
    error = t.refused("hold", LARRY, GM, target_aware=True)
    assert isinstance(error, RuleViolation) and error.rule == "ST-5"
    assert error.path == "/args/target_aware" and "not waiting" in error.message
    assert t.current == MITCH and t.combat.combatants[LARRY].hold is None


def test_ST_5_target_aware_after_stepping_in_is_refused() -> None:
    t = mitch_holds()
    t.intent("act", MITCH, owner(MITCH), after=LARRY)
    error = t.refused("hold", MITCH, GM, target_aware=True)
    assert isinstance(error, RuleViolation) and error.rule == "ST-5"


# ---------------------------------------------------------------- issue 11: ST-4 from a hold


def test_ST_4_a_holder_may_carry_its_held_action_into_the_next_round() -> None:
    t = mitch_holds()  # Mitch holds on his turn; Larry is current
    t.intent("hold", MITCH, owner(MITCH), next_round=True)
    entry = t.entry(MITCH)
    assert entry["acts"] == "movement_only" and entry["rules"] == ["ST-4"]
    assert t.order() == [LARRY, MITCH] and t.current == LARRY  # his movement follows Larry
    t.next_turn()
    assert t.current == MITCH  # he moves
    t.next_turn()
    assert t.plan["round"] == 2 and t.entry(MITCH)["acts"] == "held"
    assert "any_point" in t.entry(MITCH)["tags"] and t.entry(MITCH)["rules"] == ["ST-4"]
    t.intent("act", MITCH, owner(MITCH), before=LARRY)
    assert t.values() == {MITCH: 7, LARRY: 6}
    t.next_turn()
    t.next_turn()
    assert t.plan["round"] == 3 and t.values() == {MITCH: 10, LARRY: 6}


def test_ST_4_a_carried_hold_whose_place_has_passed_may_be_carried_again() -> None:
    t = mitch_holds()
    t.next_turn()  # round 2: Mitch waits (ST-5); his place is passed over at once
    assert t.plan["round"] == 2 and t.current == LARRY
    t.intent("hold", MITCH, owner(MITCH), next_round=True)
    assert t.entry(MITCH)["acts"] == "movement_only" and t.order() == [LARRY, MITCH]
    t.next_turn()
    assert t.current == MITCH
    t.next_turn()
    assert t.plan["round"] == 3 and t.entry(MITCH)["acts"] == "held"


def test_ST_4_a_holder_that_stepped_in_or_already_gave_up_cannot_carry_it_over() -> None:
    t = mitch_holds()
    t.intent("act", MITCH, owner(MITCH), after=LARRY)
    error = t.refused("hold", MITCH, owner(MITCH), next_round=True)
    assert isinstance(error, RuleViolation) and error.rule == "ST-4"
    assert "stepped in" in error.message
    t2 = mitch_holds()
    t2.intent("hold", MITCH, owner(MITCH), next_round=True)
    error = t2.refused("hold", MITCH, owner(MITCH), next_round=True)
    assert isinstance(error, RuleViolation) and error.rule == "ST-4"
    assert "already gave up" in error.message


def test_a_second_plain_hold_is_refused_under_the_rule_its_message_cites() -> None:
    t = mitch_holds()
    error = t.refused("hold", MITCH, owner(MITCH))
    assert isinstance(error, RuleViolation) and error.rule == "ST-1"
    assert "ST-5" not in error.message and "already holding" in error.message
    t.next_turn()  # carried over: waiting across rounds
    error = t.refused("hold", MITCH, owner(MITCH))
    assert isinstance(error, RuleViolation) and error.rule == "ST-5"


def test_ST_2_before_a_holder_advises_what_is_possible() -> None:
    t = Table().setup((MITCH, 10, 5), (ZED, 8, 1), (LARRY, 6, 3))
    t.intent("hold", MITCH)
    t.intent("hold", ZED)
    error = t.refused("act", MITCH, owner(MITCH), before=ZED)
    assert isinstance(error, RuleViolation) and error.rule == "ST-2"
    assert error.path == "/args/before" and "once it has acted" not in error.message
    assert "once it has stepped in" in error.message
    error = t.refused("act", MITCH, owner(MITCH), after=ZED)
    assert error.rule == "ST-1" and "once it has acted" in error.message
    t.intent("act", ZED, owner(ZED), after=LARRY)  # as advised: Zed has a place now
    t.intent("act", MITCH, owner(MITCH), before=ZED)
    assert t.order() == [LARRY, MITCH, ZED]


# ---------------------------------------------------------------- issue 11: ST-3 same moment

NINA = "cmbNina000000004"


def larry_begins() -> Table:
    """Mitch (10, modifier 5) and Nina (8, modifier 3) hold; Larry's (6) turn begins."""
    t = Table().setup((MITCH, 10, 5), (NINA, 8, 3), (LARRY, 6, 3))
    t.intent("hold", MITCH, owner(MITCH))
    t.intent("hold", NINA, owner(NINA))
    assert t.current == LARRY
    return t


def test_ST_3_interrupts_sharing_the_moment_follow_the_tie_rule_not_arrival() -> None:
    t = larry_begins()
    t.intent("act", NINA, owner(NINA), before=LARRY)
    assert t.current == NINA
    t.intent("act", MITCH, owner(MITCH), before=LARRY)  # the moment is still open
    assert t.order() == [MITCH, NINA, LARRY] and t.current == MITCH
    assert {c: t.combat.combatants[c].score for c in (MITCH, NINA)} == {MITCH: 7, NINA: 7}
    assert t.reproduces()
    assert all("ST-3" in t.entry(c)["rules"] for c in (MITCH, NINA))
    t.next_turn()
    assert t.current == NINA
    t.next_turn()
    assert t.current == LARRY


def test_ST_3_a_later_interrupter_lower_in_the_tie_waits_after_the_first() -> None:
    t = larry_begins()
    t.intent("act", MITCH, owner(MITCH), before=LARRY)
    t.intent("act", NINA, owner(NINA), before=LARRY)
    assert t.order() == [MITCH, NINA, LARRY] and t.current == MITCH


def test_ST_3_the_moment_closes_when_the_first_interrupters_turn_ends() -> None:
    t = larry_begins()
    t.intent("act", NINA, owner(NINA), before=LARRY)
    t.next_turn()  # Nina has acted: the GM ends her turn, Larry begins again
    assert t.current == LARRY
    t.intent("act", MITCH, owner(MITCH), before=LARRY)  # a new moment: after Nina
    assert t.order() == [NINA, MITCH, LARRY] and t.current == MITCH and t.reproduces()
    t.next_turn()
    assert t.current == LARRY


def test_ST_4_carried_over_when_the_round_has_no_turn_left_its_movement_comes_at_once() -> None:
    t = Table().setup((MITCH, 10, 5), (LARRY, 6, 3))
    t.next_turn()
    t.intent("hold", LARRY, owner(LARRY))  # nobody left: the round has no turn in progress
    assert t.current is None
    t.intent("hold", LARRY, owner(LARRY), next_round=True)
    assert t.current == LARRY and t.entry(LARRY)["acts"] == "movement_only"
    t.next_turn()
    assert t.plan["round"] == 2 and t.entry(LARRY)["acts"] == "held" and t.current == MITCH
