"""DP-2 order, DP-4 hesitation, DP-5 persistence, DP-6 groups, through the engine's ``apply``."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from msgspec.structs import replace

from adapter.errors import RuleViolation, SidecarError, UnknownCombatant, UnknownPrompt
from adapter.rulesets.dice_pool.state import DicePoolState
from tests.foundry import foundry_sort
from tests.rulesets.dice_pool.dp_table import PLAYER, Table, pool_roll

ABEL, BAKER, CHARLIE = "cmbAbel000000001", "cmbBaker00000001", "cmbCharlie000001"
FLY, JOHN = "cmbFly0000000001", "cmbJohn000000001"
HUMAN = {"reaction": 3, "wits": 2, "size": 0}  # 5 dice


def dp_e2() -> Table:
    """DP-E2: Abel and Baker roll 5 dice, Charlie 7."""
    t = Table()
    t.create()
    t.add(ABEL, "Abel", HUMAN)
    t.add(BAKER, "Baker", {"reaction": 2, "wits": 3, "size": 0})
    t.add(CHARLIE, "Charlie", {"reaction": 4, "wits": 3, "size": 0})
    t.roll(ABEL, [4, 3, 1, 2, 1])
    t.roll(BAKER, [3, 2, 3, 1, 1])
    t.roll(CHARLIE, [4, 4, 6, 2, 1, 3, 3])
    return t


def refused(t: Table, action: Callable[[], object]) -> SidecarError:
    """Run ``action``; it must be refused and leave the world exactly as it was."""
    before = t.world
    with pytest.raises(SidecarError) as error:
        action()
    assert t.world == replace(before, last_seq=t.seq)  # the refusal used up its seq, nothing else
    return error.value


# ---------------------------------------------------------------- DP-2 order


def test_DP_E2_order_charlie_abel_baker_with_net_successes_as_the_floor() -> None:
    t = dp_e2()
    assert t.order() == [CHARLIE, ABEL, BAKER]
    assert [t.entry(c)["detail"]["successes"] for c in t.order()] == [2, -1, -2]
    assert [t.entry(c)["initiative"] for c in t.order()] == [2.07, -0.95, -1.95]


def test_DP_E1_more_successes_act_earlier() -> None:
    t = Table()
    t.create()
    t.add(JOHN, "John", HUMAN)
    t.add(FLY, "Fly", {"reaction": 2, "wits": 2, "size": -9})
    t.roll(FLY, [6, 6, 5, 4, 4, 3, 3, 2, 2, 2, 3, 2, 3])
    t.roll(JOHN, [6, 5, 3, 2, 2])
    assert t.order() == [FLY, JOHN]
    assert t.entry(FLY)["detail"] == {"pool": 13, "base": 13, "successes": 5,
                                      "dice": [6, 6, 5, 4, 4, 3, 3, 2, 2, 2, 3, 2, 3]}
    assert (t.entry(FLY)["initiative"], t.entry(JOHN)["initiative"]) == (5.13, 2.05)


def test_DP_E1_equal_successes_the_higher_base_acts_earlier() -> None:
    t = Table()
    t.create()
    t.add(FLY, "Fly", {"reaction": 2, "wits": 2, "size": -9})
    t.add(JOHN, "John", HUMAN)
    t.roll(JOHN, [6, 5, 3, 2, 2])
    t.roll(FLY, [6, 5, 3, 3, 2, 2, 2, 2, 3, 3, 2, 3, 2])
    assert t.order() == [FLY, JOHN]  # "cmbFly" sorts after "cmbJohn" by id: base decides
    assert (t.entry(FLY)["initiative"], t.entry(JOHN)["initiative"]) == (2.13, 2.05)


def test_ruling_a_tie_in_successes_and_base_keeps_foundrys_id_order() -> None:
    t = Table()
    t.create()
    t.add("cmbZed0000000001", "Zed", HUMAN)
    t.add("cmbAmy0000000001", "Amy", HUMAN)
    t.roll("cmbZed0000000001", [6, 2, 2, 2, 2])
    t.roll("cmbAmy0000000001", [2, 5, 2, 2, 2])
    assert t.order() == ["cmbAmy0000000001", "cmbZed0000000001"]
    # written distinct (no system's own tie rule may decide), the tie's order kept: 1.051, 1.05
    assert (t.entry("cmbAmy0000000001")["initiative"], t.entry("cmbZed0000000001")["initiative"]) == (1.051, 1.05)


def test_DP_7_the_modifier_changes_the_pool_but_the_base_still_breaks_ties() -> None:
    t = Table()
    t.create()
    t.add("cmbHurt000000001", "Hurt", {"reaction": 4, "wits": 4, "pool_modifier": -5})
    t.add("cmbFine000000001", "Fine", {"reaction": 3, "wits": 3})
    with pytest.raises(RuleViolation):  # 8 dice is the base, not the pool of 3
        t.roll("cmbHurt000000001", [6, 2, 2, 2, 2, 2, 2, 2])
    t.roll("cmbHurt000000001", [6, 2, 2])
    t.roll("cmbFine000000001", [6, 2, 2, 2, 2, 2])
    assert t.order() == ["cmbHurt000000001", "cmbFine000000001"]
    assert t.entry("cmbHurt000000001")["initiative"] == 1.08
    assert "DP-7" in t.entry("cmbHurt000000001")["rules"]


def test_before_rolling_the_plan_says_how_many_dice_to_roll() -> None:
    t = Table()
    t.create()
    t.add(FLY, "Fly", {"reaction": 2, "wits": 2, "size": -9, "pool_modifier": 1})
    entry = t.entry(FLY)
    assert (entry["initiative"], entry["detail"], entry["acts"]) == (
        None, {"pool": 14, "base": 13}, "full",
    )


def test_a_base_outside_0_to_99_still_sorts_by_successes_then_base() -> None:
    t = Table()
    t.create()
    t.add("cmbGiant00000001", "Giant", {"reaction": 1, "wits": 1, "size": 4})  # base -2
    t.add("cmbMouse00000001", "Mouse", {"reaction": 1, "wits": 1, "size": -1})  # base 3
    t.roll("cmbGiant00000001", [])
    t.roll("cmbMouse00000001", [2, 2, 3])
    assert t.order() == ["cmbMouse00000001", "cmbGiant00000001"]
    values = [e["initiative"] for e in t.plan["order"]]
    assert values[0] > values[1] and all(0 <= v < 1 for v in values)


# ---------------------------------------------------------------- refusals


def test_a_roll_of_the_wrong_size_is_refused_and_changes_nothing() -> None:
    t = dp_e2()
    t.add("cmbDora000000001", "Dora", HUMAN)
    error = refused(t, lambda: t.roll("cmbDora000000001", [4, 4, 4, 4, 4, 4]))
    assert isinstance(error, RuleViolation) and error.rule == "DP-1"
    assert "5 dice" in error.message and "6 dice" in error.message


def test_a_roll_with_other_faces_is_refused_naming_both() -> None:
    t = dp_e2()
    t.add("cmbDora000000001", "Dora", HUMAN)
    error = refused(t, lambda: t.roll("cmbDora000000001", [4, 4, 4, 4, 4], faces=8))
    assert error.rule == "DP-3" and "d6" in error.message and "d8" in error.message


def test_a_roll_for_a_combatant_without_stats_is_refused() -> None:
    t = Table()
    t.create()
    t.add("cmbNoStats000001", "Nobody", {})
    error = refused(t, lambda: t.roll("cmbNoStats000001", [4]))
    assert error.rule == "DP-1" and "reaction" in error.message


def test_DP_5_the_order_is_not_rerolled_once_the_fight_has_begun() -> None:
    t = dp_e2()
    t.start()
    error = refused(t, lambda: t.roll(ABEL, [6, 6, 6, 6, 6]))
    assert error.rule == "DP-5" and "Abel" in error.message


def test_before_the_fight_the_gm_may_roll_again() -> None:
    t = dp_e2()
    t.roll(ABEL, [6, 6, 6, 6, 6])
    assert t.order() == [ABEL, CHARLIE, BAKER]
    assert "hesitating" not in t.entry(ABEL)["tags"]


def test_dice_pool_offers_no_rerolls() -> None:
    t = dp_e2()
    t.add("cmbDora000000001", "Dora", HUMAN)
    roll = {"combatant_id": "cmbDora000000001", "roll": pool_roll([4] * 5), "reroll_of": "p-1"}
    error = refused(t, lambda: t.hook("initiativeRoll", roll))
    assert isinstance(error, UnknownPrompt)


def test_unusable_settings_are_refused_loudly() -> None:
    t = Table(settings={"die_faces": 6, "success_at": 9})
    t.create()
    t.add(JOHN, "John", HUMAN)
    error = refused(t, lambda: t.roll(JOHN, [4, 4, 4, 4, 4]))
    assert error.rule == "DP-3" and "success_at" in error.message


def test_settings_change_the_dice_the_module_must_roll() -> None:
    t = Table(settings={"die_faces": 10, "success_at": 8, "ones_cancel": False})
    t.create()
    t.add(JOHN, "John", HUMAN)
    t.roll(JOHN, [8, 10, 1, 1, 3], faces=10)
    assert t.entry(JOHN)["detail"]["successes"] == 2


def test_a_mismatched_foundry_total_is_noted_and_the_recount_stands() -> None:
    t = Table()
    t.create()
    t.add(JOHN, "John", HUMAN)
    roll = pool_roll([6, 5, 1, 2, 2])
    roll["total"] = 0  # e.g. rolled as "5d6cs>=4df" (every non-success deducted)
    outcome = t.hook("initiativeRoll", {"combatant_id": JOHN, "roll": roll})
    assert t.entry(JOHN)["detail"]["successes"] == 1
    assert [n["kind"] for n in outcome["notices"]] == ["dice_pool.recount"]


# ---------------------------------------------------------------- DP-4 hesitation


def test_DP_E2_abel_defends_only_for_one_turn_baker_loses_two_whole_turns() -> None:
    t = dp_e2()
    assert (t.entry(ABEL)["acts"], t.entry(ABEL)["detail"]["turns_lost"]) == ("defend_only", 1)
    assert (t.entry(BAKER)["acts"], t.entry(BAKER)["detail"]["turns_lost"]) == ("none", 2)
    assert t.entry(BAKER)["tags"] == ["hesitating", "critical_failure"]
    t.start()
    assert t.plan["current"] == CHARLIE
    t.next_turn()  # Abel and Baker are skipped: round 2
    assert (t.plan["round"], t.plan["current"]) == (2, CHARLIE)
    assert (t.entry(ABEL)["acts"], t.entry(ABEL)["tags"]) == ("full", [])
    assert "turns_lost" not in t.entry(ABEL)["detail"]
    assert (t.entry(BAKER)["acts"], t.entry(BAKER)["detail"]["turns_lost"]) == ("none", 1)
    t.next_turn()
    assert t.plan["current"] == ABEL
    t.next_turn()  # Baker skipped again: round 3
    assert (t.plan["round"], t.plan["current"]) == (3, CHARLIE)
    assert (t.entry(BAKER)["acts"], t.entry(BAKER)["tags"]) == ("full", [])
    t.next_turn()
    t.next_turn()
    assert t.plan["current"] == BAKER
    assert t.order() == [CHARLIE, ABEL, BAKER]  # the place is kept throughout


def test_DP_4_ruling_zero_successes_cost_one_turns_active_phase() -> None:
    t = Table()
    t.create()
    t.add(JOHN, "John", HUMAN)
    t.add(FLY, "Fly", {"reaction": 2, "wits": 2, "size": -9})
    t.roll(JOHN, [2, 2, 3, 3, 2])
    t.roll(FLY, [4] + [2] * 12)
    assert (t.entry(JOHN)["acts"], t.entry(JOHN)["detail"]["turns_lost"]) == ("defend_only", 1)
    assert t.entry(JOHN)["initiative"] == 0.05
    t.start()
    t.next_turn()
    assert (t.plan["round"], t.entry(JOHN)["acts"]) == (2, "full")


def test_DP_4_a_turn_the_module_skipped_still_counts() -> None:
    t = dp_e2()
    t.start()
    # The GM jumps from round 1 straight to round 3: every turn in between passed.
    t.round = 3
    t.current = CHARLIE
    t.hook("combatRound")
    assert t.entry(BAKER)["acts"] == "full" and t.entry(ABEL)["acts"] == "full"


def test_DP_4_the_sidecar_corrects_a_pointer_on_a_hesitating_combatant() -> None:
    t = dp_e2()
    t.start()
    t.current = BAKER  # a module that failed to skip
    t.hook("combatTurn")
    assert t.plan["current"] is None  # Baker's turn passes at once: round over
    assert t.entry(BAKER)["detail"]["turns_lost"] == 1


def test_before_the_start_the_preview_of_round_1_shows_the_hesitation() -> None:
    t = Table()
    t.create()
    t.add(ABEL, "Abel", HUMAN)
    t.add(CHARLIE, "Charlie", HUMAN)
    t.roll(ABEL, [4, 3, 1, 2, 1])
    upcoming = {e["combatant_id"]: e["acts"] for e in t.plan["next_round"]["order"]}
    assert upcoming == {ABEL: "defend_only", CHARLIE: "full"}
    t.roll(CHARLIE, [4, 4, 6, 2, 1])
    upcoming = {e["combatant_id"]: e["acts"] for e in t.plan["next_round"]["order"]}
    assert upcoming == {CHARLIE: "full", ABEL: "defend_only"}


def test_the_next_round_preview_shows_who_will_be_acting_again() -> None:
    t = dp_e2()
    t.start()
    upcoming = {e["combatant_id"]: e["acts"] for e in t.plan["next_round"]["order"]}
    assert upcoming == {CHARLIE: "full", ABEL: "full", BAKER: "none"}


def test_a_defeated_combatant_does_not_act() -> None:
    t = dp_e2()
    t.combatants[2]["is_defeated"] = True
    t.hook("updateCombatant")
    assert (t.entry(CHARLIE)["acts"], t.entry(CHARLIE)["tags"]) == ("none", ["defeated"])


# ---------------------------------------------------------------- DP-5 persistence, joiners


def test_DP_5_a_new_round_keeps_the_order_and_the_numbers() -> None:
    t = dp_e2()
    t.start()
    first = [(e["combatant_id"], e["initiative"]) for e in t.plan["order"]]
    for _ in range(4):
        t.next_round()
        assert [(e["combatant_id"], e["initiative"]) for e in t.plan["order"]] == first


def test_a_combatant_joining_mid_fight_rolls_and_slots_in() -> None:
    t = dp_e2()
    t.start()
    t.add("cmbDora000000001", "Dora", HUMAN)
    assert t.order()[-1] == "cmbDora000000001" and t.entry("cmbDora000000001")["initiative"] is None
    t.roll("cmbDora000000001", [6, 2, 2, 2, 2])
    assert t.order() == [CHARLIE, "cmbDora000000001", ABEL, BAKER]
    assert t.plan["current"] == CHARLIE
    t.next_turn()
    assert t.plan["current"] == "cmbDora000000001"


def test_a_joiner_slotting_in_above_the_current_turn_waits_for_it_to_end() -> None:
    t = dp_e2()
    t.start()
    t.add("cmbDora000000001", "Dora", HUMAN)
    t.roll("cmbDora000000001", [6, 6, 6, 6, 6])
    assert t.order() == [CHARLIE, "cmbDora000000001", ABEL, BAKER]
    t.next_round()
    assert t.order() == ["cmbDora000000001", CHARLIE, ABEL, BAKER]


# ---------------------------------------------------------------- DP-6 groups

WOLF1, WOLF2, WOLF3 = "cmbWolfA00000001", "cmbWolfB00000001", "cmbWolfC00000001"
PACK = "grpPack000000001"


def pack() -> Table:
    t = Table()
    t.create()
    t.group(PACK, "Pack")
    t.add(WOLF1, "Old wolf", {"reaction": 1, "wits": 1}, group=PACK, owners=())
    t.add("cmbEve0000000001", "Eve", HUMAN)
    t.add(WOLF2, "Young wolf", {"reaction": 4, "wits": 2}, group=PACK, owners=())
    return t


def test_DP_6_a_group_rolls_once_with_its_slowest_members_pool() -> None:
    t = pack()
    assert t.entry(WOLF2)["detail"] == {"group": PACK, "pool": 2, "base": 2}
    t.roll_group(PACK, [6, 5])
    for wolf in (WOLF1, WOLF2):
        assert t.entry(wolf)["detail"]["successes"] == 2 and "DP-6" in t.entry(wolf)["rules"]
    error = refused(t, lambda: t.roll_group(PACK, [6, 5, 5]))  # not 3 dice: 2
    assert error.rule == "DP-1"


def test_DP_6_group_members_act_together_consecutively() -> None:
    t = pack()
    t.add("cmbDan0000000001", "Dan", {"reaction": 1, "wits": 1})  # base 2, like the pack
    loner = "cmbWolfA10000001"  # its id falls between the two wolves' ids
    t.add(loner, "Lone wolf", {"reaction": 1, "wits": 1})
    t.roll_group(PACK, [6, 2])
    t.roll("cmbDan0000000001", [5, 3])
    t.roll(loner, [4, 2])
    t.roll("cmbEve0000000001", [6, 6, 2, 2, 2])
    assert t.order() == ["cmbEve0000000001", "cmbDan0000000001", WOLF1, WOLF2, loner]
    values = {e["combatant_id"]: e["initiative"] for e in t.plan["order"]}
    assert foundry_sort(values) == t.order()
    assert all(math.floor(values[c]) == 1 for c in t.order()[1:])


def test_DP_6_a_member_does_not_roll_alone() -> None:
    t = pack()
    error = refused(t, lambda: t.roll(WOLF1, [6, 6]))
    assert error.rule == "DP-6" and "Pack" in error.message


def test_DP_6_a_roll_for_an_unknown_group_is_refused() -> None:
    t = pack()
    error = refused(t, lambda: t.roll_group("grpNone000000001", [6, 6]))
    assert isinstance(error, UnknownCombatant)


def test_DP_6_a_member_joining_later_shares_the_groups_roll() -> None:
    t = pack()
    t.roll_group(PACK, [1, 2])
    t.roll("cmbEve0000000001", [4, 2, 2, 2, 2])
    t.start()
    t.add(WOLF3, "Cub", {"reaction": 0, "wits": 1}, group=PACK, owners=())
    cub = t.entry(WOLF3)
    assert cub["detail"]["successes"] == -1 and cub["acts"] == "none"
    assert t.order()[-3:] == [WOLF1, WOLF2, WOLF3]


def test_DP_6_a_joiner_never_slots_in_between_members_whose_turn_has_begun() -> None:
    t = pack()
    t.roll_group(PACK, [6, 5])
    t.roll("cmbEve0000000001", [4, 2, 2, 2, 2])
    t.start()
    assert t.plan["current"] == WOLF1
    t.add("cmbFox0000000001", "Fox", {"reaction": 2, "wits": 2, "size": -3})
    t.roll("cmbFox0000000001", [6, 6, 6, 2, 2, 2, 2])  # 3 successes: ahead of the pack
    t.add(WOLF3, "Cub", {"reaction": 0, "wits": 1}, group=PACK, owners=())
    assert t.order() == [WOLF1, WOLF2, WOLF3, "cmbFox0000000001", "cmbEve0000000001"]
    values = {e["combatant_id"]: e["initiative"] for e in t.plan["order"]}
    assert foundry_sort(values) == t.order()
    t.next_round()
    assert t.order() == ["cmbFox0000000001", WOLF1, WOLF2, WOLF3, "cmbEve0000000001"]


def test_DP_6_ruling_members_of_a_group_under_way_go_by_id_whatever_order_foundry_states(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The ruling "Foundry's own order (`_id`)": a member joining while its group's turn is in
    progress goes after the members with lower ids, though the system states the reverse."""
    t = pack()
    t.roll_group(PACK, [6, 5])
    t.roll("cmbEve0000000001", [4, 2, 2, 2, 2])
    t.start()
    snapshot = t.at.snapshot
    monkeypatch.setattr(t.at, "snapshot", lambda: {**snapshot(), "turn_order": t.at.turns()[::-1]})
    t.add(WOLF3, "Cub", {"reaction": 0, "wits": 1}, group=PACK, owners=())
    assert t.order() == [WOLF1, WOLF2, WOLF3, "cmbEve0000000001"]


