"""The dice-pool rule functions, one per rule (DP-1 … DP-7), and
first contact (docs/rules.md, "Meeting a combat already under way")."""

from __future__ import annotations

import math

from msgspec.structs import asdict, replace

from ...engine.adopt import turns_had
from ...engine.context import Ctx
from ...engine.events import Joined, Rolled, TurnEnded
from ...engine.messages import Roll
from ...engine.model import Combat, Combatant
from ...errors import RuleViolation, UnknownPrompt
from .pool import Dice, DiceSettings, dice_for, group_pool, pool, pool_dice, success_count
from .state import DicePoolState, PoolRoll, combat_state, roll_of


def settings_of(ctx: Ctx) -> DiceSettings:
    """The DP-3 settings of the world, refused loudly when they make no sense."""
    default = DiceSettings()
    faces = ctx.setting("die_faces", default.die_faces)
    at = ctx.setting("success_at", default.success_at)
    cancel = ctx.setting("ones_cancel", default.ones_cancel)
    if not (isinstance(faces, int) and isinstance(at, int) and faces >= 2 and 2 <= at <= faces):
        raise RuleViolation(
            f"the settings die_faces={faces!r} and success_at={at!r} are not a usable die "
            "(need 2 <= success_at <= die_faces)",
            rule="DP-3",
        )
    return DiceSettings(die_faces=faces, success_at=at, ones_cancel=bool(cancel))


def initiative_formula(ctx: Ctx, combat: Combat, c: Combatant) -> str | None:
    """DP-1 and DP-3: the dice the module rolls for this combatant (its group's pool, DP-6),
    e.g. ``5d6cs>=4df=1``; None while its stats are incomplete or the settings unusable."""
    dice = dice_for(combat, c)
    if dice is None:
        return None
    try:
        return settings_of(ctx).formula(dice.pool)
    except RuleViolation:
        return None


def hesitation_turns(roll: PoolRoll) -> int:
    """DP-4 "cannot act for as many turns as the negative value". **ruling**: a result of 0
    is an ordinary failure costing one turn; a result of −n costs n turns."""
    return max(1, -roll.net) if roll.net <= 0 else 0


def initiative_roll(ctx: Ctx, combat: Combat, event: Rolled) -> Combat:
    """DP-1 pool, DP-3 dice (recounted; a roll of the wrong size is refused), DP-5 rolled
    once, DP-6 groups: the combatant, or every member of the group, scores the net successes."""
    if event.reroll_of is not None:
        raise UnknownPrompt(
            f"the dice-pool ruleset offers no rerolls; {event.reroll_of!r} is not a prompt",
            field=("roll", "reroll_of"),
        )
    if event.group_id is not None:
        dice = group_pool(combat, event.group_id)
        rolled = combat.members(event.group_id)
        who = f"group {combat.groups.get(event.group_id) or event.group_id}"
    else:
        c = combat.combatants[str(event.combatant_id)]
        _refuse_member_roll(combat, c)
        dice, rolled, who = pool(combat, c), [c], c.name or c.id
    _refuse_reroll(combat, rolled)
    result = _count(ctx, event.roll, dice, who, event.group_id)
    combat = _give(combat, rolled, result)
    if event.group_id is not None:
        groups = {**combat_state(combat.ext).groups, event.group_id: result}
        combat = replace(combat, ext=replace(combat_state(combat.ext), groups=groups))
    return combat


def group_initiative(ctx: Ctx, combat: Combat, event: Joined) -> Combat:
    """DP-6: a combatant who joins a group that has already rolled shares the group's roll."""
    c = combat.combatants[event.combatant_id]
    result = combat_state(combat.ext).groups.get(c.group) if c.group is not None else None
    if result is None or c.score is not None:
        return combat
    return _give(combat, [c], result)


