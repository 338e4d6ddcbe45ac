"""The raw real Combat documents of ``../shared/real-combats`` met by the sidecar (issue 25).

230 Combat documents from public Foundry worlds (v11 to v13, eleven systems; provenance in
each file and in that folder's README) are read in place, never copied into this repository.
Each is sent as the module would send it the first time the sidecar sees that combat (an
``updateCombat`` carrying ``combat.toObject()`` with the fields the module adds, and
Foundry's ``combat.current``), through the real pipeline, and:

- under ``foundry-core``, first contact writes nothing, with core's Skip Defeated off (its
  default) and on: the plan keeps every stored initiative, the round and Foundry's current
  combatant, and says nothing of a combatant that the module would have to write (every
  entry plain, or a defeat the document states);
- Foundry's Next Turn and Next Round from each document land where core lands
  (``core_next_turn``/``core_next_round`` below, from ../shared/research/foundry-api.md
  section 3): the sidecar, told where core went, plans that very pointer and round, with
  ``turn: null`` kept null, a stored turn past the end, hidden combatants (who get turns) and
  defeated ones (``Combatant#isDefeated``: the ``defeated`` field or the actor's defeated
  status, which the module sends as ``is_defeated``), with core's Skip Defeated off (its
  default) and on, which the module sends as the combat's ``skip_defeated``;
- a pointer written directly on a later row (the GM's click on its turn control, a macro's
  ``combat.update({turn})``), on a defeated combatant where there is one, stays where core
  keeps it, with the setting off and on (core skips the defeated only in Next Turn/Round);
- under each rule-bearing ruleset, first contact writes only the sidecar's own flags: the
  initiatives, the round and the pointer stay as Foundry holds them.

Without ``../shared`` (a user's clone) the module is skipped with one line saying why;
``INITIATIVE_SHARED`` names another folder. ``.ci/run`` sets ``INITIATIVE_REQUIRE_SHARED=1``,
which makes a missing folder a collection error instead, and checks that these tests ran.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.engine.first_contact import Contact, entries

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("INITIATIVE_SHARED") or ROOT.parent / "shared")
FOLDER = SHARED / "real-combats"
RULE_BEARING = ("balanced-d20", "dice-pool", "storyteller")


def load() -> dict[str, dict[str, Any]]:
    """Every document the folder's index lists, by its file name under the folder."""
    index = json.loads((FOLDER / "index.json").read_text(encoding="utf-8"))
    return {e["file"]: json.loads((FOLDER / e["file"]).read_text(encoding="utf-8"))["combat"]
            for e in index["entries"]}


if not (FOLDER / "index.json").is_file():
    if os.environ.get("INITIATIVE_REQUIRE_SHARED") == "1":
        raise RuntimeError(f"INITIATIVE_REQUIRE_SHARED=1 but {FOLDER} has no index.json: "
                           "the real Combat documents must be there (CI clones ../shared)")
    pytest.skip(f"{FOLDER} is not there: the real Combat documents of ../shared are read in place, "
                "never copied into the repository", allow_module_level=True)

DOCS = load()
NAMES = sorted(DOCS)


# ---------------------------------------------------------------- Foundry core, independently


def core_turns(doc: dict[str, Any]) -> list[str]:
    """``Combat#turns``: ``_sortCombatants``, initiative descending, a non-number as
    -Infinity (last), ties by ``_id`` string comparison."""
    def key(c: dict[str, Any]) -> tuple[float, str]:
        value = c.get("initiative")
        number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else float("-inf")
        return (-number, c["_id"])
    return [c["_id"] for c in sorted(doc["combatants"], key=key)]


@dataclass(frozen=True)
class Pointer:
    """Where a combat stands on a client: ``combat.round``, ``combat.turn``, ``combat.combatant``."""

    round: int
    turn: int | None
    current: str | None


Sort = Callable[[dict[str, Any]], list[str]]


