"""``foundry-core``: Foundry's own behaviour, for tables that want the sidecar's plumbing only.

Initiative descending, ties by ``_id`` ascending, no prompts, no reactions: the score is the
roll's total, or the number the GM sets by hand.
"""

from __future__ import annotations

from dataclasses import replace

from ..engine.context import Ctx
from ..engine.dice import roll_total
from ..engine.events import Event, Rolled
from ..engine.model import Combat
from ..engine.ruleset import Ruleset, register


def initiative_roll(ctx: Ctx, combat: Combat | None, event: Event) -> Combat | None:
    """Foundry core: the initiative is the roll's total."""
    if combat is None or not isinstance(event, Rolled):
        return None
    score = roll_total(event.roll)
    if event.group_id is not None:  # Foundry v13 gives a group's initiative to every member
        rolled = [c for c in combat.combatants.values() if c.group == event.group_id]
    else:
        rolled = [combat.combatants[str(event.combatant_id)]]
    combatants = {**combat.combatants, **{c.id: replace(c, score=score) for c in rolled}}
    return replace(combat, combatants=combatants)


RULESET = register(Ruleset(id="foundry-core", rules=(initiative_roll,), late_scores="sorted"))
