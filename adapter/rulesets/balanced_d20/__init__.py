"""Ruleset `balanced-d20`: the balanced initiative house rules for D&D 5e (BI-1 … BI-5,
../shared/rules/README.md section 1 and docs/rules.md), one module per rule."""

from operator import attrgetter

from ...engine.adopt import turn_begun
from ...engine.context import Ctx
from ...engine.events import (
    Clock,
    CombatStarted,
    Joined,
    Rolled,
    RoundStarted,
    ScoreSet,
    TurnEnded,
    TurnStarted,
)
from ...engine.messages import (
    Dash,
    OpposedResult,
    ReadiedDeclare,
    ReadiedTrigger,
    ReadyBreak,
    ReadyConfirm,
    ReadyStart,
    RerollApprove,
    RerollDecide,
    UseReaction,
)
from ...engine.model import Combat
from ...engine.ruleset import Ruleset
from . import dash, reactions, readied, ready, reroll
from .describe import describe
from .state import Fighter, WorldState, sort_key, update_fighter


def adopt_initiative(ctx: Ctx, combat: Combat, combatant_id: str) -> Combat:
    """First contact (docs/rules.md, "Meeting a combat already under way"): BI-1 the value as
    stored, BI-2 no offer (natural unknown), BI-3 from the turns Foundry shows and declarations."""
    c = combat.combatants[combatant_id]
    combat = update_fighter(
        combat, combatant_id, base=c.score, natural=None, first_turn_started=turn_begun(combat, c)
    )
    return ready.ready_to_strike_on_adopt(ctx, combat, combatant_id)


RULESET = Ruleset(
    id="balanced-d20",
    on={
        Clock: (ready.ready_to_strike_on_clock,),
        Joined: (ready.ready_to_strike_on_join,),
        # the roll is scored before the reroll rule reads it
        Rolled: (reroll.initiative_roll, reroll.clever_reroll_on_roll),
        ScoreSet: (reroll.initiative_roll_on_score_set,),
        CombatStarted: (ready.ready_to_strike_on_combat_start,),
        RoundStarted: (dash.initiative_dash_on_round,),
        # the dash rule lifts its reaction block before the reaction rule gives it back
        TurnStarted: (dash.initiative_dash_on_turn, readied.readied_action_on_turn_start,
                      reactions.reactions_on_turn),
        TurnEnded: (readied.readied_action_on_turn_end,),
    },
    intents={
        RerollDecide: reroll.clever_reroll_decide,
        RerollApprove: reroll.clever_reroll_approve,
        ReadyStart: ready.ready_to_strike_start,
        ReadyBreak: ready.ready_to_strike_break,
        ReadyConfirm: ready.ready_to_strike_confirm,
        Dash: dash.initiative_dash,
        ReadiedDeclare: readied.readied_action_declare,
        ReadiedTrigger: readied.readied_action_trigger,
        OpposedResult: readied.readied_action_opposed_result,
        UseReaction: reactions.reactions,
    },
    sort_key=sort_key,
    describe=describe,
    view_inputs=attrgetter("round"),  # all describe reads of the combat (started, dash round)
    adopt=adopt_initiative,
    state_types=(Fighter, WorldState),
)
