"""Reactions under `balanced-d20`: when a combatant has one (:func:`reaction_state`, the
reasons in docs/rules.md, "Reactions"), and ``reaction.use``."""

from __future__ import annotations

from ...engine.context import Ctx
from ...engine.events import TurnStarted
from ...engine.messages import UseReaction
from ...engine.model import Combat, Combatant
from ...errors import RuleViolation
from .state import fighter, update_fighter

READY_TO_STRIKE_MIN = 10  # BI-3: "if its initiative result is 10 or higher"

#: the rule behind a reason a reaction is unavailable (for refusals; else the ruleset's id)
RULE_OF_REASON = {"dashed": "BI-4", "before_first_turn": "BI-3"}


def reaction_state(c: Combatant) -> tuple[bool, str]:
    """Whether the combatant may use its reaction now, and why (or why not)."""
    f = fighter(c)
    if c.defeated:
        return False, "defeated"
    if f.reaction_blocked_through is not None:
        return False, "dashed"
    if f.reaction_spent is not None:
        return False, "spent"
    if not f.first_turn_started:
        if f.ready_to_strike and f.base is not None and f.base >= READY_TO_STRIKE_MIN:
            return True, "ready_to_strike"
        return False, "before_first_turn"
    if f.readied is not None and f.readied.status == "triggered":
        return True, "readied_trigger"
    return True, "available"


def require_reaction(c: Combatant, what: str, field: str = "combatant_id") -> None:
    available, reason = reaction_state(c)
    if not available:
        spent_by = fighter(c).reaction_spent
        rule = "BI-5" if spent_by in ("readied", "preemptive") else RULE_OF_REASON.get(reason, "balanced-d20")
        raise RuleViolation(
            f"{c.name or c.id} cannot {what}: its reaction is not available ({reason})",
            rule=rule, field=field,
        )


def reactions(ctx: Ctx, combat: Combat, intent: UseReaction) -> Combat:
    """``reaction.use {reason?}`` (owner or GM) spends the reaction; an unavailable one is refused."""
    c = ctx.owned(combat, intent.combatant_id, "use a reaction")
    require_reaction(c, "use a reaction")
    f = fighter(c)
    taken = f.readied is not None and f.readied.status == "triggered"
    return update_fighter(
        combat, c.id, reaction_spent="readied" if taken else "used",
        readied=None if taken else f.readied,
    )


def reactions_on_turn(ctx: Ctx, combat: Combat, event: TurnStarted) -> Combat:
    """A reaction comes back at the start of the combatant's own turn (not while a dash
    blocks it, BI-4); its first turn has started (BI-3 ruling)."""
    f = fighter(combat.combatants[event.combatant_id])
    return update_fighter(
        combat, event.combatant_id, first_turn_started=True,
        reaction_spent=f.reaction_spent if f.reaction_blocked_through is not None else None,
    )
