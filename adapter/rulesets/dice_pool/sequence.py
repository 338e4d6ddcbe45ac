"""DP-5 "The order is kept for the whole fight unless someone declares an action that
affects initiative (delay, waiting)", with the exceptions of the rulings (docs/rules.md, DP-5).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from msgspec.structs import replace

from ...engine.context import Ctx
from ...engine.events import CombatStarted, Rolled, RoundStarted, ScoreSet
from ...engine.holding import GIVING_UP, HOLDING, STEPPED_IN
from ...engine.model import Combat, Combatant
from ...engine.order import by_id, place_by_rules
from .pool import dice_for
from .state import DicePoolState, combat_state, roll_of


def _units(combat: Combat) -> dict[str, str]:
    """Every combatant's unit: a group ties as one combatant, its smallest ``_id`` (DP-6)."""
    first: dict[str, str] = {}
    for c in combat.combatants.values():
        if c.group is not None and c.group in combat.groups:
            first[c.group] = min(first.get(c.group, c.id), c.id)
    return {cid: first.get(c.group or "", cid) for cid, c in combat.combatants.items()}


def _base(combat: Combat, c: Combatant) -> int:
    roll = roll_of(c.ext)
    if roll is not None:
        return roll.base
    dice = dice_for(combat, c)
    return dice.base if dice is not None else 0


Score = Callable[[Combatant], float]


def _dp2(combat: Combat, score: Score) -> Callable[[str], tuple[float, ...]]:
    """DP-2's key (successes, base, then the unit's ``_id`` and the combatant's), larger first."""
    units = _units(combat)
    bases: dict[str, float] = {}

    def key(cid: str) -> tuple[float, ...]:
        c = combat.combatants[cid]
        if cid not in bases:
            bases[cid] = float(_base(combat, c))
        return (score(c), bases[cid], *by_id(units[cid]), *by_id(cid))

    return key


def _score(c: Combatant) -> float:
    return c.score if c.score is not None else 0.0


def merge(combat: Combat, kept: Sequence[str], new: Sequence[str], score: Score = _score) -> list[str]:
    """DP-5 with DP-2: ``kept`` as it stands; each of ``new`` right before the first kept
    combatant it beats on successes, then base (Foundry's ``_id`` for a full tie)."""
    key = _dp2(combat, score)
    waiting = sorted(new, key=key, reverse=True)
    merged: list[str] = []
    for cid in kept:
        while waiting and key(waiting[0]) > key(cid):
            merged.append(waiting.pop(0))
        merged.append(cid)
    return merged + waiting


def merged_sequence(combat: Combat) -> list[str]:
    """The kept sequence now, everyone else who has rolled merged in by DP-2."""
    rolled = [cid for cid, c in combat.combatants.items() if c.score is not None]
    present = set(rolled)
    kept = [cid for cid in combat_state(combat.ext).sequence if cid in present]
    known = set(kept)
    return merge(combat, kept, [cid for cid in rolled if cid not in known])


def position(combat: Combat, c: Combatant, ranks: Mapping[str, int],
             seen: frozenset[str] = frozenset()) -> tuple[float, ...]:
    """The combatant's place now: its step-in this round (its anchor's place, one step
    down for after, up for before), else its rank in the kept sequence."""
    held = c.hold
    if held is not None and held.state == STEPPED_IN and held.point is not None:
        kind, anchor = held.point
        if anchor in combat.combatants and c.id not in seen:
            at = position(combat, combat.combatants[anchor], ranks, seen | {c.id})
            return (*at, -1.0 if kind == "after" else 1.0)
    return (-float(ranks.get(c.id, len(ranks))),)


def order_key(combat: Combat) -> Callable[[Combatant], Sequence[float]]:
    """DP-2 "more successes act earlier; equal successes: the higher base initiative acts
    earlier", within DP-5's kept sequence: the place (ended by 0, steps are ±1: no place
    prefixes another), then DP-2 (ST-3); **ruling**: then Foundry's order (``_id``), a group
    tying as one (DP-6). While a group's turn is in progress its waiting members go before
    anyone placed meanwhile: a joiner never slots in between them. The kept sequence is
    ranked once per sort, here, not kept between sorts."""
    ranks = {cid: i for i, cid in enumerate(merged_sequence(combat))}
    dp2 = _dp2(combat, _score)

    def key(c: Combatant) -> Sequence[float]:
        if _group_under_way(combat, c):
            return (math.inf, 0.0, *by_id(c.id))
        return (*position(combat, c, ranks), 0.0, *dp2(c.id))

    return key


def _group_under_way(combat: Combat, c: Combatant) -> bool:
    """The group's turn is in progress: one of its members is the current combatant."""
    if not combat.started or c.group is None or c.group not in combat.groups:
        return False
    current = combat.combatants.get(combat.current or "")
    return current is not None and current.group == c.group


def kept_sequence(ctx: Ctx, combat: Combat, event: RoundStarted) -> Combat:
    """DP-5 at a round start (before the holds are cleared): the sequence the round ended in is kept."""
    seq = _group_blocks(combat, _sequence_ended(combat))
    return replace(combat, ext=replace(combat_state(combat.ext), sequence=tuple(seq)))


def kept_sequence_on_roll(ctx: Ctx, combat: Combat, event: Rolled) -> Combat:
    """DP-5: a new roll leaves the kept sequence; the roller is placed by DP-2."""
    rolled = {c.id for c in combat.combatants.values() if c.id == event.combatant_id
              or (event.group_id is not None and c.group == event.group_id)}
    return _left_sequence(combat, rolled)


