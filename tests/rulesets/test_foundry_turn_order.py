"""Foundry's own turn order, as the module states it (``turn_order``: the ids of
``combat.turns``, the system's ``_sortCombatants``), breaks the ties the rules leave (issue 25).

A pf2e tie at 20 (``flags.pf2e.overridePriority``) puts ``c`` before ``b``, against core's
``_id`` rule. Met at round 1 on the last turn, Foundry's Next Turn starts round 2 at ``c``:
under ``foundry-core`` the sidecar lands there too and writes nothing (on the code before
the field it started the round at ``b`` and moved Foundry's pointer). Without the field,
ties go by ``_id`` as before (every golden recording replays unchanged). The rule-bearing
rulesets break a full tie by ``_id`` as their rulings write, whatever the stated order.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.engine.first_contact import Contact, entries
from tests.foundry import combat, combatant

#: Foundry's order in a pf2e world: the tie at 20 by override priority, c first
PF2E_TURNS = ["c", "b", "a"]


def tied_fight(stated: bool) -> dict[str, Any]:
    fighters = [{**combatant(cid, cid.upper()), "initiative": value}
                for cid, value in (("a", 10), ("b", 20), ("c", 20))]
    doc = combat("c1", fighters, round_=1, turn=2, system=("pf2e", "6.12.4"))
    if stated:
        doc["turn_order"] = PF2E_TURNS
    return doc


def met(ruleset: str, doc: dict[str, Any]) -> tuple[Contact, dict[str, Any]]:
    t = Contact(ruleset)
    assert t.meet(doc, "a").ack["ok"]
    return t, t.plan("c1")


def initiatives(plan: dict[str, Any]) -> dict[str, Any]:
    return {cid: e["initiative"] for cid, e in entries(plan).items()}


def test_a_new_round_starts_at_the_first_of_the_stated_order_under_foundry_core() -> None:
    doc = tied_fight(stated=True)
    t, plan = met("foundry-core", doc)
    assert [e["combatant_id"] for e in plan["order"]] == PF2E_TURNS
    assert initiatives(plan) == {"a": 10, "b": 20, "c": 20}  # the stored tie stays: nothing written
    # core's Next Turn past the end: round 2, turn 0 of Foundry's turns
    assert t.hook({**doc, "round": 2, "turn": 0}, "c").ack["ok"]
    plan = t.plan("c1")
    assert (plan["round"], plan["current"], plan["turn"]) == (2, "c", 0)
    assert initiatives(plan) == {"a": 10, "b": 20, "c": 20}


def test_the_preview_of_the_next_round_starts_at_the_first_of_the_stated_order() -> None:
    _, plan = met("foundry-core", tied_fight(stated=True))
    assert plan["next_round"]["current"] == "c"


def test_without_a_stated_order_ties_go_by_id_as_core_breaks_them() -> None:
    _, plan = met("foundry-core", tied_fight(stated=False))
    assert [e["combatant_id"] for e in plan["order"]] == ["b", "c", "a"]
    assert plan["next_round"]["current"] == "b"


@pytest.mark.parametrize("ruleset", ["balanced-d20", "storyteller"])
def test_a_full_tie_goes_by_id_against_the_stated_order_under_a_rule_bearing_ruleset(ruleset: str) -> None:
    """The rulings "then Foundry's own order (`_id`)": with no Dexterity or modifier to tell
    b and c apart, ``_id`` decides, not pf2e's stated order, and the stored tie is written
    back as stored (nothing written at first contact)."""
    _, plan = met(ruleset, tied_fight(stated=True))
    assert [e["combatant_id"] for e in plan["order"]] == ["b", "c", "a"]
    assert initiatives(plan) == {"a": 10, "b": 20, "c": 20}
    assert plan["next_round"]["current"] == "b"


@pytest.mark.parametrize("ruleset", ["balanced-d20", "storyteller"])
def test_a_roll_into_a_full_tie_is_placed_by_id_under_a_rule_bearing_ruleset(ruleset: str) -> None:
    """A roll into a tie goes where ``_id`` puts it, wherever the system's sort shows it."""
    doc = tied_fight(stated=True)
    t, _ = met(ruleset, doc)
    rolled = [{**c, "initiative": 20} if c["_id"] == "a" else c for c in doc["combatants"]]
    roll = {"combatant_id": "a", "roll": {"class": "Roll", "formula": "1d20", "total": 20, "terms": [
        {"class": "Die", "faces": 20, "number": 1, "results": [{"result": 20, "active": True}]}]}}
    ack = t.hook({**doc, "combatants": rolled, "turn_order": ["c", "b", "a"]}, "a", "initiativeRoll", roll=roll).ack
    assert ack["ok"], ack
    assert t.plan("c1")["next_round"]["current"] == "a"


def test_a_roll_into_a_tie_is_placed_as_the_system_sorts_it_under_foundry_core() -> None:
    """The snapshot of an ``initiativeRoll`` is built after Foundry re-sorted (the module
    sends hooks a microtask later): the new tie goes where the stated order puts it."""
    doc = tied_fight(stated=True)
    t, _ = met("foundry-core", doc)
    rolled = [{**c, "initiative": 20} if c["_id"] == "a" else c for c in doc["combatants"]]
    roll = {"combatant_id": "a", "roll": {"class": "Roll", "formula": "1d20", "total": 20, "terms": [
        {"class": "Die", "faces": 20, "number": 1, "results": [{"result": 20, "active": True}]}]}}
    sent = {**doc, "combatants": rolled, "turn_order": ["c", "a", "b"]}
    ack = t.hook(sent, "a", "initiativeRoll", roll=roll).ack
    assert ack["ok"], ack
    assert [e["combatant_id"] for e in t.plan("c1")["order"]] == ["c", "a", "b"]
