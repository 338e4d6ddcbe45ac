"""BI-3 Ready to strike (outside combat, then at the combat's start) and its ruling on
reactions before the first turn."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from adapter.rulesets.balanced_d20.state import Watch, WorldState
from tests.rulesets.balanced_d20.bd_table import COMBAT, GM, Table, fighter

ROGUE, BARBARIAN, ORC1, ORC2, WOLF = ("cmbRogue00000001", "cmbBarbarian0001", "cmbOrc0000000001",
                                      "cmbOrc0000000002", "cmbWolf000000001")
ROGUE_PLAYER, BARB_PLAYER = "playerRogue00001", "playerBarb000001"
ROGUE_ACTOR, ROGUE_TOKEN = "actRogue00000001", "tokRogue00000001"


def patrol() -> Table:
    return Table(
        fighter(ROGUE, "Rogue", dex=4, owners=(ROGUE_PLAYER,), actor=ROGUE_ACTOR, token=ROGUE_TOKEN),
        fighter(BARBARIAN, "Barbarian", dex=1, owners=(BARB_PLAYER,)),
        fighter(ORC1, "Orc", dex=1, npc=True, token="tokOrc0000000001"),
        fighter(ORC2, "Orc", dex=1, npc=True, token="tokOrc0000000002"),
    )


def watch(t: Table, user: str = ROGUE_PLAYER, **changes: object) -> None:
    args: dict[str, Any] = {
        "actor_id": ROGUE_ACTOR, "token_id": ROGUE_TOKEN, "owners": [ROGUE_PLAYER],
        "watching": ["tokOrc0000000001", "tokOrc0000000002"], "sees": True, "weapon_ready": True,
    }
    args.update(changes)
    t.intent("ready.start", user=user, combat=False, **args)


def fight(t: Table, rogue_natural: int = 10, rogue_bonus: int = 4) -> None:
    t.create()
    t.roll(ROGUE, rogue_natural, rogue_bonus)
    t.roll(BARBARIAN, 9, 1)
    t.roll(ORC1, 15, 1)
    t.roll(ORC2, 3, 1)
    t.start()


def test_BI_E2_rogue_watches_10_s_rolls_14_and_strikes_before_the_orcs_move() -> None:
    t = patrol()
    t.time = 100
    watch(t)
    assert t.notices()[0]["state"] == "watching"
    t.time = 110  # ten seconds of watching from the bushes
    fight(t)
    assert t.plan["current"] == ORC1  # the orc (16) acts first, but the rogue (14) may react
    entry = t.entry(ROGUE)
    assert entry["reaction"] == {"available": True, "reason": "ready_to_strike"}
    assert "surprise_immune" in entry["tags"] and entry["detail"]["watched"] == [ORC1, ORC2]
    assert t.reaction(BARBARIAN) == (False, "before_first_turn")
    assert t.reaction(ORC1) == (True, "available")  # its turn has started
    t.intent("reaction.use", ROGUE, user=ROGUE_PLAYER, reason="opportunity attack")
    assert t.reaction(ROGUE) == (False, "spent")
    t.refused("rule_violation", t.intent_msg("reaction.use", ROGUE, user=ROGUE_PLAYER))
    t.turn_to(ROGUE)
    assert t.reaction(ROGUE) == (True, "available")


def test_BI_E3_a_whisper_breaks_the_state_and_6_more_seconds_are_needed() -> None:
    t = patrol()
    watch(t)
    t.time = 10
    t.intent("ready.break", user=ROGUE_PLAYER, combat=False, actor_id=ROGUE_ACTOR,
             reason="whispers to the barbarian")
    t.time = 12
    watch(t)  # watches again from 12
    t.time = 17  # only 5 s
    fight(t)
    assert t.reaction(ROGUE) == (False, "before_first_turn")
    assert "surprise_immune" not in t.entry(ROGUE)["tags"]


def test_a_new_watch_of_6_s_after_the_break_makes_it_ready_again() -> None:
    t = patrol()
    watch(t)
    t.intent("ready.break", user=ROGUE_PLAYER, combat=False, actor_id=ROGUE_ACTOR, reason="x")
    t.time = 20
    watch(t)
    t.time = 26
    fight(t)
    assert t.reaction(ROGUE) == (True, "ready_to_strike")


def test_a_break_ends_the_state_for_good_even_after_6_s() -> None:
    t = patrol()
    watch(t)
    t.time = 30
    t.intent("ready.break", user=ROGUE_PLAYER, combat=False, actor_id=ROGUE_ACTOR, reason="talks")
    fight(t)
    assert t.reaction(ROGUE) == (False, "before_first_turn")


def test_a_gm_confirms_when_the_world_clock_stands_still() -> None:
    t = patrol()
    watch(t)
    t.refused("not_permitted", t.intent_msg("ready.confirm", user=ROGUE_PLAYER, combat=False,
                                            actor_id=ROGUE_ACTOR))
    t.intent("ready.confirm", combat=False, actor_id=ROGUE_ACTOR)
    fight(t)
    assert t.reaction(ROGUE) == (True, "ready_to_strike")


def watches(t: Any) -> Mapping[str, Watch]:
    state = t.world.ext["balanced-d20"]
    assert isinstance(state, WorldState)
    return state.watches


def test_the_clock_counts_only_in_later_messages() -> None:
    t = patrol()
    watch(t)
    t.time = 5.5
    t.create()
    assert not watches(t)[ROGUE_ACTOR].ready
    t.time = 6
    t.roll(ROGUE, 10, 4)
    assert watches(t)[ROGUE_ACTOR].ready


def test_with_initiative_below_10_only_surprise_immunity_remains() -> None:
    t = patrol()
    watch(t)
    t.intent("ready.confirm", combat=False, actor_id=ROGUE_ACTOR)
    fight(t, rogue_natural=5, rogue_bonus=4)  # 9
    entry = t.entry(ROGUE)
    assert "surprise_immune" in entry["tags"]
    assert entry["reaction"] == {"available": False, "reason": "before_first_turn"}


def wolf_fight(rogue_natural: int) -> Table:
    """The rogue watched the orcs, but a wolf attacks: none of the watched is in the combat."""
    t = Table(
        fighter(ROGUE, "Rogue", dex=4, owners=(ROGUE_PLAYER,), actor=ROGUE_ACTOR, token=ROGUE_TOKEN),
        fighter(WOLF, "Wolf", npc=True),
    )
    watch(t)
    t.intent("ready.confirm", combat=False, actor_id=ROGUE_ACTOR)
    t.create()
    t.roll(ROGUE, rogue_natural, 4)
    t.roll(WOLF, 15)
    t.start()
    return t


def test_BI_3_the_early_reaction_does_not_depend_on_who_is_watched() -> None:
    """Issue 11: only the surprise immunity is limited to the watched creatures."""
    t = wolf_fight(10)  # 14: the wolf (15) acts first
    assert t.plan["current"] == WOLF
    entry = t.entry(ROGUE)
    assert entry["reaction"] == {"available": True, "reason": "ready_to_strike"}
    assert "surprise_immune" not in entry["tags"] and "ready_to_strike" in entry["tags"]
    assert "watched" not in entry["detail"] and "BI-3" in entry["rules"]
    t.intent("reaction.use", ROGUE, user=ROGUE_PLAYER, reason="opportunity attack")
    assert t.reaction(ROGUE) == (False, "spent")


def test_BI_3_without_watched_creatures_and_below_10_nothing_applies() -> None:
    t = wolf_fight(5)  # 9
    entry = t.entry(ROGUE)
    assert entry["reaction"] == {"available": False, "reason": "before_first_turn"}
    assert "surprise_immune" not in entry["tags"]


def test_the_declaration_is_used_up_when_its_combat_starts() -> None:
    t = patrol()
    watch(t)
    t.intent("ready.confirm", combat=False, actor_id=ROGUE_ACTOR)
    fight(t)
    assert t.world.ext["balanced-d20"] == WorldState(watches={})


def test_before_their_first_turn_nobody_has_a_reaction() -> None:
    t = patrol()
    fight(t)
    for cid in (ROGUE, BARBARIAN, ORC2):
        assert t.reaction(cid) == (False, "before_first_turn")
    error = t.refused("rule_violation", t.intent_msg("reaction.use", BARBARIAN))
    assert error.rule == "BI-3"
    t.turn_to(BARBARIAN)
    assert t.reaction(BARBARIAN) == (True, "available")


def test_ready_start_refusals() -> None:
    t = patrol()
    t.refused("not_permitted", t.intent_msg(
        "ready.start", user=BARB_PLAYER, combat=False, actor_id=ROGUE_ACTOR, token_id=ROGUE_TOKEN,
        owners=[ROGUE_PLAYER], watching=["tokOrc0000000001"], sees=True, weapon_ready=True))
    for field, value in (("sees", False), ("weapon_ready", False), ("watching", [])):
        args: dict[str, Any] = {"actor_id": ROGUE_ACTOR, "token_id": ROGUE_TOKEN, "owners": [ROGUE_PLAYER],
                                "watching": ["tokOrc0000000001"], "sees": True, "weapon_ready": True,
                                field: value}
        error = t.refused("rule_violation",
                          t.intent_msg("ready.start", user=ROGUE_PLAYER, combat=False, **args))
        assert error.rule == "BI-3" and error.path == f"/args/{field}"


def test_ready_start_is_refused_inside_a_started_combat() -> None:
    t = patrol()
    fight(t)
    error = t.refused("rule_violation", t.intent_msg(
        "ready.start", user=ROGUE_PLAYER, combat=False, actor_id=ROGUE_ACTOR,
        token_id=ROGUE_TOKEN, owners=[ROGUE_PLAYER], watching=["tokOrc0000000001"], sees=True,
        weapon_ready=True))
    assert error.rule == "BI-3"


def test_confirming_an_undeclared_state_is_refused_and_a_stray_break_is_harmless() -> None:
    t = patrol()
    assert t.refused("rule_violation", t.intent_msg(
        "ready.confirm", user=GM, combat=False, actor_id=ROGUE_ACTOR)).path == "/args/actor_id"
    t.intent("ready.break", user=ROGUE_PLAYER, combat=False, actor_id=ROGUE_ACTOR, reason="walks")
    assert t.ack["plans"] == [] and t.notices() == []


# ---------------------------------------------------------------- issue 24: joining, Begin


def joins_the_fight(t: Table, natural: int = 10, watch_now: bool = False) -> None:
    """The barbarian and the orcs are fighting (round 2); the rogue (``watch_now``: who
    starts watching only now) joins and rolls ``natural`` + 4 (14 by default)."""
    rogue = t.fighters.pop(0)
    t.create()
    t.roll(BARBARIAN, 9, 1)
    t.roll(ORC1, 15, 1)
    t.roll(ORC2, 3, 1)
    t.start()
    t.next_round()
    if watch_now:
        watch(t)
    t.join(rogue)
    t.roll(ROGUE, natural, 4)


def test_BI_3_a_ready_declaration_applies_when_its_actor_joins_a_fight_under_way() -> None:
    """Issue 24: «Если ваш результат инициативы 10 или выше — вы можете использовать реакцию
    до начала вашего первого хода»: the rogue joins in round 2, rolls 14, and reacts before
    its first turn; the declaration is used up by the join, as at a start."""
    t = patrol()
    watch(t)
    t.intent("ready.confirm", combat=False, actor_id=ROGUE_ACTOR)
    joins_the_fight(t)
    entry = t.entry(ROGUE)
    assert entry["reaction"] == {"available": True, "reason": "ready_to_strike"}
    assert "ready_to_strike" in entry["tags"] and "surprise_immune" in entry["tags"]
    assert t.world.ext["balanced-d20"] == WorldState(watches={})
    t.intent("reaction.use", ROGUE, user=ROGUE_PLAYER, reason="opportunity attack")
    assert t.reaction(ROGUE) == (False, "spent")
    t.turn_to(ROGUE)
    assert t.reaction(ROGUE) == (True, "available") and "ready_to_strike" not in t.entry(ROGUE)["tags"]


def test_BI_3_a_confirm_after_the_join_is_refused_not_answered_ready() -> None:
    """Issue 24: the declaration not yet ready when its actor joined is used up by the join
    (as at a start); a GM confirming it afterwards is told so, and nothing changes."""
    t = patrol()
    joins_the_fight(t, watch_now=True)  # the clock has not moved: not ready yet
    assert t.reaction(ROGUE) == (False, "before_first_turn")
    error = t.refused("rule_violation", t.intent_msg("ready.confirm", combat=False,
                                                     actor_id=ROGUE_ACTOR))
    assert error.rule == "BI-3" and error.path == "/args/actor_id" and "fighting" in error.message
    assert t.reaction(ROGUE) == (False, "before_first_turn")


def prepared(t: Table) -> None:
    """The GM sets up the encounter and presses Roll All (the rogue: 14), not yet Begin."""
    t.create()
    t.roll(ROGUE, 10, 4)
    t.roll(BARBARIAN, 9, 1)
    t.roll(ORC1, 15, 1)
    t.roll(ORC2, 3, 1)


def test_BI_E2_the_rogue_reacts_between_roll_all_and_begin_combat() -> None:
    """Issue 24: «Когда начинается бой, он выбрасывает 14 инициативы и немедленно использует
    реакцию … пока орки ещё не сделали ни шага»: Roll All, then the reaction, then Begin: the
    reaction is taken, and stays spent once the combat starts."""
    t = patrol()
    t.time = 100
    watch(t)
    t.time = 110
    prepared(t)
    entry = t.entry(ROGUE)
    assert entry["reaction"] == {"available": True, "reason": "ready_to_strike"}
    assert {"ready_to_strike", "surprise_immune"} <= set(entry["tags"])
    t.intent("reaction.use", ROGUE, user=ROGUE_PLAYER, reason="opportunity attack")
    assert t.reaction(ROGUE) == (False, "spent")
    t.start()
    assert t.reaction(ROGUE) == (False, "spent") and "ready_to_strike" in t.entry(ROGUE)["tags"]
    assert t.world.ext["balanced-d20"] == WorldState(watches={})
    t.turn_to(ROGUE)
    assert t.reaction(ROGUE) == (True, "available")


@pytest.mark.parametrize("begin_first", [False, True])
def test_BI_3_the_early_reaction_does_not_depend_on_the_gms_click_order(begin_first: bool) -> None:
    t = patrol()
    watch(t)
    t.intent("ready.confirm", combat=False, actor_id=ROGUE_ACTOR)
    t.create()
    if begin_first:
        t.start()
    for cid, natural, bonus in ((ROGUE, 10, 4), (BARBARIAN, 9, 1), (ORC1, 15, 1), (ORC2, 3, 1)):
        t.roll(cid, natural, bonus)
    assert t.reaction(ROGUE) == (True, "ready_to_strike")
    t.intent("reaction.use", ROGUE, user=ROGUE_PLAYER)
    if not begin_first:
        t.start()
    assert t.reaction(ROGUE) == (False, "spent")


def test_BI_3_a_confirm_shows_at_once_in_a_combat_not_yet_begun_and_a_break_takes_it_back() -> None:
    """The tags follow the declaration before the start: the confirm's ack brings the plan."""
    t = patrol()
    watch(t)
    prepared(t)
    assert t.reaction(ROGUE) == (False, "before_first_turn")
    t.intent("ready.confirm", combat=False, actor_id=ROGUE_ACTOR)
    assert [p["combat_id"] for p in t.ack["plans"]] == [t.at.id]
    assert t.reaction(ROGUE) == (True, "ready_to_strike")
    t.intent("ready.break", user=ROGUE_PLAYER, combat=False, actor_id=ROGUE_ACTOR, reason="talks")
    assert t.reaction(ROGUE) == (False, "before_first_turn")
    assert "ready_to_strike" not in t.entry(ROGUE)["tags"]
    t.start()
    assert t.reaction(ROGUE) == (False, "before_first_turn")


