"""How a dice-pool combatant looks in the plan (DP-2, DP-4), and its initiative fraction:
the number the module writes is ``net successes + base / 100`` (docs/rules.md, dice-pool,
"The initiative number in the tracker")."""

from __future__ import annotations

from typing import Any

from ...engine.model import Combat, Combatant
from ...engine.ruleset import Entry
from .delay import HOLD
from .pool import dice_for
from .state import hesitating, roll_of, turns_lost_of


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
    return HOLD.entry(combat, c, Entry(acts=acts, tags=tuple(tags), detail=detail, rules=tuple(rules), hint=hint))
