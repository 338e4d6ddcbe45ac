"""BI-1 initiative roll (the natural d20) and BI-2 clever reroll, through the engine's ``apply``."""

from __future__ import annotations

from typing import Any

import pytest

from adapter.rulesets.balanced_d20.reroll import natural_d20, reroll_formula
from adapter.rulesets.balanced_d20.state import fighter as fighter_state
from tests.decoded import as_roll
from tests.rulesets.balanced_d20.bd_table import COMBAT, GM, Table, d20, fighter

WIZ, ORC, ROGUE = "cmbWizard0000001", "cmbOrc0000000001", "cmbRogue00000001"
PLAYER, OTHER = "playerWizard0001", "playerOther00001"


def table(**settings: Any) -> Table:
    t = Table(
        fighter(WIZ, "Wizard", dex=2, int_=4, owners=(PLAYER,)),
        fighter(ORC, "Orc", dex=1, int_=2, npc=True),
        settings=settings,
    )
    t.create()
    return t


def offer_of(t: Table) -> str:
    [offer] = t.prompts("reroll")
    return str(offer["prompt_id"])


# ---------------------------------------------------------------- BI-1: the natural d20


def test_natural_is_the_d20_result_of_a_plain_roll() -> None:
    assert natural_d20(as_roll(d20(14, 3))) == 14


def test_natural_skips_a_rerolled_result_halfling_lucky() -> None:
    roll = d20(15, 3, modifiers=("r1=1",))
    roll["terms"][0]["results"] = [{"result": 1, "active": False, "rerolled": True},
                                   {"result": 15, "active": True}]
    assert natural_d20(as_roll(roll)) == 15


def test_natural_is_the_kept_die_with_advantage() -> None:
    roll = d20(4, 2)
    roll["terms"][0].update(number=2, modifiers=["kh"], results=[
        {"result": 4, "active": True}, {"result": 2, "active": False, "discarded": True}])
    assert natural_d20(as_roll(roll)) == 4
    assert reroll_formula(as_roll(roll), 4) == "1d20 + 2"


def test_reroll_formula_keeps_the_modifiers_of_the_first_roll() -> None:
    assert reroll_formula(as_roll(d20(3, 2)), 3) == "1d20 + 2"
    assert reroll_formula(as_roll(d20(3, -1)), 3) == "1d20 - 1"
    assert reroll_formula(as_roll(d20(3)), 3) == "1d20"
    assert reroll_formula(as_roll(d20(3, 2, modifiers=("r1=1",))), 3) == "1d20r1=1 + 2"


@pytest.mark.parametrize("shape", ["no_d20", "two_kept", "two_terms"])
def test_a_roll_whose_dice_do_not_fit_is_refused_not_guessed(shape: str) -> None:
    t = table()
    roll = d20(12, 2)
    if shape == "no_d20":
        roll["terms"][0].update({"faces": 10, "class": "Die"})
    elif shape == "two_kept":
        roll["terms"][0].update(number=2, results=[{"result": 12, "active": True},
                                                   {"result": 5, "active": True}])
    else:
        roll["terms"].append(dict(roll["terms"][0]))
    error = t.refused("rule_violation", t.roll_msg(WIZ, 0, roll=roll))
    assert error.rule == "BI-1" and error.path == "/roll/roll"


def test_the_score_is_the_total_and_ties_go_to_the_higher_dex_then_id() -> None:
    a, b, c = "cmbA000000000001", "cmbB000000000001", "cmbC000000000001"
    t = Table(fighter(a, "A", dex=1), fighter(b, "B", dex=3), fighter(c, "C", dex=1))
    t.create()
    t.roll(a, 10, 1)
    t.roll(b, 8, 3)
    t.roll(c, 12, -1)
    assert t.order() == [b, a, c]  # all 11: Dex 3 first, then by _id
    values = t.initiatives()
    assert [int(v or 0) for v in values.values()] == [11, 11, 11]
    from tests.foundry import foundry_sort
    assert foundry_sort(values) == t.order()


# ---------------------------------------------------------------- BI-2: the offer


