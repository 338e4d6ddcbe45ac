"""Turn order: sorting by the rules, placing a combatant, and the numbers Foundry shows.

Foundry sorts combatants on every client by initiative descending, ties by ``_id``
ascending, and null initiatives last. The engine keeps the order explicitly
(``Combat.order``) because rules place combatants where a sort would not (a hold, a dash
waiting for the turn in progress). :func:`encode_initiatives` then chooses the numbers that
make Foundry's own sort reproduce that order exactly:

- every entry's floor is its rule score (``13`` for a dash from 8 by +5, ``-2`` for a
  critical failure), and ties inside one floor are broken by a fraction in [0, 1);
- an entry placed below a lower score takes the floor of its predecessor (just below it),
  and the plan reports its rule score in ``detail.score``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from .model import Combat, Combatant

SortKey = Callable[[Combat, Combatant], Sequence[float]]


def foundry_sort(values: dict[str, float | None]) -> list[str]:
    """The order Foundry's ``_sortCombatants`` gives: initiative descending, ties by id."""

    def key(cid: str) -> tuple[bool, float, str]:
        value = values[cid]
        return (value is None, -(value if value is not None else 0.0), cid)

    return sorted(values, key=key)


def rules_sort(combat: Combat, sort_key: SortKey, ids: Iterable[str] | None = None) -> list[str]:
    """The order the ruleset's tie rules give: score and tie-breaks descending, then ``_id``.

    Combatants that have not rolled come last, by ``_id``, as in Foundry.
    """
    chosen = list(combat.combatants) if ids is None else list(ids)

    def key(cid: str) -> tuple[bool, tuple[float, ...], str]:
        c = combat.combatants[cid]
        if c.score is None:
            return (True, (), cid)
        return (False, tuple(-k for k in sort_key(combat, c)), cid)

    return sorted(chosen, key=key)


def place_after(order: Sequence[str], who: str, anchor: str) -> tuple[str, ...]:
    """``order`` with ``who`` moved to right after ``anchor``."""
    rest = [c for c in order if c != who]
    at = rest.index(anchor) + 1
    return tuple(rest[:at] + [who] + rest[at:])


def place_before(order: Sequence[str], who: str, anchor: str) -> tuple[str, ...]:
    """``order`` with ``who`` moved to right before ``anchor``."""
    rest = [c for c in order if c != who]
    at = rest.index(anchor)
    return tuple(rest[:at] + [who] + rest[at:])


def place_by_rules(combat: Combat, who: str, sort_key: SortKey) -> tuple[str, ...]:
    """``combat.order`` with ``who`` re-placed among the turns still to come this round.

    The turns already over and the turn in progress keep their places (a turn in progress
    is never interrupted); ``who`` goes before the first waiting combatant that the rules
    sort after it. Before the combat starts, this is a plain sort. When ``who`` itself is the
    turn in progress or a turn already over (a late reroll, a GM's edit), it keeps its place:
    moved among the waiting turns, it would stand where the module's pointer goes next, and
    the turns it jumped over would be skipped.
    """
    if not combat.started:
        return tuple(rules_sort(combat, sort_key))
    if (who == combat.current or who in combat.passed) and who in combat.order:
        return tuple(combat.order)
    order = [c for c in combat.order if c != who]
    fixed = 0
    for i, cid in enumerate(order):
        if cid in combat.passed or cid == combat.current:
            fixed = i + 1
    head, tail = order[:fixed], order[fixed:]
    for i, cid in enumerate(tail):
        if rules_sort(combat, sort_key, (who, cid))[0] == who:
            return tuple(head + tail[:i] + [who] + tail[i:])
    return tuple(head + tail + [who])


def place_sorted(combat: Combat, who: str, sort_key: SortKey) -> tuple[tuple[str, ...], frozenset[str]]:
    """Foundry's way: the order re-sorted, and ``who`` passed if it now sorts above the turn
    in progress (its turn this round is over), waiting if it sorts below."""
    order = tuple(rules_sort(combat, sort_key))
    if not combat.started or combat.current is None:
        return order, combat.passed
    above = order.index(who) < order.index(combat.current)
    passed = combat.passed | {who} if above else combat.passed - {who}
    return order, passed


def encode_initiatives(
    order: Sequence[str],
    scores: dict[str, float | None],
    hints: dict[str, float] | None = None,
) -> dict[str, float | None]:
    """Initiative values that make Foundry's sort reproduce ``order``.

    ``scores`` are the rule scores (None: not rolled; those must come last). ``hints`` are
    preferred fractions in [0, 1) (e.g. the dice-pool base); they are used when they keep
    the order inside a floor, otherwise evenly spaced fractions are.
    """
    floors: list[int | None] = []
    previous: int | None = None
    for cid in order:
        score = scores[cid]
        if score is None:
            floors.append(None)
            continue
        floor = math.floor(score)
        if previous is not None and floor > previous:
            floor = previous  # placed below a lower score: just below its predecessor
        floors.append(floor)
        previous = floor

    values: dict[str, float | None] = {}
    hints = hints or {}
    count = len(order)
    i = 0
    while i < count:
        run_floor = floors[i]
        j = i + 1
        while j < count and floors[j] == run_floor:
            j += 1
        if run_floor is None:
            values.update(dict.fromkeys(order[i:j]))
        elif j == i + 1 and order[i] not in hints:
            values[order[i]] = float(run_floor)  # alone in its floor: the score itself
        else:
            values.update(_fractions(list(order[i:j]), run_floor, hints))
        i = j
    return values


def _fractions(run: list[str], floor: int, hints: dict[str, float]) -> dict[str, float]:
    """Values inside one floor, strictly decreasing along ``run`` (ties only if ids agree)."""
    if not any(cid in hints for cid in run) and list(run) == sorted(run):
        return {cid: float(floor) for cid in run}  # Foundry's own tie-break (_id) agrees
    wanted = [hints.get(cid) for cid in run]
    if all(h is not None and 0 <= h < 1 for h in wanted):
        fractions = [float(h) for h in wanted if h is not None]
        if all(_before(run[k], fractions[k], run[k + 1], fractions[k + 1]) for k in range(len(run) - 1)):
            return {cid: floor + f for cid, f in zip(run, fractions)}
    digits = max(2, len(str(len(run))))
    step = 10.0**-digits
    return {cid: round(floor + (len(run) - 1 - k) * step, digits) for k, cid in enumerate(run)}


def _before(a: str, fa: float, b: str, fb: float) -> bool:
    return fa > fb or (fa == fb and a < b)