def hesitation(ctx: Ctx, combat: Combat, event: TurnEnded) -> Combat:
    """DP-4 "cannot act for as many turns as the negative value": each of its turns that
    passes (skipped ones too, none before the start) takes one off; its place is kept."""
    if not combat.started:
        return combat
    c = combat.combatants.get(event.combatant_id)
    ext = c.ext if c is not None else None
    if c is None or not isinstance(ext, DicePoolState) or ext.turns_lost <= 0:
        return combat
    state = replace(ext, turns_lost=ext.turns_lost - 1, lost_in_round=combat.round)
    return replace(combat, combatants={**combat.combatants, c.id: replace(c, ext=state)})


def _refuse_member_roll(combat: Combat, c: Combatant) -> None:
    if c.group is not None and c.group in combat.groups:
        raise RuleViolation(
            f"{c.name or c.id} is in group {combat.groups[c.group] or c.group}, which rolls "
            "one initiative for all its members: roll for the group (roll.group_id)",
            rule="DP-6",
            field=("roll", "combatant_id"),
        )


def _refuse_reroll(combat: Combat, rolled: list[Combatant]) -> None:
    if not combat.started:
        return  # before the fight the GM may roll again
    again = [c.name or c.id for c in rolled if roll_of(c.ext) is not None]
    if again:
        raise RuleViolation(
            f"{', '.join(again)} already rolled: the order is rolled once and kept for the "
            "whole fight (a new round does not reroll)",
            rule="DP-5",
            field="roll",
        )


def _count(ctx: Ctx, roll: Roll, dice: Dice, who: str, group: str | None) -> PoolRoll:
    settings = settings_of(ctx)
    faces = pool_dice(roll, dice.pool, settings, who)
    count = success_count(faces, settings)
    total = roll.total
    if total != count.net:
        ctx.notice(
            "dice_pool.recount",
            f"Foundry's total {total} for {who} differs from the recount {count.net} "
            f"({settings.formula(dice.pool)}); the recount stands",
            total=total,
            net=count.net,
        )
    return PoolRoll(pool=dice.pool, base=dice.base, dice=faces, group=group, **asdict(count))


def _give(combat: Combat, rolled: list[Combatant], result: PoolRoll) -> Combat:
    state = DicePoolState(roll=result, turns_lost=hesitation_turns(result))
    changed = {c.id: replace(c, score=float(result.net), ext=state) for c in rolled}
    return replace(combat, combatants={**combat.combatants, **changed})


def base_from_value(value: float) -> int:
    """The base the two decimals of ``value`` carry (5.13 → 13; −0.95 → 5), or 0."""
    hundredths = (value - math.floor(value)) * 100
    return round(hundredths) if abs(hundredths - round(hundredths)) < 1e-6 else 0


def adopt_pool_roll(ctx: Ctx, combat: Combat, combatant_id: str) -> Combat:
    """DP-3 net successes from the stored value, DP-1 base from the stats, DP-4 turns lost
    counted from the round it rolled in, DP-6 a group's value is the group's roll."""
    c = combat.combatants[combatant_id]
    if c.score is None:
        return combat
    net = math.floor(c.score)
    dice = dice_for(combat, c)
    group = c.group if c.group is not None and c.group in combat.groups else None
    roll = PoolRoll(
        pool=dice.pool if dice is not None else 0,
        base=dice.base if dice is not None else base_from_value(c.score),
        dice=(), successes=max(net, 0), ones=max(-net, 0), net=net, critical=False, group=group,
    )
    lost, had = hesitation_turns(roll), turns_had(combat, c)
    lost_now = combatant_id in combat.passed and 0 < had <= lost  # this round's turn was lost
    state = DicePoolState(roll=roll, turns_lost=max(0, lost - had),
                          lost_in_round=combat.round if lost_now else None)
    combatants = {**combat.combatants, combatant_id: replace(c, score=float(net), ext=state)}
    groups = dict(combat_state(combat.ext).groups)
    if group is not None:
        groups.setdefault(group, roll)
    return replace(combat, combatants=combatants, ext=replace(combat_state(combat.ext), groups=groups))
