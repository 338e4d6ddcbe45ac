"""BI-5 extended readied actions (standard and pre-emptive triggers) and ``reaction.use``."""

from __future__ import annotations

from typing import Any

from tests.rulesets.balanced_d20.bd_table import GM, Table, fighter

FIGHTER, MAGE, ROGUE, VILLAIN, GUARD = ("cmbFighter000001", "cmbMage000000001", "cmbRogue00000001",
                                        "cmbVillain000001", "cmbGuard00000001")
FIGHTER_PLAYER, ROGUE_PLAYER = "playerFighter001", "playerRogue00001"


def duel() -> Table:
    """BI-E5: the fighter (15) readies against the mage (12)."""
    t = Table(fighter(FIGHTER, "Fighter", dex=2, owners=(FIGHTER_PLAYER,)),
              fighter(MAGE, "Mage", dex=2, npc=True))
    t.create()
    t.roll(FIGHTER, 13, 2)
    t.roll(MAGE, 10, 2)
    t.start()
    return t


def lever(proficient: tuple[str, ...] = ("sleight_of_hand",)) -> Table:
    """BI-E6: the rogue (18) readies against the villain (14); a guard (9) acts last."""
    t = Table(fighter(ROGUE, "Rogue", dex=4, owners=(ROGUE_PLAYER,), proficient=proficient),
              fighter(VILLAIN, "Villain", dex=1, npc=True),
              fighter(GUARD, "Guard", dex=0, npc=True))
    t.create()
    t.roll(ROGUE, 14, 4)
    t.roll(VILLAIN, 13, 1)
    t.roll(GUARD, 9)
    t.start()
    return t


def declare(t: Table, cid: str, user: str, mode: str, target: str | None = None) -> str:
    args: dict[str, Any] = {"mode": mode, "trigger": "the villain pulls the lever",
                            "action": "knock his hand away"}
    if target is not None:
        args["target_id"] = target
    t.intent("readied.declare", cid, user=user, **args)
    [notice] = t.notices()
    assert notice["kind"] == "readied.declared"
    return str(notice["readied_id"])


def test_BI_E5_fighter_readies_mage_casts_fighter_reacts_and_attacks() -> None:
    t = duel()
    readied = declare(t, FIGHTER, FIGHTER_PLAYER, "standard", MAGE)
    assert "readied" in t.entry(FIGHTER)["tags"]
    t.next_turn()  # the mage starts casting
    t.intent("readied.trigger", FIGHTER, user=GM, readied_id=readied)
    entry = t.entry(FIGHTER)
    assert entry["reaction"] == {"available": True, "reason": "readied_trigger"}
    assert "readied_triggered" in entry["tags"]
    t.intent("reaction.use", FIGHTER, user=FIGHTER_PLAYER, reason="readied attack")
    entry = t.entry(FIGHTER)
    assert entry["reaction"] == {"available": False, "reason": "spent"}
    assert not {"readied", "readied_triggered"} & set(entry["tags"])
    error = t.refused("rule_violation", t.intent_msg("reaction.use", FIGHTER, user=FIGHTER_PLAYER))
    assert error.rule == "BI-5"  # a reaction used twice


def test_a_triggered_standard_action_not_taken_lapses_when_the_turn_moves_on() -> None:
    t = duel()
    readied = declare(t, FIGHTER, FIGHTER_PLAYER, "standard")
    t.next_turn()
    t.intent("readied.trigger", FIGHTER, readied_id=readied)
    t.next_turn()  # round 2: the fighter's own turn starts, the readied action is over
    assert t.plan["round"] == 2
    entry = t.entry(FIGHTER)
    assert entry["reaction"] == {"available": True, "reason": "available"}
    assert "readied" not in entry["tags"] and "readied_id" not in entry["detail"]
    t.refused("rule_violation", t.intent_msg("readied.trigger", FIGHTER, readied_id=readied))


def test_a_readied_action_lasts_until_the_start_of_its_next_turn() -> None:
    t = duel()
    readied = declare(t, FIGHTER, FIGHTER_PLAYER, "standard")
    t.next_turn()
    t.next_turn()
    t.refused("rule_violation", t.intent_msg("readied.trigger", FIGHTER, readied_id=readied))


def test_readying_is_an_action_on_its_own_turn() -> None:
    t = duel()
    error = t.refused("rule_violation", t.intent_msg(
        "readied.declare", MAGE, mode="standard", trigger="x", action="y"))
    assert error.rule == "BI-5"
    declare(t, FIGHTER, FIGHTER_PLAYER, "standard")
    t.refused("rule_violation", t.intent_msg(
        "readied.declare", FIGHTER, mode="standard", trigger="x", action="y"))


def test_readying_for_another_players_combatant_is_not_permitted() -> None:
    t = duel()
    t.refused("not_permitted", t.intent_msg("readied.declare", FIGHTER, user=ROGUE_PLAYER,
                                            mode="standard", trigger="x", action="y"))


def test_a_readied_target_must_be_in_the_combat() -> None:
    t = duel()
    error = t.refused("unknown_combatant", t.intent_msg(
        "readied.declare", FIGHTER, mode="standard", trigger="x", action="y", target_id="nobody"))
    assert error.path == "/args/target_id"


def test_a_preemptive_trigger_without_insight_or_sleight_of_hand_is_refused_at_once() -> None:
    t = lever(proficient=("stealth", "perception"))
    error = t.refused("rule_violation", t.intent_msg(
        "readied.declare", ROGUE, user=ROGUE_PLAYER, mode="preemptive", trigger="x", action="y"))
    assert error.rule == "BI-5" and error.path == "/args/mode"