def core_loaded(doc: dict[str, Any], sort: Sort = core_turns) -> Pointer:
    """``Combat#setupTurns`` on a client that loads the document: a stored ``turn`` past the
    end becomes 0 of the next round (on that client; the document keeps its numbers)."""
    turns, round_, turn = sort(doc), doc["round"], doc.get("turn")
    if turn is not None:
        assert turn >= 0, "no document of the corpus has a negative turn"
        if turn >= len(turns):
            turn, round_ = 0, round_ + 1
    return Pointer(round_, turn, turns[turn] if turn is not None else None)


def core_next_round(doc: dict[str, Any], at: Pointer, dead: set[str], skip: bool,
                    sort: Sort = core_turns) -> Pointer:
    """``Combat#nextRound``: turn 0, or null if nobody's turn is current ("Preserve the fact
    that it's no-one's turn currently"); with Skip Defeated the first not defeated (0 if none)."""
    turns = sort(doc)
    turn: int | None = None if at.turn is None else 0
    if skip and turn is not None:
        turn = next((i for i, cid in enumerate(turns) if cid not in dead), 0)
    return Pointer(at.round + 1, turn, turns[turn] if turn is not None else None)


def core_next_turn(doc: dict[str, Any], at: Pointer, dead: set[str], skip: bool,
                   sort: Sort = core_turns) -> Pointer:
    """``Combat#nextTurn``: round 0 goes to ``nextRound``; else the next index (``turn ?? -1``
    plus one, or with Skip Defeated the first later one not defeated), past the end (or none)
    ``nextRound``."""
    turns = sort(doc)
    if at.round == 0:
        return core_next_round(doc, at, dead, skip, sort)
    after = -1 if at.turn is None else at.turn
    following: int | None
    if skip:
        following = next((i for i, cid in enumerate(turns) if i > after and cid not in dead), None)
    else:
        following = after + 1
    if following is None or following >= len(turns):
        return core_next_round(doc, at, dead, skip, sort)
    return Pointer(at.round, following, turns[following])


# ---------------------------------------------------------------- the module's message


def as_sent(doc: dict[str, Any], skip: bool, dead_by_status: frozenset[str] = frozenset()) -> dict[str, Any]:
    """``combat.toObject()`` with what the module adds (foundry-data.js): core's Skip Defeated
    as ``skip_defeated``, and to each combatant its name (the stored one, else ``Combatant
    N``), owners, NPC, ``is_defeated`` (the field or the actor's defeated status) and stats.
    The document itself is left as stored."""
    out: dict[str, Any] = json.loads(json.dumps(doc))
    out["skip_defeated"] = skip
    for i, c in enumerate(out["combatants"]):
        c["name"] = c.get("name") or f"Combatant {i + 1}"
        c["owners"], c["is_npc"], c["stats"] = [], True, {}
        c["is_defeated"] = bool(c.get("defeated")) or c["_id"] in dead_by_status
    return out


def defeated(doc: dict[str, Any], dead_by_status: frozenset[str] = frozenset()) -> set[str]:
    """``Combatant#isDefeated`` of every combatant."""
    return {c["_id"] for c in doc["combatants"] if c.get("defeated")} | set(dead_by_status)


def report(t: Contact, doc: dict[str, Any], at: Pointer, skip: bool, dead_by_status: frozenset[str]) -> dict[str, Any]:
    """The ``updateCombat`` of Foundry standing at ``at``: the document with its round and
    turn, ``combat.current`` as the client computes it."""
    sent = as_sent(doc, skip, dead_by_status)
    sent["round"], sent["turn"] = at.round, at.turn
    current = {"round": at.round, "turn": at.turn, "combatantId": at.current, "tokenId": None}
    ack = t.send("hook", {"hook": "updateCombat", "combat": sent, "current": current,
                          "changed": {"_id": doc["_id"], "round": at.round, "turn": at.turn},
                          "options": {"direction": 1}}).ack
    assert ack["ok"], ack
    plan: dict[str, Any] = t.plan(doc["_id"])
    return plan


def stored(doc: dict[str, Any]) -> dict[str, float | None]:
    return {c["_id"]: (float(c["initiative"]) if isinstance(c.get("initiative"), (int, float)) else None)
            for c in doc["combatants"]}


