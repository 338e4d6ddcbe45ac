"""Turn and round bookkeeping, written once for every ruleset.

Foundry's report (its round and pointer) is classified as a :class:`Move`, and ``(phase,
move)`` looked up in :data:`TURN_TABLE` for the handler and the phase it ends in; a pair the
table lacks, or a handler landing elsewhere, is refused ``internal_error``. The phases, the
moves, and how defeated combatants are passed over: docs/engine.md, "Turns: the turn table".
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from itertools import filterfalse

from msgspec.structs import replace

from ..errors import InternalError
from .context import Ctx
from .events import (
    CombatStarted,
    Event,
    RoundEnded,
    RoundStarted,
    TurnEnded,
    TurnStarted,
)
from .model import Combat
from .order import rules_sort
from .ruleset import SKIPPED_ACTS


class Phase(enum.Enum):
    NOT_STARTED = "not_started"
    IN_TURN = "in_turn"
    ROUND_OVER = "round_over"


class Move(enum.Enum):
    """What Foundry's report says happened to the combat's round and pointer."""

    NONE = "none"
    START = "start"
    ADVANCE = "advance"
    NEW_ROUND = "new_round"
    BACK = "back"
    RESET = "reset"


def phase(combat: Combat) -> Phase:
    if not combat.started:
        return Phase.NOT_STARTED
    return Phase.IN_TURN if combat.current is not None else Phase.ROUND_OVER


def emit(ctx: Ctx, combat: Combat, event: Event) -> Combat:
    """Give one event to the rules ``ctx.ruleset`` lists for its class, in that order."""
    for rule in ctx.ruleset.on.get(type(event), ()):
        combat = rule(ctx, combat, event)
    return combat


def acts_now(ctx: Ctx, combat: Combat, combatant_id: str) -> bool:
    """Whether this combatant takes its turn (the module skips the others). A defeated one
    does not, unless the ruleset follows core and core's Skip Defeated is off."""
    c = combat.combatants[combatant_id]
    rs = ctx.ruleset
    if c.defeated and (combat.skip_defeated is not False or not rs.follows_skip_defeated):
        return False
    return rs.describe(combat, c).acts not in SKIPPED_ACTS


def follow(ctx: Ctx, combat: Combat, round_: int, current: str | None) -> Combat:
    """Bring the combat to Foundry's ``round`` and pointer, telling the rules each turn."""
    before = phase(combat)
    move = classify(combat, round_, current)
    entry = TURN_TABLE.get((before, move))
    if entry is None:
        raise InternalError(
            f"the turn table has no move {move.value!r} from {before.value!r} (Foundry reported "
            f"round {round_}, current {current!r}; the combat is at round {combat.round}, "
            f"current {combat.current!r}): the message is refused and the combat kept as it was"
        )
    handler, expected = entry
    after = handler(ctx, combat, round_, current)
    landed = phase(after)
    if landed is not expected and STATE_TRIGGERED.get(expected) is not landed:
        raise InternalError(
            f"turn bookkeeping moved {before.value} -{move.value}-> {landed.value}, where the "
            f"turn table says {expected.value}: the message is refused"
        )
    return after


def classify(combat: Combat, round_: int, current: str | None) -> Move:
    """Foundry's report (its round and current combatant after the change) as a move."""
    if round_ <= 0:
        return Move.RESET if combat.started else Move.NONE
    if not combat.started:
        return Move.START
    if round_ > combat.round:
        return Move.NEW_ROUND
    if round_ < combat.round:
        return Move.BACK
    if current is None or current == combat.current or current not in combat.order:
        return Move.NONE
    here = combat.order.index(combat.current) if combat.current in combat.order else len(combat.order)
    return Move.BACK if combat.order.index(current) < here else Move.ADVANCE


Handler = Callable[[Ctx, Combat, int, str | None], Combat]
#: the turns :func:`end_round` passed over: (combatant, combat once it began, once it ended)
Trail = list[tuple[str, Combat, Combat]]


def _stay(ctx: Ctx, combat: Combat, round_: int, current: str | None) -> Combat:
    return combat


def _sort_before_start(ctx: Ctx, combat: Combat, round_: int, current: str | None) -> Combat:
    """Before the start the order is the rules' sort, refreshed at every report."""
    return replace(combat, order=rules_sort(combat, ctx.ruleset.sort_key))


def _start(ctx: Ctx, combat: Combat, round_: int, current: str | None) -> Combat:
    combat = emit(ctx, combat, CombatStarted())
    return start_round(ctx, combat, round_)


def _advance(ctx: Ctx, combat: Combat, round_: int, target: str | None) -> Combat:
    """End the turn in progress and every turn up to ``target``, then begin ``target``'s."""
    assert target is not None  # classify gives ADVANCE only for a combatant of the order
    if combat.current is not None:
        combat = end_turn(ctx, combat, combat.current, skipped=False)
    while (upcoming := next_waiting(combat)) not in (None, target):
        combat = skip_turn(ctx, combat, upcoming)
    if upcoming is None:
        return replace(combat, current=None)
    # a pointer written directly is kept where it landed, under a ruleset that follows core
    # when the snapshot states Skip Defeated (docs/engine.md, "Defeated combatants")
    if ctx.ruleset.follows_skip_defeated and combat.skip_defeated is not None:
        return begin_turn(ctx, combat, target)
    return begin_next_acting(ctx, combat)


#: rounds a jump plays one by one (Foundry's round may be set to 1,000,000); past these the
#: rounds in between pass at once (docs/protocol.md, "hook")
PLAYED_ROUNDS = 10


