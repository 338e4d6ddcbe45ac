"""Reading the pool roll: checking it is the pool asked for, and recounting its dice (DP-3)
with the ruleset's settings, not trusting Foundry's ``total``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msgspec import Struct

from ...engine.dice import active_results, dice_terms
from ...engine.messages import Roll
from ...errors import RuleViolation

#: the hook's roll, as a field of the message
ROLL = ("roll", "roll")


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