# ---------------------------------------------------------------- one actor, two combats

OTHER = "cmbBalanced00002"


def two_encounters() -> Table:
    """The rogue, ready (the GM confirmed), is in two combats not yet begun: the patrol
    (the table's combat) and a wolf's (``OTHER``); it has rolled 14 in both."""
    t = patrol()
    watch(t)
    t.intent("ready.confirm", combat=False, actor_id=ROGUE_ACTOR)
    prepared(t)
    t.switch(OTHER)
    t.join(fighter(ROGUE, "Rogue", dex=4, owners=(ROGUE_PLAYER,), actor=ROGUE_ACTOR,
                   token=ROGUE_TOKEN))
    t.join(fighter(WOLF, "Wolf", npc=True))
    t.roll(ROGUE, 10, 4)
    t.roll(WOLF, 15)
    assert t.reaction(ROGUE) == (True, "ready_to_strike")  # shown in both before either begins
    return t


def test_BI_3_a_declaration_used_up_at_one_start_no_longer_shows_in_another_combat() -> None:
    """Reviewer's scenario: the declaration is used up when the patrol's combat starts; the
    wolf's combat, begun afterwards, gives the rogue no reaction before its first turn."""
    t = two_encounters()
    t.switch(COMBAT)
    t.start()
    assert t.reaction(ROGUE) == (True, "ready_to_strike")
    t.switch(OTHER)
    # the start's ack brought the wolf's combat with the declaration taken back
    assert t.reaction(ROGUE) == (False, "before_first_turn")
    assert "ready_to_strike" not in t.entry(ROGUE)["tags"]
    t.start()
    assert t.reaction(ROGUE) == (False, "before_first_turn")
    assert "ready_to_strike" not in t.entry(ROGUE)["tags"]
    error = t.refused("rule_violation", t.intent_msg("ready.confirm", combat=False,
                                                     actor_id=ROGUE_ACTOR))
    assert "when its combat starts" in error.message  # used up at a start, not by a join


