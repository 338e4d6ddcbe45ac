"""First contact: a combat already under way is adopted as Foundry holds it (issue 17).

Each test sends a combat as the first message the sidecar sees of it, through the real
pipeline (schemas, engine, ack), and checks what the plan says against the document. Each
test that applies to a real document runs again over the corpus of real Combat documents
(``tests/test_real_combats.py``, ``tests/fixtures/real-combats/README.md`` lists which).
"""

from __future__ import annotations

from typing import Any

import pytest

from adapter.rulesets.dice_pool.state import DicePoolState
from tests.engine.first_contact import Contact, entries
from tests.foundry import combat, combatant, d20_roll
from tests.rulesets.dice_pool.dp_table import pool_roll

A, B, C, D = "cmbAria000000001", "cmbBors000000001", "cmbCade000000001", "cmbDrux000000001"
PLAYER = "pLyr000000000001"
RULESETS = ("foundry-core", "balanced-d20", "dice-pool", "storyteller")


def fighters(*values: tuple[str, float | None], **extra: Any) -> list[dict[str, Any]]:
    out = []
    for cid, value in values:
        c = combatant(cid, cid[3:7], owners=[PLAYER], **extra)
        c["initiative"] = value
        out.append(c)
    return out


# ---------------------------------------------------------------- the document is the truth


@pytest.mark.parametrize("ruleset", RULESETS)
def test_a_combat_met_at_round_8_keeps_its_round_pointer_and_values(ruleset: str) -> None:
    doc = combat("cmbtRound8000001", fighters((A, 21.0), (B, 15.0), (C, 9.0)), round_=8, turn=1)
    t = Contact(ruleset)
    ack = t.meet(doc, B).ack
    assert ack["ok"], ack
    plan = ack["plans"][0]
    assert (plan["round"], plan["current"], plan["turn"]) == (8, B, 1)
    if ruleset != "dice-pool":  # dice-pool writes its tie-break decimals (net + base/100)
        assert [(e["combatant_id"], e["initiative"]) for e in plan["order"]] == [
            (A, 21.0), (B, 15.0), (C, 9.0)]


def test_dnd5e_tiebreaker_decimals_are_kept_as_stored() -> None:
    doc = combat("cmbtDecimals0001", fighters((A, 24.18), (B, 16.22), (C, 19.12)), round_=2, turn=0)
    plan = Contact("foundry-core").meet(doc, A).ack["plans"][0]
    assert {e["combatant_id"]: e["initiative"] for e in plan["order"]} == {A: 24.18, B: 16.22, C: 19.12}
    assert [e["combatant_id"] for e in plan["order"]] == [A, C, B]


def test_a_tie_foundry_stores_is_kept_until_a_rule_moves_someone() -> None:
    doc = combat("cmbtStoredTie001", fighters((A, 12.0), (B, 12.0), (C, 5.0)), round_=1, turn=0)
    t = Contact("foundry-core")
    plan = t.meet(doc, A).ack["plans"][0]
    assert [e["initiative"] for e in plan["order"]] == [12.0, 12.0, 5.0]  # the module writes nothing
    # the GM sets C to 12 as well: that tie is the sidecar's to write, so all three differ
    ack = t.send("intent", {"kind": "initiative.set", "combat_id": doc["_id"], "combatant_id": C,
                            "args": {"value": 12}}).ack
    values = [e["initiative"] for e in ack["plans"][0]["order"]]
    assert len(set(values)) == 3 and sorted(values, reverse=True) == values


@pytest.mark.parametrize("ruleset", RULESETS)
def test_no_current_where_foundry_keeps_turn_null_in_a_started_combat(ruleset: str) -> None:
    # lancer, daggerheart, worldbuilding: round >= 1, turn null, players pick who acts
    doc = combat("cmbtTurnNull0001", fighters((A, None), (B, None)), round_=3, turn=None)
    plan = Contact(ruleset).meet(doc, None).ack["plans"][0]
    assert (plan["round"], plan["current"], plan["turn"]) == (3, None, None)
    assert [e["initiative"] for e in plan["order"]] == [None, None]


