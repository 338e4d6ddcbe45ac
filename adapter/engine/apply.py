"""The engine's one entry point: ``apply(world, message, rulesets) -> Outcome`` (what it does
in order: docs/engine.md, "Rules and rulesets"). A refusal raises a
:class:`adapter.errors.SidecarError` and leaves the world as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msgspec.structs import replace

from ..errors import NotPermitted, RuleViolation, UnknownCombat, UnknownCombatant
from .adopt import adopt_combat
from .context import Ctx
from .events import Clock, Joined, Left, Rolled, ScoreSet
from .messages import (
    CombatRound,
    CombatStart,
    CombatTurn,
    CombatTurnChange,
    DeleteCombat,
    Hook,
    Intent,
    Roll,
    RollReport,
    SetInitiative,
    UpdateCombat,
)
from .model import Combat, Combatant, Outcome, Session, World
from .order import place_by_rules, place_sorted
from .plan import PlanMemo, plan_from_text, plan_text
from .preview import next_round
from .ruleset import Ruleset
from .snapshot import read_snapshot
from .turns import begin_next_acting, emit, follow


def apply(
    world: World, message: Hook | Intent | Session, rulesets: Mapping[str, Ruleset],
    *, combatants_as_last: bool = False, memo: PlanMemo | None = None,
) -> Outcome:
    """``combatants_as_last``: a hook's ``combat.combatants`` are those of the last hook of
    that combat applied, unchanged: not read again. ``memo``: the world's
    :class:`.plan.PlanMemo` (the same plans without it, built again where they changed)."""
    if isinstance(message, Session):  # a (re)connection: the GMs, the ruleset for new combats, its settings
        return Outcome(world=replace(world, ruleset=message.ruleset, settings=dict(message.settings),
                                     gm_users=message.gm_users))
    if isinstance(message, Hook):
        known = world.combats.get(message.combat["_id"])
    elif message.combat_id is None:
        known = None
    elif (known := world.combats.get(message.combat_id)) is None:
        raise UnknownCombat(f"combat {message.combat_id!r} is not known", field="combat_id")
    rs = rulesets[known.ruleset if known is not None else world.ruleset]
    ctx = Ctx(world, seq=message.seq, user=message.user, world_time=message.world_time, ruleset=rs)
    if isinstance(message, Hook):
        combat = apply_hook(ctx, known, message, combatants_as_last)
    else:
        combat = apply_intent(ctx, known, message)
    combats = dict(world.combats)
    if isinstance(message, DeleteCombat):
        combats.pop(message.combat["_id"], None)
        ctx.close_prompts(message.combat["_id"])
    ours = combat.id if combat is not None else None
    replanned = [combat] if combat is not None else []
    # then the other combats a rule changed (the message's own wins; a deleted one stays deleted)
    replanned += [c for c in ctx.changed.values() if c.id != ours and c.id in combats]
    plans: tuple[Any, ...] = ()
    for one in replanned:
        one, body = replan(ctx, one, memo)
        combats[one.id] = one
        if body is not None:
            plans += ({"combat_id": one.id, "revision": one.revision, **body},)
    new_world = replace(
        world, last_seq=message.seq, combats=combats, prompts=ctx.prompts_after(), ext=ctx.ext
    )
    return Outcome(world=new_world, plans=plans, prompts=tuple(ctx.opened), notices=tuple(ctx.notices))


def plan_of(combat: Combat) -> dict[str, Any]:
    """The combat's last plan as sent (``combat.last_plan`` must be set)."""
    assert combat.last_plan is not None
    return {"combat_id": combat.id, "revision": combat.revision, **plan_from_text(combat.last_plan)}


def replan(ctx: Ctx, combat: Combat, memo: PlanMemo | None = None) -> tuple[Combat, dict[str, Any] | None]:
    """The combat with its plan brought up to date, and the new plan's body (None when the
    plan is the one last sent: no new revision, nothing to send)."""
    rs, memo = ctx.ruleset, memo if memo is not None else PlanMemo()
    cache, upcoming = next_round(ctx, combat) if combat.order else (None, None)
    formula = rs.formula
    body = memo.body(rs, combat, upcoming, (lambda c: formula(ctx, combat, c)) if formula is not None else None)
    text = plan_text(body, memo, combat.id)
    if text == combat.last_plan:
        if cache is combat.preview_cache:
            return combat, None
        return replace(combat, preview_cache=cache), None
    return replace(combat, last_plan=text, revision=combat.revision + 1, preview_cache=cache), body


# ---------------------------------------------------------------- hooks


def apply_hook(ctx: Ctx, known: Combat | None, hook: Hook, combatants_as_last: bool = False) -> Combat | None:
    if isinstance(hook, DeleteCombat):
        return None
    data = hook.combat
    current = hook.current.combatant_id
    if known is None:
        return first_contact(ctx, hook, current)
    combat = emit(ctx, known, Clock(ctx.world_time))
    combat, joined, left = read_snapshot(combat, data, combatants_as_last)
    for cid in left:
        combat = remove_combatant(ctx, combat, cid)
    for cid in joined:
        combat = replace(combat, order=combat.order + (cid,))
        combat = emit(ctx, combat, Joined(cid))
        combat = replace(combat, order=place_by_rules(combat, cid, ctx.ruleset.sort_key))
    if hook.roll is not None:
        combat = apply_roll(ctx, combat, hook.roll)
    return follow(ctx, combat, int(data.get("round") or 0), pointer_moved(hook, combat, current))


