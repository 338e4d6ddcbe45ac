"""BI-5 Extended readied action: declared on the combatant's own turn, lasting until the
start of its next; a pre-emptive trigger spends the reaction on an opposed check (docs/rules.md).
"""

from __future__ import annotations

from msgspec.structs import replace

from ...engine.context import Ctx
from ...engine.events import TurnEnded, TurnStarted
from ...engine.messages import OpposedResult, ReadiedDeclare, ReadiedTrigger
from ...engine.model import Combat, Combatant
from ...errors import RuleViolation, UnknownCombatant
from .reactions import require_reaction
from .state import Fighter, Readied, fighter, proficient, update_fighter

PREEMPTIVE_SKILLS = ("insight", "sleight_of_hand")  # only if proficient (BI-5)
TARGET_SKILLS = ("perception", "deception")


def readied_action_on_turn_start(ctx: Ctx, combat: Combat, event: TurnStarted) -> Combat:
    """BI-5: a readied action lasts until the start of its owner's next turn."""
    f = fighter(combat.combatants[event.combatant_id])
    if f.readied is not None and f.readied.status in ("waiting", "triggered"):
        return update_fighter(combat, event.combatant_id, readied=None)  # lasted its time
    return combat


def readied_action_declare(ctx: Ctx, combat: Combat, intent: ReadiedDeclare) -> Combat:
    """BI-5: a standard ("if X, I do Y") or pre-emptive ("before X, I do Y") readied action,
    readied on the combatant's own turn."""
    c = ctx.owned(combat, intent.combatant_id, "ready an action")
    mode = intent.mode
    if mode == "preemptive" and not _skills(c):
        raise RuleViolation(
            f"{c.name or c.id} is proficient in neither Insight nor Sleight of Hand and cannot "
            "use a pre-emptive trigger", rule="BI-5", field="mode")
    if not combat.started or combat.current != c.id:
        raise RuleViolation("readying is the combatant's action on its own turn", rule="BI-5",
                            field="combatant_id")
    target = intent.target_id
    if target is not None and target not in combat.combatants:
        raise UnknownCombatant(f"combatant {target!r} is not in combat {combat.id!r}",
                               field="target_id")
    held = fighter(c).readied
    if held is not None:
        raise RuleViolation(f"{c.name or c.id} already has a readied action ({held.readied_id})",
                            rule="BI-5", field="combatant_id")
    readied = Readied(
        readied_id=ctx.new_id("readied"), mode=mode, trigger=intent.trigger,
        action=intent.action, target_id=target,
    )
    ctx.notice("readied.declared", f"{c.name or c.id} readies: {readied.action}",
               readied_id=readied.readied_id, combatant_id=c.id, mode=readied.mode)
    return update_fighter(combat, c.id, readied=readied)


def _skills(c: Combatant) -> list[str]:
    return [s for s in PREEMPTIVE_SKILLS if s in proficient(c)]


def _holder(combat: Combat, readied_id: str) -> Combatant:
    for c in combat.combatants.values():
        held = fighter(c).readied
        if held is not None and held.readied_id == readied_id:
            return c
    raise RuleViolation(f"there is no readied action {readied_id!r} (unknown, taken or expired)",
                        rule="BI-5", field="readied_id")


def readied_action_trigger(ctx: Ctx, combat: Combat, intent: ReadiedTrigger) -> Combat:
    """BI-5: the trigger happens: a standard one may react now, a pre-emptive one goes to an
    opposed check."""
    c = _holder(combat, intent.readied_id)
    ctx.require_owner(c, "trigger a readied action")
    r = fighter(c).readied
    assert r is not None
    if r.status == "due":  # taken without a reaction (BI-5 ruling)
        ctx.notice("readied.taken", f"{c.name or c.id} takes its readied action: {r.action}",
                   readied_id=r.readied_id, combatant_id=c.id)
        return update_fighter(combat, c.id, readied=None)
    if r.status == "kept":
        raise RuleViolation("after a lost pre-emptive check the readied action falls due when "
                            "the current turn ends", rule="BI-5", field="readied_id")
    if r.status != "waiting":
        raise RuleViolation(f"readied action {r.readied_id} is already {r.status}",
                            rule="BI-5", field="readied_id")
    require_reaction(c, "take a readied action", field="readied_id")
    if r.mode == "standard":
        return update_fighter(combat, c.id, readied=replace(r, status="triggered"))
    target = combat.combatants.get(r.target_id or "")
    prompt = ctx.open_prompt(
        "opposed_check", rule="BI-5", to="gm", combat_id=combat.id, combatant_id=c.id,
        data={"readied_id": r.readied_id, "trigger": r.trigger, "action": r.action,
              "actor": {"combatant_id": c.id, "skills": _skills(c)},
              "target": {"combatant_id": target.id if target else None,
                         "skills": list(TARGET_SKILLS)},
              "ties": "target"},
    )
    checking = replace(r, status="checking", prompt_id=prompt.prompt_id, during=combat.current)
    return update_fighter(combat, c.id, readied=checking, reaction_spent="preemptive")


def readied_action_opposed_result(ctx: Ctx, combat: Combat, intent: OpposedResult) -> Combat:
    """BI-5: the GM's totals of the opposed check; a tie goes to the target (ruling)."""
    ctx.require_gm("resolve an opposed check")
    prompt = ctx.answer_prompt(intent.prompt_id, "opposed_check", combat_id=combat.id)
    c = combat.combatants.get(prompt.combatant_id or "")
    r = fighter(c).readied if c is not None else None
    if c is None or r is None or r.prompt_id != prompt.prompt_id:
        raise RuleViolation("the readied action of this check is gone", rule="BI-5",
                            field="prompt_id")
    if intent.actor_total > intent.target_total:  # a tie goes to the target (ruling)
        return update_fighter(combat, c.id, readied=replace(r, status="won"))
    due = r.during is None or r.during_ended
    return update_fighter(combat, c.id, readied=replace(r, status="due" if due else "kept"))


def readied_action_on_turn_end(ctx: Ctx, combat: Combat, event: TurnEnded) -> Combat:
    """BI-5: the turn moving on ends a trigger's moment, and makes a kept action due."""
    for cid, c in combat.combatants.items():  # each step changes its own combatant only
        r = c.ext.readied if isinstance(c.ext, Fighter) else None  # fighter() inlined: every turn end
        if r is None:
            continue
        if r.status == "triggered":  # the turn moved on: the trigger is past
            combat = update_fighter(combat, cid, readied=replace(r, status="waiting"))
        elif r.status == "won":  # it acted before the trigger resolved
            combat = update_fighter(combat, cid, readied=None)
        elif r.status == "checking" and r.during == event.combatant_id:
            combat = update_fighter(combat, cid, readied=replace(r, during_ended=True))
        elif r.status == "kept" and r.during == event.combatant_id:
            combat = update_fighter(combat, cid, readied=replace(r, status="due"))
        elif r.status == "due" and not event.skipped:  # the turn that follows has ended
            combat = update_fighter(combat, cid, readied=None)
    return combat


def readied_tags(r: Readied) -> tuple[str, ...]:
    return {
        "waiting": ("readied",),
        "triggered": ("readied", "readied_triggered"),
        "checking": ("readied", "opposed_check_pending"),
        "won": ("acts_before_trigger",),
        "kept": ("readied_pending",),
        "due": ("readied_pending", "readied_due"),
    }.get(r.status, ())