def test_BI_E1_wizard_int_4_rolls_3_gets_an_offer_for_its_owners() -> None:
    t = table()
    t.roll(WIZ, 3, 2)
    [offer] = t.prompts()
    assert offer["kind"] == "reroll" and offer["rule"] == "BI-2"
    assert offer["to"] == [PLAYER] and offer["combatant_id"] == WIZ
    assert offer["data"] == {"natural": 3, "int": 4, "total": 5, "formula": "1d20 + 2"}
    entry = t.entry(WIZ)
    assert entry["initiative"] == 5 and "reroll_pending" in entry["tags"]


def test_a_natural_equal_to_the_int_modifier_qualifies() -> None:
    t = table()
    t.roll(WIZ, 4, 2)
    assert len(t.prompts("reroll")) == 1


def test_a_natural_above_the_int_modifier_does_not_qualify() -> None:
    t = table()
    t.roll(WIZ, 5, 2)
    assert t.prompts() == []


def test_an_int_modifier_of_zero_or_less_never_qualifies() -> None:
    t = Table(fighter(ROGUE, "Rogue", int_=0, owners=(PLAYER,)),
              fighter(ORC, "Orc", int_=-1, npc=True))
    t.create()
    t.roll(ROGUE, 1)
    t.roll(ORC, 1)
    assert t.prompts() == []


def test_an_npc_offer_goes_to_the_gm() -> None:
    t = table()
    t.roll(ORC, 1, 1)
    assert offer_of(t) and t.prompts()[0]["to"] == "gm"


def test_BI_E1_the_reroll_shows_2_and_the_2_stands_with_no_second_offer() -> None:
    t = table()
    t.roll(ORC, 10, 1)
    t.roll(WIZ, 3, 2)
    offer = offer_of(t)
    t.intent("reroll.decide", WIZ, user=PLAYER, prompt_id=offer, accept=True)
    [approval] = t.prompts()
    assert approval["kind"] == "reroll.approval" and approval["to"] == "gm"
    t.intent("reroll.approve", WIZ, prompt_id=approval["prompt_id"], approve=True)
    [ask] = t.prompts()
    assert ask["kind"] == "reroll.roll" and ask["to"] == [PLAYER]
    assert ask["data"] == {"formula": "1d20 + 2", "reroll_of": offer}
    t.roll(WIZ, 2, 2, reroll_of=offer)
    assert t.prompts() == []  # 2 <= 4, yet no second offer
    entry = t.entry(WIZ)
    assert entry["initiative"] == 4 and "reroll_pending" not in entry["tags"]
    assert t.world.prompts == {}


def test_declining_keeps_the_first_roll() -> None:
    t = table()
    t.roll(WIZ, 3, 2)
    t.intent("reroll.decide", WIZ, user=PLAYER, prompt_id=offer_of(t), accept=False)
    assert t.prompts() == [] and t.world.prompts == {}
    assert t.entry(WIZ)["initiative"] == 5 and t.entry(WIZ)["tags"] == []


def test_auto_approve_rerolls_asks_for_the_roll_at_once() -> None:
    t = table(auto_approve_rerolls=True)
    t.roll(WIZ, 3, 2)
    t.intent("reroll.decide", WIZ, user=PLAYER, prompt_id=offer_of(t), accept=True)
    assert [p["kind"] for p in t.prompts()] == ["reroll.roll"]


def test_a_gm_may_decide_for_the_owner() -> None:
    t = table()
    t.roll(WIZ, 3, 2)
    t.intent("reroll.decide", WIZ, user=GM, prompt_id=offer_of(t), accept=True)
    assert [p["kind"] for p in t.prompts()] == ["reroll.approval"]


def test_the_gm_refusing_keeps_the_first_roll() -> None:
    t = table()
    t.roll(WIZ, 3, 2)
    offer = offer_of(t)
    t.intent("reroll.decide", WIZ, user=PLAYER, prompt_id=offer, accept=True)
    t.intent("reroll.approve", WIZ, prompt_id=t.prompts()[0]["prompt_id"], approve=False)
    assert t.entry(WIZ)["initiative"] == 5 and t.world.prompts == {}
    error = t.refused("rule_violation", t.roll_msg(WIZ, 19, 2, reroll_of=offer))
    assert error.rule == "BI-2"


def test_the_new_total_stands_even_when_higher_and_reorders() -> None:
    t = table(auto_approve_rerolls=True)
    t.roll(ORC, 10, 1)
    t.roll(WIZ, 3, 2)
    offer = offer_of(t)
    t.intent("reroll.decide", WIZ, user=PLAYER, prompt_id=offer, accept=True)
    t.roll(WIZ, 18, 2, reroll_of=offer)
    assert t.order() == [WIZ, ORC] and t.entry(WIZ)["initiative"] == 20