def preemptive_check(t: Table) -> tuple[str, str]:
    readied = declare(t, ROGUE, ROGUE_PLAYER, "preemptive", VILLAIN)
    t.next_turn()  # the villain reaches for the lever
    assert t.plan["current"] == VILLAIN
    t.intent("readied.trigger", ROGUE, user=ROGUE_PLAYER, readied_id=readied)
    [check] = t.prompts()
    return readied, str(check["prompt_id"])


def test_BI_E6_the_opposed_check_prompt_lists_the_allowed_skills() -> None:
    t = lever(proficient=("sleight_of_hand", "stealth"))
    readied, _ = preemptive_check(t)
    [check] = t.prompts()
    assert check["kind"] == "opposed_check" and check["to"] == "gm" and check["rule"] == "BI-5"
    assert check["data"]["actor"] == {"combatant_id": ROGUE, "skills": ["sleight_of_hand"]}
    assert check["data"]["target"] == {"combatant_id": VILLAIN, "skills": ["perception", "deception"]}
    assert check["data"]["readied_id"] == readied
    assert t.reaction(ROGUE) == (False, "spent")  # the reaction is used as it fires


def test_BI_E6_rogue_wins_and_acts_before_the_lever_is_pulled() -> None:
    t = lever()
    _, check = preemptive_check(t)
    t.intent("opposed.result", ROGUE, prompt_id=check, actor_total=19, target_total=12)
    entry = t.entry(ROGUE)
    assert "acts_before_trigger" in entry["tags"]
    assert entry["reaction"] == {"available": False, "reason": "spent"}
    t.next_turn()
    assert "acts_before_trigger" not in t.entry(ROGUE)["tags"]


def test_BI_E6_rogue_loses_and_the_readied_action_fires_after_the_villains_turn() -> None:
    t = lever()
    readied, check = preemptive_check(t)
    t.intent("opposed.result", ROGUE, prompt_id=check, actor_total=11, target_total=15)
    entry = t.entry(ROGUE)
    assert entry["reaction"] == {"available": False, "reason": "spent"}
    assert "readied_pending" in entry["tags"] and "readied_due" not in entry["tags"]
    error = t.refused("rule_violation", t.intent_msg("readied.trigger", ROGUE, readied_id=readied))
    assert "current turn ends" in error.message
    t.next_turn()  # the villain's turn ends: due, without a reaction
    assert t.plan["current"] == GUARD
    assert {"readied_pending", "readied_due"} <= set(t.entry(ROGUE)["tags"])
    t.intent("readied.trigger", ROGUE, user=ROGUE_PLAYER, readied_id=readied)
    assert t.notices()[0]["kind"] == "readied.taken"
    assert "readied_pending" not in t.entry(ROGUE)["tags"]


def test_a_tie_in_the_opposed_check_goes_to_the_target() -> None:
    t = lever()
    _, check = preemptive_check(t)
    t.intent("opposed.result", ROGUE, prompt_id=check, actor_total=14, target_total=14)
    assert "readied_pending" in t.entry(ROGUE)["tags"]
    assert "acts_before_trigger" not in t.entry(ROGUE)["tags"]


def test_a_kept_readied_action_expires_at_the_end_of_the_turn_that_follows() -> None:
    t = lever()
    readied, check = preemptive_check(t)
    t.intent("opposed.result", ROGUE, prompt_id=check, actor_total=1, target_total=15)
    t.next_turn()  # guard: due
    t.next_turn()  # round 2, the rogue's own turn: the guard's turn ended
    assert t.plan["current"] == ROGUE
    assert "readied_pending" not in t.entry(ROGUE)["tags"]
    t.refused("rule_violation", t.intent_msg("readied.trigger", ROGUE, readied_id=readied))


def test_a_check_answered_after_the_turn_ended_is_due_at_once() -> None:
    t = lever()
    _, check = preemptive_check(t)
    t.next_turn()  # the villain's turn ends while the GM is rolling
    t.intent("opposed.result", ROGUE, prompt_id=check, actor_total=2, target_total=15)
    assert "readied_due" in t.entry(ROGUE)["tags"]


def test_opposed_result_is_for_the_gm_and_answers_once() -> None:
    t = lever()
    _, check = preemptive_check(t)
    t.refused("not_permitted", t.intent_msg("opposed.result", ROGUE, user=ROGUE_PLAYER,
                                            prompt_id=check, actor_total=20, target_total=1))
    t.intent("opposed.result", ROGUE, prompt_id=check, actor_total=20, target_total=1)
    t.refused("unknown_prompt", t.intent_msg("opposed.result", ROGUE, prompt_id=check,
                                             actor_total=20, target_total=1))


def test_a_preemptive_trigger_needs_the_reaction() -> None:
    t = lever()
    readied = declare(t, ROGUE, ROGUE_PLAYER, "preemptive", VILLAIN)
    t.next_turn()
    t.intent("reaction.use", ROGUE, user=ROGUE_PLAYER, reason="shield")
    error = t.refused("rule_violation", t.intent_msg("readied.trigger", ROGUE, readied_id=readied))
    assert "reaction" in error.message


def test_a_reaction_comes_back_at_the_start_of_its_own_turn() -> None:
    t = duel()
    t.next_turn()
    t.intent("reaction.use", FIGHTER, user=FIGHTER_PLAYER)
    assert t.reaction(FIGHTER) == (False, "spent")
    t.next_turn()
    assert t.plan["current"] == FIGHTER and t.reaction(FIGHTER) == (True, "available")


def test_reaction_use_by_someone_else_is_not_permitted() -> None:
    t = duel()
    t.refused("not_permitted", t.intent_msg("reaction.use", FIGHTER, user=ROGUE_PLAYER))
