"""Turn bookkeeping: every turn crossed is seen by the rules; the plan corrects the pointer."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from adapter.engine.context import Ctx
from adapter.engine.events import RoundEnded, RoundStarted, TurnEnded, TurnStarted
from adapter.engine.model import Combat
from adapter.engine.ruleset import Entry, Ruleset, chain
from adapter.errors import NotPermitted, RuleViolation
from adapter.rulesets import RULESETS
from tests.foundry import combatant, d20_roll
from tests.support.table import Table


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
#: handed to the one table beside the built-in rulesets
TEST_RULESETS = {"test-turns": TEST_TURNS}


IDS = ["a", "b", "c", "d"]


def world_with_rolls(stats: dict[str, dict[str, Any]] | None = None) -> Table:
    """a 18, b 15, c 12, d 9 under ``test-turns``, on the one test table."""
    t = Table("test-turns", world="w", gm="gm", combat_id="c1", rulesets=TEST_RULESETS)
    t.at.roster.extend(combatant(i, i.upper(), stats=(stats or {}).get(i, {})) for i in IDS)
    for i, natural in zip(IDS, (18, 15, 12, 9)):
        t.send(t.roll_message(d20_roll(natural), cid=i))
    return t


def move(t: Table, round_: int, who: str) -> dict[str, Any]:
    """Foundry's pointer moved by hand (no steering): the plan that comes back, if any."""
    t.at.round, t.at.pointer = round_, who
    plans: list[dict[str, Any]] = t.hook("updateCombat")["plans"]
    return plans[0] if plans else {}


def seen(t: Table) -> tuple[str, ...]:
    ext: tuple[str, ...] = t.world.combats["c1"].ext or ()
    return ext


def test_start_begins_the_first_turn_whoever_foundry_points_at() -> None:
    t = world_with_rolls()
    plan = move(t, 1, "c")
    assert plan["current"] == "a" and plan["turn"] == 0
    assert seen(t) == ("RoundStarted 1", "start a")


def test_jumping_ahead_ends_and_begins_every_turn_in_between() -> None:
    t = world_with_rolls()
    move(t, 1, "a")
    plan = move(t, 1, "d")
    assert plan["current"] == "d"
    assert seen(t)[2:] == ("end a", "start b", "end b skipped", "start c", "end c skipped", "start d")


def test_round_change_ends_the_rest_of_the_round_and_starts_at_the_first_who_acts() -> None:
    t = world_with_rolls({"a": {"held": True}})
    move(t, 1, "b")
    plan = move(t, 2, "a")  # Foundry points at a, who does not act: corrected to b
    assert plan["round"] == 2 and plan["current"] == "b"
    assert "RoundEnded 1" in seen(t)
    tail = seen(t)[seen(t).index("RoundEnded 1"):]
    assert tail == ("RoundEnded 1", "RoundStarted 2", "start a", "end a skipped", "start b")


def test_going_back_moves_the_pointer_without_turn_events() -> None:
    t = world_with_rolls()
    move(t, 1, "a")
    move(t, 1, "c")
    before = seen(t)
    plan = move(t, 1, "a")
    assert plan["current"] == "a" and seen(t) == before


def test_defeated_combatants_are_passed_over() -> None:
    t = world_with_rolls()
    t.at.person("b")["is_defeated"] = True
    move(t, 1, "a")
    plan = move(t, 1, "b")
    assert plan["current"] == "c"
    assert plan["order"][1]["acts"] == "none"


def test_removing_the_current_combatant_begins_the_next_turn() -> None:
    t = world_with_rolls()
    move(t, 1, "a")
    [plan] = t.leave("a")["plans"]  # Foundry's pointer moves on to b
    assert plan["current"] == "b"
    assert [e["combatant_id"] for e in plan["order"]] == ["b", "c", "d"]


def test_next_round_preview_shows_the_first_who_acts() -> None:
    t = world_with_rolls({"a": {"held": True}})
    plan = move(t, 1, "b")
    assert plan["next_round"]["round"] == 2 and plan["next_round"]["current"] == "b"


def test_initiative_set_is_for_gms_only_and_moves_the_combatant() -> None:
    t = world_with_rolls()
    with pytest.raises(NotPermitted):
        t.ask("initiative.set", "d", {"value": 30}, user="player")
    [plan] = t.ask("initiative.set", "d", {"value": 30})["plans"]
    assert plan["order"][0] == {**plan["order"][0], "combatant_id": "d", "initiative": 30.0}


def test_an_intent_the_ruleset_does_not_have_is_a_rule_violation() -> None:
    t = world_with_rolls()
    with pytest.raises(RuleViolation) as refused:
        t.ask("dash", "d", {"amount": 2})
    assert refused.value.path == "/kind"


def test_a_refused_message_leaves_the_world_as_it_was() -> None:
    t = world_with_rolls()
    snapshot = t.world
    with pytest.raises(NotPermitted):
        t.ask("initiative.set", "d", {"value": 30}, user="player")
    assert t.world == replace(snapshot, last_seq=t.seq)


def test_a_player_rolls_initiative_only_for_a_combatant_it_owns() -> None:
    t = Table("test-turns", world="w", gm="gm", combat_id="c1", rulesets=TEST_RULESETS)
    t.at.roster.extend([combatant("a", "A", owners=["alice"]), combatant("b", "B", npc=True)])
    with pytest.raises(NotPermitted) as refused:
        t.send(t.roll_message(d20_roll(20), cid="b", user="alice"))
    assert refused.value.path == "/roll/combatant_id"
    [plan] = t.send(t.roll_message(d20_roll(12), cid="a", user="alice"))["plans"]
    assert plan["order"][0]["combatant_id"] == "a"
    [plan] = t.send(t.roll_message(d20_roll(5), cid="b"))["plans"]
    assert [e["initiative"] for e in plan["order"]] == [12.0, 5.0]


def test_every_move_is_checked_against_the_transition_table(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    from adapter.engine import turns

    t = world_with_rolls()
    table = dict(turns.TRANSITIONS)
    del table[(turns.Phase.NOT_STARTED, "start")]
    monkeypatch.setattr(turns, "TRANSITIONS", table)
    with pytest.raises(AssertionError, match="internal_error"):  # the one table never expects one
        move(t, 1, "a")
    assert "not_started -start->" in caplog.text  # the pipeline logged the engine's failure
