"""The engine's one entry point: ``apply(world, message, rulesets) -> Outcome``.

``message`` is one of the typed classes of :mod:`.messages` (the pipeline decodes the wire
into them); ``rulesets`` maps ruleset ids to the :class:`Ruleset` objects a combat or world
may name (the pipeline passes those it was handed: :data:`adapter.pipeline.Rulesets`). The ruleset is looked up
once per message (the combat's, else the world's) and travels in the :class:`Ctx` alone
(``ctx.ruleset``): a function that has the context takes no ruleset beside it, and one that
reads a single declaration of it without a context takes that declaration (``sort_key``,
``follows_skip_defeated``...), never the ruleset a second time.

A hook brings its combat with it: the snapshot is read (who joined, who left), its roll is
given to the rules, and the turn bookkeeping follows Foundry's round and pointer. An intent
goes to the rule its class is listed under (``Ruleset.intents``). Then the plan of the
combat is rebuilt; if it differs from the last one its revision grows by one and it goes out.

A refused message raises a :class:`adapter.errors.SidecarError` (naming the message's field
it is about; the pipeline makes that a JSON pointer) and the world it was applied to is
unchanged (everything here builds new objects).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msgspec.structs import replace

from ..errors import NotPermitted, RuleViolation, UnknownCombat, UnknownCombatant
from .adopt import adopt_combat
from .context import Ctx
from .dice import roll_total
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
from .plan import PlanMemo, plan_body, plan_from_text, plan_text
from .preview import next_round
from .ruleset import Ruleset
from .snapshot import read_snapshot
from .turns import begin_next_acting, emit, follow


def apply(
    world: World, message: Hook | Intent | Session, rulesets: Mapping[str, Ruleset],
    *, combatants_as_last: bool = False, memo: PlanMemo | None = None,
) -> Outcome:
    """``combatants_as_last``: a hook's ``combat.combatants`` are those of the last hook of
    that combat applied, unchanged (the pipeline knows it from their text): not read again
    (:func:`.snapshot.read_snapshot`). ``memo``: the world's :class:`.plan.PlanMemo` (the
    plans are built again only where they changed; the same plans without it)."""
    if isinstance(message, Session):
        return Outcome(world=open_session(world, message))
    if isinstance(message, Hook):
        known = world.combats.get(message.combat["_id"])
    else:
        known = known_combat(world, message.combat_id)
    rs = rulesets[known.ruleset if known is not None else world.ruleset]
    ctx = Ctx(world, seq=message.seq, user=message.user, world_time=message.world_time, ruleset=rs)
    if isinstance(message, Hook):
        combat = apply_hook(ctx, known, message, combatants_as_last)
    else:
        combat = apply_intent(ctx, known, message)
    combats = dict(world.combats)
    plans: tuple[Any, ...] = ()
    if isinstance(message, DeleteCombat):
        combats.pop(message.combat["_id"], None)
        ctx.close_prompts(message.combat["_id"])
    elif combat is not None:
        combat, body = replan(ctx, combat, memo)
        combats[combat.id] = combat
        if body is not None:
            plans = ({"combat_id": combat.id, "revision": combat.revision, **body},)
    for other in ctx.changed.values():
        if (combat is not None and other.id == combat.id) or other.id not in combats:
            continue  # the message's own combat wins; a deleted one stays deleted
        other, body = replan(ctx, other, memo)
        combats[other.id] = other
        if body is not None:
            plans += ({"combat_id": other.id, "revision": other.revision, **body},)
    new_world = replace(
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
    """The combat's last plan as sent (``combat.last_plan`` must be set)."""
    assert combat.last_plan is not None
    return {"combat_id": combat.id, "revision": combat.revision, **plan_from_text(combat.last_plan)}


def replan(ctx: Ctx, combat: Combat, memo: PlanMemo | None = None) -> tuple[Combat, dict[str, Any] | None]:
    """The combat with its plan brought up to date, and the new plan's body (None when the
    plan is the one last sent: no new revision, nothing to send)."""
    rs, memo = ctx.ruleset, memo if memo is not None else PlanMemo()
    cache, upcoming = next_round(ctx, combat) if combat.order else (None, None)
    formula = rs.formula
    body = plan_body(
        rs, combat, upcoming, (lambda c: formula(ctx, combat, c)) if formula is not None else None, memo
    )
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
    combat = known
    sort_key = ctx.ruleset.sort_key
    combat = emit(ctx, combat, Clock(ctx.world_time))
    combat, joined, left = read_snapshot(combat, data, combatants_as_last)
    for cid in left:
        combat = remove_combatant(ctx, combat, cid)
    for cid in joined:
        combat = replace(combat, order=combat.order + (cid,))
        combat = emit(ctx, combat, Joined(cid))
        combat = replace(combat, order=place_by_rules(combat, cid, sort_key))
    if hook.roll is not None:
        combat = apply_roll(ctx, combat, hook.roll)
    return follow(ctx, combat, int(data.get("round") or 0), pointer_moved(hook, combat, current))


#: the hooks of a turn or round change: only these can take Foundry's pointer back
TURN_HOOKS = (CombatStart, CombatRound, CombatTurn, CombatTurnChange, UpdateCombat)