#: the hooks of a turn or round change: only these can take Foundry's pointer back
TURN_HOOKS = (CombatStart, CombatRound, CombatTurn, CombatTurnChange, UpdateCombat)


def pointer_moved(hook: Hook, combat: Combat, current: str | None) -> str | None:
    """Foundry's pointer as a move to follow: only a turn change goes back to a combatant
    whose turn has passed this round (docs/engine.md, "Turns"); in a higher round nobody has
    passed yet, so the pointer is kept."""
    if isinstance(hook, TURN_HOOKS) or current not in combat.passed:
        return current
    return current if int(hook.combat.get("round") or 0) > combat.round else None


def first_contact(ctx: Ctx, hook: Hook, current: str | None) -> Combat:
    """A combat never seen: taken as Foundry holds it (:mod:`.adopt`), then its roll is given
    to the rules as usual."""
    combat = Combat(id=hook.combat["_id"], ruleset=ctx.world.ruleset)
    combat = emit(ctx, combat, Clock(ctx.world_time))
    combat, _, _ = read_snapshot(combat, hook.combat)
    if hook.roll is None:
        return adopt_combat(ctx, combat, hook.combat, current)
    rolling = frozenset(c.id for c in rollers(ctx, combat, hook.roll))
    return apply_roll(ctx, adopt_combat(ctx, combat, hook.combat, current, rolling), hook.roll)


def remove_combatant(ctx: Ctx, combat: Combat, cid: str) -> Combat:
    was_current = combat.current == cid
    combat = replace(
        combat,
        order=tuple(c for c in combat.order if c != cid),
        passed=combat.passed - {cid},
        current=None if was_current else combat.current,
    )
    ctx.close_prompts(combat.id, cid)
    combat = emit(ctx, combat, Left(cid))
    if was_current:
        combat = begin_next_acting(ctx, combat)
    return combat


def apply_roll(ctx: Ctx, combat: Combat, report: RollReport) -> Combat:
    """Give the roll to the rules, then re-place whoever's score changed."""
    rolled = rollers(ctx, combat, report)
    if report.reroll_of is None and behind_adopted_values(rolled, report.roll):
        return combat
    before = {cid: c.score for cid, c in combat.combatants.items()}
    event = Rolled(report.combatant_id, report.roll, report.reroll_of, report.group_id)
    combat = emit(ctx, combat, event)
    for cid, c in combat.combatants.items():
        if before.get(cid) != c.score:
            combat = reposition(ctx, combat, cid)
    return combat


def rollers(ctx: Ctx, combat: Combat, report: RollReport) -> list[Combatant]:
    """Who rolls (a combatant, or every member of a group), refused unless the user owns
    them all or is a GM."""
    target = report.combatant_id
    group = report.group_id
    if group is None:  # the schema then requires a combatant_id
        rolled = [ctx.combatant(combat, str(target), ("roll", "combatant_id"))]
    elif group in combat.groups:
        rolled = combat.members(group)
    else:
        raise UnknownCombatant(f"group {group!r} is not in combat {combat.id!r}", field=("roll", "group_id"))
    if not ctx.is_gm() and not all(ctx.user in c.owners for c in rolled):
        raise NotPermitted(
            f"user {ctx.user!r} may not roll initiative for {group or target}: only its owners or a GM may",
            field=("roll", "group_id" if group else "combatant_id"),
        )
    return rolled


def behind_adopted_values(rollers: list[Combatant], roll: Roll) -> bool:
    """The roll behind the value every roller was adopted with, unmoved since (a module
    resending its last rolls after the sidecar lost its history): it changes nothing
    (docs/protocol.md, first contact)."""
    total = float(roll.total)
    return bool(rollers) and all(
        c.adopted is not None and c.adopted[0] == c.score and total in c.adopted for c in rollers
    )


def reposition(ctx: Ctx, combat: Combat, cid: str) -> Combat:
    """Put a combatant whose score changed where the ruleset says late scores go."""
    rs = ctx.ruleset
    if rs.late_scores == "sorted":
        order, passed = place_sorted(combat, cid, rs.sort_key)
        return replace(combat, order=order, passed=passed)
    return replace(combat, order=place_by_rules(combat, cid, rs.sort_key))


# ---------------------------------------------------------------- intents


def apply_intent(ctx: Ctx, combat: Combat | None, intent: Intent) -> Combat | None:
    rs = ctx.ruleset
    if combat is not None:
        combat = emit(ctx, combat, Clock(ctx.world_time))
    if isinstance(intent, SetInitiative):  # the GM's number becomes the combatant's score
        assert combat is not None  # its combat_id is required (a str)
        ctx.require_gm("set an initiative by hand")
        c = ctx.combatant(combat, intent.combatant_id)
        combatants = {**combat.combatants, c.id: replace(c, score=intent.value)}
        combat = reposition(ctx, replace(combat, combatants=combatants), c.id)
        return emit(ctx, combat, ScoreSet(c.id, intent.value))
    rule = rs.intents.get(type(intent))
    if rule is None:
        raise RuleViolation(
            f"intent {intent.kind!r} is not part of the {rs.id} ruleset", field="kind", rule=rs.id
        )
    result = rule(ctx, combat, intent)
    return combat if result is None else result

