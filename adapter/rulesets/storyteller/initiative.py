"""Storyteller initiative: the system's roll, and the tie rule (section 3's ruling, ST-3)."""

from __future__ import annotations

from collections.abc import Sequence

from ...engine.context import Ctx
from ...engine.dice import scored_by_total
from ...engine.events import Rolled
from ...engine.model import Combat, Combatant
from ...engine.order import by_id


def initiative_roll(ctx: Ctx, combat: Combat, event: Rolled) -> Combat:
    """Section 3: "The initiative roll itself is the game system's (e.g. d10 + Dexterity +
    Composure)": the score is the roll's total, whatever the system rolled."""
    return scored_by_total(combat, event.roll, event.combatant_id, event.group_id)


def initiative_mod(combatant: Combatant) -> float:
    value = combatant.stats.get("initiative_mod", 0)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def tie_rule(combat: Combat, combatant: Combatant) -> Sequence[float]:
    """Section 3 ruling: "ties go to the higher initiative modifier, then to Foundry's own
    order (`_id`)". ST-3 orders holders stepping in together by it."""
    score = combatant.score if combatant.score is not None else 0.0
    return (score, initiative_mod(combatant), *by_id(combatant.id))
