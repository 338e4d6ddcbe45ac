"""Real Combat documents from public Foundry worlds, each met as first contact (issue 17).

``tests/fixtures/real-combats/*.json`` hold the documents with their provenance (repository,
commit, path, line) and Foundry's current combatant derived from the document. Each is sent
as the first message the sidecar sees of that combat (an ``updateCombat`` carrying it, as
when a GM enables the module mid-fight or the sidecar lost its database), through the real
pipeline, under every ruleset. The plan must agree with the document, so that the module
would write nothing: the round, Foundry's current combatant (or none), every initiative as
stored (null where the document has null or no key at all).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from adapter.engine.order import foundry_sort
from tests.engine.first_contact import Contact, entries

FIXTURES = Path(__file__).parent / "fixtures" / "real-combats"
CORPUS = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(FIXTURES.glob("*.json"))}
RULESETS = ("foundry-core", "balanced-d20", "dice-pool", "storyteller")


def stored(doc: dict[str, Any]) -> dict[str, float | None]:
    """Each combatant's initiative as the document stores it (no key: None)."""
    values: dict[str, float | None] = {}
    for c in doc["combatants"]:
        value = c.get("initiative")
        values[c["_id"]] = float(value) if isinstance(value, (int, float)) else None
    return values


def foundrys_current(fixture: dict[str, Any]) -> str | None:
    return fixture["foundry_current"]["combatantId"]


def writes(fixture: dict[str, Any], plan: dict[str, Any]) -> list[str]:
    """What the module would have to write to make the combat match the plan."""
    doc = fixture["combat"]
    out = [f"initiative of {cid}: {value} -> {entries(plan)[cid]['initiative']}"
           for cid, value in stored(doc).items() if entries(plan)[cid]["initiative"] != value]
    if plan["round"] != doc["round"]:
        out.append(f"round {doc['round']} -> {plan['round']}")
    if doc["round"] >= 1 and plan["current"] != foundrys_current(fixture):
        out.append(f"current {foundrys_current(fixture)} -> {plan['current']}")
    return out


def meet(name: str, ruleset: str) -> tuple[Contact, dict[str, Any]]:
    fixture = CORPUS[name]
    t = Contact(ruleset)
    ack = t.meet(fixture["combat"], foundrys_current(fixture)).ack
    assert ack["ok"], ack
    plan = ack["plans"][0] if ack["plans"] else t.plan(fixture["combat"]["_id"])
    return t, plan


def test_the_corpus_has_its_provenance_and_its_variety() -> None:
    assert len(CORPUS) >= 25
    for name, fixture in CORPUS.items():
        source = fixture["source"]
        assert source["repository"].count("/") == 1 and len(source["commit"]) == 40, name
        assert source["path"] and source["line"] >= 1, name
    docs = [f["combat"] for f in CORPUS.values()]
    assert any(d["round"] >= 8 for d in docs)  # far into a fight
    assert any(d["round"] >= 1 and d["turn"] is None for d in docs)  # lancer's turn null
    assert any(v is not None and v != int(v) for d in docs for v in stored(d).values())  # decimals
    assert any("initiative" not in c for d in docs for c in d["combatants"])  # no key at all
    assert any(c.get("name") == "" for d in docs for c in d["combatants"])  # empty names
    assert any("name" not in c for d in docs for c in d["combatants"])  # absent names


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_a_real_combat_met_first_is_acked_and_the_plan_agrees_with_it(name: str, ruleset: str) -> None:
    _, plan = meet(name, ruleset)
    assert writes(CORPUS[name], plan) == []


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_foundrys_sort_reproduces_the_plan_of_a_real_combat(name: str, ruleset: str) -> None:
    _, plan = meet(name, ruleset)
    values = {e["combatant_id"]: e["initiative"] for e in plan["order"]}
    assert foundry_sort(values) == [e["combatant_id"] for e in plan["order"]]
    if plan["current"] is not None:
        assert plan["order"][plan["turn"]]["combatant_id"] == plan["current"]


ROLLED = sorted(n for n, f in CORPUS.items() if any(v is not None for v in stored(f["combat"]).values()))


@pytest.mark.parametrize("name", ROLLED)
def test_after_first_contact_a_later_snapshot_does_not_reset_scores(name: str) -> None:
    t, _ = meet(name, "foundry-core")
    doc = json.loads(json.dumps(CORPUS[name]["combat"]))
    for c in doc["combatants"]:
        c["initiative"] = None  # e.g. a module clearing values: the sidecar keeps its own
    t.hook(doc, foundrys_current(CORPUS[name]))
    kept = {cid: e["initiative"] for cid, e in entries(t.plan(doc["_id"])).items()}
    assert kept == stored(CORPUS[name]["combat"])


@pytest.mark.parametrize("name", ROLLED)
def test_a_gm_number_equal_to_another_value_is_written_distinct(name: str) -> None:
    t, plan = meet(name, "foundry-core")
    values = stored(CORPUS[name]["combat"])
    rolled = [cid for cid, v in values.items() if v is not None]
    target = max(rolled, key=lambda cid: (values[cid], cid))  # the top value...
    other = min(values, key=lambda cid: (values[cid] is not None, cid))
    ack = t.send("intent", {"kind": "initiative.set", "combat_id": CORPUS[name]["combat"]["_id"],
                            "combatant_id": other, "args": {"value": values[target]}}).ack
    assert ack["ok"], ack
    after = {e["combatant_id"]: e["initiative"] for e in t.plan(CORPUS[name]["combat"]["_id"])["order"]}
    others = [v for cid, v in after.items() if cid != other and v is not None]
    assert after[other] not in others  # ...given to someone else: the new value is its own


def foundrys_turns(doc: dict[str, Any]) -> list[str]:
    """``combat.turns`` as core sorts it (initiative descending, no number last, ties by id)."""
    values = stored(doc)
    return foundry_sort(values)


STARTED = sorted(n for n, f in CORPUS.items() if f["combat"]["round"] >= 1 and f["combat"]["combatants"])


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("name", STARTED)
def test_after_first_contact_the_next_turn_and_the_next_round_are_followed(name: str, ruleset: str) -> None:
    t, _ = meet(name, ruleset)
    doc = json.loads(json.dumps(CORPUS[name]["combat"]))
    turns = foundrys_turns(doc)
    now = foundrys_current(CORPUS[name])
    following = turns[(turns.index(now) + 1) % len(turns)] if now in turns else turns[0]
    ack = t.hook(doc, following).ack  # Foundry's nextTurn (or a pick, where turn was null)
    assert ack["ok"], ack
    plan = t.plan(doc["_id"])
    assert plan["round"] == doc["round"]
    order = [e["combatant_id"] for e in plan["order"]]
    if ruleset == "foundry-core" and now in turns and turns.index(now) + 1 < len(turns):
        # forward within the round: the pointer lands there, passing over the defeated
        acting = [e["combatant_id"] for e in plan["order"][order.index(following):] if e["acts"] != "none"]
        assert plan["current"] == (acting[0] if acting else None)
    doc["round"] += 1  # Foundry's nextRound: the pointer back at the top
    ack = t.hook(doc, turns[0]).ack
    assert ack["ok"], ack
    assert t.plan(doc["_id"])["round"] == doc["round"]