def test_BI_3_a_declaration_used_up_by_a_join_no_longer_shows_in_another_combat() -> None:
    """The same through a join: the rogue, shown ready in the wolf's combat not yet begun,
    joins the patrol's fight already under way (its declaration applies there and is used
    up); the wolf's combat, begun afterwards, gives it no early reaction."""
    t = patrol()
    watch(t)
    t.intent("ready.confirm", combat=False, actor_id=ROGUE_ACTOR)
    rogue = t.fighters.pop(0)
    t.switch(OTHER)
    t.join(fighter(ROGUE, "Rogue", dex=4, owners=(ROGUE_PLAYER,), actor=ROGUE_ACTOR,
                   token=ROGUE_TOKEN))
    t.join(fighter(WOLF, "Wolf", npc=True))
    t.roll(ROGUE, 10, 4)
    t.roll(WOLF, 15)
    assert t.reaction(ROGUE) == (True, "ready_to_strike")
    t.switch(COMBAT)
    t.create()
    t.roll(BARBARIAN, 9, 1)
    t.roll(ORC1, 15, 1)
    t.roll(ORC2, 3, 1)
    t.start()
    t.join(rogue)
    t.roll(ROGUE, 10, 4)
    assert t.reaction(ROGUE) == (True, "ready_to_strike")
    t.switch(OTHER)
    assert t.reaction(ROGUE) == (False, "before_first_turn")
    t.start()
    assert t.reaction(ROGUE) == (False, "before_first_turn")
    assert "ready_to_strike" not in t.entry(ROGUE)["tags"]
