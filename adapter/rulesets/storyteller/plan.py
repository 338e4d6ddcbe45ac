"""How a storyteller combatant looks in the plan: Foundry's view plus its hold (ST-1 … ST-5)."""

from __future__ import annotations

from ...engine.holding import hold_mechanics
from ...engine.model import Combat, Combatant
from ...engine.ruleset import Entry, HoldRuleIds, describe_plain

#: the shared hold/act mechanics, reporting under this ruleset's ids
HOLD = hold_mechanics(HoldRuleIds("ST-1", "ST-2", "ST-3", "ST-4", "ST-5"))


def describe(combat: Combat, combatant: Combatant) -> Entry:
    """ST-1: a holder shows ``acts: held``; ST-4: a combatant giving up its round
    ``movement_only``; ST-5: ``target_aware`` when the GM says the target knows."""
    return HOLD.entry(combat, combatant, describe_plain(combat, combatant))