def kept_sequence_on_score_set(ctx: Ctx, combat: Combat, event: ScoreSet) -> Combat:
    """DP-5: the GM's number leaves the kept sequence and places the combatant by that
    number, on its own, apart from its group's block."""
    return _given_a_number(ctx, _left_sequence(combat, {event.combatant_id}), event.combatant_id)


def kept_sequence_on_start(ctx: Ctx, combat: Combat, event: CombatStarted) -> Combat:
    """DP-5: a new fight starts from the rolls alone."""
    return replace(combat, ext=replace(combat_state(combat.ext), sequence=()))


def stepped_apart(combat: Combat, cid: str | None) -> Combat:
    """DP-6 with DP-5: a group member that stepped in elsewhere for good (not for one round)
    keeps its own place from then on, apart from its group."""
    c = combat.combatants.get(cid or "")
    if c is None or c.group is None or not _lasting_step_in(c) or not isinstance(c.ext, DicePoolState):
        return combat
    return replace(combat, combatants={**combat.combatants, c.id: replace(c, ext=replace(c.ext, apart=True))})


def _left_sequence(combat: Combat, gone: set[str]) -> Combat:
    state = combat_state(combat.ext)
    if not gone & set(state.sequence):
        return combat
    kept = tuple(cid for cid in state.sequence if cid not in gone)
    return replace(combat, ext=replace(state, sequence=kept))


def _given_a_number(ctx: Ctx, combat: Combat, cid: str) -> Combat:
    """The GM's number: no step-in point, apart from the group, and placed again among the
    turns to come by the number (the engine placed it while it still had its kept place)."""
    c = combat.combatants.get(cid)
    if c is None or not isinstance(c.ext, DicePoolState):
        return combat
    held = c.hold
    hold = replace(held, point=None) if held is not None and held.point is not None else c.hold
    updated = replace(c, ext=replace(c.ext, apart=c.group is not None), hold=hold)
    combat = replace(combat, combatants={**combat.combatants, c.id: updated})
    return replace(combat, order=place_by_rules(combat, cid, ctx.ruleset.sort_key))


def _returning_score(c: Combatant) -> float:
    """The score the combatant has next round (a step-in for one round returns, ST-4/ST-5)."""
    held = c.hold
    if held is not None and held.state == STEPPED_IN and held.original is not None:
        return held.original
    return _score(c)


def _lasting_step_in(c: Combatant) -> bool:
    held = c.hold
    return held is not None and held.state == STEPPED_IN and held.original is None and held.point is not None


def _declared_place(c: Combatant) -> bool:
    """A place taken by stepping in this round for good (ST-1/ST-2 rulings): stepped in, or
    holding again at the place it stepped into (a holder keeps its place, ST-1)."""
    held = c.hold
    return (held is not None and held.state in (STEPPED_IN, HOLDING) and held.original is None
            and held.point is not None)


def _for_one_round(c: Combatant) -> bool:
    """A step-in from a carried hold (also one holding again there), or a movement-only
    turn: its place is not kept."""
    held = c.hold
    return held is not None and (
        held.state == GIVING_UP
        or (held.state == STEPPED_IN and held.original is not None)
        or (held.state == HOLDING and held.original is not None and held.point is not None))


def _sequence_ended(combat: Combat) -> list[str]:
    """The order the round ended in, less joiners and new scores (merged by DP-2), with
    the places for one round only taken back."""
    started = list(combat_state(combat.ext).sequence)
    ended = [cid for cid in combat.order
             if cid in combat.combatants and combat.combatants[cid].score is not None]
    back = [cid for cid in started if cid in ended and _for_one_round(combat.combatants[cid])]
    kept = [cid for cid in ended if cid not in back and (
        cid in started or _declared_place(combat.combatants[cid]))]
    for cid in back:
        before = started[:started.index(cid)]
        after = next((kept.index(p) + 1 for p in reversed(before) if p in kept), 0)
        kept.insert(after, cid)
    new = [cid for cid in ended if cid not in kept]
    return merge(combat, kept, new, _returning_score)


def _group_blocks(combat: Combat, seq: list[str]) -> list[str]:
    """DP-6: each group's members (but those apart) together at the first one's place, by
    ``_id``; whoever stood between them goes right after them (right before, if it had
    stepped in before one of them)."""
    for gid in combat.groups:
        block = [cid for cid in seq if _with_group(combat.combatants[cid], gid)]
        if len(block) < 2:
            continue
        first, last = seq.index(block[0]), seq.index(block[-1])
        between = [cid for cid in seq[first:last + 1] if cid not in block]
        ahead = [cid for cid in between if _steps_in_before(combat.combatants[cid], block)]
        behind = [cid for cid in between if cid not in ahead]
        seq = seq[:first] + ahead + sorted(block) + behind + seq[last + 1:]
    return seq


def _with_group(c: Combatant, gid: str) -> bool:
    return c.group == gid and not (isinstance(c.ext, DicePoolState) and c.ext.apart)


def _steps_in_before(c: Combatant, block: list[str]) -> bool:
    held = c.hold
    return (held is not None and held.state in (STEPPED_IN, HOLDING) and held.point is not None
            and held.point[0] == "before" and held.point[1] in block)
