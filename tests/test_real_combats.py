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
import math
from pathlib import Path
from typing import Any

import pytest

from tests.engine.first_contact import Contact, entries
from tests.foundry import d20_roll, foundry_sort
from tests.rulesets.dice_pool.dp_table import pool_roll

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
    current: str | None = fixture["foundry_current"]["combatantId"]
    return current


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


# ---------------------------------------------------------------- the hand-built first-contact
# tests of tests/engine/test_first_contact.py, run again over every real document they apply to

GONE = "cmbGone000000001"  # an id in no document
PLAYER = "pLyr000000000001"
WITH_COMBATANTS = sorted(n for n, f in CORPUS.items() if f["combat"]["combatants"])


def defeated(c: dict[str, Any]) -> bool:
    return bool(c.get("defeated", False))


@pytest.mark.parametrize("name", WITH_COMBATANTS)
def test_defeated_and_hidden_flags_of_a_real_combat_are_taken_as_they_stand(name: str) -> None:
    _, plan = meet(name, "foundry-core")
    for c in CORPUS[name]["combat"]["combatants"]:
        entry = entries(plan)[c["_id"]]
        if defeated(c):
            assert (entry["acts"], "defeated" in entry["tags"]) == ("none", True), c["_id"]
        else:  # hidden combatants take their turns
            assert (entry["acts"], "defeated" in entry["tags"]) == ("full", False), c["_id"]


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("name", STARTED)
def test_a_real_combat_met_with_a_pointer_on_an_unknown_combatant_has_no_current(name: str, ruleset: str) -> None:
    doc = CORPUS[name]["combat"]
    ack = Contact(ruleset).meet(doc, GONE).ack
    assert ack["ok"], ack
    plan = ack["plans"][0]
    assert (plan["round"], plan["current"], plan["turn"]) == (doc["round"], None, None)
    assert {cid: e["initiative"] for cid, e in entries(plan).items()} == stored(doc)


# ---------------------------------------------------------------- balanced-d20 over the corpus


def rolled_as(value: float) -> dict[str, Any]:
    """A d20 roll (``Roll#toJSON()``) whose total is ``value``, decimals and all (dnd5e's
    Dexterity tie-breaker adds them to the total)."""
    natural = min(20, max(1, int(value)))
    roll = d20_roll(natural, int(value) - natural)
    return {**roll, "total": value}


def rolled(doc: dict[str, Any]) -> dict[str, float]:
    """The combatants with a stored initiative, and that value."""
    return {cid: v for cid, v in stored(doc).items() if v is not None}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_BI_2_no_clever_reroll_is_offered_for_the_rolls_a_real_combat_holds(name: str) -> None:
    ack = Contact("balanced-d20").meet(CORPUS[name]["combat"], foundrys_current(CORPUS[name])).ack
    assert ack["ok"] and ack["prompts"] == []


def first_turn_expected(doc: dict[str, Any], plan: dict[str, Any], cid: str) -> bool:
    """BI-3 ruling without ``roundJoined``: in the fight since round 1, so a turn of it has
    begun in any round before this one, or this round if Foundry's pointer is on or past it."""
    if doc["round"] < 1:
        return False
    if doc["round"] >= 2:
        return True
    order = [e["combatant_id"] for e in plan["order"]]
    return plan["current"] is not None and order.index(cid) <= order.index(plan["current"])


@pytest.mark.parametrize("name", WITH_COMBATANTS)
def test_BI_3_the_reactions_of_a_real_combat_follow_the_turns_foundry_shows(name: str) -> None:
    doc = CORPUS[name]["combat"]
    _, plan = meet(name, "balanced-d20")
    for c in doc["combatants"]:
        reaction = entries(plan)[c["_id"]]["reaction"]
        if defeated(c):
            expected = (False, "defeated")
        elif first_turn_expected(doc, plan, c["_id"]):
            expected = (True, "available")
        else:
            expected = (False, "before_first_turn")
        assert (reaction["available"], reaction["reason"]) == expected, c["_id"]


@pytest.mark.parametrize("name", ROLLED)
def test_each_roll_of_a_real_combat_resent_changes_nothing_and_a_new_one_counts(name: str) -> None:
    doc = CORPUS[name]["combat"]
    t, before = meet(name, "balanced-d20")
    pointer = {"round": doc["round"], "turn": None, "combatantId": foundrys_current(CORPUS[name]), "tokenId": None}
    for cid, value in rolled(doc).items():  # the module resending each last roll after the sidecar lost its history
        ack = t.send("hook", {"hook": "initiativeRoll", "combat": doc, "current": pointer,
                              "roll": {"combatant_id": cid, "roll": rolled_as(value)}}).ack
        assert ack["ok"] and ack["plans"] == [] and ack["prompts"] == [], ack
    assert t.plan(doc["_id"])["order"] == before["order"]
    cid, value = next(iter(rolled(doc).items()))
    new = value + 1
    ack = t.send("hook", {"hook": "initiativeRoll", "combat": doc, "current": pointer,
                          "roll": {"combatant_id": cid, "roll": rolled_as(new)}}).ack
    assert ack["ok"], ack  # the GM's new roll is BI-1's value
    assert t.world.combats[doc["_id"]].combatants[cid].score == new
    written = {e["combatant_id"]: e["initiative"] for e in ack["plans"][0]["order"]}
    assert new <= written[cid] < new + 1  # a tie with another value is written distinct
    assert written[cid] not in [v for other, v in written.items() if other != cid]


