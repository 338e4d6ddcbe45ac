"""The next round's preview (the plan's ``next_round``), computed again only when it can differ.

The rest of this round is played on a copy in preview mode and the next round started; a
message whose combat is where the last preview started, or one turn further along the path
it played (its trail), reuses the view. Why that cannot go stale, how it is proved
(tests/engine/test_preview.py) and what it saves: docs/engine.md, "The next round's preview".
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any, NamedTuple

from .context import Ctx, Rules
from .events import CombatStarted
from .model import Combat
from .plan import next_round_view
from .turns import Trail, emit, end_round, end_turn, start_round

#: the fields of a combat the preview reads, but the pointer (``current``, ``passed``: see
#: ``_passed``) and its own cache
_STATE = tuple(
    name for name in Combat.__struct_fields__
    if name not in ("revision", "last_plan", "current", "passed", "preview_cache")
)
_state: Callable[[Combat], tuple[Any, ...]] = attrgetter(*_STATE)


class Cache(NamedTuple):
    """A preview and what it was computed from (docs/engine.md)."""

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


def _compute(ctx: Ctx, combat: Combat) -> Cache:
    ext = dict(ctx.ext)
    trail: Trail = []
    turns_kept_ext = False
    saved = ctx.begin_preview()
    try:
        if not combat.started:  # round 1 as the combat's start would begin it
            upcoming = start_round(ctx, emit(ctx, combat, CombatStarted()), 1)
        else:
            ended = end_round(ctx, combat, trail)
            turns_kept_ext = ctx.ext == ext
            upcoming = start_round(ctx, ended, ended.round + 1)
    finally:
        ctx.end_preview(saved)
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
    if (not untouched or ended.current is not None or _state(ended) != ended_state
            or ended.passed != combat.passed | {current}):
        return None
    return cache._replace(state=state, current=current, passed=combat.passed, turns=turns[at + 1:],
                          states=states if len(states) == 1 else states[2 * at + 2:])
