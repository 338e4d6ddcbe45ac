"""How many dice a combatant rolls: DP-1 (pool), DP-7 (the GM's modifier), DP-6 (groups),
from ``combatant.stats``: ``reaction``, ``wits``, ``size`` and the optional ``pool_modifier``."""

from __future__ import annotations

from typing import Any

from msgspec import Struct

from ...engine.model import Combat, Combatant
from ...errors import RuleViolation


class Dice(Struct, frozen=True):
    """The pool to roll and the base it ties on, for one combatant or one group."""

    pool: int
    base: int
    #: whose stats gave it (the slowest member for a group, DP-6)
    source: str


def _stat(combat: Combat, c: Combatant, name: str, default: int | None) -> int:
    value: Any = c.stats.get(name, default)
    stats = ("combat", "combatants", _index(combat, c.id), "stats")
    if value is None:
        raise RuleViolation(
            f"{c.name or c.id} has no {name!r} stat: its initiative pool is "
            "Reaction + Wits + size modifier",
            rule="DP-1",
            field=stats,
        )
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise RuleViolation(
            f"{c.name or c.id}'s {name!r} stat must be a whole number, not {value!r}",
            rule="DP-7" if name == "pool_modifier" else "DP-1",
            field=(*stats, name),
        )
    return int(value)


def _index(combat: Combat, cid: str) -> int | str:
    return combat.roster.index(cid) if cid in combat.roster else "-"


def base_initiative(combat: Combat, c: Combatant) -> int:
    """DP-1: "base initiative is Reaction + Wits + size modifier (0 for a human; smaller
    creatures get more dice: a fly of size −9 gets +9 dice)". The size modifier is −size."""
    return _stat(combat, c, "reaction", None) + _stat(combat, c, "wits", None) - _stat(
        combat, c, "size", 0
    )


def pool(combat: Combat, c: Combatant) -> Dice:
    """DP-1 "The pool is that many dice", plus DP-7 (**ruling**: the GM's modifier adds or
    removes dice; it changes the pool, not the base). A pool below zero rolls no dice."""
    base = base_initiative(combat, c)
    return Dice(pool=max(0, base + _stat(combat, c, "pool_modifier", 0)), base=base, source=c.id)


def members(combat: Combat, group_id: str) -> list[Combatant]:
    return [combat.combatants[cid] for cid in combat.roster if combat.combatants[cid].group == group_id]


def group_pool(combat: Combat, group_id: str) -> Dice:
    """DP-6 "Sometimes a group of characters rolls one initiative together". **ruling**: the
    group rolls with the pool and base of its member with the lowest base (a group is as
    quick as its slowest); among members tied for the lowest base, the smallest pool."""
    party = members(combat, group_id)
    if not party:
        raise RuleViolation(
            f"group {group_id!r} has no members in combat {combat.id!r}",
            rule="DP-6",
            field=("roll", "group_id"),
        )
    return min((pool(combat, c) for c in party), key=lambda d: (d.base, d.pool, d.source))


def dice_for(combat: Combat, c: Combatant) -> Dice | None:
    """The dice a combatant (or its group) rolls, or None if its stats are incomplete."""
    try:
        if c.group is not None and c.group in combat.groups:
            return group_pool(combat, c.group)
        return pool(combat, c)
    except RuleViolation:
        return None
