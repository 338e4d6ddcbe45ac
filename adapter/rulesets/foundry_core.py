"""``foundry-core``: Foundry's own behaviour, for tables that want the sidecar's plumbing only.

Initiative descending, ties by ``_id`` ascending, no prompts, no reactions: the score is the
roll's total, or the number the GM sets by hand. A new round keeps nobody's turn where
Foundry's turn is null, as core's ``nextRound`` does.
"""

from __future__ import annotations

from ..engine.context import Ctx
from ..engine.dice import scored_by_total
from ..engine.events import Rolled
from ..engine.model import Combat
from ..engine.ruleset import Ruleset


def initiative_roll(ctx: Ctx, combat: Combat, event: Rolled) -> Combat:
    """Foundry core: the initiative is the roll's total."""
    return scored_by_total(combat, event.roll, event.combatant_id, event.group_id)


RULESET = Ruleset(id="foundry-core", on={Rolled: (initiative_roll,)}, late_scores="sorted",
                  keeps_null_turn=True)
