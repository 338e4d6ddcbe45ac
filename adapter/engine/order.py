"""Turn order: sorting by the rules, placing a combatant, and the numbers Foundry shows.

Foundry sorts combatants on every client by initiative descending, ties by ``_id``
ascending, and null initiatives last; a system may break ties its own way (pf2e, dnd5e),
which the module states as ``turn_order`` (:func:`rules_sort` follows it where a sort key
leaves a full tie: ``foundry-core``; the rule-bearing rulesets end theirs with
:func:`by_id`, as their rulings write, docs/rules.md). The engine keeps
the order explicitly (``Combat.order``) because rules place combatants where a sort would not (a hold, a dash
waiting for the turn in progress). :func:`encode_initiatives` then chooses the numbers that
make Foundry's own sort reproduce that order exactly, and with any system's comparator:

- every entry's value is its rule score with the system's own decimals (``24.18`` from
  dnd5e's Dexterity tie-breaker stays ``24.18``; ``13`` for a dash from 8 by +5);
- every rolled entry's value is distinct, so no comparator's tie rule (core's ``_id``,
  dnd5e's names, pf2e's priorities) ever decides: entries wanted at one value are spread by
  a step finer than the value's own decimals (``10.01``/``10``; ``24.181``/``24.18``);
- an entry placed below a lower score gets a value just below its predecessor, and the
  plan reports its rule score in ``detail.score``;
- the one exception: a tie Foundry itself stores, adopted at first contact and untouched
  since, stays as stored when the order has it as Foundry shows it (the system's tie rule
  as the module states it, ``Combat.turn_order``, else ``_id``): the module writes nothing
  a rule did not change.
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Callable, Iterable, Mapping, Sequence

from .model import Combat, Combatant

SortKey = Callable[[Combat, Combatant], Sequence[float]]


def foundry_sort(values: dict[str, float | None]) -> list[str]:
    """The order Foundry's ``_sortCombatants`` gives: initiative descending, ties by id."""

    def key(cid: str) -> tuple[bool, float, str]:
        value = values[cid]
        return (value is None, -(value if value is not None else 0.0), cid)

    return sorted(values, key=key)


def rules_sort(combat: Combat, sort_key: SortKey, ids: Iterable[str] | None = None) -> list[str]:
    """The order the ruleset's tie rules give: score and tie-breaks descending, then Foundry's.

    A tie the sort key leaves goes as Foundry's own order has it (``Combat.turn_order``, the
    system's sort as the module states it: pf2e's priorities, dnd5e's names), then by ``_id``
    (core's tie rule, and the whole of it when the module does not state the order). A key
    ending with :func:`by_id` leaves no tie.
    Combatants that have not rolled come last, the same way, as in Foundry.
    """
    chosen = list(combat.combatants) if ids is None else list(ids)
    shown = shown_ranks(combat.turn_order)

    def key(cid: str) -> tuple[bool, tuple[float, ...], int, str]:
        c = combat.combatants[cid]
        if c.score is None:
            return (True, (), shown.get(cid, len(shown)), cid)
        return (False, tuple(-k for k in sort_key(combat, c)), shown.get(cid, len(shown)), cid)

    return sorted(chosen, key=key)


def by_id(cid: str) -> tuple[float, ...]:
    """Foundry's own order (``_id`` ascending) as sort-key numbers, higher first: each
    character's code point negated, then 1.0 so an id goes before the ids it prefixes. A
    ruleset whose rulings break a full tie by ``_id`` ends its ``sort_key`` with it, so
    :func:`rules_sort` never reaches Foundry's stated order."""
    return (*(-float(ord(ch)) for ch in cid), 1.0)


def shown_ranks(turn_order: Sequence[str]) -> Mapping[str, int]:
    """Each id's place in Foundry's stated order (those not in it go after, by ``_id``).
    Built per call, never kept: the engine holds no module-global cache (hashing the order
    for a cache would cost as much as building this)."""
    return {cid: i for i, cid in enumerate(turn_order)}


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
    scores: Mapping[str, float | None],
    hints: Mapping[str, float] | None = None,
    stored: Mapping[str, float] | None = None,
    shown: Sequence[str] = (),
) -> dict[str, float | None]:
    """Initiative values that make Foundry's sort reproduce ``order``, every rolled one distinct.

    ``scores`` are the rule scores (None: not rolled; those must come last). ``hints`` are
    preferred fractions in [0, 1) of a score's whole part (the dice-pool base); ``stored``
    are values Foundry holds that the sidecar adopted and no rule has moved since (see
    :func:`adapter.engine.adopt.adopt_combat`). Each entry's wanted value is its stored value,
    else its whole part plus its hint, else its score, decimals included; an entry placed
    below a lower value is wanted just below its predecessor. Entries wanted at one value
    are spread by a step finer than that value's own decimals: those before the last entry
    whose own value it is go above it, those placed after it just below (see
    :func:`_spread`). Only a tie Foundry itself stores stays: all stored, in the order
    Foundry shows them (``shown``, its stated turn order, then ``_id``; see :func:`rules_sort`)
    or in ``_id`` order (core's tie rule; the rule-bearing rulesets' full-tie ruling by
    ``_id`` stays unwritten at first contact where the system shows the tie otherwise).
    """
    if not hints and not stored:
        plain = _descending(order, scores)
        if plain is not None:
            return plain
    return by_runs(order, scores, hints, stored, shown)


def by_runs(
    order: Sequence[str],
    scores: Mapping[str, float | None],
    hints: Mapping[str, float] | None = None,
    stored: Mapping[str, float] | None = None,
    shown: Sequence[str] = (),
) -> dict[str, float | None]:
    """:func:`encode_initiatives` in full, run after run (the general case)."""
    runs = _runs(order, scores, hints or {}, stored or {})
    ranks = shown_ranks(shown)
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
    unrolled last), nothing stored or hinted. Every entry is then its own run at its own
    score, which is what :func:`encode_initiatives` gives it (tests/engine/test_order.py
    compares the two on random orders)."""
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
    before it go up by a step, those after it down (using at most half the gap to ``below``,
    so the next value keeps room). The step is 0.01 for whole numbers, finer than the
    value's own decimals otherwise (24.18 → 24.181), finer still when the neighbours are close.
    """
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
    # no decimal step fits (values a float's width apart): spread the run evenly between its
    # neighbours, the anchor included
    top = above if above < math.inf else value + 1
    bottom = below if below is not None else value - 1
    gap = (top - bottom) / (len(run) + 1)
    return {cid: top - (i + 1) * gap for i, cid in enumerate(run)}


def _decimals(value: float) -> int:
    """How many decimals ``value`` is written with (24.18 → 2; 10.0 → 0), at most 10."""
    if value.is_integer():
        return 0
    text = repr(value)
    if "e" in text or "E" in text:
        exponent = decimal.Decimal(text).as_tuple().exponent
        return min(10, -exponent) if isinstance(exponent, int) and exponent < 0 else 0
    return min(10, len(text) - text.index(".") - 1)
