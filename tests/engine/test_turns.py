"""Turn bookkeeping: every turn crossed is seen by the rules; the plan corrects the pointer."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
from msgspec import Struct
from msgspec.structs import replace

from adapter.engine import World, turns
from adapter.engine.context import Ctx
from adapter.engine.events import RoundEnded, RoundStarted, TurnEnded, TurnStarted
from adapter.engine.model import Combat, CombatExt
from adapter.engine.ruleset import Entry, Ruleset, chain
from adapter.engine.turns import TURN_TABLE, Move, Phase, classify, phase
from adapter.errors import InternalError, NotPermitted, RuleViolation
from adapter.rulesets import RULESETS
from tests import decoded
from tests.decoded import hook as Hook
from tests.decoded import intent as Intent
from tests.engine.first_contact import Contact
from tests.foundry import combat, combatant, current, d20_roll


class Seen(Struct, CombatExt, frozen=True, tag=True):
    """What the rules saw, in order (the test rulesets' own combat state)."""

    items: tuple[str, ...] = ()


def record(ctx: Ctx, combat: Combat, event: TurnStarted | TurnEnded | RoundStarted | RoundEnded) -> Combat:
    """Writes every turn event into Combat.ext, so tests can read what the rules saw."""
    if isinstance(event, TurnStarted):
        item = f"start {event.combatant_id}"
    elif isinstance(event, TurnEnded):
        item = f"end {event.combatant_id}" + (" skipped" if event.skipped else "")
    else:
        item = f"{type(event).__name__} {event.round}"
    return replace(combat, ext=Seen(seen_of(combat) + (item,)))


def describe(c: Combat, who: Any) -> Entry:
    if who.defeated:
        return Entry(acts="none")
    return Entry(acts="held" if who.stats.get("held") else "full")


TEST_TURNS = Ruleset(
    id="test-turns",
    on=chain(RULESETS["foundry-core"].on, {e: (record,) for e in (TurnStarted, TurnEnded, RoundStarted, RoundEnded)}),
    describe=describe,
)
#: the same, keeping nobody's turn into a new round as Foundry core does (``foundry-core``)
TEST_TURNS_CORE = replace(TEST_TURNS, id="test-turns-core", keeps_null_turn=True)
apply = partial(decoded.apply, rulesets={**RULESETS, "test-turns": TEST_TURNS, "test-turns-core": TEST_TURNS_CORE})

IDS = ["a", "b", "c", "d"]


def world_with_rolls(stats: dict[str, dict[str, Any]] | None = None,
                     ruleset: str = "test-turns") -> tuple[World, dict[str, Any]]:
    fighters = [combatant(i, i.upper(), stats=(stats or {}).get(i, {})) for i in IDS]
    data = combat("c1", fighters)
    w = World(world="w", ruleset=ruleset, gm_users=frozenset({"gm"}))
    seq = 0
    for i, natural in zip(IDS, (18, 15, 12, 9)):
        seq += 1
        w = apply(w, Hook(seq, "gm", 0, "initiativeRoll", data, current(), roll={"combatant_id": i, "roll": d20_roll(natural)})).world
    return w, data


def move(w: World, data: dict[str, Any], round_: int, who: str | None) -> tuple[World, dict[str, Any]]:
    data = {**data, "round": round_}
    out = apply(w, Hook(w.last_seq + 1, "gm", 0, "updateCombat", data, current(round_, who)))
    return out.world, out.plans[0] if out.plans else {}


def seen(w: World) -> tuple[str, ...]:
    return seen_of(w.combats["c1"])


def test_start_begins_the_first_turn_whoever_foundry_points_at() -> None:
    w, data = world_with_rolls()
    w, plan = move(w, data, 1, "c")
    assert plan["current"] == "a" and plan["turn"] == 0
    assert seen(w) == ("RoundStarted 1", "start a")


def test_a_start_straight_into_a_later_round_keeps_foundrys_round() -> None:
    w, data = world_with_rolls()
    w, plan = move(w, data, 5, "a")
    assert (plan["round"], plan["current"]) == (5, "a")
    assert seen(w) == ("RoundStarted 5", "start a")


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


def test_a_jump_of_many_rounds_plays_the_first_ones_and_lets_the_rest_pass_at_once() -> None:
    w, data = world_with_rolls()
    w, _ = move(w, data, 1, "a")
    w, plan = move(w, data, 1_000_000, "a")
    assert plan["round"] == 1_000_000 and plan["current"] == "a"
    rounds = [e for e in seen(w) if e.startswith("Round")]
    ended = [e for e in rounds if e.startswith("RoundEnded")]
    assert ended == [f"RoundEnded {r}" for r in range(1, turns.PLAYED_ROUNDS + 1)]
    assert rounds[-1] == "RoundStarted 1000000"
    assert rounds[-2] == f"RoundEnded {turns.PLAYED_ROUNDS}"


def test_a_jump_within_the_played_rounds_plays_every_round() -> None:
    w, data = world_with_rolls()
    w, _ = move(w, data, 1, "a")
    w, plan = move(w, data, turns.PLAYED_ROUNDS + 1, "a")
    rounds = [e for e in seen(w) if e.startswith("Round")]
    assert rounds[1:] == [x for r in range(1, turns.PLAYED_ROUNDS + 1) for x in (f"RoundEnded {r}", f"RoundStarted {r + 1}")]


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


def skip_defeated_fight(ruleset: str, dead: tuple[str, ...], skip: bool | None,
                        at: str | None = "a") -> tuple[Contact, dict[str, Any]]:
    """A started fight (a 18, b 15, c 12, d 9) met at round 1 on ``at``, with ``dead``
    defeated and core's Skip Defeated as the module sends it (None: absent)."""
    fighters = [{**combatant(i, i.upper(), defeated=i in dead), "initiative": v}
                for i, v in zip(IDS, (18, 15, 12, 9))]
    doc = combat("c1", fighters, round_=1, turn=IDS.index(at) if at else None)
    if skip is not None:
        doc["skip_defeated"] = skip
    t = Contact(ruleset)
    assert t.meet(doc, at).ack["ok"]
    return t, doc


def foundry_moved(t: Contact, doc: dict[str, Any], round_: int, who: str | None) -> dict[str, Any]:
    """Foundry's report after core's Next Turn or Next Round landed on ``who``."""
    assert t.hook({**doc, "round": round_, "turn": IDS.index(who) if who else None}, who).ack["ok"]
    return t.plan("c1")


def test_skip_defeated_off_gives_a_defeated_combatant_its_turn_under_foundry_core() -> None:
    """Core's ``nextTurn``/``nextRound`` without Skip Defeated (its default) stop on a
    defeated combatant like anyone: the sidecar plans that very turn, and its preview of
    the next round starts on the defeated first combatant too."""
    t, doc = skip_defeated_fight("foundry-core", ("b", "a"), skip=False)
    plan = foundry_moved(t, doc, 1, "b")  # Next Turn from a
    assert (plan["round"], plan["current"], plan["turn"]) == (1, "b", 1)
    assert plan["order"][1]["acts"] == "full"
    assert plan["next_round"]["current"] == "a"
    plan = foundry_moved(t, doc, 2, "a")  # Next Round
    assert (plan["round"], plan["current"]) == (2, "a")


def test_skip_defeated_on_passes_a_defeated_combatant_over_under_foundry_core() -> None:
    """With Skip Defeated on, core's Next Turn goes to the first later combatant not
    defeated, and Next Round to the first not defeated: the sidecar's turns and preview too."""
    t, doc = skip_defeated_fight("foundry-core", ("b", "a"), skip=True)
    assert t.plan("c1")["next_round"]["current"] == "c"
    plan = foundry_moved(t, doc, 1, "c")  # Next Turn from a
    assert (plan["current"], plan["order"][1]["acts"], plan["order"][1]["tags"]) == ("c", "none", ["defeated"])
    plan = foundry_moved(t, doc, 2, "c")  # Next Round
    assert (plan["round"], plan["current"]) == (2, "c")


def test_skip_defeated_is_read_from_every_snapshot_not_only_the_first() -> None:
    """The GM turns Skip Defeated off mid-fight: the next report carries it, and the
    defeated combatant Foundry lands on gets its turn."""
    t, doc = skip_defeated_fight("foundry-core", ("b",), skip=True)
    plan = foundry_moved(t, {**doc, "skip_defeated": False}, 1, "b")
    assert plan["current"] == "b"


def test_skip_defeated_on_with_nobody_left_standing_starts_the_round_at_the_first_under_foundry_core() -> None:
    """Core's ``nextRound`` with Skip Defeated and nobody standing warns "none remaining"
    and takes turn 0: the sidecar starts the round there, not with nobody's turn."""
    t, doc = skip_defeated_fight("foundry-core", tuple(IDS), skip=True)
    assert t.plan("c1")["next_round"]["current"] == "a"
    plan = foundry_moved(t, doc, 2, "a")  # Next Turn from a: nobody later, so Next Round
    assert (plan["round"], plan["current"], plan["turn"]) == (2, "a", 0)


def test_an_absent_skip_defeated_passes_a_defeated_combatant_over_as_before() -> None:
    """A module that does not send the field (an old module, an old recording): the sidecar
    passes over a defeated combatant, as it did before it was told (docs/protocol.md)."""
    t, doc = skip_defeated_fight("foundry-core", ("b",), skip=None)
    plan = foundry_moved(t, doc, 1, "b")
    assert plan["current"] == "c"


def test_a_pointer_set_on_a_defeated_combatant_with_skip_defeated_on_stays_there_under_foundry_core() -> None:
    """Core skips the defeated only in ``nextTurn``/``nextRound``: a pointer written directly
    (the GM's click on a row's turn control, a macro's or another module's
    ``combat.update({turn})``) stays on a defeated combatant with Skip Defeated on. The
    sidecar, told the setting, keeps it there (turns crossed end, the defeated one's begins),
    so the module moves nothing; core's Next Turn from there goes on to the next standing."""
    t, doc = skip_defeated_fight("foundry-core", ("b", "c"), skip=True)
    plan = foundry_moved(t, doc, 1, "c")  # the GM clicks c's row: b passed over, c current
    assert (plan["round"], plan["current"], plan["turn"]) == (1, "c", 2)
    assert (plan["order"][2]["acts"], plan["order"][2]["tags"]) == ("none", ["defeated"])
    plan = foundry_moved(t, doc, 1, "d")  # core's Next Turn from c
    assert (plan["current"], plan["turn"]) == ("d", 3)


@pytest.mark.parametrize("skip", [False, True])
@pytest.mark.parametrize("ruleset", ["balanced-d20", "dice-pool", "storyteller"])
def test_a_rule_bearing_ruleset_passes_a_defeated_combatant_over_whatever_skip_defeated_says(ruleset: str, skip: bool) -> None:
    """The decision of docs/rules.md ("Defeated combatants and Skip Defeated"): a defeated
    combatant does not act under these rules, so its turn is passed over with the setting off,
    and with it on even where Foundry's pointer was set on it directly."""
    t, doc = skip_defeated_fight(ruleset, ("b",), skip=skip)
    plan = foundry_moved(t, doc, 1, "b")  # core's Next Turn from a (off) or a click on b (on)
    assert plan["current"] == "c"
    assert plan["order"][1]["acts"] == "none" and "defeated" in plan["order"][1]["tags"]


@pytest.mark.parametrize("ruleset", ["balanced-d20", "dice-pool", "storyteller"])
def test_a_rule_bearing_ruleset_with_nobody_left_standing_starts_the_round_with_nobodys_turn(ruleset: str) -> None:
    t, doc = skip_defeated_fight(ruleset, tuple(IDS), skip=True)
    plan = foundry_moved(t, doc, 2, "a")  # core's Next Round with Skip Defeated: "none remaining", turn 0
    assert (plan["round"], plan["current"]) == (2, None)


@pytest.mark.parametrize("bad", [1, "false", None])
def test_a_skip_defeated_that_is_not_a_boolean_is_refused_and_changes_nothing(bad: Any) -> None:
    t, doc = skip_defeated_fight("foundry-core", ("b",), skip=False)
    before = t.world
    ack = t.hook({**doc, "skip_defeated": bad, "turn": 1}, "b").ack
    assert not ack["ok"] and ack["error"]["code"] == "invalid_message"
    assert ack["error"]["path"] == "/combat/skip_defeated"
    assert t.world.combats == before.combats


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


# ---------------------------------------------------------------- the turn table, entry by entry


def phase_of(w: World) -> Phase:
    return phase(w.combats["c1"])


def started_at(who: str, held: tuple[str, ...] = (), ruleset: str = "test-turns") -> tuple[World, dict[str, Any]]:
    w, data = world_with_rolls({h: {"held": True} for h in held}, ruleset)
    w, _ = move(w, data, 1, "a")
    if who != "a":
        w, _ = move(w, data, 1, who)
    return w, data


def round_over() -> tuple[World, dict[str, Any]]:
    """Round 1 with nobody left who acts: a and b passed, c and d hold."""
    w, data = started_at("a", held=("c", "d"))
    w, plan = move(w, data, 1, "b")
    w, plan = move(w, data, 1, "c")
    assert plan["current"] is None and phase_of(w) is Phase.ROUND_OVER
    return w, data


def test_not_started_none_a_round_0_report_resorts_the_order_and_no_turn_begins() -> None:
    w, data = world_with_rolls()
    shuffled = replace(w.combats["c1"], order=("d", "b", "c", "a"))
    w = replace(w, combats={"c1": shuffled})
    w, _ = move(w, data, 0, "b")  # pre-v10 Foundry can report a turn at round 0
    assert w.combats["c1"].order == ("a", "b", "c", "d")
    assert phase_of(w) is Phase.NOT_STARTED and seen(w) == () and w.combats["c1"].current is None


def test_not_started_start_with_nobody_who_acts_is_a_round_over_at_once() -> None:
    w, data = world_with_rolls({i: {"held": True} for i in IDS})
    w, plan = move(w, data, 1, "a")
    assert plan["round"] == 1 and plan["current"] is None
    assert phase_of(w) is Phase.ROUND_OVER
    assert seen(w)[-2:] == ("start d", "end d skipped")


def test_in_turn_none_the_same_pointer_or_an_unknown_one_changes_nothing() -> None:
    w, data = started_at("b")
    before = w.combats["c1"]
    for who in ("b", "nobody-known", None):
        out = apply(w, Hook(w.last_seq + 1, "gm", 0, "updateCombat", {**data, "round": 1}, current(1, who)))
        w = out.world
        assert out.plans == () and w.combats["c1"].current == "b" and seen(w) == seen_of(before)
    assert phase_of(w) is Phase.IN_TURN


def seen_of(c: Combat) -> tuple[str, ...]:
    return c.ext.items if isinstance(c.ext, Seen) else ()


def test_in_turn_back_to_the_previous_round_moves_the_pointer_only() -> None:
    w, data = started_at("a")
    w, _ = move(w, data, 2, "a")
    before = seen(w)
    w, plan = move(w, data, 1, "c")
    assert plan["round"] == 1 and plan["current"] == "c" and seen(w) == before
    assert w.combats["c1"].passed == {"a", "b"} and phase_of(w) is Phase.IN_TURN


def test_in_turn_reset_round_0_is_before_the_start_again() -> None:
    w, data = started_at("b")
    before = seen(w)
    w, plan = move(w, data, 0, None)
    c = w.combats["c1"]
    assert plan["round"] == 0 and plan["current"] is None and plan["turn"] is None
    assert (c.round, c.current, c.passed) == (0, None, frozenset()) and seen(w) == before
    assert phase_of(w) is Phase.NOT_STARTED
    w, plan = move(w, data, 1, "a")  # and it starts again, as a new combat would
    assert seen(w)[len(before):] == ("RoundStarted 1", "start a")


def test_round_over_none_a_report_of_the_same_round_changes_nothing() -> None:
    w, data = round_over()
    before = w.combats["c1"]
    out = apply(w, Hook(w.last_seq + 1, "gm", 0, "updateCombat", {**data, "round": 1}, current(1, None)))
    assert out.plans == () and out.world.combats["c1"].current is None
    assert seen(out.world) == seen_of(before) and phase_of(out.world) is Phase.ROUND_OVER


def test_round_over_new_round_starts_the_next_round_at_the_first_who_acts() -> None:
    w, data = round_over()
    w, plan = move(w, data, 2, "c")
    assert plan["round"] == 2 and plan["current"] == "a" and phase_of(w) is Phase.IN_TURN
    assert seen(w)[-3:] == ("RoundEnded 1", "RoundStarted 2", "start a")


def test_new_round_with_nobody_current_keeps_nobodys_turn_under_a_ruleset_that_follows_core() -> None:
    """Foundry core's ``nextRound`` keeps a null turn (lancer, daggerheart): so does the
    sidecar under a ruleset that says so; nobody has passed, no turn began."""
    w, data = started_at("b", ruleset="test-turns-core")
    w, plan = move(w, data, 2, None)
    c = w.combats["c1"]
    assert (plan["round"], plan["current"], plan["turn"]) == (2, None, None)
    assert (c.current, c.passed) == (None, frozenset()) and phase_of(w) is Phase.ROUND_OVER
    assert seen(w)[-2:] == ("RoundEnded 1", "RoundStarted 2")
    w, plan = move(w, data, 2, "a")  # core's Next Turn from a null turn: index 0
    assert plan["current"] == "a" and phase_of(w) is Phase.IN_TURN


def test_new_round_with_nobody_current_starts_at_the_first_who_acts_under_a_ruleset_that_does_not() -> None:
    w, data = started_at("b", held=("a",))
    w, plan = move(w, data, 2, None)
    assert (plan["round"], plan["current"]) == (2, "b") and phase_of(w) is Phase.IN_TURN
    assert seen(w)[-4:] == ("RoundStarted 2", "start a", "end a skipped", "start b")


def test_new_round_reported_by_another_hook_naming_one_who_passed_is_not_nobodys_turn() -> None:
    """A pointer in a higher round names no one who passed (``passed`` is the old round's):
    it is kept, so the round does not start with nobody's turn."""
    w, data = started_at("b", ruleset="test-turns-core")
    out = apply(w, Hook(w.last_seq + 1, "gm", 0, "updateCombatant", {**data, "round": 2}, current(2, "a")))
    assert out.world.combats["c1"].round == 2 and out.world.combats["c1"].current == "a"


@pytest.mark.parametrize("ruleset", ["foundry-core", "balanced-d20", "dice-pool", "storyteller"])
def test_only_foundry_core_keeps_nobodys_turn_into_a_new_round(ruleset: str) -> None:
    """The decision of docs/rules.md ("A round that begins with nobody's turn"): foundry-core
    follows core; a rule-bearing ruleset begins the first turn that acts, for its rules."""
    fighters = [{**combatant(i, i.upper()), "initiative": v} for i, v in zip(IDS, (18, 15, 12, 9))]
    doc = combat("c1", fighters, round_=1, turn=None)
    t = Contact(ruleset)
    assert t.meet(doc, None).ack["ok"] and t.plan("c1")["current"] is None
    assert t.hook({**doc, "round": 2}, None).ack["ok"]
    plan = t.plan("c1")
    assert plan["round"] == 2
    if ruleset == "foundry-core":
        assert (plan["current"], plan["turn"]) == (None, None)
    else:
        assert plan["current"] is not None and plan["order"][plan["turn"]]["combatant_id"] == plan["current"]


def test_round_over_back_the_gm_steps_back_into_the_round() -> None:
    w, data = round_over()
    before = seen(w)
    w, plan = move(w, data, 1, "b")
    assert plan["current"] == "b" and w.combats["c1"].passed == {"a"} and seen(w) == before
    assert phase_of(w) is Phase.IN_TURN


def test_round_over_back_with_an_empty_order_stays_round_over() -> None:
    w, data = round_over()
    empty = {**data, "round": 1, "combatants": []}
    w = apply(w, Hook(w.last_seq + 1, "gm", 0, "deleteCombatant", empty, current(1, None))).world
    w = apply(w, Hook(w.last_seq + 1, "gm", 0, "updateCombat", {**empty, "round": 1, "turn": 0}, current(2, None))).world
    w = apply(w, Hook(w.last_seq + 1, "gm", 0, "updateCombat", {**empty, "round": 1}, current(1, None))).world
    assert phase_of(w) is Phase.ROUND_OVER and w.combats["c1"].round == 1


def test_round_over_reset_is_before_the_start_again() -> None:
    w, data = round_over()
    w, plan = move(w, data, 0, None)
    assert plan["round"] == 0 and phase_of(w) is Phase.NOT_STARTED


#: the test that makes each entry of the table happen
ENTRY_TESTS = {
    (Phase.NOT_STARTED, Move.NONE): test_not_started_none_a_round_0_report_resorts_the_order_and_no_turn_begins,
    (Phase.NOT_STARTED, Move.START): test_start_begins_the_first_turn_whoever_foundry_points_at,
    (Phase.IN_TURN, Move.NONE): test_in_turn_none_the_same_pointer_or_an_unknown_one_changes_nothing,
    (Phase.IN_TURN, Move.ADVANCE): test_jumping_ahead_ends_and_begins_every_turn_in_between,
    (Phase.IN_TURN, Move.NEW_ROUND): test_round_change_ends_the_rest_of_the_round_and_starts_at_the_first_who_acts,
    (Phase.IN_TURN, Move.BACK): test_going_back_moves_the_pointer_without_turn_events,
    (Phase.IN_TURN, Move.RESET): test_in_turn_reset_round_0_is_before_the_start_again,
    (Phase.ROUND_OVER, Move.NONE): test_round_over_none_a_report_of_the_same_round_changes_nothing,
    (Phase.ROUND_OVER, Move.NEW_ROUND): test_round_over_new_round_starts_the_next_round_at_the_first_who_acts,
    (Phase.ROUND_OVER, Move.BACK): test_round_over_back_the_gm_steps_back_into_the_round,
    (Phase.ROUND_OVER, Move.RESET): test_round_over_reset_is_before_the_start_again,
}


@pytest.mark.parametrize("entry", list(TURN_TABLE), ids=lambda e: f"{e[0].value}-{e[1].value}")
def test_every_entry_of_the_table_is_made_by_the_handler_it_names(
    entry: tuple[Phase, Move], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each entry's test, run with the entry's handler spied on: the entry is the one used."""
    used: list[tuple[Phase, Move]] = []
    table = dict(TURN_TABLE)
    handler, ends_in = table[entry]

    def spy(ctx: Ctx, c: Combat, round_: int, who: str | None) -> Combat:
        used.append(entry)
        return handler(ctx, c, round_, who)

    table[entry] = (spy, ends_in)
    monkeypatch.setattr(turns, "TURN_TABLE", table)
    ENTRY_TESTS[entry]()
    assert used


#: the pairs the table leaves out: a report can never make them (see the next test)
REFUSED = [
    (Phase.NOT_STARTED, Move.ADVANCE), (Phase.NOT_STARTED, Move.NEW_ROUND),
    (Phase.NOT_STARTED, Move.BACK), (Phase.NOT_STARTED, Move.RESET),
    (Phase.IN_TURN, Move.START), (Phase.ROUND_OVER, Move.START), (Phase.ROUND_OVER, Move.ADVANCE),
]


def test_the_table_and_the_refused_pairs_cover_every_pair() -> None:
    every = {(p, m) for p in Phase for m in Move}
    assert set(TURN_TABLE) | set(REFUSED) == every and not set(TURN_TABLE) & set(REFUSED)
    assert set(ENTRY_TESTS) == set(TURN_TABLE)


def in_phase(p: Phase) -> tuple[World, dict[str, Any]]:
    if p is Phase.NOT_STARTED:
        return world_with_rolls()
    return started_at("b") if p is Phase.IN_TURN else round_over()


@pytest.mark.parametrize("pair", REFUSED, ids=lambda e: f"{e[0].value}-{e[1].value}")
def test_a_pair_missing_from_the_table_is_refused_and_changes_nothing(
    pair: tuple[Phase, Move], monkeypatch: pytest.MonkeyPatch
) -> None:
    w, data = in_phase(pair[0])
    monkeypatch.setattr(turns, "classify", lambda *_: pair[1])
    with pytest.raises(InternalError) as refused:
        apply(w, Hook(w.last_seq + 1, "gm", 0, "updateCombat", {**data, "round": 1}, current(1, "c")))
    assert f"no move {pair[1].value!r} from {pair[0].value!r}" in refused.value.message
    assert refused.value.code == "internal_error"


def test_a_handler_that_lands_in_another_phase_than_the_table_says_is_refused(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    w, data = started_at("a")
    table = dict(TURN_TABLE)
    table[(Phase.IN_TURN, Move.ADVANCE)] = (lambda ctx, c, r, who: replace(c, round=0), Phase.IN_TURN)
    monkeypatch.setattr(turns, "TURN_TABLE", table)
    with pytest.raises(InternalError, match="in_turn -advance-> not_started"):
        move(w, data, 1, "c")


@pytest.mark.parametrize("p", list(Phase), ids=lambda p: p.value)
def test_every_report_foundry_can_make_is_a_pair_of_the_table(p: Phase) -> None:
    """Whatever round (>= 0, the schema) and pointer Foundry reports, in every phase, at
    every position of the pointer: the move is one the table has."""
    w, data = in_phase(p)
    base = w.combats["c1"]
    positions = [base, replace(base, passed=frozenset())] if p is not Phase.IN_TURN else [
        replace(base, current=who, passed=frozenset(base.order[:i])) for i, who in enumerate(base.order)
    ]
    for c in positions:
        for round_ in {0, 1, c.round - 1, c.round, c.round + 1, c.round + 5} - {-1}:
            for who in (None, "unknown", *IDS):
                assert (phase(c), classify(c, round_, who)) in TURN_TABLE, (c.current, round_, who)
