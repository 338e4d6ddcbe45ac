"""Turn order: sorting by the rules, placing a combatant where a sort would not (a hold, a
dash waiting for the turn in progress), and the numbers that make Foundry's own sort, and
any system's, show that order (docs/rules.md, "How the order reaches Foundry").
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Callable, Mapping, Sequence
from operator import neg

from .model import Combat, SortKey


def rules_sort(combat: Combat, sort_key: SortKey) -> tuple[str, ...]:
    """The order the ruleset's sort key gives, higher first; a tie it leaves (a key ending
    with :func:`by_id` leaves none) and the unrolled, last, go as Foundry's stated order
    (``Combat.turn_order``) has them, then by ``_id``."""
    return tuple(sorted(combat.combatants, key=ranking(combat, sort_key)))


def ranking(combat: Combat, sort_key: SortKey) -> Callable[[str], tuple[bool, tuple[float, ...], int, str]]:
    """:func:`rules_sort`'s key over ids (lower goes first), the ruleset's key built once."""
    shown = {cid: i for i, cid in enumerate(combat.turn_order)}
    of = sort_key(combat)

    def key(cid: str) -> tuple[bool, tuple[float, ...], int, str]:
        c = combat.combatants[cid]
        keys = () if c.score is None else tuple(map(neg, of(c)))
        return (c.score is None, keys, shown.get(cid, len(shown)), cid)

    return key


def by_id(cid: str) -> tuple[float, ...]:
    """``_id`` ascending as sort-key numbers (UTF-8 bytes inverted, in C; then 256 so an id
    goes before those it prefixes): the end of a ``sort_key`` whose rulings break ties by ``_id``."""
    return (*cid.encode().translate(_INVERTED), 256)


_INVERTED = bytes(range(255, -1, -1))


def place(order: Sequence[str], who: str, point: tuple[str, str] | None) -> tuple[str, ...]:
    """``order`` with ``who`` moved to right ``"after"`` or ``"before"`` the anchor of ``point``
    (``(kind, anchor)``, as in ``Hold.point``), or to the end for None."""
    rest = [c for c in order if c != who]
    at = len(rest) if point is None else rest.index(point[1]) + (point[0] == "after")
    return tuple(rest[:at] + [who] + rest[at:])


def place_by_rules(combat: Combat, who: str, sort_key: SortKey) -> tuple[str, ...]:
    """``combat.order`` with ``who`` re-placed among the turns still to come, before the first
    one the rules sort after (a plain sort before the start). The turns over and the one in
    progress keep their places, ``who`` too if it is one (moved, it would skip turns)."""
    if not combat.started:
        return rules_sort(combat, sort_key)
    if (who == combat.current or who in combat.passed) and who in combat.order:
        return tuple(combat.order)
    order = [c for c in combat.order if c != who]
    fixed = 0
    for i, cid in enumerate(order):
        if cid in combat.passed or cid == combat.current:
            fixed = i + 1
    head, tail = order[:fixed], order[fixed:]
    rank = ranking(combat, sort_key)
    mine = rank(who)
    for i, cid in enumerate(tail):
        if mine < rank(cid):
            return tuple(head + tail[:i] + [who] + tail[i:])
    return tuple(head + tail + [who])


def place_sorted(combat: Combat, who: str, sort_key: SortKey) -> tuple[tuple[str, ...], frozenset[str]]:
    """Foundry's way: the order re-sorted, and ``who`` passed if it now sorts above the turn
    in progress (its turn this round is over), waiting if it sorts below."""
    order = rules_sort(combat, sort_key)
    if not combat.started or combat.current is None:
        return order, combat.passed
    above = order.index(who) < order.index(combat.current)
    passed = combat.passed | {who} if above else combat.passed - {who}
    return order, passed


def encode_initiatives(
    order: Sequence[str],
    scores: Mapping[str, float | None],
    hints: Mapping[str, float] | None = None,
    stored: Mapping[str, float] | None = None,
    shown: Sequence[str] = (),
) -> dict[str, float | None]:
    """Initiative values that make Foundry's sort reproduce ``order``, every rolled one distinct.

    ``scores``: the rule scores (None: not rolled, last). ``hints``: preferred fractions in
    [0, 1) of a score's whole part (the dice-pool base). ``stored``: adopted values no rule
    has moved since (:mod:`adapter.engine.adopt`), kept; so is a tie among them in the order
    Foundry shows (``shown``, then ``_id``) or in ``_id`` order. Entries wanted at one value
    are spread apart (:func:`_runs`, :func:`_spread`).
    """
    plain = None if hints or stored else _descending(order, scores)
    if plain is not None:
        return plain
    runs = _runs(order, scores, hints or {}, stored or {})
    ranks = {cid: i for i, cid in enumerate(shown)}
    values: dict[str, float | None] = {}
    above = math.inf  # the lowest value given so far
    for k, (value, run, owners) in enumerate(runs):
        if value is None:
            values.update(dict.fromkeys(run))
        elif len(run) == 1:
            values[run[0]] = above = value
        else:
            if len(owners) == len(run) and stored and all(c in stored for c in run) and (
                    run == sorted(run, key=lambda c: (ranks.get(c, len(ranks)), c)) or run == sorted(run)):
                spread = dict.fromkeys(run, value)  # a tie Foundry stores, in its own order
            else:
                below = runs[k + 1][0] if k + 1 < len(runs) else None
                spread = _spread(run, value, owners[-1], above, below)
            values.update(spread)
            above = min(spread.values())
    return values


def _descending(order: Sequence[str], scores: Mapping[str, float | None]) -> dict[str, float | None] | None:
    """The common case at C speed, or None: scores strictly descending along ``order`` (the
    unrolled last), each its own value (tests/engine/test_order.py compares it with the general
    computation of :func:`encode_initiatives`)."""
    values = list(map(scores.__getitem__, order))
    rolled = len(values) - values.count(None)
    if rolled < len(values) and values[rolled:].count(None) < len(values) - rolled:
        return None  # an unrolled one before a rolled one
    floats = [float(v) for v in values[:rolled] if v is not None]
    if rolled > 1 and not all(map(float.__gt__, floats, floats[1:])):
        return None
    return dict(zip(order, [*floats, *values[rolled:]]))


def _own_value(score: float | None, hint: float | None, stored: float | None) -> float | None:
    if score is None:
        return None
    if stored is not None:
        return float(stored)
    if hint is not None and 0 <= hint < 1:
        return math.floor(score) + hint
    return float(score)


Run = tuple[float | None, list[str], list[int]]


def _runs(
    order: Sequence[str], scores: Mapping[str, float | None], hints: Mapping[str, float],
    stored: Mapping[str, float],
) -> list[Run]:
    """Consecutive entries wanted at one value (an entry placed below a lower value is wanted
    at its predecessor's), with the places in the run of those whose own value it is."""
    runs: list[Run] = []
    previous = math.inf
    for cid in order:
        mine = _own_value(scores[cid], hints.get(cid), stored.get(cid))
        wanted = None if mine is None else min(mine, previous)
        if wanted is not None:
            previous = wanted
        if not runs or runs[-1][0] != wanted:
            runs.append((wanted, [], []))
        _, run, owners = runs[-1]
        if mine is not None and mine == wanted:
            owners.append(len(run))
        run.append(cid)
    return runs


def _spread(run: list[str], value: float, anchor: int, above: float, below: float | None) -> dict[str, float]:
    """Distinct values for entries all wanted at ``value``: the ``anchor`` keeps it, those
    before it go up by a step, those after it down within half the gap to ``below``. The step
    is 0.01 for whole numbers, finer than the value's decimals otherwise (24.18 → 24.181)."""
    downs = len(run) - 1 - anchor
    first = max(2, _decimals(value) + len(str(len(run))))
    for digits in range(first, 16):
        step = 10.0**-digits
        spread = {cid: round(value + (anchor - i) * step, digits) if i != anchor else value
                  for i, cid in enumerate(run)}
        top, bottom = spread[run[0]], spread[run[-1]]
        room = (value - below) / 2 if below is not None else math.inf
        if top < above and (downs == 0 or value - bottom <= room) and len(set(spread.values())) == len(run):
            return spread
    # no decimal step fits (values a float's width apart): spread evenly between the neighbours
    top = above if above < math.inf else value + 1
    bottom = below if below is not None else value - 1
    gap = (top - bottom) / (len(run) + 1)
    return {cid: top - (i + 1) * gap for i, cid in enumerate(run)}


def _decimals(value: float) -> int:
    """How many decimals ``value`` is written with (24.18 → 2; 10.0 → 0), at most 10."""
    if value.is_integer():
        return 0
    exponent = decimal.Decimal(repr(value)).as_tuple().exponent
    return min(10, -exponent) if isinstance(exponent, int) else 0
