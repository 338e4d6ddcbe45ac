"""Meeting a combat already under way (docs/rules.md, dice-pool): what a stored value is.

A stored initiative is a pool the sidecar never saw rolled: its whole part is the net
successes (DP-3; ``floor``, so −0.95 is −1), the base comes from the stats (DP-1), or, with
incomplete stats, from the value's two decimals as the sidecar writes them (DP-2's
tie-break). The dice are unknown, so a failure counts as an ordinary one (DP-4: the net
alone cannot tell a critical failure), and the turns it loses count from the round it
rolled in: ``roundJoined`` (v14) when present, else round 1 (DP-5: all roll together at the
start). A group's stored value becomes the group's roll, which later joiners share (DP-6).
"""

from __future__ import annotations

import math

from msgspec.structs import replace

from ...engine.adopt import turns_had
from ...engine.context import Ctx
from ...engine.model import Combat
from .pool import dice_for
from .rules import hesitation_turns
from .state import DicePoolState, PoolRoll, combat_state


def base_from_value(value: float) -> int:
    """The base the two decimals of ``value`` carry (5.13 → 13; −0.95 → 5), or 0."""
    hundredths = (value - math.floor(value)) * 100
    return round(hundredths) if abs(hundredths - round(hundredths)) < 1e-6 else 0


def adopt_pool_roll(ctx: Ctx, combat: Combat, combatant_id: str) -> Combat:
    """DP-3 net successes from the stored value, DP-1 base from the stats, DP-4 turns lost
    counted from the round it rolled in, DP-6 a group's value is the group's roll."""
    c = combat.combatants[combatant_id]
    if c.score is None:
        return combat
    net = math.floor(c.score)
    dice = dice_for(combat, c)
    group = c.group if c.group is not None and c.group in combat.groups else None
    roll = PoolRoll(
        pool=dice.pool if dice is not None else 0,
        base=dice.base if dice is not None else base_from_value(c.score),
        dice=(), successes=max(net, 0), ones=max(-net, 0), net=net, critical=False, group=group,
    )
    lost, had = hesitation_turns(roll), turns_had(combat, c)
    lost_now = combatant_id in combat.passed and 0 < had <= lost  # this round's turn was lost
    state = DicePoolState(roll=roll, turns_lost=max(0, lost - had),
                          lost_in_round=combat.round if lost_now else None)
    combatants = {**combat.combatants, combatant_id: replace(c, score=float(net), ext=state)}
    groups = dict(combat_state(combat.ext).groups)
    if group is not None:
        groups.setdefault(group, roll)
    return replace(combat, combatants=combatants, ext=replace(combat_state(combat.ext), groups=groups))