def test_a_pending_offer_does_not_block_the_combat() -> None:
    t = table()
    t.roll(ORC, 10, 1)
    t.roll(WIZ, 3, 2)
    t.start()
    assert t.plan["current"] == ORC and "reroll_pending" in t.entry(WIZ)["tags"]


# ---------------------------------------------------------------- BI-2: refusals


def test_someone_else_deciding_is_not_permitted() -> None:
    t = table()
    t.roll(WIZ, 3, 2)
    t.refused("not_permitted", t.intent_msg("reroll.decide", WIZ, user=OTHER,
                                            prompt_id=offer_of(t), accept=True))


def test_a_reroll_approved_by_a_player_is_not_permitted() -> None:
    t = table()
    t.roll(WIZ, 3, 2)
    t.intent("reroll.decide", WIZ, user=PLAYER, prompt_id=offer_of(t), accept=True)
    approval = t.prompts()[0]["prompt_id"]
    t.refused("not_permitted", t.intent_msg("reroll.approve", WIZ, user=PLAYER,
                                            prompt_id=approval, approve=True))


def test_deciding_twice_is_an_unknown_prompt() -> None:
    t = table()
    t.roll(WIZ, 3, 2)
    offer = offer_of(t)
    t.intent("reroll.decide", WIZ, user=PLAYER, prompt_id=offer, accept=False)
    error = t.refused("unknown_prompt", t.intent_msg("reroll.decide", WIZ, user=PLAYER,
                                                     prompt_id=offer, accept=True))
    assert error.path == "/args/prompt_id"


def test_approving_with_the_offer_id_is_an_unknown_prompt() -> None:
    t = table()
    t.roll(WIZ, 3, 2)
    offer = offer_of(t)
    t.intent("reroll.decide", WIZ, user=PLAYER, prompt_id=offer, accept=True)
    t.refused("unknown_prompt", t.intent_msg("reroll.approve", WIZ, prompt_id=offer, approve=True))


def test_a_second_reroll_is_refused() -> None:
    t = table(auto_approve_rerolls=True)
    t.roll(WIZ, 3, 2)
    offer = offer_of(t)
    t.intent("reroll.decide", WIZ, user=PLAYER, prompt_id=offer, accept=True)
    t.roll(WIZ, 2, 2, reroll_of=offer)
    error = t.refused("rule_violation", t.roll_msg(WIZ, 17, 2, reroll_of=offer))
    assert error.rule == "BI-2" and error.path == "/roll/reroll_of"


def test_a_reroll_before_approval_is_refused() -> None:
    t = table()
    t.roll(WIZ, 3, 2)
    offer = offer_of(t)
    t.intent("reroll.decide", WIZ, user=PLAYER, prompt_id=offer, accept=True)
    assert t.refused("rule_violation", t.roll_msg(WIZ, 17, 2, reroll_of=offer)).rule == "BI-2"


def test_a_reroll_of_an_unknown_offer_is_an_unknown_prompt() -> None:
    t = table()
    t.roll(WIZ, 3, 2)
    t.refused("unknown_prompt", t.roll_msg(WIZ, 17, 2, reroll_of="prompt-99.1"))


def test_BI_2_a_withdrawn_offer_does_not_use_up_the_reroll() -> None:
    """Issue 11: the GM rolls again before anyone answers; the new natural 2 <= 4 brings a
    new offer: only a reroll made (or a decline) uses up the "once"."""
    t = table()
    t.roll(WIZ, 3, 2)
    first = offer_of(t)
    t.roll(WIZ, 2, 2)
    [again] = t.prompts("reroll")
    assert again["prompt_id"] != first and again["data"]["natural"] == 2
    assert set(t.world.prompts) == {again["prompt_id"]}
    assert t.entry(WIZ)["initiative"] == 4 and "reroll_pending" in t.entry(WIZ)["tags"]
    t.refused("unknown_prompt", t.intent_msg("reroll.decide", WIZ, user=PLAYER,
                                             prompt_id=first, accept=True))
    t.intent("reroll.decide", WIZ, user=PLAYER, prompt_id=again["prompt_id"], accept=True)
    t.intent("reroll.approve", WIZ, prompt_id=t.prompts()[0]["prompt_id"], approve=True)
    t.roll(WIZ, 1, 2, reroll_of=again["prompt_id"])
    assert t.prompts() == [] and t.entry(WIZ)["initiative"] == 3


