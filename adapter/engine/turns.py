"""Turn and round bookkeeping, written once for every ruleset.

The model. A combat is in one of three phases::

    Phase          how it shows in Combat
    NOT_STARTED    round == 0
    IN_TURN        round > 0, current is set
    ROUND_OVER     round > 0, current is None (nobody left who acts this round, or Foundry's
                   turn is null: lancer, daggerheart, worldbuilding, a combat met mid-fight)

The turn table drives the turn, as h11's state machine drives HTTP: Foundry's report (its
round and current combatant, after the change) is first classified against the combat
into a :class:`Move` (:func:`classify`), then ``(phase, move)`` is looked up in
:data:`TURN_TABLE`, which gives the handler that makes the move and the phase it ends in::

    phase        move        handler                          ends in
    NOT_STARTED  none        the order re-sorted by the rules NOT_STARTED
    NOT_STARTED  start       CombatStarted, round 1 begins    IN_TURN
    IN_TURN      none        nothing                          IN_TURN
    IN_TURN      advance     turns end up to Foundry's        IN_TURN
    IN_TURN      new_round   the round(s) end, the next begins IN_TURN (ROUND_OVER: null kept)
    IN_TURN      back        the pointer moves, no rule sees  IN_TURN
    IN_TURN      reset       back to before the start         NOT_STARTED
    ROUND_OVER   none        nothing                          ROUND_OVER
    ROUND_OVER   new_round   as from IN_TURN                  IN_TURN
    ROUND_OVER   back        as from IN_TURN                  IN_TURN
    ROUND_OVER   reset       as from IN_TURN                  NOT_STARTED

and one state-triggered transition (h11's second kind): IN_TURN with nobody current is
ROUND_OVER at once (the round ran out of combatants who act: all of them held, defeated or
passed, or the order is empty). What each move is:

- ``none``: Foundry's round is the combat's and its pointer did not move (or points at no
  combatant of the order, or at nobody); before the start, round 0 (Foundry's
  ``previousRound`` from round 0, an ``updateCombatant`` before ``startCombat``...).
- ``start``: a round above 0 on a combat not started (``startCombat``; a jump from round 0
  to round N, by a macro or the combat's configuration, starts at round N: Foundry's round
  is kept, as at first contact, never written back to 1).
- ``advance``: the same round, Foundry's pointer further down the order (``nextTurn``, or the
  GM clicking a later combatant): every turn in between ends and begins (``skipped=True``).
- ``new_round``: a higher round (``nextRound``, ``nextTurn`` past the end, several rounds at
  once): every turn left in the old round ends; the new round starts at the first combatant
  of the new order who acts (the pointer Foundry reports is corrected by the plan), except
  where Foundry reports nobody current (core's ``nextRound`` keeps a null turn) under a
  ruleset that keeps it (``foundry-core``): that round starts with nobody's turn (ROUND_OVER,
  the state-triggered transition below, with nobody passed).
- ``back``: a lower round above 0 (``previousRound``), or the same round with the pointer up
  the order (``previousTurn``, the GM clicking an earlier combatant), or any combatant while
  the round is over (lancer's activations when Foundry's turn was null): the pointer moves
  and those above it have passed; no rule sees a turn.
- ``reset``: round 0 on a started combat (``previousRound`` from round 1, a macro): before
  the start again, nobody current, nobody passed.

Every report Foundry can make (the schema: round >= 0, any current) falls in one of these
pairs. The pairs missing from the table (``back``, ``advance``, ``new_round`` or ``reset``
before the start; ``start`` of a started combat; ``advance`` while the round is over) are
ones :func:`classify` cannot produce from a combat in a consistent state; meeting one means
the engine's state is wrong, and the message is refused ``internal_error`` with a sentence
naming the pair (the combat stays as it was), never an ``AssertionError``. A handler that
ends in another phase than the table's is refused the same way.

A turn whose ``acts`` is ``none``, ``defend_only`` or ``held`` (or a defeated combatant's)
is passed over at once; under a ruleset that follows core's Skip Defeated
(``Ruleset.follows_skip_defeated``: ``foundry-core``), a defeated combatant's turn is passed
over only when the combat's ``skip_defeated`` is set (or absent), and a round where nobody is
left standing starts at the first of the order, as core's ``nextRound`` does
(:func:`defeated_passed_over`, :func:`none_remaining`). Core skips only in ``nextTurn`` and
``nextRound``: a pointer written directly onto a defeated combatant (the GM's click on its
row, a macro's ``combat.update({turn})``) stays there, and so does the sidecar's under such a
ruleset when the snapshot states the setting (:func:`pointer_kept`). The next round's preview
is :mod:`.preview`.
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
    """Give one event to the rules the message's ruleset (``ctx.ruleset``) lists for its
    class, in the listed order."""
    for rule in ctx.ruleset.on.get(type(event), ()):
        combat = rule(ctx, combat, event)
    return combat


def acts_now(ctx: Ctx, combat: Combat, combatant_id: str) -> bool:
    """Whether this combatant takes its turn (the module skips the others)."""
    c = combat.combatants[combatant_id]
    rs = ctx.ruleset
    if c.defeated and defeated_passed_over(rs.follows_skip_defeated, combat):
        return False
    return rs.describe(combat, c).acts not in SKIPPED_ACTS


def defeated_passed_over(follows_skip_defeated: bool, combat: Combat) -> bool:
    """Whether a defeated combatant's turn is passed over: under a ruleset that follows core
    (``foundry-core``), only with core's Skip Defeated on (``Combat.skip_defeated``; off,
    its default, core's ``nextTurn``/``nextRound`` give a defeated combatant its turn; not
    stated, passed over as before the module said); under a rule-bearing ruleset, always (its
    defeated combatants do not act; docs/rules.md)."""
    return combat.skip_defeated is not False or not follows_skip_defeated


def none_remaining(follows_skip_defeated: bool, combat: Combat) -> bool:
    """Core's ``nextRound`` with Skip Defeated and nobody left standing ("COMBAT.NoneRemaining"):
    it warns and takes turn 0, the first of the order, defeated as it is. Under a ruleset that
    follows core, such a round starts there instead of with nobody current."""
    return (follows_skip_defeated and bool(combat.order)
            and all(combat.combatants[cid].defeated for cid in combat.order))


# ---------------------------------------------------------------- following Foundry


def follow(ctx: Ctx, combat: Combat, round_: int, current: str | None) -> Combat:
    """Bring the combat to Foundry's ``round`` and pointer, telling the rules each turn: the
    move is classified, looked up in :data:`TURN_TABLE`, and made by the handler found there."""
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
    return replace(combat, order=tuple(rules_sort(combat, ctx.ruleset.sort_key)))


def _start(ctx: Ctx, combat: Combat, round_: int, current: str | None) -> Combat:
    combat = emit(ctx, combat, CombatStarted())
    return start_round(ctx, combat, round_)


def _advance(ctx: Ctx, combat: Combat, round_: int, current: str | None) -> Combat:
    assert current is not None  # classify gives ADVANCE only for a combatant of the order
    return advance_to(ctx, combat, current)


#: rounds a jump plays one by one: Foundry's round may be set to anything (the schema allows
#: up to 1,000,000), and playing each round would hold the event loop for minutes. Past these,
#: the rounds in between pass at once: the last one played ends, and the round Foundry shows
#: starts (nobody acted in the rounds skipped; docs/protocol.md, "hook")
PLAYED_ROUNDS = 10


def _new_round(ctx: Ctx, combat: Combat, round_: int, current: str | None) -> Combat:
    played = 0
    while combat.round < round_:
        combat = end_round(ctx, combat)
        played += 1
        upcoming = combat.round + 1 if played < PLAYED_ROUNDS else round_
        begin = upcoming < round_ or not null_turn_kept(ctx.ruleset.keeps_null_turn, current)
        combat = start_round(ctx, combat, upcoming, begin=begin)
    return combat


def null_turn_kept(keeps_null_turn: bool, current: str | None) -> bool:
    """Foundry core's ``nextRound`` keeps nobody's turn (``turn: null``) into the new round;
    a ruleset that follows core there (``Ruleset.keeps_null_turn``: ``foundry-core``) starts
    the round Foundry shows with nobody current when Foundry reports nobody current. A
    rule-bearing ruleset begins the first turn that acts, its rules' turn start included
    (docs/rules.md, "A round that begins with nobody's turn")."""
    return current is None and keeps_null_turn


def _back(ctx: Ctx, combat: Combat, round_: int, current: str | None) -> Combat:
    return go_back(combat, round_, current)


def _reset(ctx: Ctx, combat: Combat, round_: int, current: str | None) -> Combat:
    """Foundry set round 0 again: the encounter is back to before its start."""
    combat = replace(combat, round=0, current=None, passed=frozenset())
    return _sort_before_start(ctx, combat, round_, current)


#: (phase, move) -> (the handler that makes the move, the phase it ends in); a pair missing
#: is refused (see the module's docstring)
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


def go_back(combat: Combat, round_: int, current: str | None) -> Combat:
    """The GM moved back: follow the pointer; no rule sees a turn."""
    order = combat.order
    at = order.index(current) if current in order else 0
    return replace(
        combat,
        round=round_,
        current=order[at] if order else None,
        passed=frozenset(order[:at]),
    )


def advance_to(ctx: Ctx, combat: Combat, target: str) -> Combat:
    """End the turn in progress and every turn up to ``target``, then begin ``target``'s."""
    if combat.current is not None:
        combat = end_turn(ctx, combat, combat.current, skipped=False)
    while True:
        upcoming = next_waiting(combat)
        if upcoming is None:
            return replace(combat, current=None)
        if upcoming == target:
            break
        combat = skip_turn(ctx, combat, upcoming)
    if pointer_kept(ctx.ruleset.follows_skip_defeated, combat):
        return begin_turn(ctx, combat, target)
    return begin_next_acting(ctx, combat)