def test_DP_6_ruling_a_member_joining_after_its_groups_turn_slots_in_alone_this_round() -> None:
    t = pack()
    t.roll_group(PACK, [6, 5])  # 2
    t.roll("cmbEve0000000001", [4, 2, 2, 2, 2])  # 1
    t.start()
    t.next_turn()
    t.next_turn()
    assert t.plan["current"] == "cmbEve0000000001"
    t.add(WOLF3, "Cub", {"reaction": 0, "wits": 1}, group=PACK, owners=())
    assert t.order() == [WOLF1, WOLF2, "cmbEve0000000001", WOLF3]
    t.next_turn()
    assert t.plan["current"] == WOLF3
    t.next_round()
    assert t.order() == [WOLF1, WOLF2, WOLF3, "cmbEve0000000001"]


def test_DP_6_each_member_counts_its_own_lost_turns() -> None:
    t = pack()
    t.roll_group(PACK, [1, 1])
    t.roll("cmbEve0000000001", [4, 2, 2, 2, 2])
    t.start()
    t.next_round()
    assert [t.entry(w)["detail"]["turns_lost"] for w in (WOLF1, WOLF2)] == [1, 1]
    t.next_round()
    assert [t.entry(w)["acts"] for w in (WOLF1, WOLF2)] == ["full", "full"]


def test_the_state_pickles_and_compares_by_value() -> None:
    import pickle

    t = dp_e2()
    world = pickle.loads(pickle.dumps(t.world))
    assert world == t.world
    assert isinstance(world.combats["dpCombat00000001"].combatants[ABEL].ext, DicePoolState)
    assert PLAYER in world.combats["dpCombat00000001"].combatants[ABEL].owners