def test_BI_2_a_new_roll_that_does_not_qualify_withdraws_the_offer_and_keeps_the_right() -> None:
    t = table()
    t.roll(WIZ, 3, 2)
    offer = offer_of(t)
    t.roll(WIZ, 15, 2)
    assert t.prompts() == [] and t.world.prompts == {}
    assert t.entry(WIZ)["initiative"] == 17 and t.entry(WIZ)["tags"] == []
    t.refused("unknown_prompt", t.intent_msg("reroll.decide", WIZ, user=PLAYER,
                                             prompt_id=offer, accept=True))
    t.roll(WIZ, 1, 2)
    assert len(t.prompts("reroll")) == 1


def test_BI_2_a_roll_replacing_an_approved_reroll_brings_a_new_offer() -> None:
    t = table()
    t.roll(WIZ, 3, 2)
    t.intent("reroll.decide", WIZ, user=PLAYER, prompt_id=offer_of(t), accept=True)
    t.intent("reroll.approve", WIZ, prompt_id=t.prompts()[0]["prompt_id"], approve=True)
    t.roll(WIZ, 4, 2)  # the GM's plain roll before the reroll came
    assert [p["kind"] for p in t.prompts()] == ["reroll"] and len(t.world.prompts) == 1


def test_BI_2_a_gm_denial_does_not_use_up_the_reroll() -> None:
    t = table()
    t.roll(WIZ, 3, 2)
    t.intent("reroll.decide", WIZ, user=PLAYER, prompt_id=offer_of(t), accept=True)
    t.intent("reroll.approve", WIZ, prompt_id=t.prompts()[0]["prompt_id"], approve=False)
    t.roll(WIZ, 2, 2)
    assert len(t.prompts("reroll")) == 1


@pytest.mark.parametrize("accept", [False, True])
def test_BI_2_a_decline_or_a_reroll_made_uses_it_up(accept: bool) -> None:
    t = table(auto_approve_rerolls=True)
    t.roll(WIZ, 3, 2)
    offer = offer_of(t)
    t.intent("reroll.decide", WIZ, user=PLAYER, prompt_id=offer, accept=accept)
    if accept:
        t.roll(WIZ, 9, 2, reroll_of=offer)
    t.roll(WIZ, 1, 2)  # the GM rolls again: a qualifying natural, but the right is used
    assert t.prompts() == [] and t.world.prompts == {}
    assert t.entry(WIZ)["initiative"] == 3


@pytest.mark.parametrize("stage", ["offered", "approval", "approved"])
def test_BI_2_the_gms_typed_number_withdraws_a_pending_offer_and_stands(stage: str) -> None:
    """Issue 24: the GM's number is an override like the GM's roll: the offer (at whatever
    stage) is withdrawn, deciding it is ``unknown_prompt``, and the typed number stands."""
    t = table()
    t.roll(WIZ, 3, 2)
    offer = offer_of(t)
    if stage != "offered":
        t.intent("reroll.decide", WIZ, user=PLAYER, prompt_id=offer, accept=True)
    if stage == "approved":
        t.intent("reroll.approve", WIZ, prompt_id=t.prompts()[0]["prompt_id"], approve=True)
    t.intent("initiative.set", WIZ, value=12)
    assert t.world.prompts == {} and "reroll_pending" not in t.entry(WIZ)["tags"]
    assert t.entry(WIZ)["initiative"] == 12
    t.refused("unknown_prompt", t.intent_msg("reroll.decide", WIZ, user=PLAYER,
                                             prompt_id=offer, accept=True))
    if stage == "approved":  # the roll the module was asked for comes too late
        t.refused("rule_violation", t.roll_msg(WIZ, 19, 2, reroll_of=offer))
    assert t.entry(WIZ)["initiative"] == 12