def _new_round(ctx: Ctx, combat: Combat, round_: int, current: str | None) -> Combat:
    played = 0
    while combat.round < round_:
        combat = end_round(ctx, combat)
        played += 1
        upcoming = combat.round + 1 if played < PLAYED_ROUNDS else round_
        # core's nextRound keeps a null turn: so does a ruleset that follows core there
        begin = upcoming < round_ or current is not None or not ctx.ruleset.keeps_null_turn
        combat = start_round(ctx, combat, upcoming, begin=begin)
    return combat


def _back(ctx: Ctx, combat: Combat, round_: int, current: str | None) -> Combat:
    """The GM moved back: follow the pointer; no rule sees a turn."""
    order = combat.order
    at = order.index(current) if current in order else 0
    return replace(
        combat,
        round=round_,
        current=order[at] if order else None,
        passed=frozenset(order[:at]),
    )


def _reset(ctx: Ctx, combat: Combat, round_: int, current: str | None) -> Combat:
    """Foundry set round 0 again: the encounter is back to before its start."""
    combat = replace(combat, round=0, current=None, passed=frozenset())
    return _sort_before_start(ctx, combat, round_, current)


#: (phase, move) -> (the handler that makes the move, the phase it ends in)
TURN_TABLE: dict[tuple[Phase, Move], tuple[Handler, Phase]] = {
    (Phase.NOT_STARTED, Move.NONE): (_sort_before_start, Phase.NOT_STARTED),
    (Phase.NOT_STARTED, Move.START): (_start, Phase.IN_TURN),
    (Phase.IN_TURN, Move.NONE): (_stay, Phase.IN_TURN),
    (Phase.IN_TURN, Move.ADVANCE): (_advance, Phase.IN_TURN),
    (Phase.IN_TURN, Move.NEW_ROUND): (_new_round, Phase.IN_TURN),
    (Phase.IN_TURN, Move.BACK): (_back, Phase.IN_TURN),
    (Phase.IN_TURN, Move.RESET): (_reset, Phase.NOT_STARTED),
    (Phase.ROUND_OVER, Move.NONE): (_stay, Phase.ROUND_OVER),
    (Phase.ROUND_OVER, Move.NEW_ROUND): (_new_round, Phase.IN_TURN),
    (Phase.ROUND_OVER, Move.BACK): (_back, Phase.IN_TURN),
    (Phase.ROUND_OVER, Move.RESET): (_reset, Phase.NOT_STARTED),
}

#: state-triggered: a phase that, reached with nobody current, is at once the next one
STATE_TRIGGERED: dict[Phase, Phase] = {Phase.IN_TURN: Phase.ROUND_OVER}


def next_waiting(combat: Combat) -> str | None:
    """The first combatant in the order whose turn has not come this round (``filterfalse``
    skips the passed ones at C speed)."""
    waiting = filterfalse(combat.passed.__contains__, combat.order)
    return next((cid for cid in waiting if cid != combat.current), None)


def begin_next_acting(ctx: Ctx, combat: Combat) -> Combat:
    """Pass over the turns that do not act, then begin the first that does (or none)."""
    if combat.current is not None:
        combat = replace(combat, current=None)
    while True:
        upcoming = next_waiting(combat)
        if upcoming is None:
            return combat
        if acts_now(ctx, combat, upcoming):
            return begin_turn(ctx, combat, upcoming)
        combat = skip_turn(ctx, combat, upcoming)


def begin_turn(ctx: Ctx, combat: Combat, combatant_id: str) -> Combat:
    return emit(ctx, replace(combat, current=combatant_id), TurnStarted(combatant_id))


def end_turn(ctx: Ctx, combat: Combat, combatant_id: str, *, skipped: bool) -> Combat:
    combat = replace(
        combat,
        passed=combat.passed | {combatant_id},
        current=None if combat.current == combatant_id else combat.current,
    )
    return emit(ctx, combat, TurnEnded(combatant_id, skipped=skipped))


def skip_turn(
    ctx: Ctx, combat: Combat, combatant_id: str, trail: Trail | None = None
) -> Combat:
    saved = combat.current
    began = begin_turn(ctx, combat, combatant_id)
    combat = end_turn(ctx, began, combatant_id, skipped=True)
    back = saved if saved != combatant_id else None
    if combat.current != back:
        combat = replace(combat, current=back)
    if trail is not None:
        trail.append((combatant_id, began, combat))
    return combat


def end_round(ctx: Ctx, combat: Combat, trail: Trail | None = None) -> Combat:
    """End the turn in progress, pass over every turn still to come, end the round
    (``trail``, if given, gets each turn passed over: :mod:`.preview` keeps it)."""
    if combat.current is not None:
        combat = end_turn(ctx, combat, combat.current, skipped=False)
    while (upcoming := next_waiting(combat)) is not None:
        combat = skip_turn(ctx, combat, upcoming, trail)
    return emit(ctx, combat, RoundEnded(combat.round))


def start_round(ctx: Ctx, combat: Combat, round_: int, *, begin: bool = True) -> Combat:
    """Start ``round_``: the rules' sort, then the first turn that acts begins, unless
    ``begin`` is false (nobody's turn, as Foundry core keeps it)."""
    combat = replace(combat, round=round_, passed=frozenset(), current=None)
    combat = emit(ctx, combat, RoundStarted(round_))
    combat = replace(combat, order=rules_sort(combat, ctx.ruleset.sort_key))
    if not begin:
        return combat
    # core's nextRound with nobody left standing starts at the first of the order, defeated as
    # it is: so does a ruleset that follows core
    order = combat.order
    if ctx.ruleset.follows_skip_defeated and order and all(combat.combatants[c].defeated for c in order):
        return begin_turn(ctx, combat, order[0])
    return begin_next_acting(ctx, combat)
