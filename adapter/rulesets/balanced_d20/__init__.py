"""Ruleset `balanced-d20`: the balanced initiative house rules for D&D 5e (BI-1 .. BI-5).

See ../shared/rules/README.md section 1 and docs/rules.md. One rule, one function per thing
it handles (named after the rule, ``_on_<event>`` for an event, ``_<verb>`` for an intent):

- ``initiative_roll`` (BI-1) and ``clever_reroll`` (BI-2), in ``reroll.py``;
- ``ready_to_strike`` (BI-3), in ``ready.py``;
- ``initiative_dash`` (BI-4), in ``dash.py``;
- ``readied_action`` (BI-5), in ``readied.py``;
- ``reactions`` (reaction bookkeeping, ``reaction.use``), in ``reactions.py``.

Ties: the higher Dex modifier, then Foundry's order (``_id``).
"""

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
from .adopt import adopt_initiative
from .common import sort_key
from .dash import initiative_dash, initiative_dash_on_round, initiative_dash_on_turn
from .describe import describe
from .reactions import reactions, reactions_on_turn
from .readied import (
    readied_action_declare,
    readied_action_on_turn_end,
    readied_action_on_turn_start,
    readied_action_opposed_result,
    readied_action_trigger,
)
from .ready import (
    ready_to_strike_break,
    ready_to_strike_confirm,
    ready_to_strike_on_clock,
    ready_to_strike_on_combat_start,
    ready_to_strike_on_join,
    ready_to_strike_start,
)
from .reroll import (
    clever_reroll_approve,
    clever_reroll_decide,
    clever_reroll_on_roll,
    initiative_roll,
    initiative_roll_on_score_set,
)
from .state import Fighter, WorldState


def view_inputs(combat: Combat) -> int:
    """What :func:`.describe.describe` reads of the combat besides the combatant: the round
    (``started`` and the dash round follow from it)."""
    return combat.round


RULESET = Ruleset(
    id="balanced-d20",
    on={
        Clock: (ready_to_strike_on_clock,),
        Joined: (ready_to_strike_on_join,),
        # the roll is scored before the reroll rule reads it
        Rolled: (initiative_roll, clever_reroll_on_roll),
        ScoreSet: (initiative_roll_on_score_set,),
        CombatStarted: (ready_to_strike_on_combat_start,),
        RoundStarted: (initiative_dash_on_round,),
        # the dash rule lifts its reaction block before the reaction rule gives it back
        TurnStarted: (initiative_dash_on_turn, readied_action_on_turn_start, reactions_on_turn),
        TurnEnded: (readied_action_on_turn_end,),
    },
    intents={
        RerollDecide: clever_reroll_decide,
        RerollApprove: clever_reroll_approve,
        ReadyStart: ready_to_strike_start,
        ReadyBreak: ready_to_strike_break,
        ReadyConfirm: ready_to_strike_confirm,
        Dash: initiative_dash,
        ReadiedDeclare: readied_action_declare,
        ReadiedTrigger: readied_action_trigger,
        OpposedResult: readied_action_opposed_result,
        UseReaction: reactions,
    },
    sort_key=sort_key,
    describe=describe,
    view_inputs=view_inputs,
    settings={"auto_approve_rerolls": False},
    adopt=adopt_initiative,
    state_types=(Fighter, WorldState),
)

__all__ = ["RULESET"]