def test_combatants_without_an_initiative_key_have_not_rolled() -> None:
    rows = fighters((A, 14.0), (B, None))
    del rows[1]["initiative"]
    doc = combat("cmbtNoKey0000001", rows, round_=1, turn=0)
    plan = Contact("foundry-core").meet(doc, A).ack["plans"][0]
    assert entries(plan)[B]["initiative"] is None  # not rolled: nothing to write
    assert [e["combatant_id"] for e in plan["order"]] == [A, B]


def test_defeated_and_hidden_flags_are_taken_as_they_stand() -> None:
    rows = fighters((A, 18.0), (B, 11.0), (C, 4.0))
    rows[1]["defeated"] = rows[1]["is_defeated"] = True
    rows[2]["hidden"] = True
    doc = combat("cmbtFlags0000001", rows, round_=2, turn=0)
    plan = Contact("foundry-core").meet(doc, A).ack["plans"][0]
    assert entries(plan)[B]["acts"] == "none" and entries(plan)[B]["tags"] == ["defeated"]
    assert entries(plan)[C]["acts"] == "full"  # hidden combatants take their turns


def test_empty_and_absent_names_are_accepted_and_refusals_name_the_id() -> None:
    rows = fighters((A, 14.0), (B, 9.0))
    rows[0]["name"] = ""
    del rows[1]["name"]
    doc = combat("cmbtNoNames00001", rows, round_=1, turn=0)
    t = Contact("balanced-d20")
    assert t.meet(doc, A).ack["ok"]
    # a player rolls again for an adopted value: refused (BI-2), naming the combatant's id
    ack = t.send("hook", {"hook": "initiativeRoll", "user": PLAYER, "combat": doc,
                          "current": {"round": 1, "turn": 0, "combatantId": A, "tokenId": None},
                          "roll": {"combatant_id": A, "roll": d20_roll(3, 2)}}).ack
    assert not ack["ok"] and ack["error"]["code"] == "rule_violation"
    assert ack["error"]["message"].startswith(f"{A} has rolled initiative already")


def test_a_pointer_on_an_unknown_combatant_means_no_current() -> None:
    doc = combat("cmbtStale0000001", fighters((A, 14.0), (B, 9.0)), round_=2, turn=-1)
    plan = Contact("foundry-core").meet(doc, "cmbGone000000001").ack["plans"][0]
    assert plan["current"] is None and plan["round"] == 2


def test_an_initiative_roll_as_first_contact_is_given_to_the_rules() -> None:
    doc = combat("cmbtFirstRoll001", fighters((A, 17.0), (B, None)), round_=0)
    t = Contact("balanced-d20")
    ack = t.send("hook", {"hook": "initiativeRoll", "user": PLAYER, "combat": doc,
                          "current": {"round": 0, "turn": None, "combatantId": None, "tokenId": None},
                          "roll": {"combatant_id": A, "roll": d20_roll(15, 2)}}).ack
    assert ack["ok"], ack  # the 17 in the document is this roll, not an earlier one
    assert entries(ack["plans"][0])[A]["initiative"] == 17.0


def test_a_roll_resent_behind_an_adopted_value_changes_nothing() -> None:
    # after the sidecar lost its history, the module resends each combatant's last roll
    doc = combat("cmbtResent000001", fighters((A, 17.0), (B, 9.0), stats={"int": 4}), round_=1, turn=0)
    t = Contact("balanced-d20")
    before = t.meet(doc, A).ack["plans"][0]
    roll = {"hook": "initiativeRoll", "user": PLAYER, "combat": doc,
            "current": {"round": 1, "turn": 0, "combatantId": A, "tokenId": None}}
    ack = t.send("hook", {**roll, "roll": {"combatant_id": A, "roll": d20_roll(3, 14)}}).ack
    assert ack["ok"] and ack["plans"] == [] and ack["prompts"] == []  # no BI-2 offer either
    assert t.plan(doc["_id"])["order"] == before["order"]
    ack = t.send("hook", {**roll, "roll": {"combatant_id": A, "roll": d20_roll(3, 10)}}).ack
    assert not ack["ok"] and ack["error"]["rule"] == "BI-2"  # 13: a new roll, refused


