"""BI-3 Ready to strike, declared outside combat and applied when a combat starts (or when
its actor joins one under way): ready 6 s of world time after ``ready.start`` or at a GM's
``ready.confirm``, ended by ``ready.break``; the rulings are in docs/rules.md, BI-3.
"""

from __future__ import annotations

from msgspec.structs import replace

from ...engine.context import Ctx
from ...engine.events import Clock, CombatStarted, Joined
from ...engine.messages import ReadyBreak, ReadyConfirm, ReadyStart
from ...engine.model import Combat, Combatant
from ...errors import NotPermitted, RuleViolation
from .state import RULESET_ID, Watch, WorldState, fighter, update_fighter, world_state

WATCH_SECONDS = 6.0  # BI-3: "at least 6 seconds (1 round)"


def ready_to_strike_on_clock(ctx: Ctx, combat: Combat, event: Clock) -> Combat:
    """BI-3: a message's world time 6 s past a declaration makes it ready; a combat not yet
    begun shows its watchers' declarations."""
    _tick(ctx, combat)
    return _show_declarations(ctx, combat)


def ready_to_strike_on_combat_start(ctx: Ctx, combat: Combat, event: CombatStarted) -> Combat:
    """BI-3: watch for 6 s, unseen, weapon ready: not surprised, reaction before turn one."""
    _tick(ctx, combat)
    return _apply_declarations(ctx, combat, tuple(combat.combatants))


def ready_to_strike_on_join(ctx: Ctx, combat: Combat, event: Joined) -> Combat:
    """BI-3: an actor with a declaration joins: before the start the declaration shows on
    it; in a combat already under way it applies now and is used up, as at a start."""
    if not combat.started:
        return _show_declarations(ctx, combat, (event.combatant_id,))
    return _apply_declarations(ctx, combat, (event.combatant_id,))


def ready_to_strike_on_adopt(ctx: Ctx, combat: Combat, combatant_id: str) -> Combat:
    """BI-3 at first contact with a combat not yet begun: a declaration shows on its actor
    (a started one applies them all when it is adopted, as at a start)."""
    return _show_declarations(ctx, combat, (combatant_id,))


def _tick(ctx: Ctx, combat: Combat | None = None) -> None:
    """A message's world time 6 s past a declaration makes it ready, for good, shown in the
    combats not yet begun but ``combat``, the message's own."""
    state = world_state(ctx)
    late = {
        actor: replace(w, elapsed=True) for actor, w in state.watches.items()
        if not w.elapsed and ctx.world_time - w.started_at >= WATCH_SECONDS
    }
    if late:
        ctx.ext[RULESET_ID] = WorldState(watches={**state.watches, **late})
        _show_elsewhere(ctx, set(late), combat)


def _show_elsewhere(ctx: Ctx, actors: set[str], combat: Combat | None) -> None:
    """The declarations of ``actors`` shown on them in every combat of this ruleset not yet
    begun, but the message's own (its rules show them there)."""
    for cid in list(ctx.world.combats):
        other = ctx.combat_now(cid)
        if (other is None or other.started or other.ruleset != ctx.ruleset.id
                or (combat is not None and other.id == combat.id)):
            continue
        ids = tuple(c.id for c in other.combatants.values() if c.actor_id in actors)
        if ids:
            shown = _show_declarations(ctx, other, ids, clear=True)
            if shown is not other:
                ctx.change_combat(shown)


def _show_declarations(ctx: Ctx, combat: Combat, ids: tuple[str, ...] | None = None,
                       clear: bool = False) -> Combat:
    """BI-3 before the start: each watcher among ``ids`` (default: all) is ``ready_to_strike``
    while its declaration is ready; ``clear``: one whose declaration is gone no longer is."""
    if combat.started:
        return combat
    state = world_state(ctx)
    if not state.watches and not clear:
        return combat
    for cid in ids if ids is not None else tuple(combat.combatants):
        c = combat.combatants[cid]
        watch = _watch_of(state, c)
        if watch is not None or clear:
            combat = _marked(combat, c, watch)
    return combat


def ready_to_strike_start(ctx: Ctx, combat: Combat | None, intent: ReadyStart) -> Combat | None:
    """BI-3 ``ready.start``: an actor starts watching, outside combat."""
    _tick(ctx)
    actor = intent.actor_id
    owners = intent.owners
    if not ctx.is_gm() and ctx.user not in owners:
        raise NotPermitted(f"user {ctx.user!r} does not own actor {actor!r}")
    if _in_started_combat(ctx, combat, actor):
        raise RuleViolation("Ready to strike is declared outside combat", rule="BI-3",
                            field="actor_id")
    for met, field, needs in (
        (bool(intent.watching), "watching", "watches some creatures"),
        (intent.sees, "sees", "needs to see the watched creatures"),
        (intent.weapon_ready, "weapon_ready", "needs a weapon ready to attack"),
    ):
        if not met:
            raise RuleViolation(f"Ready to strike {needs}", rule="BI-3", field=field)
    watch = Watch(actor_id=actor, token_id=intent.token_id, owners=owners,
                  watching=intent.watching, started_at=ctx.world_time)
    ready_at = ctx.world_time + WATCH_SECONDS
    return _declared(ctx, combat, {**world_state(ctx).watches, actor: watch}, actor,
                     f"actor {actor} watches; ready at world time {ready_at:g} or when a GM confirms",
                     state="watching", ready_at=ready_at)