def pointer_moved(hook: Hook, combat: Combat, current: str | None) -> str | None:
    """Foundry's pointer as a move to follow. Only a turn change goes back to a combatant
    whose turn has passed this round (the GM's "previous turn"); any other hook that reports
    such a pointer carries one nobody moved back: the one the module left where it was when
    the plan named no current (the round is over), or Foundry's step back onto the one before
    a last combatant deleted during its turn (``nextSurvivor || prevSurvivor``). Following it
    would give that combatant its turn again. In a higher round nobody has passed yet: the
    pointer is kept (whether Foundry names someone or nobody decides how the round starts,
    :func:`.turns.null_turn_kept`)."""
    if isinstance(hook, TURN_HOOKS) or current not in combat.passed:
        return current
    if int(hook.combat.get("round") or 0) > combat.round:
        return current
    return None


def first_contact(ctx: Ctx, hook: Hook, current: str | None) -> Combat:
    """A combat the sidecar has never seen: Foundry's document as it stands is the truth
    (:mod:`.adopt`); a roll the message brings is then given to the rules as usual."""
    combat = Combat(id=hook.combat["_id"], ruleset=ctx.world.ruleset)
    combat = emit(ctx, combat, Clock(ctx.world_time))
    combat, _, _ = read_snapshot(combat, hook.combat)
    combat = adopt_combat(ctx, combat, hook.combat, current, rolling_now(combat, hook.roll))
    if hook.roll is not None:
        combat = apply_roll(ctx, combat, hook.roll)
    return combat


def rolling_now(combat: Combat, report: RollReport | None) -> frozenset[str]:
    """Who rolls in this message (a combatant, or every member of a group)."""
    if report is None:
        return frozenset()
    group = report.group_id
    if group is not None:
        return frozenset(c.id for c in combat.combatants.values() if c.group == group)
    return frozenset({str(report.combatant_id)})


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
    target = report.combatant_id
    group = report.group_id
    if group is not None:
        if group not in combat.groups:
            raise UnknownCombatant(f"group {group!r} is not in combat {combat.id!r}",
                                   field=("roll", "group_id"))
    elif target not in combat.combatants:
        raise UnknownCombatant(
            f"combatant {target!r} is not in combat {combat.id!r}", field=("roll", "combatant_id")
        )
    rollers = [c for c in combat.combatants.values() if c.group == group] if group else [combat.combatants[str(target)]]
    if not ctx.is_gm() and not all(ctx.user in c.owners for c in rollers):
        raise NotPermitted(
            f"user {ctx.user!r} may not roll initiative for {group or target}: only its owners or a GM may",
            field=("roll", "group_id" if group else "combatant_id"),
        )
    if report.reroll_of is None and behind_adopted_values(rollers, report.roll):
        return combat
    event = Rolled(combatant_id=target, roll=report.roll, reroll_of=report.reroll_of, group_id=group)
    return rescore(ctx, combat, event)


def behind_adopted_values(rollers: list[Combatant], roll: Roll) -> bool:
    """The roll whose total is the value every roller was adopted with at first contact,
    unmoved since: the roll behind that value (a module resending its last rolls after the
    sidecar lost its history), not a new one. It changes nothing, as the sidecar never saw
    it made (docs/protocol.md, first contact)."""
    total = roll_total(roll)
    return bool(rollers) and all(
        c.adopted is not None and c.adopted[0] == c.score and total in c.adopted for c in rollers
    )


def rescore(ctx: Ctx, combat: Combat, event: Rolled | ScoreSet) -> Combat:
    """Give a score change to the rules, then re-place whoever's score changed."""
    before = {cid: c.score for cid, c in combat.combatants.items()}
    combat = emit(ctx, combat, event)
    for cid, c in combat.combatants.items():
        if before.get(cid) != c.score:
            combat = reposition(ctx, combat, cid)
    return combat


def reposition(ctx: Ctx, combat: Combat, cid: str) -> Combat:
    """Put a combatant whose score changed where the ruleset says late scores go."""
    rs = ctx.ruleset
    if rs.late_scores == "sorted":
        order, passed = place_sorted(combat, cid, rs.sort_key)
        return replace(combat, order=order, passed=passed)
    return replace(combat, order=place_by_rules(combat, cid, rs.sort_key))


# ---------------------------------------------------------------- intents


def known_combat(world: World, combat_id: str | None) -> Combat | None:
    """The combat an intent names (None when it names none); an unknown one is refused."""
    if combat_id is None:
        return None
    combat = world.combats.get(combat_id)
    if combat is None:
        raise UnknownCombat(f"combat {combat_id!r} is not known", field="combat_id")
    return combat


def apply_intent(ctx: Ctx, combat: Combat | None, intent: Intent) -> Combat | None:
    rs = ctx.ruleset
    if combat is not None:
        combat = emit(ctx, combat, Clock(ctx.world_time))
    if isinstance(intent, SetInitiative):
        assert combat is not None  # its combat_id is required (a str)
        ctx.require_gm("set an initiative by hand")
        ctx.combatant(combat, intent.combatant_id)
        return set_score(ctx, combat, intent.combatant_id, intent.value)
    rule = rs.intents.get(type(intent))
    if rule is None:
        raise RuleViolation(
            f"intent {intent.kind!r} is not part of the {rs.id} ruleset", field="kind", rule=rs.id
        )
    result = rule(ctx, combat, intent)
    return combat if result is None else result


def set_score(ctx: Ctx, combat: Combat, cid: str, value: float) -> Combat:
    """``initiative.set``: the GM's number becomes the combatant's score."""
    scored = combat.combatants[cid]
    combatants = {**combat.combatants, cid: replace(scored, score=value)}
    combat = replace(combat, combatants=combatants)
    return emit(ctx, reposition(ctx, combat, cid), ScoreSet(cid, value))
