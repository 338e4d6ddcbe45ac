"""BI-5 Extended readied action.

``readied.declare {mode, trigger, action, target_id?}`` on the combatant's own turn (readying
is its action); the ack's notice ``readied.declared`` carries the ``readied_id``. It lasts
until the start of its owner's next turn (PHB p. 193).

``readied.trigger {readied_id}`` (owner or GM) when the trigger happens:

    standard     -> reaction available (``readied_trigger``) until reaction.use or the turn
                    moves on
    pre-emptive  -> the reaction is spent; prompt ``opposed_check`` to the GM;
                    opposed.result: actor > target -> ``acts_before_trigger``;
                    otherwise (a tie goes to the target) -> kept (``readied_pending``), due
                    when the current turn ends, then taken by readied.trigger without a
                    reaction until the end of the turn that follows
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...engine.context import Ctx
from ...engine.events import Declared, Event, TurnEnded, TurnStarted
from ...engine.model import Combat, Combatant
from ...errors import RuleViolation, UnknownCombatant
from .common import arg, declared_by, need_combat, pending_prompt
from .natural import is_number
from .reactions import require_reaction
from .state import Readied, fighter, proficient, update_fighter

PREEMPTIVE_SKILLS = ("insight", "sleight_of_hand")  # only if proficient (BI-5)
TARGET_SKILLS = ("perception", "deception")


def readied_action(ctx: Ctx, combat: Combat | None, event: Event) -> Combat | None:
    """BI-5: a standard ("if X, I do Y") or pre-emptive ("before X, I do Y") readied action."""
    if isinstance(event, Declared):
        if event.kind == "readied.declare":
            return _declare(ctx, combat, event)
        if event.kind == "readied.trigger":
            return _trigger(ctx, combat, event)
        if event.kind == "opposed.result":
            return _opposed_result(ctx, combat, event)
        return None
    if combat is None:
        return None
    if isinstance(event, TurnStarted):
        f = fighter(combat.combatants[event.combatant_id])
        if f.readied is not None and f.readied.status in ("waiting", "triggered"):
            return update_fighter(combat, event.combatant_id, readied=None)  # lasted its time
        return None
    if isinstance(event, TurnEnded):
        return _turn_ended(combat, event)
    return None


def _declare(ctx: Ctx, combat: Combat | None, event: Declared) -> Combat:
    combat, c = declared_by(ctx, combat, event, "ready an action")
    mode = arg(event.args, "mode")
    if mode not in ("standard", "preemptive"):
        raise RuleViolation(f"a readied action is standard or preemptive, not {mode!r}",
                            rule="BI-5", path="/args/mode")
    if mode == "preemptive" and not _skills(c):
        raise RuleViolation(
            f"{c.name or c.id} is proficient in neither Insight nor Sleight of Hand and cannot "
            "use a pre-emptive trigger", rule="BI-5", path="/args/mode")
    if not combat.started or combat.current != c.id:
        raise RuleViolation("readying is the combatant's action on its own turn", rule="BI-5",
                            path="/combatant_id")
    target = event.args.get("target_id")
    if target is not None and target not in combat.combatants:
        raise UnknownCombatant(f"combatant {target!r} is not in combat {combat.id!r}",
                               path="/args/target_id")
    held = fighter(c).readied
    if held is not None:
        raise RuleViolation(f"{c.name or c.id} already has a readied action ({held.readied_id})",
                            rule="BI-5", path="/combatant_id")
    readied = Readied(
        readied_id=ctx.new_id("readied"), mode=str(mode), trigger=str(arg(event.args, "trigger")),
        action=str(arg(event.args, "action")), target_id=target,
    )
    ctx.notice("readied.declared", f"{c.name or c.id} readies: {readied.action}",
               readied_id=readied.readied_id, combatant_id=c.id, mode=readied.mode)
    return update_fighter(combat, c.id, readied=readied)


def _skills(c: Combatant) -> list[str]:
    return [s for s in PREEMPTIVE_SKILLS if s in proficient(c)]


def _holder(combat: Combat, readied_id: Any) -> Combatant:
    for c in combat.combatants.values():
        held = fighter(c).readied
        if held is not None and held.readied_id == readied_id:
            return c
    raise RuleViolation(f"there is no readied action {readied_id!r} (unknown, taken or expired)",
                        rule="BI-5", path="/args/readied_id")


def _trigger(ctx: Ctx, combat: Combat | None, event: Declared) -> Combat:
    combat = need_combat(combat, event)
    c = _holder(combat, arg(event.args, "readied_id"))
    ctx.require_owner(c, "trigger a readied action")
    r = fighter(c).readied
    assert r is not None
    if r.status == "due":  # taken without a reaction (BI-5 ruling)
        ctx.notice("readied.taken", f"{c.name or c.id} takes its readied action: {r.action}",
                   readied_id=r.readied_id, combatant_id=c.id)
        return update_fighter(combat, c.id, readied=None)
    if r.status == "kept":
        raise RuleViolation("after a lost pre-emptive check the readied action falls due when "
                            "the current turn ends", rule="BI-5", path="/args/readied_id")
    if r.status != "waiting":
        raise RuleViolation(f"readied action {r.readied_id} is already {r.status}",
                            rule="BI-5", path="/args/readied_id")
    require_reaction(c, "take a readied action", path="/args/readied_id")
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


def _opposed_result(ctx: Ctx, combat: Combat | None, event: Declared) -> Combat:
    ctx.require_gm("resolve an opposed check")
    prompt, combat = pending_prompt(ctx, combat, event.args, "opposed_check")
    c = combat.combatants.get(prompt.combatant_id or "")
    r = fighter(c).readied if c is not None else None
    if c is None or r is None or r.prompt_id != prompt.prompt_id:
        raise RuleViolation("the readied action of this check is gone", rule="BI-5",
                            path="/args/prompt_id")
    totals = [arg(event.args, "actor_total"), arg(event.args, "target_total")]
    for name, value in zip(("actor_total", "target_total"), totals):
        if not is_number(value):
            raise RuleViolation(f"{name} is a number, not {value!r}", rule="BI-5",
                                path=f"/args/{name}")
    ctx.answer_prompt(prompt.prompt_id, "opposed_check")
    if totals[0] > totals[1]:  # a tie goes to the target (ruling)
        return update_fighter(combat, c.id, readied=replace(r, status="won"))
    due = r.during is None or r.during_ended
    return update_fighter(combat, c.id, readied=replace(r, status="due" if due else "kept"))


def _turn_ended(combat: Combat, event: TurnEnded) -> Combat:
    for cid, c in combat.combatants.items():
        r = fighter(c).readied
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


def readied_tags(r: Readied | None) -> tuple[str, ...]:
    if r is None:
        return ()
    return {
        "waiting": ("readied",),
        "triggered": ("readied", "readied_triggered"),
        "checking": ("readied", "opposed_check_pending"),
        "won": ("acts_before_trigger",),
        "kept": ("readied_pending",),
        "due": ("readied_pending", "readied_due"),
    }.get(r.status, ())
