"""Meeting a combat already under way (docs/rules.md, balanced-d20): what a stored value is.

The stored initiative is the combatant's own value (BI-1), a roll the sidecar never saw:
its natural d20 is unknown, so no clever reroll is offered for it (BI-2 needs the natural
die), and a dash later raises it as usual (BI-4). "No reaction before its first turn" (the
BI-3 ruling) counts the turns Foundry's document shows: with ``roundJoined`` (v14) from the
round it joined, without it from round 1.
"""

from __future__ import annotations

from ...engine.adopt import turn_begun
from ...engine.context import Ctx
from ...engine.model import Combat
from .ready import ready_to_strike_on_adopt
from .state import update_fighter


def adopt_initiative(ctx: Ctx, combat: Combat, combatant_id: str) -> Combat:
    """BI-1 value kept as stored; BI-2 no offer (natural unknown); BI-3 ruling from the turns
    Foundry shows."""
    c = combat.combatants[combatant_id]
    combat = update_fighter(
        combat, combatant_id, base=c.score, natural=None, first_turn_started=turn_begun(combat, c)
    )
    return ready_to_strike_on_adopt(ctx, combat, combatant_id)
