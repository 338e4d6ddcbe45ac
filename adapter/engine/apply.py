"""The engine's one entry point: ``apply(world, message, rulesets) -> Outcome``.

``rulesets`` maps ruleset ids to the :class:`Ruleset` objects a combat or world may name
(the pipeline passes :data:`adapter.rulesets.RULESETS`); without it, those given to
:func:`.ruleset.register`.

A hook brings its combat with it: the snapshot is read (who joined, who left), an
``initiativeRoll`` is given to the rules, and the turn bookkeeping follows Foundry's round
and pointer. An intent is routed to the rule its kind names. Then the plan of the combat
is rebuilt; if it differs from the last one its revision grows by one and it goes out.

A refused message raises a :class:`adapter.errors.SidecarError` and the world it was
applied to is unchanged (everything here builds new objects).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..errors import InvalidMessage, NotPermitted, RuleViolation, UnknownCombat, UnknownCombatant
from .adopt import adopt_combat
from .context import Ctx
from .dice import roll_total
from .events import Clock, Declared, Joined, Left, Rolled, ScoreSet
from .model import Combat, Combatant, Hook, Intent, Outcome, Session, World, evolve
from .order import place_by_rules, place_sorted
from .plan import plan_body
from .preview import next_round
from .ruleset import Ruleset, registered
from .snapshot import read_snapshot
from .turns import begin_next_acting, emit, follow


def apply(
    world: World, message: Hook | Intent | Session, rulesets: Mapping[str, Ruleset] | None = None
) -> Outcome:
    if isinstance(message, Session):
        return Outcome(world=open_session(world, message))
    ctx = Ctx(
        world, seq=message.seq, user=message.user, world_time=message.world_time,
        rulesets=registered() if rulesets is None else rulesets,
    )
    if isinstance(message, Hook):
        combat = apply_hook(ctx, message)
    else:
        combat = apply_intent(ctx, message)
    combats = dict(world.combats)
    plans: tuple[Any, ...] = ()
    if isinstance(message, Hook) and message.hook == "deleteCombat":
        combats.pop(message.combat["_id"], None)
        ctx.close_prompts(message.combat["_id"])
    elif combat is not None:
        combat, changed = replan(ctx, combat)
        combats[combat.id] = combat
        if changed:
            plans = (plan_of(combat),)
    new_world = evolve(
        world, last_seq=message.seq, combats=combats, prompts=ctx.prompts_after(), ext=ctx.ext
    )
    return Outcome(world=new_world, plans=plans, prompts=tuple(ctx.opened), notices=tuple(ctx.notices))


def open_session(world: World, session: Session) -> World:
    """A (re)connection: the GMs, the ruleset for new combats and the settings it brings."""
    return replace(
        world,
        ruleset=session.ruleset,
        settings=dict(session.settings),
        gm_users=session.gm_users,
    )


def plan_of(combat: Combat) -> dict[str, Any]:
    return {"combat_id": combat.id, "revision": combat.revision, **combat.last_plan}


def replan(ctx: Ctx, combat: Combat) -> tuple[Combat, bool]:
    rs = ctx.ruleset(combat.ruleset)
    cache, upcoming = next_round(ctx, rs, combat) if combat.order else (None, None)
    formula = rs.formula
    body = plan_body(
        rs, combat, upcoming, (lambda c: formula(ctx, combat, c)) if formula is not None else None
    )
    del body["combat_id"]
    if body == combat.last_plan:
        if cache is combat.preview_cache:
            return combat, False
        return evolve(combat, preview_cache=cache), False
    return evolve(combat, last_plan=body, revision=combat.revision + 1, preview_cache=cache), True


# ---------------------------------------------------------------- hooks


def apply_hook(ctx: Ctx, hook: Hook) -> Combat | None:
    data = hook.combat
    known = ctx.world.combats.get(data["_id"])
    if hook.hook == "deleteCombat":
        return None
    current = (hook.current or {}).get("combatantId")
    if known is None:
        return first_contact(ctx, hook, current)
    combat = known
    rs = ctx.ruleset(combat.ruleset)
    combat = emit(ctx, rs, combat, Clock(ctx.world_time))
    combat, joined, left = read_snapshot(combat, data)
    for cid in left:
        combat = remove_combatant(ctx, rs, combat, cid)
    for cid in joined:
        combat = evolve(combat, order=combat.order + (cid,))
        combat = emit(ctx, rs, combat, Joined(cid))
        combat = evolve(combat, order=place_by_rules(combat, cid, rs.sort_key))
    if hook.roll is not None:
        combat = apply_roll(ctx, rs, combat, hook.roll)
    return follow(ctx, rs, combat, int(data.get("round") or 0), current)


def first_contact(ctx: Ctx, hook: Hook, current: str | None) -> Combat:
    """A combat the sidecar has never seen: Foundry's document as it stands is the truth
    (:mod:`.adopt`); a roll the message brings is then given to the rules as usual."""
    combat = Combat(id=hook.combat["_id"], ruleset=ctx.world.ruleset)
    rs = ctx.ruleset(combat.ruleset)
    combat = emit(ctx, rs, combat, Clock(ctx.world_time))
    combat, _, _ = read_snapshot(combat, hook.combat)
    combat = adopt_combat(ctx, rs, combat, hook.combat, current, rolling_now(combat, hook.roll))
    if hook.roll is not None:
        combat = apply_roll(ctx, rs, combat, hook.roll)
    return combat


def rolling_now(combat: Combat, roll: Any) -> frozenset[str]:
    """Who rolls in this message (a combatant, or every member of a group)."""
    if roll is None:
        return frozenset()
    group = roll.get("group_id")
    if group is not None:
        return frozenset(c.id for c in combat.combatants.values() if c.group == group)
    return frozenset({str(roll.get("combatant_id"))})


def remove_combatant(ctx: Ctx, rs: Ruleset, combat: Combat, cid: str) -> Combat:
    was_current = combat.current == cid
    combat = evolve(
        combat,
        order=tuple(c for c in combat.order if c != cid),
        passed=combat.passed - {cid},
        current=None if was_current else combat.current,
    )
    ctx.close_prompts(combat.id, cid)
    combat = emit(ctx, rs, combat, Left(cid))
    if was_current:
        combat = begin_next_acting(ctx, rs, combat)
    return combat


def apply_roll(ctx: Ctx, rs: Ruleset, combat: Combat, roll: Any) -> Combat:
    target = roll.get("combatant_id")
    group = roll.get("group_id")
    if group is not None:
        if group not in combat.groups:
            raise UnknownCombatant(f"group {group!r} is not in combat {combat.id!r}", path="/roll/group_id")
    elif target not in combat.combatants:
        raise UnknownCombatant(
            f"combatant {target!r} is not in combat {combat.id!r}", path="/roll/combatant_id"
        )
    rollers = [c for c in combat.combatants.values() if c.group == group] if group else [combat.combatants[target]]
    if not ctx.is_gm() and not all(ctx.user in c.owners for c in rollers):
        raise NotPermitted(
            f"user {ctx.user!r} may not roll initiative for {group or target}: only its owners or a GM may",
            path="/roll/group_id" if group else "/roll/combatant_id",
        )
    if roll.get("reroll_of") is None and behind_adopted_values(rollers, roll["roll"]):
        return combat
    event = Rolled(
        combatant_id=target, roll=roll["roll"], reroll_of=roll.get("reroll_of"), group_id=group
    )
    return rescore(ctx, rs, combat, event)


def behind_adopted_values(rollers: list[Combatant], roll: Any) -> bool:
    """The roll whose total is the value every roller was adopted with at first contact,
    unmoved since: the roll behind that value (a module resending its last rolls after the
    sidecar lost its history), not a new one. It changes nothing, as the sidecar never saw
    it made (docs/protocol.md, first contact)."""
    total = roll_total(roll)
    return bool(rollers) and all(
        c.adopted is not None and c.adopted[0] == c.score and total in c.adopted for c in rollers
    )


def rescore(ctx: Ctx, rs: Ruleset, combat: Combat, event: Rolled | ScoreSet) -> Combat:
    """Give a score change to the rules, then re-place whoever's score changed."""
    before = {cid: c.score for cid, c in combat.combatants.items()}
    combat = emit(ctx, rs, combat, event)
    for cid, c in combat.combatants.items():
        if before.get(cid) != c.score:
            combat = reposition(rs, combat, cid)
    return combat


