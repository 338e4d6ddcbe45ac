"""The next round's preview (the plan's ``next_round``), computed again only when it can differ.

What it is: the combat as the next round would start, as far as known now. The rest of this
round is played on a copy (the turn in progress ends, every turn still to come begins and
ends ``skipped``), the round ends, the next one starts (``RoundStarted``, the rules' sort,
the first combatant who acts begins); for a combat not started, round 1 as the start would
begin it. Rules run in preview mode (:meth:`.Ctx.previewing`: no prompt or notice goes out,
the context is given back as it was). Nothing of it is kept but the ``next_round`` view.

Why it is cached, and why the cache cannot go stale. Playing the rest of a round through
every rule on every message was about half of the engine's CPU per hook, and most messages
of a round only move Foundry's pointer one turn on: a move the preview has already played.
From a combat ``S`` whose turn in progress is ``c``, the preview ran::

    TurnEnded(c)  TurnStarted(x1) TurnEnded(x1, skipped)  TurnStarted(x2) ...  RoundEnded ...

and Foundry's "next turn" to ``x1`` makes the engine run ``TurnEnded(c) TurnStarted(x1)``:
the combat it reaches is the one the preview passed through after ``TurnStarted(x1)``
(``M(x1)``), and the preview from there is the same but for one event, ``x1``'s turn ending
not skipped. So :class:`Cache` keeps, with the ``next_round`` view it gave:

- the state the preview started from (every field of :class:`.Combat` but ``revision`` and
  ``last_plan``), and what it may read outside the combat: the ruleset, the world's
  settings, GMs and ruleset state (``ctx.ext``), and, before the start, the world time
  (``CombatStarted`` reads it);
- the trail: for each turn ``x`` the preview played, ``M(x)`` and the state after
  ``TurnEnded(x, skipped=True)`` (``N(x)``), as tuples of the field values but the pointer
  (``current`` and ``passed`` follow from the order of the trail, checked as it is kept),
  shared with the objects the rules made: a turn no rule changed costs a pointer.

A message then reuses the view when its combat equals the start (nothing the preview reads
changed: an intent kept for later, a hook repeating the document), or equals ``M(x)`` for
its current combatant ``x`` and ``x``'s turn ending *not* skipped (one event, run here)
gives ``N(x)``: the preview from there would replay the rest of the trail, so the view
stands, and the rest of the trail stays for the next message. Anything else (a roll, a
join, a defeat, a hold, a dash, a GM going back, a new round) computes it afresh, once.
Equal inputs give equal previews because a rule is a function of the combat, the event
and the inputs above: what a turn or round event does to a combat must not depend on who
sent the message, its ``seq``, (but for ``CombatStarted``) its world time, other combats or
the prompts pending (no rule's does: they read them only for intents and rolls). Proved,
not assumed: tests/engine/test_preview.py compares every view reused with one computed
afresh (:func:`_compute`, called by the test itself) over random fights under every ruleset
and every golden recording; the engine itself computes nothing twice.

Values are compared with ``==``: two that are equal but print differently (``0.0`` and
``-0.0``) count as the same; the wire never brings ``-0.0`` (``JSON.stringify(-0)`` is
``"0"``) and no rule makes one.

Cost, measured on the bench's recording (8 combatants, one turn per hook; ``apply`` only,
CPU time on a shared 2-core machine, best of 5): the engine per hook went from about 150
to 110-120 us under ``foundry-core``, 290 to 180 under ``balanced-d20``, 160 to 115 under
``storyteller``; every ruleset computes the preview once per round on a plain fight. py-spy: the preview was about 41% of the engine's samples (the round
played on a copy, then the next round's plan entries); now a round's first message
computes it (about 16% of the samples, one message in eight) and the others reuse it
(about 9%: one ``TurnEnded`` and tuple comparisons). Memory: about 0.6 KiB more per
20-combatant combat (the trail shares one state tuple while no rule changes anything).
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, NamedTuple

from .context import Ctx, Rules
from .events import CombatStarted
from .model import Combat
from .plan import next_round_view
from .turns import Trail, emit, end_round, end_turn, start_round

#: the fields of a combat the preview reads, but the pointer (``current``, ``passed``): the
#: trail's states differ from each other there in a way known in advance (see ``_passed``);
#: not its own cache
_STATE = tuple(
    name for name in Combat.__struct_fields__
    if name not in ("revision", "last_plan", "current", "passed", "preview_cache")
)


_STATE_OF = attrgetter(*_STATE)


def _state(combat: Combat) -> tuple[Any, ...]:
    state: tuple[Any, ...] = _STATE_OF(combat)
    return state


class Cache(NamedTuple):
    """A preview and what it was computed from (see the module's docstring)."""

    ruleset: Rules
    settings: Any
    gm_users: frozenset[str]
    ext: dict[str, Any]
    #: the world time, for a combat not started (None once started: not read)
    time: float | None
    state: tuple[Any, ...]
    current: str | None
    passed: frozenset[str]
    #: the trail: the turns the preview played after the one in progress, in order...
    turns: tuple[str, ...]
    #: ...and for each, the state once it began and once it ended (``2 * i``, ``2 * i + 1``),
    #: or one state for them all when no rule changed anything (a pointer, not n copies)
    states: tuple[tuple[Any, ...], ...]
    view: dict[str, Any]


def next_round(ctx: Ctx, combat: Combat) -> tuple[Cache, dict[str, Any]]:
    """The ``next_round`` view of ``combat``'s plan, and the cache to keep on the combat
    (``Combat.preview_cache``: the next message finds it on the combat this one leaves)."""
    known = ctx.world.combats.get(combat.id)
    cache: Cache | None = known.preview_cache if known is not None else None
    kept = _reuse(ctx, combat, cache) if cache is not None else None
    if kept is None:
        kept = _compute(ctx, combat)
    return kept, kept.view


# ---------------------------------------------------------------- computing it


def _compute(ctx: Ctx, combat: Combat) -> Cache:
    ext = dict(ctx.ext)
    trail: Trail = []
    turns_kept_ext = False
    with ctx.previewing():
        if not combat.started:  # round 1 as the combat's start would begin it
            upcoming = start_round(ctx, emit(ctx, combat, CombatStarted()), 1)
        else:
            ended = end_round(ctx, combat, trail)
            turns_kept_ext = ctx.ext == ext
            upcoming = start_round(ctx, ended, ended.round + 1)
    world = ctx.world
    turns, states = _steps(combat, trail) if turns_kept_ext else ((), ())
    return Cache(
        ctx.ruleset, world.settings, world.gm_users, ext, None if combat.started else ctx.world_time,
        _state(combat), combat.current, combat.passed, turns, states,
        next_round_view(ctx.ruleset.describe, upcoming),
    )


def _steps(combat: Combat, trail: Trail) -> tuple[tuple[str, ...], tuple[tuple[Any, ...], ...]]:
    """The trail as kept (``Cache.turns``, ``Cache.states``): up to the first turn whose
    pointer is not where the engine puts it (a rule that moved ``current`` or ``passed`` in a
    turn event: not reusable from there)."""
    turns: list[str] = []
    states: list[tuple[Any, ...]] = []
    before = _passed(combat.current, combat.passed, ())
    for cid, began, ended in trail:
        if began.current != cid or began.passed != before:
            break
        before = before | {cid}
        if ended.current is not None or ended.passed != before:
            break
        turns.append(cid)
        for state in (_state(began), _state(ended)):
            states.append(states[-1] if states and state == states[-1] else state)
    if states and all(state is states[0] for state in states):
        return tuple(turns), (states[0],)
    return tuple(turns), tuple(states)


def _passed(current: str | None, passed: frozenset[str], played: tuple[str, ...]) -> frozenset[str]:
    """Who has passed once the preview from a combat at ``current`` with ``passed`` has
    ended that turn and the ``played`` ones, and begun the next."""
    return passed.union(played, (current,)) if current is not None else passed.union(played)


# ---------------------------------------------------------------- reusing it


def _reuse(ctx: Ctx, combat: Combat, cache: Cache) -> Cache | None:
    """The cache, brought to ``combat``, if its view is the preview of ``combat``; else None."""
    world = ctx.world
    if (
        cache.ruleset is not ctx.ruleset
        or cache.ext != ctx.ext
        or cache.gm_users != world.gm_users
        or cache.settings != world.settings
        or cache.time != (None if combat.started else ctx.world_time)
    ):
        return None
    state = _state(combat)
    current = combat.current
    if current == cache.current and combat.passed == cache.passed and state == cache.state:
        return cache
    if current is None or not combat.started:
        return None
    turns = cache.turns
    if current not in turns:
        return None
    at = turns.index(current)
    states = cache.states
    began, ended_state = (states[0], states[0]) if len(states) == 1 else states[2 * at:2 * at + 2]
    if state != began or combat.passed != _passed(cache.current, cache.passed, turns[:at]):
        return None
    saved = ctx.begin_preview()
    try:
        ended = end_turn(ctx, combat, current, skipped=False)
        untouched = ctx.ext == cache.ext
    finally:
        ctx.end_preview(saved)
    if not untouched or ended.current is not None or _state(ended) != ended_state:
        return None
    if ended.passed != combat.passed | {current}:
        return None
    return Cache(
        cache.ruleset, cache.settings, cache.gm_users, cache.ext, cache.time, state, current,
        combat.passed, turns[at + 1:], states if len(states) == 1 else states[2 * at + 2:],
        cache.view,
    )
