"""Ruleset ``dice-pool``: success-counting initiative (../shared/rules/README.md section 2,
DP-1 … DP-7; docs/rules.md): the rules, the kept sequence and the order (DP-5, DP-2), delay
and waiting.
"""

from ...engine.events import CombatStarted, Joined, Rolled, RoundStarted, ScoreSet, TurnEnded
from ...engine.ruleset import Ruleset, chain
from . import rules, sequence
from .delay import HOLD, INTENTS, describe
from .state import DicePoolCombat, DicePoolState

RULESET = Ruleset(
    id="dice-pool",
    # the shared hold mechanics come after: kept_sequence reads the holds of the round before
    # they clear them, and the roll is scored before they read the new score
    on=chain(
        {
            Rolled: (rules.initiative_roll, sequence.kept_sequence_on_roll),
            CombatStarted: (sequence.kept_sequence_on_start,),
            Joined: (rules.group_initiative,),
            TurnEnded: (rules.hesitation,),
            RoundStarted: (sequence.kept_sequence,),
            ScoreSet: (sequence.kept_sequence_on_score_set,),
        },
        HOLD.on,
    ),
    intents=INTENTS,
    sort_key=sequence.order_key,
    describe=describe,
    formula=rules.initiative_formula,
    adopt=rules.adopt_pool_roll,
    state_types=(DicePoolState, DicePoolCombat),
)