def test_after_first_contact_snapshots_no_longer_set_scores() -> None:
    doc = combat("cmbtLater0000001", fighters((A, 14.0), (B, 9.0)), round_=1, turn=0)
    t = Contact("foundry-core")
    t.meet(doc, A)
    doc["combatants"][1]["initiative"] = 30.0  # a later snapshot: scores come from rolls now
    t.hook(doc, A)
    assert entries(t.plan(doc["_id"]))[B]["initiative"] == 9.0


@pytest.mark.parametrize("bad", [-1, "2", 1.5])
def test_a_round_joined_that_is_not_a_round_is_refused_and_changes_nothing(bad: Any) -> None:
    rows = fighters((A, 14.0))
    rows[0]["roundJoined"] = bad
    t = Contact("foundry-core")
    before = t.world
    ack = t.meet(combat("cmbtBadJoined001", rows, round_=2, turn=0), A).ack
    assert not ack["ok"] and ack["error"]["code"] == "invalid_message"
    assert ack["error"]["path"] == "/combat/combatants/0/roundJoined"
    assert t.world.combats == before.combats


# ---------------------------------------------------------------- balanced-d20


def balanced(round_joined: int | None, *, round_: int, turn: int | None, current: str | None) -> dict[str, Any]:
    rows = fighters((A, 18.0), (B, 3.0), stats={"dex": 2, "int": 4})
    if round_joined is not None:
        rows[1]["roundJoined"] = round_joined
    doc = combat("cmbtBalanced0001", rows, round_=round_, turn=turn)
    t = Contact("balanced-d20")
    ack = t.meet(doc, current).ack
    assert ack["ok"], ack
    return ack


def test_BI_2_no_clever_reroll_offer_for_a_roll_made_before_the_sidecar_joined() -> None:
    ack = balanced(None, round_=1, turn=0, current=A)  # B: 3 with Int +4, natural unknown
    assert ack["prompts"] == [] and entries(ack["plans"][0])[B]["initiative"] == 3.0


def test_BI_3_without_roundJoined_a_combatant_in_round_3_has_had_its_first_turn() -> None:
    ack = balanced(None, round_=3, turn=0, current=A)
    assert entries(ack["plans"][0])[B]["reaction"] == {"available": True, "reason": "available"}


def test_BI_3_with_roundJoined_a_combatant_who_joined_this_round_has_not() -> None:
    ack = balanced(3, round_=3, turn=0, current=A)
    reaction = entries(ack["plans"][0])[B]["reaction"]
    assert reaction["available"] is False and reaction["reason"] == "before_first_turn"


def test_BI_3_in_round_1_the_turns_foundry_shows_as_over_count() -> None:
    ack = balanced(None, round_=1, turn=1, current=B)  # A acted, B's turn in progress
    by_id = entries(ack["plans"][0])
    assert by_id[A]["reaction"]["available"] and by_id[B]["reaction"]["available"]
    ack = balanced(None, round_=1, turn=0, current=A)
    assert entries(ack["plans"][0])[B]["reaction"]["reason"] == "before_first_turn"


def test_BI_3_a_ready_to_strike_declared_before_applies_when_the_combat_is_first_met() -> None:
    rows = fighters((A, 14.0), (B, 9.0), stats={"dex": 2, "int": 1})
    doc = combat("cmbtReadyMet0001", rows, round_=1, turn=1)  # surprise matters in round 1
    t = Contact("balanced-d20")
    t.send("intent", {"kind": "ready.start", "args": {
        "actor_id": rows[0]["actorId"], "token_id": rows[0]["tokenId"], "owners": [PLAYER],
        "watching": [rows[1]["tokenId"]], "sees": True, "weapon_ready": True}})
    t.send("intent", {"kind": "ready.confirm", "args": {"actor_id": rows[0]["actorId"]}})
    plan = t.meet(doc, B).ack["plans"][0]
    assert "surprise_immune" in entries(plan)[A]["tags"]


# ---------------------------------------------------------------- dice-pool

FIVE_DICE = {"reaction": 3, "wits": 2, "size": 0}


