"""DP-5 "The order is kept for the whole fight unless someone declares an action that
affects initiative (delay, waiting)": the sequence a declaration changed stays changed.

The order is the engine's sort by :func:`adapter.rulesets.dice_pool.rules.order_key`, so a
kept place must be part of the key. A combatant's :class:`Place` is where its roll puts it
(the root), or, once it has stepped in after or before someone, that one's place one step
down (−1, after) or up (+1, before). The key is the place's root (successes, base, unit),
then its path, closed by 0, then the combatant's own successes, base and unit::

    Bob      (2, 5, Bob,  0,     2, 5, Bob)
    Ann      (2, 5, Bob, -1, 0,  1, 4, Ann)    stepped in after Bob
    Cid      (2, 5, Bob, -1, 1, 0, 2, 6, Cid)  stepped in before Ann

Paths end with 0 and their steps are ±1, so two paths are never compared as a prefix: the
place decides; combatants at the same place (ST-3 in the storyteller text) are ordered by
their own key, DP-2's tie rule. While a combatant has stepped in this round its place is
read from its hold; at the round's end a hold used from HOLDING is kept
(``DicePoolState.placed``, by :func:`kept_sequence`), one used from a carried hold (ANY_POINT)
is not: the combatant returns to its original score and to its kept place (ST-4/ST-5
rulings). The GM's number (``initiative.set``) replaces the place.
"""

from __future__ import annotations

from dataclasses import replace

from ...engine.context import Ctx
from ...engine.events import RoundStarted, ScoreSet
from ...engine.holding import STEPPED_IN, holding
from ...engine.model import Combat, Combatant
from .pool import dice_for
from .state import DicePoolState, Place, roll_of


def unit(combat: Combat, c: Combatant) -> str:
    """A group ties as one combatant: the smallest ``_id`` of its members (DP-6)."""
    if c.group is None or c.group not in combat.groups:
        return c.id
    return min(x.id for x in combat.combatants.values() if x.group == c.group)


def unit_rank(combat: Combat, unit_id: str) -> int:
    """The rank of a unit among the combat's units by ``_id`` (a root kept after its unit
    left ranks where its id would)."""
    units = {unit(combat, x) for x in combat.combatants.values()} | {unit_id}
    return sorted(units).index(unit_id)


def own_place(combat: Combat, c: Combatant) -> Place:
    """Where the roll alone puts a combatant: its successes and its base (DP-2)."""
    roll = roll_of(c.ext)
    if roll is not None:
        base = roll.base
    else:
        dice = dice_for(combat, c)
        base = dice.base if dice is not None else 0
    score = c.score if c.score is not None else 0.0
    return Place(score=score, base=float(base), unit=unit(combat, c))


def position(combat: Combat, c: Combatant, seen: frozenset[str] = frozenset()) -> Place:
    """The combatant's place now: its step-in this round, else its kept place, else its own."""
    held = holding(c)
    if held is not None and held.state == STEPPED_IN and held.point is not None:
        kind, anchor = held.point
        if anchor in combat.combatants and c.id not in seen:
            at = position(combat, combat.combatants[anchor], seen | {c.id})
            return replace(at, path=at.path + (-1 if kind == "after" else 1,))
    if isinstance(c.ext, DicePoolState) and c.ext.placed is not None:
        return c.ext.placed
    return own_place(combat, c)


def sequence_key(combat: Combat, c: Combatant) -> tuple[float, ...]:
    place, own = position(combat, c), own_place(combat, c)
    own_rank = -float(unit_rank(combat, own.unit))
    root_rank = own_rank if place.unit == own.unit else -float(unit_rank(combat, place.unit))
    return (place.score, place.base, root_rank, *(float(step) for step in place.path), 0.0,
            own.score, own.base, own_rank)


def kept_sequence(ctx: Ctx, combat: Combat, event: RoundStarted) -> Combat:
    """DP-5 at a round start (before the holds are cleared): a hold used in its own round
    keeps the place it took for the fight."""
    kept: dict[str, Combatant] = {}
    for c in combat.combatants.values():
        held = holding(c)
        if (held is not None and held.state == STEPPED_IN and held.point is not None
                and held.original is None and isinstance(c.ext, DicePoolState)):
            kept[c.id] = replace(c, ext=replace(c.ext, placed=position(combat, c)))
    if not kept:
        return combat
    return replace(combat, combatants={**combat.combatants, **kept})


def kept_sequence_on_score_set(ctx: Ctx, combat: Combat, event: ScoreSet) -> Combat:
    """DP-5: a GM's number drops the kept place (and a step-in's point)."""
    c = combat.combatants.get(event.combatant_id)
    if c is None or not isinstance(c.ext, DicePoolState):
        return combat
    held = holding(c)
    hold = replace(held, point=None) if held is not None and held.state == STEPPED_IN else c.hold
    updated = replace(c, ext=replace(c.ext, placed=None), hold=hold)
    return replace(combat, combatants={**combat.combatants, c.id: updated})
