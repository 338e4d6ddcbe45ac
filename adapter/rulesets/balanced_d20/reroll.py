"""BI-1 Initiative roll and BI-2 Clever reroll (the prompts' flow: docs/rules.md, BI-2).

The natural d20 is the one active result of the roll's only d20 term (a roll that does not
fit is refused). A group's roll gets one offer for the whole group (ruling).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msgspec.structs import replace

from ...engine.context import Ctx
from ...engine.dice import ROLL, active_results, dice_terms
from ...engine.events import Rolled, ScoreSet
from ...engine.messages import RerollApprove, RerollDecide, Roll
from ...engine.model import Combat, Combatant
from ...errors import RuleViolation, UnknownPrompt
from .state import Reroll, fighter, replace_in_order, scored, stat, update_fighter

KEEP_DROP = ("kh", "kl", "k", "dh", "dl", "d")


def d20_term(roll: Roll) -> Mapping[str, Any]:
    """The roll's one d20 term; refuse a roll without one, or with more than one."""
    terms = [t for t in dice_terms(roll) if t.get("faces") == 20]
    if not terms:
        raise RuleViolation(
            "an initiative roll under balanced-d20 is a d20 roll (a Dexterity check); "
            "this roll has no d20", rule="BI-1", field=ROLL,
        )
    if len(terms) > 1:
        raise RuleViolation(
            f"this initiative roll has {len(terms)} d20 terms; the natural d20 cannot be told",
            rule="BI-1", field=ROLL,
        )
    return terms[0]


def natural_d20(roll: Roll) -> int:
    """The natural d20 of the roll (the one active result of its d20 term)."""
    kept = active_results(d20_term(roll))
    if len(kept) != 1:
        raise RuleViolation(
            f"the d20 term keeps {len(kept)} results; a roll of two d20s must keep or drop one "
            "(2d20kh, 2d20kl) so that its natural d20 is known",
            rule="BI-1", field=ROLL,
        )
    value = kept[0].get("result")
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 20:
        raise RuleViolation(f"the d20 shows {value!r}, not 1..20", rule="BI-1", field=ROLL)
    return value


def reroll_formula(roll: Roll, natural: int) -> str:
    """The formula of a clever reroll (BI-2 ruling): one d20 with its own modifiers but
    keep/drop, plus the first total less its natural d20 (a bonus die kept as it fell)."""
    term = d20_term(roll)
    mods = "".join(
        str(m) for m in term.get("modifiers") or ()
        if not any(str(m).startswith(k) for k in KEEP_DROP)
    )
    bonus = float(roll.total) - natural
    die = f"1d20{mods}"
    if bonus == 0:
        return die
    amount = int(bonus) if float(bonus).is_integer() else bonus
    sign = "-" if bonus < 0 else "+"
    return f"{die} {sign} {abs(amount)}"


#: BI-2 "once": a reroll made or declined uses the right up (withdrawn or denied does not)
USED_UP = ("declined", "rerolled")


def initiative_roll(ctx: Ctx, combat: Combat, event: Rolled) -> Combat:
    """BI-1: the initiative is a Dexterity check: the score is the roll's total, the natural
    d20 read from its d20 term; a second roll is the GM's or the clever reroll's (BI-2)."""
    natural = natural_d20(event.roll)
    total = float(event.roll.total)
    members = rollers(combat, event)
    rolled_before = [cid for cid in members if combat.combatants[cid].score is not None]
    if event.reroll_of is None and rolled_before and not ctx.is_gm():
        # BI-2: the clever reroll is the only second roll, and its result must stand
        name = combat.combatants[rolled_before[0]].name or rolled_before[0]
        raise RuleViolation(
            f"{name} has rolled initiative already; only the clever reroll (or a GM) may roll again",
            rule="BI-2", field="roll",
        )
    for cid in members:
        combat = scored(update_fighter(combat, cid, natural=natural), cid, total)
    return combat