def meet(name: str, ruleset: str, skip: bool = False, dead_by_status: frozenset[str] = frozenset(),
         sort: Sort | None = None) -> tuple[Contact, dict[str, Any]]:
    """First contact; with ``sort``, the module states that order as Foundry's (``turn_order``)."""
    doc = DOCS[name] if sort is None else {**DOCS[name], "turn_order": sort(DOCS[name])}
    t = Contact(ruleset)
    at = core_loaded(doc, sort or core_turns)
    ack = t.send("hook", {"hook": "updateCombat", "combat": as_sent(doc, skip, dead_by_status),
                          "current": {"round": at.round, "turn": at.turn, "combatantId": at.current,
                                      "tokenId": None}}).ack
    assert ack["ok"], ack
    return t, t.plan(doc["_id"])


def foundry_writes(doc: dict[str, Any], plan: dict[str, Any], sort: Sort = core_turns) -> list[str]:
    """What the module would have to write outside its own flags to make Foundry (sorting by
    ``sort``) hold the plan: an initiative, the round, the pointer."""
    at = core_loaded(doc, sort)
    out = [f"initiative of {cid}: {value} -> {entries(plan)[cid]['initiative']}"
           for cid, value in stored(doc).items() if entries(plan)[cid]["initiative"] != value]
    if plan["round"] not in (doc["round"], at.round):
        out.append(f"round {doc['round']} -> {plan['round']}")
    if doc["round"] >= 1 and plan["current"] != at.current:
        out.append(f"current {at.current} -> {plan['current']}")
    return out


def flag_writes(doc: dict[str, Any], plan: dict[str, Any], dead: set[str]) -> list[str]:
    """What the module would write in its own flags under ``foundry-core``: any entry that is
    not plain (acts in full, nothing to say), unless it only restates a defeat (with Skip
    Defeated on; off, a defeated combatant acts in full, its entry plain)."""
    out = []
    for cid, e in entries(plan).items():
        says = {k: e.get(k) for k in ("tags", "rules", "actions", "gm_actions") if e.get(k)}
        if e.get("reaction") or e.get("detail"):
            says.update(reaction=e.get("reaction"), detail=e.get("detail"))
        if cid in dead and e["acts"] == "none" and says == {"tags": ["defeated"]}:
            continue
        if e["acts"] != "full" or says:
            out.append(f"{cid}: acts {e['acts']}, {says}")
    return out


# ---------------------------------------------------------------- the corpus


def test_every_document_of_the_index_is_read_from_shared() -> None:
    index = json.loads((FOLDER / "index.json").read_text(encoding="utf-8"))
    assert len(DOCS) == index["count"] == len(index["entries"]) >= 230
    assert {e["generation"] for e in index["entries"]} >= {"v11", "v12", "v13"}
    shapes = {t for e in index["entries"] for t in e["tags"]}
    assert {"turn-null", "turn-out-of-range", "hidden-combatant", "defeated-combatant"} <= shapes


# ---------------------------------------------------------------- first contact


@pytest.mark.parametrize("skip", [False, True], ids=["skip defeated off", "skip defeated on"])
@pytest.mark.parametrize("name", NAMES)
def test_first_contact_under_foundry_core_writes_nothing(name: str, skip: bool) -> None:
    _, plan = meet(name, "foundry-core", skip)
    assert foundry_writes(DOCS[name], plan) == []
    assert flag_writes(DOCS[name], plan, defeated(DOCS[name])) == []


@pytest.mark.parametrize("ruleset", RULE_BEARING)
@pytest.mark.parametrize("name", NAMES)
def test_first_contact_under_a_rule_bearing_ruleset_writes_only_the_sidecars_flags(name: str, ruleset: str) -> None:
    _, plan = meet(name, ruleset)  # Skip Defeated off, core's default (these rulesets pass over a defeat anyway)
    assert foundry_writes(DOCS[name], plan) == []


# ---------------------------------------------------------------- Next Turn, Next Round


