"""Ruleset ``dice-pool``: success-counting initiative (../shared/rules/README.md section 2,
DP-1 … DP-7; docs/rules.md): the rules in :mod:`.rules`, the kept sequence (DP-5) in
:mod:`.sequence`, delay and waiting through the engine's shared hold/act in :mod:`.delay`.
"""

from ...engine.events import CombatStarted, Joined, Rolled, RoundStarted, ScoreSet, TurnEnded
from ...engine.ruleset import Ruleset, chain
from .delay import HOLD, INTENTS
from .describe import describe
from .rules import (
    SETTINGS,
    adopt_pool_roll,
    group_initiative,
    hesitation,
    initiative_formula,
    initiative_roll,
    order_key,
)
from .sequence import (
    kept_sequence,
    kept_sequence_on_roll,
    kept_sequence_on_score_set,
    kept_sequence_on_start,
)
from .state import DicePoolCombat, DicePoolState

RULESET = Ruleset(
    id="dice-pool",
    # the shared hold mechanics come after: kept_sequence reads the holds of the round before
    # they clear them, and the roll is scored before they read the new score
    on=chain(
        {
            Rolled: (initiative_roll, kept_sequence_on_roll),
            CombatStarted: (kept_sequence_on_start,),
            Joined: (group_initiative,),
            TurnEnded: (hesitation,),
            RoundStarted: (kept_sequence,),
            ScoreSet: (kept_sequence_on_score_set,),
        },
        HOLD.on,
    ),
    intents=INTENTS,
    sort_key=order_key,
    describe=describe,
    settings=SETTINGS,
    formula=initiative_formula,
    adopt=adopt_pool_roll,
    state_types=(DicePoolState, DicePoolCombat),
)