def _declared(ctx: Ctx, combat: Combat | None, watches: dict[str, Watch], actor: str, text: str,
              **data: object) -> Combat | None:
    """The declarations become ``watches``, shown in every combat not yet begun (the
    message's own, if it names one, returned), with a ``ready_to_strike`` notice."""
    ctx.ext[RULESET_ID] = WorldState(watches=watches)  # replaced, never mutated
    _show_elsewhere(ctx, {actor}, combat)
    ctx.notice("ready_to_strike", text, actor_id=actor, **data)
    return _show_declarations(ctx, combat, clear=True) if combat is not None else None


def _in_started_combat(ctx: Ctx, combat: Combat | None, actor: str) -> bool:
    combats = list(ctx.world.combats.values()) + ([combat] if combat is not None else [])
    return any(
        c.actor_id == actor for cb in combats if cb.started for c in cb.combatants.values()
    )


def ready_to_strike_break(ctx: Ctx, combat: Combat | None, intent: ReadyBreak) -> Combat | None:
    """BI-3 ``ready.break``: any other activity breaks Ready to strike."""
    _tick(ctx)
    actor = intent.actor_id
    state = world_state(ctx)
    watch = state.watches.get(actor)
    if watch is None:
        return None  # nothing to break: the module may report any activity
    if not ctx.is_gm() and ctx.user not in watch.owners:
        raise NotPermitted(f"user {ctx.user!r} does not own actor {actor!r}")
    return _declared(ctx, combat, {a: w for a, w in state.watches.items() if a != actor}, actor,
                     f"actor {actor} is no longer Ready to strike", state="broken", reason=intent.reason)


def ready_to_strike_confirm(ctx: Ctx, combat: Combat | None, intent: ReadyConfirm) -> Combat | None:
    """BI-3 ``ready.confirm``: a GM confirms the 6 seconds of watching have passed."""
    _tick(ctx)
    ctx.require_gm("confirm that 6 seconds of watching have passed")
    actor = intent.actor_id
    state = world_state(ctx)
    watch = state.watches.get(actor)
    if watch is None and _in_started_combat(ctx, combat, actor):
        raise RuleViolation(
            f"actor {actor!r} is fighting: a Ready to strike declared before is used up when "
            "its combat starts or when it joins a combat under way (BI-3 is declared and "
            "confirmed outside combat)", rule="BI-3", field="actor_id")
    if watch is None:
        raise RuleViolation(f"actor {actor!r} has not declared Ready to strike (or broke it)",
                            rule="BI-3", field="actor_id")
    return _declared(ctx, combat, {**state.watches, actor: replace(watch, confirmed=True)}, actor,
                     f"actor {actor} is Ready to strike", state="ready")


def _apply_declarations(ctx: Ctx, combat: Combat, ids: tuple[str, ...]) -> Combat:
    """The declarations of the actors of ``ids`` are used up (and no longer shown elsewhere);
    the ready ones apply."""
    state = world_state(ctx)
    used: set[str] = set()
    for cid in ids:
        c = combat.combatants[cid]
        watch = _watch_of(state, c)
        if watch is not None:
            used.add(watch.actor_id)
        if watch is not None or fighter(c).ready_to_strike:  # else: shown before the start, gone since
            combat = _marked(combat, c, watch)
    if used:
        ctx.ext[RULESET_ID] = WorldState(
            watches={a: w for a, w in state.watches.items() if a not in used})
        _show_elsewhere(ctx, used, combat)
    return combat


def _marked(combat: Combat, c: Combatant, watch: Watch | None) -> Combat:
    """``ready_to_strike`` while its declaration (``watch``, None: none) is ready, with the
    watched creatures among the combatants (``surprise_immune`` against those)."""
    if watch is None or not watch.ready:
        return update_fighter(combat, c.id, ready_to_strike=False, watched=())
    watched = tuple(o.id for o in combat.combatants.values()
                    if o.id != c.id and o.token_id is not None and o.token_id in watch.watching)
    return update_fighter(combat, c.id, ready_to_strike=True, watched=watched)


def _watch_of(state: WorldState, c: Combatant) -> Watch | None:
    """The declaration of the combatant's actor, if made for its token (or either's is unknown)."""
    watch = state.watches.get(c.actor_id or "")
    if watch is not None and None not in (watch.token_id, c.token_id) and watch.token_id != c.token_id:
        return None
    return watch
