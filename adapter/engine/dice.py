"""Reading Foundry's ``Roll#toJSON()`` (a :class:`.messages.Roll`): dice terms and results.

A Die term is ``{class: "Die", number, faces, modifiers, results: [{result, active?,
rerolled?, discarded?, count?, success?, failure?}]}``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .messages import Roll

#: the hook's roll, as a field of the message (where a refused roll's error points)
ROLL = ("roll", "roll")


def dice_terms(roll: Roll) -> list[Mapping[str, Any]]:
    """Every dice term of the roll, nested pools and parentheticals included, in order."""
    return list(_walk(roll.terms))


def _walk(terms: Any) -> Iterator[Mapping[str, Any]]:
    for term in terms:
        if not isinstance(term, Mapping):
            continue
        if "faces" in term and "results" in term:
            yield term
        for key in ("terms", "rolls"):
            inner = term.get(key)
            for sub in inner if isinstance(inner, list) else ():
                # a nested roll (its terms) or a term
                yield from _walk(sub["terms"] if isinstance(sub, Mapping) and "terms" in sub else [sub])
        inner_roll = term.get("roll")
        if isinstance(inner_roll, Mapping):
            yield from _walk(inner_roll.get("terms") or ())


def active_results(term: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The results that count: not inactive, discarded (dropped) or rerolled."""
    return [r for r in term.get("results") or () if isinstance(r, Mapping)
            and r.get("active", True) is not False and not r.get("discarded") and not r.get("rerolled")]

