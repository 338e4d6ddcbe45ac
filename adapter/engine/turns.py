"""Turn and round bookkeeping, written once for every ruleset.

The model. A combat is in one of three phases::

    Phase          how it shows in Combat             leaves by
    NOT_STARTED    round == 0                         START  -> IN_TURN (or ROUND_OVER)
    IN_TURN        round > 0, current is set          ADVANCE -> IN_TURN | ROUND_OVER
                                                      NEW_ROUND -> IN_TURN | ROUND_OVER
                                                      BACK   -> IN_TURN (GM went back)
    ROUND_OVER     round > 0, current is None         NEW_ROUND, BACK
    any            Foundry set round 0 again          RESET  -> NOT_STARTED

(BACK may also end in ROUND_OVER when nobody is left in the order.) :func:`follow` checks
every move against :data:`TRANSITIONS`.

Foundry's snapshot says where its pointer is; the engine follows it, and tells the rules
about every turn it crosses: when ``current`` moves on within a round, every turn in
between ends and begins (``skipped=True``); at a round change every turn left in the old
round ends, and the new round starts at the first combatant of the new order who acts
(the pointer Foundry reports is corrected by the plan). A turn whose ``acts`` is ``none``,
``defend_only`` or ``held`` (or a defeated combatant's) is passed over at once. Moving
back (the GM's "previous turn") moves the pointer without any rule seeing a turn.
"""

from __future__ import annotations

import enum

from .context import Ctx
from .events import (
    CombatStarted,
    Event,
    RoundEnded,
    RoundStarted,
    TurnEnded,
    TurnStarted,
)
from .model import Combat, evolve
from .order import rules_sort
from .ruleset import SKIPPED_ACTS, Ruleset


class Phase(enum.Enum):
    NOT_STARTED = "not_started"
    IN_TURN = "in_turn"
    ROUND_OVER = "round_over"


TRANSITIONS: dict[tuple[Phase, str], frozenset[Phase]] = {
    (Phase.NOT_STARTED, "start"): frozenset({Phase.IN_TURN, Phase.ROUND_OVER}),
    (Phase.IN_TURN, "advance"): frozenset({Phase.IN_TURN, Phase.ROUND_OVER}),
    (Phase.IN_TURN, "new_round"): frozenset({Phase.IN_TURN, Phase.ROUND_OVER}),
    (Phase.ROUND_OVER, "new_round"): frozenset({Phase.IN_TURN, Phase.ROUND_OVER}),
    (Phase.IN_TURN, "back"): frozenset({Phase.IN_TURN, Phase.ROUND_OVER}),
    (Phase.ROUND_OVER, "back"): frozenset({Phase.IN_TURN, Phase.ROUND_OVER}),
    (Phase.NOT_STARTED, "reset"): frozenset({Phase.NOT_STARTED}),
    (Phase.IN_TURN, "reset"): frozenset({Phase.NOT_STARTED}),
    (Phase.ROUND_OVER, "reset"): frozenset({Phase.NOT_STARTED}),
}


def phase(combat: Combat) -> Phase:
    if not combat.started:
        return Phase.NOT_STARTED
    return Phase.IN_TURN if combat.current is not None else Phase.ROUND_OVER


def emit(ctx: Ctx, rs: Ruleset, combat: Combat, event: Event) -> Combat:
    """Give one event to the rules the ruleset lists for its class, in the listed order."""
    for rule in rs.on.get(type(event), ()):
        combat = rule(ctx, combat, event)
    return combat


def acts_now(rs: Ruleset, combat: Combat, combatant_id: str) -> bool:
    """Whether this combatant takes its turn (the module skips the others)."""
    c = combat.combatants[combatant_id]
    return not c.defeated and rs.describe(combat, c).acts not in SKIPPED_ACTS


# ---------------------------------------------------------------- following Foundry


def follow(ctx: Ctx, rs: Ruleset, combat: Combat, round_: int, current: str | None) -> Combat:
    """Bring the combat to Foundry's ``round`` and pointer, telling the rules each turn.

    Every move is one of :data:`TRANSITIONS`; a move the table does not allow is a bug."""
    before = phase(combat)
    action, after = _move(ctx, rs, combat, round_, current)
    if action is not None and phase(after) not in TRANSITIONS.get((before, action), frozenset()):
        raise AssertionError(f"turn bookkeeping moved {before.value} -{action}-> {phase(after).value}")
    return after