def test_BI_2_after_the_gms_number_a_qualifying_roll_gets_a_new_offer() -> None:
    """The withdrawn offer did not use the right up (only a reroll made or a decline does)."""
    t = table()
    t.roll(WIZ, 3, 2)
    offer = offer_of(t)
    t.intent("initiative.set", WIZ, value=12)
    # the GM's number withdrew the offer itself (not the next roll): closed, not used up
    assert t.world.prompts == {} and "reroll_pending" not in t.entry(WIZ)["tags"]
    reroll = fighter_state(t.world.combats[COMBAT].combatants[WIZ]).reroll
    assert reroll is not None and reroll.offer_id == offer and reroll.status == "superseded"
    t.roll(WIZ, 2, 2)
    assert len(t.prompts("reroll")) == 1


def test_BI_2_the_gms_number_for_one_member_withdraws_the_groups_offer() -> None:
    t = group_table()
    group_roll(t, PACK, 1, 2)
    offer = offer_of(t)
    t.intent("initiative.set", GOB2, value=9)
    assert t.world.prompts == {}
    assert all("reroll_pending" not in t.entry(c)["tags"] for c in (GOB1, GOB2))
    t.refused("unknown_prompt", t.intent_msg("reroll.decide", GOB1, prompt_id=offer, accept=True))
    assert t.entry(GOB2)["initiative"] == 9


def test_initiative_set_by_the_gm_replaces_the_value() -> None:
    t = table()
    t.roll(ORC, 10, 1)
    t.roll(WIZ, 12, 2)
    t.intent("initiative.set", WIZ, value=7)
    assert t.order() == [ORC, WIZ] and t.entry(WIZ)["initiative"] == 7


def test_a_reroll_arriving_during_its_own_turn_keeps_the_turn_and_skips_nobody() -> None:
    third = "cmbThird00000001"
    t = Table(fighter(WIZ, "Wizard", dex=2, int_=4, owners=(PLAYER,)),
              fighter(ORC, "Orc", dex=1, npc=True), fighter(third, "Goblin", dex=0, npc=True),
              settings={"auto_approve_rerolls": True})
    t.create()
    t.roll(WIZ, 4, 12)  # 16, natural 4 <= Int 4
    offer = offer_of(t)
    t.roll(ORC, 14, 1)  # 15
    t.roll(third, 5)
    t.start()
    assert t.plan["current"] == WIZ
    t.intent("reroll.decide", WIZ, user=PLAYER, prompt_id=offer, accept=True)
    t.roll(WIZ, 1, 12, reroll_of=offer)  # 13, below the orc: but its turn is in progress
    assert t.order() == [WIZ, ORC, third] and t.plan["current"] == WIZ
    assert t.entry(WIZ)["initiative"] >= 13 and t.entry(ORC)["detail"]["score"] == 15
    t.next_turn()
    assert t.plan["current"] == ORC
    t.roll(ORC, 1, 1)  # a GM's late reroll of a turn in progress: it stays
    t.next_turn()
    assert t.plan["current"] == third


def test_a_player_cannot_replace_the_stood_reroll_with_a_plain_roll() -> None:
    t = table(auto_approve_rerolls=True)
    t.roll(WIZ, 3, 2, user=PLAYER)
    offer = offer_of(t)
    t.intent("reroll.decide", WIZ, user=PLAYER, prompt_id=offer, accept=True)
    t.roll(WIZ, 2, 2, reroll_of=offer, user=PLAYER)
    before = t.snapshot()
    error = t.refused("rule_violation", t.roll_msg(WIZ, 20, 2, user=PLAYER))
    assert error.rule == "BI-2" and error.path == "/roll"
    assert t.snapshot() == before and t.initiatives()[WIZ] == 4


def test_a_player_who_declined_cannot_roll_again_but_a_gm_may() -> None:
    t = table()
    t.roll(WIZ, 3, 2, user=PLAYER)
    t.intent("reroll.decide", WIZ, user=PLAYER, prompt_id=offer_of(t), accept=False)
    t.refused("rule_violation", t.roll_msg(WIZ, 19, 2, user=PLAYER))
    t.roll(WIZ, 15, 2)  # the GM rolls again: a GM's override, like initiative.set
    assert t.initiatives()[WIZ] == 17


# ---------------------------------------------------------------- BI-2: group rolls (issue 11)

PACK = "grpGoblins000001"
GOB1, GOB2, ELF1, ELF2 = ("cmbGoblinA000001", "cmbGoblinB000001", "cmbElfA000000001",
                          "cmbElfB000000001")