@pytest.mark.parametrize("name", ROLLED)
def test_BI_2_a_player_rolling_again_over_a_real_value_is_refused_by_name_or_id(name: str) -> None:
    doc = json.loads(json.dumps(CORPUS[name]["combat"]))
    for c in doc["combatants"]:
        c["owners"] = [PLAYER]  # what the module adds from the actor's ownership
    t = Contact("balanced-d20")
    assert t.meet(doc, foundrys_current(CORPUS[name])).ack["ok"]
    row = next(c for c in doc["combatants"] if c["_id"] in rolled(doc))
    value = rolled(doc)[row["_id"]]
    ack = t.send("hook", {"hook": "initiativeRoll", "user": PLAYER, "combat": doc,
                          "current": {"round": doc["round"], "turn": None, "combatantId": None, "tokenId": None},
                          "roll": {"combatant_id": row["_id"], "roll": rolled_as(value + 1)}}).ack
    assert not ack["ok"] and ack["error"]["rule"] == "BI-2"
    assert ack["error"]["message"].startswith(f"{row.get('name') or row['_id']} has rolled initiative already")


NOT_STARTED_ROLLED = sorted(n for n in ROLLED if CORPUS[n]["combat"]["round"] == 0)


@pytest.mark.parametrize("name", NOT_STARTED_ROLLED)
def test_a_roll_bringing_a_real_combat_first_is_given_to_the_rules(name: str) -> None:
    doc = CORPUS[name]["combat"]
    cid, value = next(iter(rolled(doc).items()))
    ack = Contact("balanced-d20").send("hook", {
        "hook": "initiativeRoll", "combat": doc,
        "current": {"round": 0, "turn": None, "combatantId": None, "tokenId": None},
        "roll": {"combatant_id": cid, "roll": rolled_as(value)}}).ack
    assert ack["ok"], ack  # the value in the document is this roll, not an earlier one
    assert {c: e["initiative"] for c, e in entries(ack["plans"][0]).items()} == stored(doc)


# ---------------------------------------------------------------- dice-pool over the corpus


def pool_of_net(net: int) -> dict[str, Any]:
    """A pool roll whose net successes are ``net`` (sixes count one, ones cancel one)."""
    return pool_roll([6] * net if net > 0 else [1] * -net if net < 0 else [2])


@pytest.mark.parametrize("name", ROLLED)
def test_DP_3_a_real_value_is_the_net_successes_with_the_base_in_its_two_decimals(name: str) -> None:
    _, plan = meet(name, "dice-pool")
    for cid, value in rolled(CORPUS[name]["combat"]).items():
        hundredths = round((value - math.floor(value)) * 100, 6)
        detail = entries(plan)[cid]["detail"]  # no stats in a stored document: DP-2's decimals
        assert (detail["successes"], detail["base"]) == (math.floor(value), int(hundredths) if hundredths.is_integer() else 0)
        assert entries(plan)[cid]["initiative"] == value


FIVE_DICE = {"reaction": 3, "wits": 2, "size": 0}  # stats as the module adds them from the actor