def reposition(rs: Ruleset, combat: Combat, cid: str) -> Combat:
    """Put a combatant whose score changed where the ruleset says late scores go."""
    if rs.late_scores == "sorted":
        order, passed = place_sorted(combat, cid, rs.sort_key)
        return evolve(combat, order=order, passed=passed)
    return evolve(combat, order=place_by_rules(combat, cid, rs.sort_key))


# ---------------------------------------------------------------- intents


def apply_intent(ctx: Ctx, intent: Intent) -> Combat | None:
    combat: Combat | None = None
    if intent.combat_id is not None:
        combat = ctx.world.combats.get(intent.combat_id)
        if combat is None:
            raise UnknownCombat(f"combat {intent.combat_id!r} is not known", path="/combat_id")
        rs = ctx.ruleset(combat.ruleset)
        combat = emit(ctx, rs, combat, Clock(ctx.world_time))
    else:
        rs = ctx.ruleset(ctx.world.ruleset)
    if intent.kind == "initiative.set":
        if combat is None:
            raise InvalidMessage("initiative.set needs combat_id", path="")
        ctx.require_gm("set an initiative by hand")
        ctx.combatant(combat, intent.combatant_id)
        assert intent.combatant_id is not None
        return set_score(ctx, rs, combat, intent.combatant_id, float(intent.args["value"]))
    result = emit_declared(ctx, rs, combat, Declared(intent.kind, intent.combatant_id, intent.args))
    return result


def emit_declared(ctx: Ctx, rs: Ruleset, combat: Combat | None, event: Declared) -> Combat | None:
    rule = rs.intents.get(event.kind)
    if rule is None:
        raise RuleViolation(
            f"intent {event.kind!r} is not part of the {rs.id} ruleset", path="/kind", rule=rs.id
        )
    result = rule(ctx, combat, event)
    return combat if result is None else result


def set_score(ctx: Ctx, rs: Ruleset, combat: Combat, cid: str, value: float) -> Combat:
    """``initiative.set``: the GM's number becomes the combatant's score."""
    scored = combat.combatants[cid]
    combatants = {**combat.combatants, cid: replace(scored, score=value)}
    combat = evolve(combat, combatants=combatants)
    return emit(ctx, rs, reposition(rs, combat, cid), ScoreSet(cid, value))