def _move(
    ctx: Ctx, rs: Ruleset, combat: Combat, round_: int, current: str | None
) -> tuple[str | None, Combat]:
    if round_ <= 0:
        if combat.started:  # Foundry reset the encounter to before its start
            combat = evolve(combat, round=0, current=None, passed=frozenset())
        return "reset", evolve(combat, order=tuple(rules_sort(combat, rs.sort_key)))
    if not combat.started:
        combat = emit(ctx, rs, combat, CombatStarted())
        return "start", start_round(ctx, rs, combat, 1)
    if round_ > combat.round:
        while combat.round < round_:
            combat = end_round(ctx, rs, combat)
            combat = start_round(ctx, rs, combat, combat.round + 1)
        return "new_round", combat
    if round_ < combat.round:
        return "back", go_back(combat, round_, current)
    if current is None or current == combat.current or current not in combat.order:
        return None, combat
    here = combat.order.index(combat.current) if combat.current in combat.order else len(combat.order)
    there = combat.order.index(current)
    if there < here:
        return "back", go_back(combat, round_, current)
    return "advance", advance_to(ctx, rs, combat, current)


def go_back(combat: Combat, round_: int, current: str | None) -> Combat:
    """The GM moved back: follow the pointer; no rule sees a turn."""
    order = combat.order
    at = order.index(current) if current in order else 0
    return evolve(
        combat,
        round=round_,
        current=order[at] if order else None,
        passed=frozenset(order[:at]),
    )


def advance_to(ctx: Ctx, rs: Ruleset, combat: Combat, target: str) -> Combat:
    """End the turn in progress and every turn up to ``target``, then begin ``target``'s."""
    if combat.current is not None:
        combat = end_turn(ctx, rs, combat, combat.current, skipped=False)
    while True:
        upcoming = next_waiting(combat)
        if upcoming is None:
            return evolve(combat, current=None)
        if upcoming == target:
            break
        combat = skip_turn(ctx, rs, combat, upcoming)
    return begin_next_acting(ctx, rs, combat)


def next_waiting(combat: Combat) -> str | None:
    """The first combatant in the order whose turn has not come this round."""
    for cid in combat.order:
        if cid not in combat.passed and cid != combat.current:
            return cid
    return None


def begin_next_acting(ctx: Ctx, rs: Ruleset, combat: Combat) -> Combat:
    """Pass over the turns that do not act, then begin the first that does (or none)."""
    combat = evolve(combat, current=None)
    while True:
        upcoming = next_waiting(combat)
        if upcoming is None:
            return combat
        if acts_now(rs, combat, upcoming):
            return begin_turn(ctx, rs, combat, upcoming)
        combat = skip_turn(ctx, rs, combat, upcoming)


def begin_turn(ctx: Ctx, rs: Ruleset, combat: Combat, combatant_id: str) -> Combat:
    combat = evolve(combat, current=combatant_id)
    return emit(ctx, rs, combat, TurnStarted(combatant_id))


def end_turn(ctx: Ctx, rs: Ruleset, combat: Combat, combatant_id: str, *, skipped: bool) -> Combat:
    combat = evolve(
        combat,
        passed=combat.passed | {combatant_id},
        current=None if combat.current == combatant_id else combat.current,
    )
    return emit(ctx, rs, combat, TurnEnded(combatant_id, skipped=skipped))


def skip_turn(ctx: Ctx, rs: Ruleset, combat: Combat, combatant_id: str) -> Combat:
    saved = combat.current
    combat = emit(ctx, rs, evolve(combat, current=combatant_id), TurnStarted(combatant_id))
    combat = end_turn(ctx, rs, combat, combatant_id, skipped=True)
    return evolve(combat, current=saved if saved != combatant_id else None)


def end_round(ctx: Ctx, rs: Ruleset, combat: Combat) -> Combat:
    if combat.current is not None:
        combat = end_turn(ctx, rs, combat, combat.current, skipped=False)
    while (upcoming := next_waiting(combat)) is not None:
        combat = skip_turn(ctx, rs, combat, upcoming)
    return emit(ctx, rs, combat, RoundEnded(combat.round))


def start_round(ctx: Ctx, rs: Ruleset, combat: Combat, round_: int) -> Combat:
    combat = evolve(combat, round=round_, passed=frozenset(), current=None)
    combat = emit(ctx, rs, combat, RoundStarted(round_))
    combat = evolve(combat, order=tuple(rules_sort(combat, rs.sort_key)))
    return begin_next_acting(ctx, rs, combat)


def preview_next_round(ctx: Ctx, rs: Ruleset, combat: Combat) -> Combat:
    """The combat as the next round would start, as far as known now (nothing is kept)."""
    was = ctx.preview
    ctx.preview = True
    saved = (list(ctx.opened), set(ctx.answered), list(ctx.notices), dict(ctx.ext), ctx._ids)
    try:
        if not combat.started:  # round 1 as the combat's start would begin it
            return start_round(ctx, rs, emit(ctx, rs, combat, CombatStarted()), 1)
        combat = end_round(ctx, rs, combat)
        return start_round(ctx, rs, combat, combat.round + 1)
    finally:
        ctx.opened, ctx.answered, ctx.notices, ctx.ext, ctx._ids = saved
        ctx.preview = was
