"""BI-4 Initiative dash: ``dash {amount}`` (owner or GM) between the combatant's turns, by
up to 5 + Dex, once per round; the rulings are in docs/rules.md, BI-4."""

from __future__ import annotations

from ...engine.context import Ctx
from ...engine.events import RoundStarted, TurnStarted
from ...engine.messages import Dash
from ...engine.model import Combat
from ...errors import RuleViolation
from .state import dash_round, fighter, replace_in_order, scored, stat, update_fighter


def initiative_dash(ctx: Ctx, combat: Combat, intent: Dash) -> Combat:
    """BI-4: between its turns, raise the initiative for one round by up to 5 + Dex."""
    c = ctx.owned(combat, intent.combatant_id, "declare an initiative dash")
    amount = intent.amount
    limit = 5 + stat(c, "dex")
    f = fighter(c)
    name = c.name or c.id
    target = combat.round + 1 if combat.started and c.id in combat.passed else dash_round(combat)
    for refused, field, text in (
        (limit <= 0, "amount", f"{name} cannot dash: 5 + Dex modifier is {limit}"),
        (not 0 < amount <= limit, "amount",
         f"a dash raises the initiative by 1 to 5 + Dex = {limit} points, not {amount}"),
        (c.defeated, "combatant_id", f"{name} is defeated and cannot dash"),
        (f.base is None, "combatant_id", f"{name} has no initiative yet: roll first"),
        (combat.current == c.id, "combatant_id",
         "a dash is declared between the combatant's turns, not during its own turn"),
        (f.dash_for(target) is not None, "amount", f"{name} has already dashed for round {target}"),
    ):
        if refused:
            raise RuleViolation(text, rule="BI-4", field=field)
    assert f.base is not None  # refused above
    blocked = max(target, f.reaction_blocked_through or 0)
    combat = update_fighter(combat, c.id, dashes=f.dashes + ((target, amount),),
                            reaction_blocked_through=blocked, no_dominance=True)
    if target == dash_round(combat):
        combat = replace_in_order(scored(combat, c.id, f.base), c.id)
    ctx.notice("dash", f"{name} dashes +{amount}: initiative {f.base + amount:g} "
               f"in round {target}", combatant_id=c.id, round=target, amount=amount)
    return combat


def initiative_dash_on_round(ctx: Ctx, combat: Combat, event: RoundStarted) -> Combat:
    """BI-4 at a round start: a dash for this round raises the score, others are back at
    their own."""
    round_ = event.round
    for cid, c in combat.combatants.items():
        f = fighter(c)
        if not f.dashes and (f.base is None or c.score == f.base):
            continue
        combat = update_fighter(combat, cid, dashes=tuple(d for d in f.dashes if d[0] >= round_))
        combat = scored(combat, cid, f.base)
    return combat


def initiative_dash_on_turn(ctx: Ctx, combat: Combat, event: TurnStarted) -> Combat:
    """BI-4: no reaction until its first turn after the dashed one, no dominance until its
    next non-dashed turn."""
    cid = event.combatant_id
    f = fighter(combat.combatants[cid])
    changes: dict[str, object] = {}
    if f.reaction_blocked_through is not None and combat.round > f.reaction_blocked_through:
        changes["reaction_blocked_through"] = None  # its first turn after the dashed one
    if f.no_dominance and f.dash_for(combat.round) is None:
        changes["no_dominance"] = False  # its next non-dashed turn
    return update_fighter(combat, cid, **changes) if changes else combat
