"""What a dice-pool combatant may do: DP-5 "unless someone declares an action that affects
initiative (delay, waiting)", the engine's shared hold/act mechanics under DP-5, refused
while it hesitates (DP-4); and how it looks in the plan, its initiative written as
``net successes + base / 100`` (docs/rules.md, "The initiative number in the tracker")."""

from __future__ import annotations

from typing import Any

from ...engine.context import Ctx
from ...engine.holding import HoldMechanics, hold_entry
from ...engine.messages import Act, Hold, Intent
from ...engine.model import Combat, Combatant
from ...engine.ruleset import Entry, HoldRuleIds, IntentRule
from ...errors import RuleViolation
from .pool import dice_for
from .sequence import stepped_apart
from .state import DicePoolState, hesitating, roll_of, turns_lost_of

#: DP-5: hold and act move a combatant exactly as in the storyteller ruleset, under DP-5
HOLD = HoldMechanics(HoldRuleIds.single("DP-5"))


def hold(ctx: Ctx, combat: Combat, intent: Hold) -> Combat:
    """DP-5 delay: ``hold {next_round?, target_aware?}`` as in the storyteller ruleset."""
    _refuse_hesitating(combat, intent)
    return HOLD.hold(ctx, combat, intent)


def act(ctx: Ctx, combat: Combat, intent: Act) -> Combat:
    """DP-5 waiting: ``act {after | before | now}`` as in the storyteller ruleset; a group
    member stepping in elsewhere leaves its group's place (DP-6)."""
    _refuse_hesitating(combat, intent)
    return stepped_apart(HOLD.act(ctx, combat, intent), intent.combatant_id)


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


def describe(combat: Combat, c: Combatant) -> Entry:
    """DP-4: a hesitating combatant ``defend_only`` (``none`` after a critical failure), tag
    ``hesitating``, ``detail.turns_lost``; DP-1 … DP-3, DP-6, DP-7 in ``detail`` and ``rules``;
    the base pool as the initiative's fraction (5 net, base 13 → 5.13)."""
    rules: list[str] = ["DP-1"]
    tags: list[str] = []
    detail: dict[str, Any] = {}
    acts, hint = "full", None
    if c.group is not None and c.group in combat.groups:
        rules.append("DP-6")
        detail["group"] = c.group
    roll = roll_of(c.ext)
    if roll is None:
        dice = dice_for(combat, c)
        if dice is not None:
            detail.update(pool=dice.pool, base=dice.base)
    else:
        rules += ["DP-2", "DP-3", "DP-5"]
        if roll.pool != roll.base:
            rules.append("DP-7")
        detail.update(pool=roll.pool, base=roll.base, successes=roll.net, dice=list(roll.dice))
        hint = round(roll.base / 100, 2) if 0 <= roll.base < 100 else None
        if hesitating(c.ext, combat.round):
            rules.append("DP-4")
            tags.append("hesitating")
            if roll.critical:
                tags.append("critical_failure")
            detail["turns_lost"] = turns_lost_of(c.ext)
            acts = "none" if roll.critical else "defend_only"
    if c.defeated:
        acts = "none"
        tags.append("defeated")
    entry = Entry(acts=acts, tags=tuple(tags), detail=detail, rules=tuple(rules), hint=hint)
    return hold_entry(combat, c, entry, HOLD.ids)