def struck(doc: dict[str, Any]) -> frozenset[str]:
    """A combatant whose actor carries the defeated status (the ``defeated`` field unset):
    the one core's Next Turn would reach next without Skip Defeated, where there is one."""
    at = core_loaded(doc)
    landing = core_next_turn(doc, at, defeated(doc), skip=False).current
    return frozenset({landing}) if landing is not None and landing != at.current else frozenset()


MOVES = {"next turn": core_next_turn, "next round": core_next_round}
#: the tracker offers Next Turn and Next Round once the combat has begun (round 0 shows Begin Combat)
STARTED = [n for n in NAMES if DOCS[n]["round"] >= 1]


#: core's Skip Defeated off (its default) and on; with it on, also with the combatant it would
#: reach next defeated by its actor's status only (with it off, core gives that one its turn)
SETTINGS = {"skip defeated off": (False, False), "skip defeated on": (True, False),
            "skip defeated on, the next one dead by status": (True, True)}


@pytest.mark.parametrize("setting", list(SETTINGS))
@pytest.mark.parametrize("move", sorted(MOVES))
@pytest.mark.parametrize("name", STARTED)
def test_next_turn_and_next_round_land_where_foundry_core_lands(
    name: str, move: str, setting: str,
) -> None:
    doc = DOCS[name]
    skip, by_status = SETTINGS[setting]
    dead_by_status = struck(doc) if by_status else frozenset()
    t, _ = meet(name, "foundry-core", skip, dead_by_status)
    landing = MOVES[move](doc, core_loaded(doc), defeated(doc, dead_by_status), skip)
    plan = report(t, doc, landing, skip, dead_by_status)
    assert (plan["round"], plan["current"]) == (landing.round, landing.current)
    if landing.turn is not None:
        assert plan["order"][plan["turn"]]["combatant_id"] == landing.current
    assert {cid: e["initiative"] for cid, e in entries(plan).items()} == stored(doc)


def core_turn_written(doc: dict[str, Any], at: Pointer, dead: set[str]) -> Pointer:
    """``combat.update({turn})`` (the GM's click on a row's turn control, a macro, another
    module): core keeps the index as written, defeated or not, whatever Skip Defeated says
    (it skips only in ``nextTurn``/``nextRound``). The row written: the first defeated one
    after Foundry's current combatant, else the last row."""
    turns = core_turns(doc)
    after = -1 if at.turn is None else at.turn
    row = next((i for i, cid in enumerate(turns) if i > after and cid in dead), len(turns) - 1)
    return Pointer(at.round, row, turns[row])


@pytest.mark.parametrize("setting", list(SETTINGS))
@pytest.mark.parametrize("name", [n for n in STARTED if DOCS[n]["combatants"]])
def test_a_pointer_written_on_a_later_row_stays_where_foundry_core_keeps_it(name: str, setting: str) -> None:
    doc = DOCS[name]
    skip, by_status = SETTINGS[setting]
    dead_by_status = struck(doc) if by_status else frozenset()
    t, _ = meet(name, "foundry-core", skip, dead_by_status)
    landing = core_turn_written(doc, core_loaded(doc), defeated(doc, dead_by_status))
    plan = report(t, doc, landing, skip, dead_by_status)
    assert (plan["round"], plan["current"]) == (landing.round, landing.current)
    assert plan["order"][plan["turn"]]["combatant_id"] == landing.current


# ---------------------------------------------------------------- a system's own tie rule


SYSTEMS = {e["file"]: e["system_id"]
           for e in json.loads((FOLDER / "index.json").read_text(encoding="utf-8"))["entries"]}


def pf2e_turns(doc: dict[str, Any]) -> list[str]:
    """pf2e's ``EncounterPF2e._sortCombatants`` (../shared/research/foundry-api.md section 3;
    the module's double, ``pf2eSort``): an exact tie of two numbers goes by the lower
    ``flags.pf2e.overridePriority[<initiative>]`` (else the actor's tiebreak priority, which
    the Combat document does not carry: 3), then the id; anything else as core."""
    def priority(c: dict[str, Any]) -> float:
        value = (((c.get("flags") or {}).get("pf2e") or {}).get("overridePriority") or {}).get(
            str(int(c["initiative"])) if float(c["initiative"]).is_integer() else str(c["initiative"]))
        return 3 if value is None else value

    def key(c: dict[str, Any]) -> tuple[float, float, str]:
        value = c.get("initiative")
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return (float("inf"), 0, c["_id"])
        return (-value, priority(c), c["_id"])
    return [c["_id"] for c in sorted(doc["combatants"], key=key)]


