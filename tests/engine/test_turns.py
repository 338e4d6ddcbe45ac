"""Turn bookkeeping: every turn crossed is seen by the rules; the plan corrects the pointer."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

import pytest

from adapter.engine import World
from adapter.engine.context import Ctx
from adapter.engine.events import RoundEnded, RoundStarted, TurnEnded, TurnStarted
from adapter.engine.model import Combat
from adapter.engine.ruleset import Entry, Ruleset, chain
from adapter.errors import NotPermitted, RuleViolation
from adapter.rulesets import RULESETS
from tests import decoded
from tests.decoded import hook as Hook
from tests.decoded import intent as Intent
from tests.foundry import combat, combatant, current, d20_roll


def record(ctx: Ctx, combat: Combat, event: TurnStarted | TurnEnded | RoundStarted | RoundEnded) -> Combat:
    """Writes every turn event into Combat.ext, so tests can read what the rules saw."""
    if isinstance(event, TurnStarted):
        item = f"start {event.combatant_id}"
    elif isinstance(event, TurnEnded):
        item = f"end {event.combatant_id}" + (" skipped" if event.skipped else "")
    else:
        item = f"{type(event).__name__} {event.round}"
    return replace(combat, ext=(combat.ext or ()) + (item,))


def describe(c: Combat, who: Any) -> Entry:
    if who.defeated:
        return Entry(acts="none")
    return Entry(acts="held" if who.stats.get("held") else "full")


TEST_TURNS = Ruleset(
    id="test-turns",
    on=chain(RULESETS["foundry-core"].on, {e: (record,) for e in (TurnStarted, TurnEnded, RoundStarted, RoundEnded)}),
    describe=describe,
)
apply = partial(decoded.apply, rulesets={**RULESETS, "test-turns": TEST_TURNS})

IDS = ["a", "b", "c", "d"]


def world_with_rolls(stats: dict[str, dict[str, Any]] | None = None) -> tuple[World, dict[str, Any]]:
    fighters = [combatant(i, i.upper(), stats=(stats or {}).get(i, {})) for i in IDS]
    data = combat("c1", fighters)
    w = World(world="w", ruleset="test-turns", gm_users=frozenset({"gm"}))
    seq = 0
    for i, natural in zip(IDS, (18, 15, 12, 9)):
        seq += 1
        w = apply(w, Hook(seq, "gm", 0, "initiativeRoll", data, current(), roll={"combatant_id": i, "roll": d20_roll(natural)})).world
    return w, data


def move(w: World, data: dict[str, Any], round_: int, who: str) -> tuple[World, dict[str, Any]]:
    data = {**data, "round": round_}
    out = apply(w, Hook(w.last_seq + 1, "gm", 0, "updateCombat", data, current(round_, who)))
    return out.world, out.plans[0] if out.plans else {}


def seen(w: World) -> tuple[str, ...]:
    return w.combats["c1"].ext or ()


def test_start_begins_the_first_turn_whoever_foundry_points_at() -> None:
    w, data = world_with_rolls()
    w, plan = move(w, data, 1, "c")
    assert plan["current"] == "a" and plan["turn"] == 0
    assert seen(w) == ("RoundStarted 1", "start a")


def test_jumping_ahead_ends_and_begins_every_turn_in_between() -> None:
    w, data = world_with_rolls()
    w, _ = move(w, data, 1, "a")
    w, plan = move(w, data, 1, "d")
    assert plan["current"] == "d"
    assert seen(w)[2:] == ("end a", "start b", "end b skipped", "start c", "end c skipped", "start d")


def test_round_change_ends_the_rest_of_the_round_and_starts_at_the_first_who_acts() -> None:
    w, data = world_with_rolls({"a": {"held": True}})
    w, _ = move(w, data, 1, "b")
    w, plan = move(w, data, 2, "a")  # Foundry points at a, who does not act: corrected to b
    assert plan["round"] == 2 and plan["current"] == "b"
    assert "RoundEnded 1" in seen(w)
    tail = seen(w)[seen(w).index("RoundEnded 1"):]
    assert tail == ("RoundEnded 1", "RoundStarted 2", "start a", "end a skipped", "start b")


def test_going_back_moves_the_pointer_without_turn_events() -> None:
    w, data = world_with_rolls()
    w, _ = move(w, data, 1, "a")
    w, _ = move(w, data, 1, "c")
    before = seen(w)
    w, plan = move(w, data, 1, "a")
    assert plan["current"] == "a" and seen(w) == before


def test_defeated_combatants_are_passed_over() -> None:
    w, data = world_with_rolls()
    data["combatants"][1]["is_defeated"] = True
    w, plan = move(w, data, 1, "a")
    w, plan = move(w, data, 1, "b")
    assert plan["current"] == "c"
    assert plan["order"][1]["acts"] == "none"


def test_removing_the_current_combatant_begins_the_next_turn() -> None:
    w, data = world_with_rolls()
    w, _ = move(w, data, 1, "a")
    smaller = {**data, "round": 1, "combatants": [c for c in data["combatants"] if c["_id"] != "a"]}
    out = apply(w, Hook(w.last_seq + 1, "gm", 0, "deleteCombatant", smaller, current(1, "b")))
    assert out.plans[0]["current"] == "b"
    assert [e["combatant_id"] for e in out.plans[0]["order"]] == ["b", "c", "d"]


def test_next_round_preview_shows_the_first_who_acts() -> None:
    w, data = world_with_rolls({"a": {"held": True}})
    w, plan = move(w, data, 1, "b")
    assert plan["next_round"]["round"] == 2 and plan["next_round"]["current"] == "b"


def test_initiative_set_is_for_gms_only_and_moves_the_combatant() -> None:
    w, data = world_with_rolls()
    with pytest.raises(NotPermitted):
        apply(w, Intent(w.last_seq + 1, "player", 0, "initiative.set", "c1", "d", {"value": 30}))
    out = apply(w, Intent(w.last_seq + 1, "gm", 0, "initiative.set", "c1", "d", {"value": 30}))
    assert out.plans[0]["order"][0] == {**out.plans[0]["order"][0], "combatant_id": "d", "initiative": 30.0}


def test_an_intent_the_ruleset_does_not_have_is_a_rule_violation() -> None:
    w, data = world_with_rolls()
    with pytest.raises(RuleViolation) as refused:
        apply(w, Intent(w.last_seq + 1, "gm", 0, "dash", "c1", "d", {"amount": 2}))
    assert refused.value.path == "/kind"


def test_a_refused_message_leaves_the_world_as_it_was() -> None:
    w, data = world_with_rolls()
    snapshot = w
    with pytest.raises(NotPermitted):
        apply(w, Intent(w.last_seq + 1, "player", 0, "initiative.set", "c1", "d", {"value": 30}))
    assert w == snapshot


def test_a_player_rolls_initiative_only_for_a_combatant_it_owns() -> None:
    fighters = [combatant("a", "A", owners=["alice"]), combatant("b", "B", npc=True)]
    data = combat("c1", fighters)
    w = World(world="w", ruleset="test-turns", gm_users=frozenset({"gm"}))
    with pytest.raises(NotPermitted) as refused:
        apply(w, Hook(1, "alice", 0, "initiativeRoll", data, current(), roll={"combatant_id": "b", "roll": d20_roll(20)}))
    assert refused.value.path == "/roll/combatant_id"
    out = apply(w, Hook(1, "alice", 0, "initiativeRoll", data, current(), roll={"combatant_id": "a", "roll": d20_roll(12)}))
    assert out.plans[0]["order"][0]["combatant_id"] == "a"
    out = apply(out.world, Hook(2, "gm", 0, "initiativeRoll", data, current(), roll={"combatant_id": "b", "roll": d20_roll(5)}))
    assert [e["initiative"] for e in out.plans[0]["order"]] == [12.0, 5.0]


def test_every_move_is_checked_against_the_transition_table(monkeypatch: pytest.MonkeyPatch) -> None:
    from adapter.engine import turns

    w, data = world_with_rolls()
    table = dict(turns.TRANSITIONS)
    del table[(turns.Phase.NOT_STARTED, "start")]
    monkeypatch.setattr(turns, "TRANSITIONS", table)
    with pytest.raises(AssertionError, match="not_started -start->"):
        move(w, data, 1, "a")