def initiative_roll_on_score_set(ctx: Ctx, combat: Combat, event: ScoreSet) -> Combat:
    """BI-1: a GM's ``initiative.set`` replaces the combatant's own value; it withdraws a
    pending clever reroll offer, as a new roll does (BI-2 ruling)."""
    before = combat.combatants[event.combatant_id].score
    combat = _withdraw_offer(ctx, combat, event.combatant_id)
    combat = scored(combat, event.combatant_id, event.value)
    if combat.combatants[event.combatant_id].score != before:
        combat = replace_in_order(combat, event.combatant_id)
    return combat


def _withdraw_offer(ctx: Ctx, combat: Combat, cid: str) -> Combat:
    """A pending offer lapses (``superseded``): its prompts close, the right is not used up."""
    offer = fighter(combat.combatants[cid]).reroll
    if offer is None or not offer.pending:
        return combat
    _close(ctx, offer)
    return _set_reroll(combat, _party(combat, cid, offer), replace(offer, status="superseded"))


def clever_reroll_on_roll(ctx: Ctx, combat: Combat, event: Rolled) -> Combat:
    """BI-2: a natural d20 <= the Int modifier may be rerolled once; the new result stands
    (ruling: the owner chooses, the GM approves unless ``auto_approve_rerolls``)."""
    party = rollers(combat, event)
    if event.reroll_of is not None:
        return _rerolled(ctx, combat, party, event.reroll_of)
    return _rolled(ctx, combat, party, event)


def rollers(combat: Combat, event: Rolled) -> list[str]:
    """Whose initiative a roll is: the combatant's, or every member's of the group that
    rolled; a reroll of a group's offer is the group's, whichever member it comes back for."""
    if event.group_id is not None:
        return [c.id for c in combat.members(event.group_id)]
    cid = str(event.combatant_id)
    offer = fighter(combat.combatants[cid]).reroll
    if event.reroll_of is not None and offer is not None and offer.offer_id == event.reroll_of:
        return _party(combat, cid, offer)
    return [cid]


def _party(combat: Combat, cid: str, reroll: Reroll) -> list[str]:
    return ([c.id for c in combat.members(reroll.group)] or [cid]) if reroll.group is not None else [cid]


def _lowest_int(combat: Combat, party: list[str]) -> int:
    """BI-2 for a group roll (**ruling**): the lowest Int modifier among the members."""
    return min(stat(combat.combatants[cid], "int") for cid in party)


def _offer_to(members: list[Combatant]) -> tuple[str, ...] | str:
    """Who decides: the owners of every member; the GM for an NPC, or when none owns them all."""
    if any(c.is_npc or not c.owners for c in members):
        return "gm"
    common = [u for u in members[0].owners if all(u in c.owners for c in members)]
    return tuple(common) if common else "gm"


def _set_reroll(combat: Combat, party: list[str], reroll: Reroll) -> Combat:
    for cid in party:
        combat = update_fighter(combat, cid, reroll=reroll)
    return combat


def _rolled(ctx: Ctx, combat: Combat, party: list[str], event: Rolled) -> Combat:
    f = fighter(combat.combatants[party[0]])
    if f.reroll is not None and f.reroll.status in USED_UP:
        return combat  # BI-2: "once": no second offer for this combatant
    combat = _withdraw_offer(ctx, combat, party[0])  # a plain roll replaced the initiative
    natural, intelligence = f.natural, _lowest_int(combat, party)
    if natural is None or intelligence <= 0 or natural > intelligence:
        return combat
    to = _offer_to([combat.combatants[cid] for cid in party])
    formula = reroll_formula(event.roll, natural)
    data: dict[str, object] = {"natural": natural, "int": intelligence,
                               "total": event.roll.total, "formula": formula}
    if event.group_id is not None:
        data.update(group_id=event.group_id, members=party)
    prompt = ctx.open_prompt(
        "reroll", rule="BI-2", to=to, combat_id=combat.id, combatant_id=party[0], data=data,
    )
    offer = Reroll(offer_id=prompt.prompt_id, status="offered", to=to, formula=formula,
                   natural=natural, group=event.group_id)
    return _set_reroll(combat, party, offer)