def met_with_stats(name: str) -> tuple[Contact, dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The real combat met under dice-pool, its combatants with the stats the module adds."""
    doc = json.loads(json.dumps(CORPUS[name]["combat"]))
    for c in doc["combatants"]:
        c["stats"] = FIVE_DICE
    t = Contact("dice-pool")
    plan = t.meet(doc, foundrys_current(CORPUS[name])).ack["plans"][0]
    pointer = {"round": doc["round"], "turn": None, "combatantId": foundrys_current(CORPUS[name]), "tokenId": None}
    return t, doc, plan, pointer


def a_new_pool(value: float) -> dict[str, Any]:
    """Five dice whose net is not the value's (not the roll behind it)."""
    return pool_roll([6, 2, 2, 2, 2] if math.floor(value) != 1 else [6, 6, 2, 2, 2])


@pytest.mark.parametrize("name", ROLLED)
def test_DP_5_each_real_value_resent_changes_nothing(name: str) -> None:
    t, doc, before, pointer = met_with_stats(name)
    assert {cid: e["initiative"] for cid, e in entries(before).items()} == stored(doc)  # DP-2: as stored
    for cid, value in rolled(doc).items():
        net = math.floor(value)
        ack = t.send("hook", {"hook": "initiativeRoll", "combat": doc, "current": pointer,
                              "roll": {"combatant_id": cid, "roll": pool_of_net(net)}}).ack
        assert ack["ok"] and ack["plans"] == [], ack
    assert t.plan(doc["_id"])["order"] == before["order"]


@pytest.mark.parametrize("name", sorted(set(ROLLED) & set(STARTED)))
def test_DP_5_in_a_started_real_combat_a_stored_value_does_not_roll_again(name: str) -> None:
    t, doc, _, pointer = met_with_stats(name)
    cid, value = next(iter(rolled(doc).items()))
    ack = t.send("hook", {"hook": "initiativeRoll", "combat": doc, "current": pointer,
                          "roll": {"combatant_id": cid, "roll": a_new_pool(value)}}).ack
    assert not ack["ok"] and ack["error"]["rule"] == "DP-5"


@pytest.mark.parametrize("name", NOT_STARTED_ROLLED)
def test_DP_5_before_a_real_combat_starts_a_new_pool_replaces_the_stored_value(name: str) -> None:
    t, doc, _, pointer = met_with_stats(name)
    cid, value = next(iter(rolled(doc).items()))
    roll = a_new_pool(value)
    ack = t.send("hook", {"hook": "initiativeRoll", "combat": doc, "current": pointer,
                          "roll": {"combatant_id": cid, "roll": roll}}).ack
    assert ack["ok"], ack
    assert t.world.combats[doc["_id"]].combatants[cid].score == roll["total"]


# ---------------------------------------------------------------- storyteller over the corpus


def holders(name: str) -> tuple[str, str] | None:
    """Foundry's current combatant of a started real combat, rolled and standing, and the
    first rolled, standing combatant after it: who holds and whom it acts after (ST-1)."""
    doc = CORPUS[name]["combat"]
    now, values = foundrys_current(CORPUS[name]), stored(doc)
    standing = {c["_id"] for c in doc["combatants"] if not defeated(c) and values[c["_id"]] is not None}
    if doc["round"] < 1 or now is None or now not in standing:
        return None
    turns = foundrys_turns(doc)
    later = [cid for cid in turns[turns.index(now) + 1:] if cid in standing]
    return (now, later[0]) if later else None


HOLDING = {n: pair for n in CORPUS if (pair := holders(n)) is not None}


@pytest.mark.parametrize("name", sorted(HOLDING))
def test_ST_1_a_real_combatant_holding_acts_right_after_the_one_it_chose(name: str) -> None:
    doc = CORPUS[name]["combat"]
    holder, after = HOLDING[name]
    t, _ = meet(name, "storyteller")
    assert t.send("intent", {"kind": "hold", "combat_id": doc["_id"], "combatant_id": holder, "args": {}}).ack["ok"]
    ack = t.send("intent", {"kind": "act", "combat_id": doc["_id"], "combatant_id": holder,
                            "args": {"after": after}}).ack
    assert ack["ok"], ack
    plan = ack["plans"][-1]
    order = [e["combatant_id"] for e in plan["order"]]
    assert order.index(holder) == order.index(after) + 1
    written = {e["combatant_id"]: e["initiative"] for e in plan["order"]}
    assert written[holder] < written[after]  # the score just below (ST-E1: 10 after 6 is 5)
    assert foundry_sort(written) == order  # Foundry's own sort of the written values agrees


# ---------------------------------------------------------------- what the corpus covers

GENERATIONS = ("before 10", "10", "11", "12", "13", "14")


def generation(fixture: dict[str, Any]) -> str:
    """Foundry's major version that stored the document: ``_stats.coreVersion``; a document
    with ``_stats`` but no version was migrated and stored by 10 (``_stats`` came with 10);
    one without ``_stats`` was stored before 10."""
    doc = fixture["combat"]
    if "_stats" not in doc:
        return "before 10"
    version = (doc["_stats"] or {}).get("coreVersion")
    return str(version).split(".")[0] if version else "10"


def system(fixture: dict[str, Any]) -> str:
    """``_stats.systemId``, else what the fixture's source says of the world (or unknown)."""
    system_id = (fixture["combat"].get("_stats") or {}).get("systemId")
    said = fixture["source"]["system"]
    return str(system_id or ("unknown" if said.startswith("unknown") else said.split()[0]))


def coverage_table() -> str:
    """The README's table: documents per Foundry generation and system."""
    systems = sorted({system(f) for f in CORPUS.values()}, key=lambda s: (s == "unknown", s))
    count = {(g, s): 0 for g in GENERATIONS for s in systems}
    for f in CORPUS.values():
        count[generation(f), system(f)] += 1
    lines = ["| Foundry | " + " | ".join(systems) + " | all |",
             "|---|" + "---:|" * (len(systems) + 1)]
    for g in GENERATIONS:
        row = [count[g, s] for s in systems]
        lines.append(f"| {g} | " + " | ".join(str(n) for n in row) + f" | {sum(row)} |")
    return "\n".join(lines)


def test_the_readme_coverage_table_counts_the_corpus() -> None:
    assert coverage_table() in (FIXTURES / "README.md").read_text(encoding="utf-8")
    assert {generation(f) for f in CORPUS.values()} <= set(GENERATIONS)
