"""How a storyteller combatant looks in the plan: Foundry's view plus its hold (ST-1 … ST-5)."""

from __future__ import annotations

from ...engine.holding import hold_entry
from ...engine.model import Combat, Combatant
from ...engine.ruleset import Entry, describe_plain


def describe(combat: Combat, combatant: Combatant) -> Entry:
    """ST-1: a holder shows ``acts: held``; ST-4: a combatant giving up its round
    ``movement_only``; ST-5: ``target_aware`` when the GM says the target knows."""
    return hold_entry(combat, combatant, describe_plain(combat, combatant))