def _close(ctx: Ctx, reroll: Reroll) -> None:
    for pid, kind in (
        (reroll.offer_id, "reroll"), (reroll.approval_id, "reroll.approval"),
        (reroll.roll_prompt_id, "reroll.roll"),
    ):
        if pid is not None and ctx.pending(pid) is not None:
            ctx.answer_prompt(pid, kind)


def _rerolled(ctx: Ctx, combat: Combat, party: list[str], reroll_of: str) -> Combat:
    f = fighter(combat.combatants[party[0]])
    if f.reroll is None or f.reroll.offer_id != reroll_of:
        raise UnknownPrompt(
            f"{reroll_of!r} is not a reroll offer made to this combatant", field=("roll", "reroll_of")
        )
    if f.reroll.status != "approved" or f.reroll.roll_prompt_id is None:
        raise RuleViolation(
            "the d20 may be rerolled once only: this combatant has already rerolled"
            if f.reroll.status == "rerolled" else f"this reroll is {f.reroll.status}, not approved: the first roll stands",
            rule="BI-2", field=("roll", "reroll_of"),
        )
    ctx.answer_prompt(f.reroll.roll_prompt_id, "reroll.roll", field=("roll", "reroll_of"))
    return _set_reroll(combat, party, replace(f.reroll, status="rerolled"))


def _ask_for_roll(ctx: Ctx, combat: Combat, cid: str, reroll: Reroll) -> Combat:
    data = {"formula": reroll.formula, "reroll_of": reroll.offer_id}
    if reroll.group is not None:
        data["group_id"] = reroll.group
    prompt = ctx.open_prompt(
        "reroll.roll", rule="BI-2", to=reroll.to, combat_id=combat.id, combatant_id=cid,
        data=data,
    )
    approved = replace(reroll, status="approved", roll_prompt_id=prompt.prompt_id)
    return _set_reroll(combat, _party(combat, cid, reroll), approved)


def _offer_of(combat: Combat, cid: str | None, offer_id: str) -> tuple[Combatant, Reroll]:
    c = combat.combatants.get(cid or "")
    reroll = fighter(c).reroll if c is not None else None
    if c is None or reroll is None or offer_id not in (reroll.offer_id, reroll.approval_id):
        raise UnknownPrompt(f"prompt {offer_id!r} is no longer pending", field="prompt_id")
    return c, reroll


def clever_reroll_decide(ctx: Ctx, combat: Combat, intent: RerollDecide) -> Combat:
    """BI-2 ``reroll.decide``: the owner accepts or declines the offer."""
    prompt = ctx.answer_prompt(intent.prompt_id, "reroll", combat_id=combat.id)
    c, reroll = _offer_of(combat, prompt.combatant_id, prompt.prompt_id)
    party = _party(combat, c.id, reroll)
    for cid in party:
        ctx.require_owner(combat.combatants[cid], "decide on a clever reroll")
    if not intent.accept:
        return _set_reroll(combat, party, replace(reroll, status="declined"))
    if bool(ctx.setting("auto_approve_rerolls", False)):
        return _ask_for_roll(ctx, combat, c.id, reroll)
    approval = ctx.open_prompt(
        "reroll.approval", rule="BI-2", to="gm", combat_id=combat.id, combatant_id=c.id,
        data={"offer_id": reroll.offer_id,
              "name": combat.groups.get(reroll.group or "") or c.name, "natural": reroll.natural,
              "int": _lowest_int(combat, party), "formula": reroll.formula},
    )
    return _set_reroll(combat, party,
                       replace(reroll, status="approval", approval_id=approval.prompt_id))


def clever_reroll_approve(ctx: Ctx, combat: Combat, intent: RerollApprove) -> Combat:
    """BI-2 ``reroll.approve``: a GM approves or refuses an accepted reroll."""
    ctx.require_gm("approve a clever reroll")
    prompt = ctx.answer_prompt(intent.prompt_id, "reroll.approval", combat_id=combat.id)
    c, reroll = _offer_of(combat, prompt.combatant_id, prompt.prompt_id)
    if not intent.approve:
        return _set_reroll(combat, _party(combat, c.id, reroll), replace(reroll, status="denied"))
    return _ask_for_roll(ctx, combat, c.id, reroll)
