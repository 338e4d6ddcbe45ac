"""The natural d20 of an initiative roll (BI-1, BI-2): the one active result of its only d20
term; a roll that does not fit is refused, not guessed at. And the reroll's formula."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...engine.dice import active_results, dice_terms, roll_total
from ...engine.messages import Roll
from ...errors import RuleViolation

#: the hook's roll, as a field of the message
ROLL = ("roll", "roll")

KEEP_DROP = ("kh", "kl", "k", "dh", "dl", "d")


def d20_term(roll: Roll) -> Mapping[str, Any]:
    """The roll's one d20 term; refuse a roll without one, or with more than one."""
    terms = [t for t in dice_terms(roll) if t.get("faces") == 20]
    if not terms:
        raise RuleViolation(
            "an initiative roll under balanced-d20 is a d20 roll (a Dexterity check); "
            "this roll has no d20", rule="BI-1", field=ROLL,
        )
    if len(terms) > 1:
        raise RuleViolation(
            f"this initiative roll has {len(terms)} d20 terms; the natural d20 cannot be told",
            rule="BI-1", field=ROLL,
        )
    return terms[0]


def natural_d20(roll: Roll) -> int:
    """The natural d20 of the roll (the one active result of its d20 term)."""
    kept = active_results(d20_term(roll))
    if len(kept) != 1:
        raise RuleViolation(
            f"the d20 term keeps {len(kept)} results; a roll of two d20s must keep or drop one "
            "(2d20kh, 2d20kl) so that its natural d20 is known",
            rule="BI-1", field=ROLL,
        )
    value = kept[0].get("result")
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 20:
        raise RuleViolation(f"the d20 shows {value!r}, not 1..20", rule="BI-1", field=ROLL)
    return value


def reroll_formula(roll: Roll, natural: int) -> str:
    """The formula of a clever reroll (BI-2 ruling): one d20 with its own modifiers but
    keep/drop, plus the first total less its natural d20 (a bonus die kept as it fell)."""
    term = d20_term(roll)
    mods = "".join(
        str(m) for m in term.get("modifiers") or ()
        if not any(str(m).startswith(k) for k in KEEP_DROP)
    )
    bonus = roll_total(roll) - natural
    die = f"1d20{mods}"
    if bonus == 0:
        return die
    amount = int(bonus) if float(bonus).is_integer() else bonus
    sign = "-" if bonus < 0 else "+"
    return f"{die} {sign} {abs(amount)}"