def ties_reversed(doc: dict[str, Any]) -> list[str]:
    """A system whose tie rule runs against the id (as dnd5e's names may): core's order with
    each run of equal stored initiatives reversed."""
    turns, values = core_turns(doc), stored(doc)
    out: list[str] = []
    for cid in turns:
        run_start = len(out)
        while run_start > 0 and values[out[run_start - 1]] == values[cid] and values[cid] is not None:
            run_start -= 1
        out.insert(run_start, cid)
    return out


#: documents where the system's order is not core's (pf2e's own, from the document's flags),
#: and every document with a stored tie under a tie rule against the id
SYSTEM_ORDERS = {
    **{f"{n} (pf2e)": (n, pf2e_turns) for n in STARTED
       if SYSTEMS[n] == "pf2e" and pf2e_turns(DOCS[n]) != core_turns(DOCS[n])},
    **{f"{n} (ties reversed)": (n, ties_reversed) for n in STARTED
       if ties_reversed(DOCS[n]) != core_turns(DOCS[n])},
}


@pytest.mark.parametrize("ruleset", RULE_BEARING)
@pytest.mark.parametrize("case", sorted(SYSTEM_ORDERS))
def test_first_contact_with_a_stated_order_under_a_rule_bearing_ruleset_writes_only_the_sidecars_flags(
        case: str, ruleset: str) -> None:
    """The rulings break a full tie by ``_id``, against the system's stated order: a tie
    Foundry stores is kept unwritten all the same, and so are the round and the pointer."""
    name, sort = SYSTEM_ORDERS[case]
    _, plan = meet(name, ruleset, sort=sort)
    assert foundry_writes(DOCS[name], plan, sort) == []


def test_the_corpus_holds_a_tie_that_pf2e_breaks_against_the_id() -> None:
    assert any(k.endswith("(pf2e)") for k in SYSTEM_ORDERS), "no pf2e tie: the check below would say little"
    assert sum(k.endswith("(ties reversed)") for k in SYSTEM_ORDERS) >= 5


@pytest.mark.parametrize("move", sorted(MOVES))
@pytest.mark.parametrize("case", sorted(SYSTEM_ORDERS))
def test_a_tie_goes_as_the_stated_turn_order_has_it_under_foundry_core(case: str, move: str) -> None:
    """The module states Foundry's own order (``turn_order``: ``combat.turns``, the system's
    sort): first contact writes nothing, and Next Turn and Next Round land where that
    Foundry lands, the new round at the first of its order (issue 25; the pf2e document was
    the module test's one known departure while the sidecar broke ties by id)."""
    name, sort = SYSTEM_ORDERS[case]
    doc = {**DOCS[name], "turn_order": sort(DOCS[name])}
    at = core_loaded(doc, sort)
    t = Contact("foundry-core")
    sent = as_sent(doc, False)
    ack = t.send("hook", {"hook": "updateCombat", "combat": sent, "current": {
        "round": at.round, "turn": at.turn, "combatantId": at.current, "tokenId": None}}).ack
    assert ack["ok"], ack
    first = t.plan(doc["_id"])
    assert [e["combatant_id"] for e in first["order"]] == sort(doc)
    assert {cid: e["initiative"] for cid, e in entries(first).items()} == stored(doc)  # nothing written
    assert first["round"] in (doc["round"], at.round) and first["current"] == at.current
    landing = MOVES[move](doc, at, defeated(doc), False, sort)
    plan = report(t, doc, landing, False, frozenset())
    assert (plan["round"], plan["current"]) == (landing.round, landing.current)
    if landing.turn is not None:
        assert plan["order"][plan["turn"]]["combatant_id"] == landing.current
    assert {cid: e["initiative"] for cid, e in entries(plan).items()} == stored(doc)