def pointer_kept(follows_skip_defeated: bool, combat: Combat) -> bool:
    """Whether Foundry's pointer, moved forward in the round, is kept where it landed even on
    a turn that does not act: under a ruleset that follows core (``foundry-core``), when the
    snapshot states Skip Defeated. Core's ``nextTurn`` never lands on a defeated combatant
    with the setting on, so a report of one is a pointer written directly (the GM's click on
    its row, a macro's or another module's ``combat.update({turn})``), and core keeps it
    (../shared/research/foundry-api.md §3). Not stated (an older module, an old recording):
    the turn is passed over as before and the module moves the pointer on, so old recordings
    replay unchanged. A rule-bearing ruleset always passes it over (docs/rules.md)."""
    return follows_skip_defeated and combat.skip_defeated is not None


def next_waiting(combat: Combat) -> str | None:
    """The first combatant in the order whose turn has not come this round (the passed ones
    are skipped by ``filterfalse`` at C speed: a turn change late in a round of 200 looks
    past a hundred of them)."""
    waiting = filterfalse(combat.passed.__contains__, combat.order)
    for cid in waiting:
        if cid != combat.current:
            return cid
    return None


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
    combat = replace(combat, current=combatant_id)
    return emit(ctx, combat, TurnStarted(combatant_id))


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
    combat = emit(ctx, replace(combat, current=combatant_id), TurnStarted(combatant_id))
    began = combat
    combat = end_turn(ctx, combat, combatant_id, skipped=True)
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
    """Start ``round_``: the rules' sort, then the first turn that acts begins (the first of
    the order when nobody is left standing under a ruleset that follows core:
    :func:`none_remaining`), unless ``begin`` is false: the round starts with nobody's turn,
    as Foundry core keeps it."""
    combat = replace(combat, round=round_, passed=frozenset(), current=None)
    combat = emit(ctx, combat, RoundStarted(round_))
    combat = replace(combat, order=tuple(rules_sort(combat, ctx.ruleset.sort_key)))
    if not begin:
        return combat
    if none_remaining(ctx.ruleset.follows_skip_defeated, combat):
        return begin_turn(ctx, combat, combat.order[0])
    return begin_next_acting(ctx, combat)
