"""The dice: how many a combatant rolls, DP-1 (pool), DP-7 (the GM's modifier), DP-6
(groups), from ``combatant.stats``; and the roll checked to be that pool and recounted
with the ruleset's settings (DP-3), not trusting Foundry's ``total``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msgspec import Struct

from ...engine.dice import ROLL, active_results, dice_terms
from ...engine.messages import Roll
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
    at = combat.roster.index(c.id) if c.id in combat.roster else "-"
    stats = ("combat", "combatants", at, "stats")
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


def group_pool(combat: Combat, group_id: str) -> Dice:
    """DP-6 "Sometimes a group of characters rolls one initiative together". **ruling**: the
    group rolls with the pool and base of its member with the lowest base (a group is as
    quick as its slowest); among members tied for the lowest base, the smallest pool."""
    party = combat.members(group_id)
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


class DiceSettings(Struct, frozen=True):
    """DP-3 **ruling**: die size, success threshold and "1 subtracts" are settings."""

    die_faces: int = 6
    success_at: int = 4
    ones_cancel: bool = True

    def formula(self, pool: int) -> str:
        """The formula the module rolls, e.g. ``13d6cs>=4df=1``."""
        cancel = "df=1" if self.ones_cancel else ""
        return f"{pool}d{self.die_faces}cs>={self.success_at}{cancel}"


class Count(Struct, frozen=True):
    """A pool's successes, its ones, and the net the rules rank by (less the ones where ones cancel)."""

    successes: int
    ones: int
    net: int
    critical: bool


def success_count(dice: tuple[int, ...], settings: DiceSettings) -> Count:
    """DP-3 **ruling**: successes (4, 5, 6) less the 1s; no success and a 1 is a critical
    failure (DP-E2: 4,3,1,2,1 → −1; 3,2,3,1,1 → −2, critical)."""
    successes = sum(1 for d in dice if d >= settings.success_at)
    ones = sum(1 for d in dice if d == 1)
    net = successes - ones if settings.ones_cancel else successes
    return Count(successes=successes, ones=ones, net=net, critical=successes == 0 and ones > 0)


def pool_dice(roll: Roll, pool: int, settings: DiceSettings, who: str) -> tuple[int, ...]:
    """The die results of a pool roll; refuse a roll that is not ``pool`` dice of the set
    size (DP-1: "The pool is that many dice"; DP-3: the die size is a setting)."""
    terms = dice_terms(roll)
    if len(terms) != 1:
        raise RuleViolation(
            f"{who}'s initiative must be one pool of {pool} dice "
            f"({settings.formula(pool)}), but the roll has {len(terms)} dice terms",
            rule="DP-1",
            field=(*ROLL, "terms"),
        )
    term = terms[0]
    at = _term_field(roll, term)
    faces = term.get("faces")
    if faces != settings.die_faces:
        raise RuleViolation(
            f"{who}'s pool must be rolled with d{settings.die_faces}, but the roll used d{faces}",
            rule="DP-3",
            field=(*at, "faces"),
        )
    results = active_results(term)
    dice = tuple(_face(r, settings, who, at) for r in results)
    number = term.get("number", len(dice))
    if len(dice) != pool or number != pool:
        rolled = number if number != pool else len(dice)
        raise RuleViolation(
            f"{who}'s pool is {pool} dice, but the roll has {rolled} dice",
            rule="DP-1",
            field=(*at, "number" if number != pool else "results"),
        )
    return dice


def _face(result: Mapping[str, Any], settings: DiceSettings, who: str, at: tuple[str | int, ...]) -> int:
    value = result.get("result")
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= settings.die_faces:
        raise RuleViolation(
            f"{who}'s roll has a die showing {value!r}, not a face of a d{settings.die_faces}",
            rule="DP-3",
            field=(*at, "results"),
        )
    return value


def _term_field(roll: Roll, term: Mapping[str, Any]) -> tuple[str | int, ...]:
    for i, top in enumerate(roll.terms):
        if top is term:
            return (*ROLL, "terms", i)
    return ROLL
