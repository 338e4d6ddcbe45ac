"""Hold and act: the round bookkeeping of holds and their view in the plan; see the package."""

from __future__ import annotations

from msgspec.structs import replace

from ..context import Ctx
from ..events import Rolled, RoundStarted, ScoreSet, TurnEnded
from ..model import ANY_POINT, GIVING_UP, HOLDING, STEPPED_IN, Combat, Combatant
from ..ruleset import Entry, HoldRuleIds
from .state import _name, _set, at_point


def hold_carry_over(ctx: Ctx, combat: Combat, event: RoundStarted) -> Combat:
    """ST-4 / ST-5 (DP-5) at a round start: an unused hold carries over and works as ST-4
    (act at any point); a hold used from ANY_POINT returns to the original score; an ST-1/ST-2
    step-in keeps its new score for the rest of the fight."""
    changed: dict[str, Combatant] = {}
    for c in combat.combatants.values():
        held = c.hold
        if held is None:
            continue
        original = held.original if held.original is not None else c.score
        if held.state == STEPPED_IN:
            changed[c.id] = replace(c, hold=None, score=original)
            continue
        changed[c.id] = replace(c, hold=replace(held, state=ANY_POINT, original=original, point=None))
        if held.state == HOLDING:
            ctx.notice(
                "hold.carried_over",
                f"{_name(c)} still holds: in round {event.round} it may step in at any point",
                combatant_id=c.id, round=event.round,
            )
    if not changed:
        return combat
    return replace(combat, combatants={**combat.combatants, **changed})


def hold_rescored(ctx: Ctx, combat: Combat, event: ScoreSet | Rolled) -> Combat:
    """A GM's number or a new roll for a holder: that number is the one to return to, and a
    step-in's return to an older score is dropped (the GM's edit wins)."""
    c = combat.combatants.get(event.combatant_id or "")  # None: a group's roll
    held = c.hold if c is not None else None
    if c is None or held is None:
        return combat
    if held.state == STEPPED_IN:
        return _set(combat, c.id, hold=replace(held, original=None))
    if held.original is not None:
        return _set(combat, c.id, hold=replace(held, original=c.score))
    return combat


def hold_moment_closed(ctx: Ctx, combat: Combat, event: TurnEnded) -> Combat:
    """ST-3: an interrupter's turn has ended: the moment it opened is closed."""
    c = combat.combatants.get(event.combatant_id)
    held = c.hold if c is not None else None
    if c is None or held is None or not held.interrupting:
        return combat
    return _set(combat, c.id, hold=replace(held, interrupting=False))


def hold_entry(combat: Combat, combatant: Combatant, entry: Entry, ids: HoldRuleIds) -> Entry:
    """``entry`` (the ruleset's own view) with the hold merged in: acts, tags, detail, and the
    rules under ``ids``, those its ``HoldMechanics`` was built with."""
    held = combatant.hold
    if held is None:
        return entry
    acts, tags, rules = entry.acts, list(entry.tags), list(entry.rules)
    detail = dict(entry.detail)
    if held.state in (HOLDING, ANY_POINT):
        acts = entry.acts if entry.acts == "none" else "held"
        tags.append("held")
        detail["held_since"] = held.since
        if held.state == ANY_POINT:
            tags.append("any_point")
            rules.append(ids.next_round if held.gave_up else ids.carry_over)
        else:
            rules.append(ids.hold)
    elif held.state == GIVING_UP:
        acts = entry.acts if entry.acts == "none" else "movement_only"
        tags.append("gave_up_action")
        rules.append(ids.next_round)
    else:
        tags.append("stepped_in")
        if held.point is not None:
            detail["stepped_in"] = {held.point[0]: held.point[1]}
            rules.append(ids.hold if held.point[0] == "after" else ids.interrupt)
            if any(at_point(other, held.point) for other in combat.combatants.values() if other.id != combatant.id):
                rules.append(ids.same_moment)  # ordered among the others there by the tie rule
    if held.target_aware:
        tags.append("target_aware")
    if held.original is not None:
        detail["returns_to"] = held.original
    rules = list(dict.fromkeys(rules))
    return replace(entry, acts=acts, tags=tuple(tags), detail=detail, rules=tuple(rules))