def dice_pool(value: float, round_joined: int | None, round_: int, stats: dict[str, Any] | None = None,
              ) -> tuple[Contact, dict[str, Any]]:
    rows = fighters((A, 4.07), (B, value), stats=FIVE_DICE if stats is None else stats)
    if round_joined is not None:
        rows[1]["roundJoined"] = round_joined
    doc = combat("cmbtDicePool0001", rows, round_=round_, turn=0)
    t = Contact("dice-pool")
    ack = t.meet(doc, A).ack
    assert ack["ok"], ack
    return t, ack["plans"][0]


def test_DP_a_stored_value_is_the_net_successes_with_the_base_from_the_stats() -> None:
    t, plan = dice_pool(2.0, None, 1)
    b = entries(plan)[B]
    assert (b["detail"]["successes"], b["detail"]["base"]) == (2, 5)
    assert b["initiative"] == 2.0  # as stored: no rule moved it
    state = t.world.combats["cmbtDicePool0001"].combatants[B].ext
    assert isinstance(state, DicePoolState) and state.roll.net == 2 and state.roll.dice == ()


def test_DP_without_stats_the_base_is_read_from_the_values_decimals() -> None:
    _, plan = dice_pool(-0.95, None, 1, stats={})
    b = entries(plan)[B]
    assert (b["detail"]["successes"], b["detail"]["base"], b["initiative"]) == (-1, 5, -0.95)


def test_DP_4_without_roundJoined_a_failure_rolled_in_round_1_is_over_by_round_2() -> None:
    _, plan = dice_pool(-0.95, None, 2)  # −1: one turn lost, in round 1
    assert entries(plan)[B]["acts"] == "full"


def test_DP_4_with_roundJoined_the_lost_turn_is_this_rounds() -> None:
    _, plan = dice_pool(-0.95, 2, 2)  # joined (and rolled) in round 2: loses this turn
    b = entries(plan)[B]
    assert b["acts"] == "defend_only" and "hesitating" in b["tags"]


def test_DP_a_pool_roll_resent_behind_an_adopted_value_changes_nothing() -> None:
    t, before = dice_pool(2.0, None, 1)
    doc = combat("cmbtDicePool0001", fighters((A, 4.07), (B, 2.0), stats=FIVE_DICE), round_=1, turn=0)
    resent = pool_roll([6, 5, 4, 1, 2])  # net 2
    ack = t.send("hook", {"hook": "initiativeRoll", "combat": doc,
                          "current": {"round": 1, "turn": 0, "combatantId": A, "tokenId": None},
                          "roll": {"combatant_id": B, "roll": resent}}).ack
    assert ack["ok"] and ack["plans"] == []
    assert t.plan(doc["_id"])["order"] == before["order"]


def test_DP_5_a_combatant_with_a_stored_value_does_not_roll_again() -> None:
    t, _ = dice_pool(2.0, None, 1)
    doc = combat("cmbtDicePool0001", fighters((A, 4.07), (B, 2.0), stats=FIVE_DICE), round_=1, turn=0)
    ack = t.send("hook", {"hook": "initiativeRoll", "combat": doc,
                          "current": {"round": 1, "turn": 0, "combatantId": A, "tokenId": None},
                          "roll": {"combatant_id": B, "roll": pool_roll([6, 5, 4, 4, 1])}}).ack
    assert not ack["ok"] and ack["error"]["rule"] == "DP-5"


# ---------------------------------------------------------------- storyteller


def test_ST_1_a_hold_after_first_contact_uses_the_adopted_scores() -> None:
    doc = combat("cmbtStoryteller1", fighters((A, 10.0), (B, 6.0)), round_=1, turn=0)
    t = Contact("storyteller")
    t.meet(doc, A)
    t.send("intent", {"kind": "hold", "combat_id": doc["_id"], "combatant_id": A, "args": {}})
    ack = t.send("intent", {"kind": "act", "combat_id": doc["_id"], "combatant_id": A,
                            "args": {"after": B}}).ack
    assert ack["ok"], ack
    assert [(e["combatant_id"], e["initiative"]) for e in ack["plans"][-1]["order"]] == [(B, 6.0), (A, 5.0)]


