"""BI-1 Initiative roll and BI-2 Clever reroll.

Flow of a clever reroll (one made, or declined, per combatant per combat)::

    initiativeRoll, natural d20 <= Int mod    -> prompt ``reroll`` to the owners (NPC: "gm")
    reroll.decide {prompt_id, accept}          owner or GM; declined: the first roll stands
      accept, auto_approve_rerolls             -> prompt ``reroll.roll`` (data.formula)
      accept                                   -> prompt ``reroll.approval`` to "gm"
    reroll.approve {prompt_id, approve}        GM only; approved -> prompt ``reroll.roll``
    initiativeRoll with reroll_of = offer id   the new total stands, even if lower

A group's roll (``group_id``) gets the offer too, for the whole group: it qualifies by the
lowest Int modifier among the members (ruling), goes to the owners of every member (an NPC
group's to the GM), names the first member as its ``combatant_id`` (with ``data.group_id``
and ``data.members``), and the reroll's result goes to every member.

A pending prompt never blocks the order: the plan shows the current value, tagged
``reroll_pending``.
"""

from __future__ import annotations

from msgspec.structs import replace

from ...engine.context import Ctx
from ...engine.dice import roll_total
from ...engine.events import Rolled, ScoreSet
from ...engine.messages import RerollApprove, RerollDecide
from ...engine.model import Combat, Combatant
from ...errors import RuleViolation, UnknownPrompt
from .common import pending_prompt, replace_in_order
from .natural import natural_d20, reroll_formula
from .state import Reroll, fighter, scored, stat, update_fighter

#: BI-2 "may reroll the d20 once": only a reroll made, or a decline, uses the right up; an
#: offer withdrawn by a new roll, or denied by the GM, leaves it for the next qualifying roll
USED_UP = ("declined", "rerolled")


def initiative_roll(ctx: Ctx, combat: Combat, event: Rolled) -> Combat:
    """BI-1: the initiative is a Dexterity check, d20 + Dex (+ the system's bonuses).

    The score is the roll's total; the natural d20 is read from its d20 term (a roll that
    does not fit is refused).
    """
    natural = natural_d20(event.roll)
    total = roll_total(event.roll)
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
    """BI-1: a GM's ``initiative.set`` replaces the combatant's own value. BI-2 (ruling): the
    GM's number is an override like a new roll by the GM: it withdraws a pending clever
    reroll offer (a group's, for every member), and the typed number stands."""
    before = combat.combatants[event.combatant_id].score
    combat = _withdraw_offer(ctx, combat, event.combatant_id)
    combat = scored(combat, event.combatant_id, event.value)
    if combat.combatants[event.combatant_id].score != before:
        combat = replace_in_order(combat, event.combatant_id)
    return combat


def _withdraw_offer(ctx: Ctx, combat: Combat, cid: str) -> Combat:
    """A pending offer lapses: its prompts close (answering them is ``unknown_prompt``), and
    the right to reroll is not used up (``superseded``)."""
    offer = fighter(combat.combatants[cid]).reroll
    if offer is None or not offer.pending:
        return combat
    _close(ctx, offer)
    return _set_reroll(combat, _party(combat, cid, offer), replace(offer, status="superseded"))


def clever_reroll_on_roll(ctx: Ctx, combat: Combat, event: Rolled) -> Combat:
    """BI-2: a natural d20 <= the Int modifier may be rerolled once; the new result stands.

    Ruling: the owner chooses, the GM approves (unless ``auto_approve_rerolls``); the
    reroll replaces the d20 only, the modifiers are applied again to the new die.
    """
    party = rollers(combat, event)
    if event.reroll_of is not None:
        return _rerolled(ctx, combat, party, event.reroll_of)
    return _rolled(ctx, combat, party, event)


def rollers(combat: Combat, event: Rolled) -> list[str]:
    """Whose initiative a roll is: the combatant's, or every member's of the group that
    rolled; a reroll of a group's offer is the group's, whichever member it comes back for."""
    if event.group_id is not None:
        return _members(combat, event.group_id)
    cid = str(event.combatant_id)
    offer = fighter(combat.combatants[cid]).reroll
    if (event.reroll_of is not None and offer is not None and offer.group is not None
            and offer.offer_id == event.reroll_of):
        return _members(combat, offer.group) or [cid]
    return [cid]


def _members(combat: Combat, group: str) -> list[str]:
    return [cid for cid in combat.roster if combat.combatants[cid].group == group]


def _party(combat: Combat, cid: str, reroll: Reroll) -> list[str]:
    return (_members(combat, reroll.group) or [cid]) if reroll.group is not None else [cid]


def _lowest_int(combat: Combat, party: list[str]) -> int:
    """BI-2 for a group roll (**ruling**): the group qualifies only when every member would
    on its own, i.e. by the lowest Int modifier among them; every member takes the result."""
    return min(stat(combat.combatants[cid], "int") for cid in party)


def _offer_to(members: list[Combatant]) -> tuple[str, ...] | str:
    """The owners who decide: a character's owners; for a group, the owners of every member
    (who may roll for it); the GM for an NPC, or when no player owns every member."""
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
    if f.reroll is not None:
        if f.reroll.status in USED_UP:
            return combat  # BI-2: "once": no second offer for this combatant
        if f.reroll.pending:  # a plain roll replaced the initiative: the offer lapses
            combat = _withdraw_offer(ctx, combat, party[0])
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
    if f.reroll.status == "rerolled":
        raise RuleViolation(
            "the d20 may be rerolled once only: this combatant has already rerolled",
            rule="BI-2", field=("roll", "reroll_of"),
        )
    if f.reroll.status != "approved" or f.reroll.roll_prompt_id is None:
        raise RuleViolation(
            f"this reroll is {f.reroll.status}, not approved: the first roll stands",
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
    prompt = pending_prompt(ctx, combat, intent.prompt_id, "reroll")
    c, reroll = _offer_of(combat, prompt.combatant_id, prompt.prompt_id)
    party = _party(combat, c.id, reroll)
    for cid in party:
        ctx.require_owner(combat.combatants[cid], "decide on a clever reroll")
    ctx.answer_prompt(prompt.prompt_id, "reroll")
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
    prompt = pending_prompt(ctx, combat, intent.prompt_id, "reroll.approval")
    c, reroll = _offer_of(combat, prompt.combatant_id, prompt.prompt_id)
    ctx.answer_prompt(prompt.prompt_id, "reroll.approval")
    if not intent.approve:
        return _set_reroll(combat, _party(combat, c.id, reroll), replace(reroll, status="denied"))
    return _ask_for_roll(ctx, combat, c.id, reroll)
