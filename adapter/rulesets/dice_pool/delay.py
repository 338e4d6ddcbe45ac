"""DP-5 "unless someone declares an action that affects initiative (delay, waiting)": the
engine's shared hold/act mechanics (:mod:`adapter.engine.holding`) under DP-5, refused to a
hesitating combatant (DP-4)."""

from __future__ import annotations

from ...engine.context import Ctx
from ...engine.holding import hold_mechanics
from ...engine.messages import Act, Hold, Intent
from ...engine.model import Combat, Combatant
from ...engine.ruleset import HoldRuleIds, IntentRule
from ...errors import RuleViolation
from .sequence import stepped_apart
from .state import DicePoolState, hesitating, turns_lost_of

#: DP-5: hold and act move a combatant exactly as in the storyteller ruleset, under DP-5
HOLD = hold_mechanics(HoldRuleIds.single("DP-5"))


def hold(ctx: Ctx, combat: Combat, intent: Hold) -> Combat | None:
    """DP-5 delay: ``hold {next_round?, target_aware?}`` as in the storyteller ruleset."""
    _refuse_hesitating(combat, intent)
    return HOLD.hold(ctx, combat, intent)


def act(ctx: Ctx, combat: Combat, intent: Act) -> Combat | None:
    """DP-5 waiting: ``act {after | before | now}`` as in the storyteller ruleset; a group
    member stepping in elsewhere leaves its group's place (DP-6)."""
    _refuse_hesitating(combat, intent)
    stepped = HOLD.act(ctx, combat, intent)
    return None if stepped is None else stepped_apart(stepped, intent.combatant_id)


def _refuse_hesitating(combat: Combat, intent: Hold | Act) -> None:
    """DP-4: a hesitating combatant has no action to delay."""
    c = combat.combatants.get(intent.combatant_id)
    if c is not None and hesitating(c.ext, combat.round):
        raise RuleViolation(
            f"{c.name or c.id} hesitates (DP-4): {lost_turns(combat, c)}; it has no action to "
            f"{intent.kind} with until then",
            rule="DP-4",
            field="combatant_id",
        )


def lost_turns(combat: Combat, c: Combatant) -> str:
    """The turns a hesitating combatant loses, this round's counted as this round's."""
    left = turns_lost_of(c.ext)
    if not combat.started:
        return f"it loses its first {left} turn(s)"
    lost_already = isinstance(c.ext, DicePoolState) and c.ext.lost_in_round == combat.round
    after = left if lost_already else left - 1
    more = f" and {after} more after it" if after > 0 else ""
    return f"it loses its turn in round {combat.round}{more}"


INTENTS: dict[type[Intent], IntentRule] = {Hold: hold, Act: act}