TWINS = "grpTwins00000001"


def grouped(cid: str, name: str, group: str, **kw: Any) -> dict[str, Any]:
    return {**fighter(cid, name, **kw), "group": group}


def group_table(**settings: Any) -> Table:
    t = Table(grouped(GOB1, "Goblin A", PACK, dex=2, int_=3, npc=True),
              grouped(GOB2, "Goblin B", PACK, dex=2, int_=1, npc=True),
              grouped(ELF1, "Elf A", TWINS, dex=3, int_=2, owners=(PLAYER,)),
              grouped(ELF2, "Elf B", TWINS, dex=3, int_=4, owners=(PLAYER, OTHER)),
              settings=settings)
    t.groups = [{"_id": PACK, "name": "Goblins"}, {"_id": TWINS, "name": "Twins"}]
    t.create()
    return t


def group_roll(t: Table, group: str, natural: int, modifier: int,
               reroll_of: str | None = None, user: str = GM) -> None:
    roll: dict[str, Any] = {"group_id": group, "roll": d20(natural, modifier)}
    if reroll_of is not None:
        roll["reroll_of"] = reroll_of
    t.hook("initiativeRoll", roll=roll, user=user)


def test_BI_2_a_group_roll_gets_the_offer_and_every_member_takes_the_reroll() -> None:
    t = group_table()
    group_roll(t, PACK, 1, 2)  # natural 1 <= the lowest Int (+1)
    [offer] = t.prompts("reroll")
    assert offer["to"] == "gm" and offer["combatant_id"] == GOB1
    assert offer["data"]["group_id"] == PACK and offer["data"]["int"] == 1
    assert offer["data"]["members"] == [GOB1, GOB2]
    assert all("reroll_pending" in t.entry(c)["tags"] for c in (GOB1, GOB2))
    t.intent("reroll.decide", GOB1, prompt_id=offer["prompt_id"], accept=True)
    t.intent("reroll.approve", GOB1, prompt_id=t.prompts()[0]["prompt_id"], approve=True)
    [ask] = t.prompts()
    assert ask["data"] == {"formula": "1d20 + 2", "reroll_of": offer["prompt_id"],
                           "group_id": PACK}
    group_roll(t, PACK, 14, 2, reroll_of=offer["prompt_id"])
    assert [(t.initiatives()[c] or 0) // 1 for c in (GOB1, GOB2)] == [16, 16]
    assert all("reroll_pending" not in t.entry(c)["tags"] for c in (GOB1, GOB2))
    group_roll(t, PACK, 1, 2)  # the GM rolls again: the group's reroll is used up
    assert t.prompts() == []


def test_BI_2_ruling_a_group_qualifies_only_when_every_member_would() -> None:
    t = group_table()
    group_roll(t, PACK, 2, 2)  # 2 <= Goblin A's +3, but not Goblin B's +1
    assert t.prompts() == []


def test_BI_2_a_player_group_offer_goes_to_the_owners_of_every_member() -> None:
    t = group_table()
    group_roll(t, TWINS, 2, 3, user=PLAYER)  # 2 <= the lowest Int (+2)
    [offer] = t.prompts("reroll")
    assert offer["to"] == [PLAYER] and offer["data"]["members"] == [ELF1, ELF2]
    t.refused("not_permitted", t.intent_msg("reroll.decide", ELF2, user=OTHER,
                                            prompt_id=offer["prompt_id"], accept=True))
    t.intent("reroll.decide", ELF1, user=PLAYER, prompt_id=offer["prompt_id"], accept=False)
    assert [(t.initiatives()[c] or 0) // 1 for c in (ELF1, ELF2)] == [5, 5]


def test_BI_2_a_group_reroll_may_come_back_for_one_member() -> None:
    """The module rolls a ``reroll.roll`` prompt for its ``combatant_id``: the group's
    representative; the engine gives the result to the whole group."""
    t = group_table(auto_approve_rerolls=True)
    group_roll(t, PACK, 1, 2)
    offer = offer_of(t)
    t.intent("reroll.decide", GOB1, prompt_id=offer, accept=True)
    t.roll(GOB1, 11, 2, reroll_of=offer)
    assert {(t.initiatives()[c] or 0) // 1 for c in (GOB1, GOB2)} == {13}
